/* folded_out.h — the --stacks FILE sink: every event's call stack counted
 * per unique stack during the run, written at exit in the folded form
 * ("process;outermost;…;probed count" per line, frames named as
 * stack_frame_label() names them, ';' inside a name written as ':'), which
 * speedscope, flamegraph.pl and inferno open.  The root frame is the
 * process's name (no pid: processes of one name merge); with
 * --stacks-merge (sinks_options.folded_merge) there is none, one graph for
 * every process.  Events without a stack are not counted.  Memory: one
 * entry per unique stack. */
#ifndef UPROBESTATS_SINK_FOLDED_OUT_H
#define UPROBESTATS_SINK_FOLDED_OUT_H

#include "sink/sink_ops.h"

extern const struct sink_ops folded_sink;

#endif
