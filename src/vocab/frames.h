/* frames.h — a call stack as the sinks print it: the frames the unwinder
 * (stack/unwind.h) found for one hit, innermost first.  Vocabulary shared by
 * the unwinder, the event (vocab/event.h) and every sink (sink/stack_out.h);
 * owns nothing: the strings belong to the code cache that named them. */
#ifndef UPROBESTATS_VOCAB_FRAMES_H
#define UPROBESTATS_VOCAB_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UNWIND_MAX_FRAMES 64

enum frame_kind {
	FRAME_NATIVE,
	FRAME_JAVA,         /* compiled (AOT) Java method */
	FRAME_INTERPRETED,  /* a method the interpreter runs (its dex pc from ART's DEX1
			     * CFI rule), or interpreter code that cannot be stepped */
	FRAME_JIT,          /* JIT code: named and stepped by ART's symfile, else the end */
	FRAME_UNKNOWN,      /* no file, or a file the tool cannot read */
};

struct stack_frame {
	uint64_t pc;
	enum frame_kind kind;
	const char *file;
	uint64_t offset;
	const char *symbol;
	uint64_t symbol_off;
	uint32_t dex_pc;         /* UINT32_MAX: none */
	int32_t line;            /* 0: unknown */
	const char *note;        /* the mark on the last frame when the walk stopped there */
	bool art;                /* native code of libart itself (the interpreter, the
				  * invoke stubs): hidden between Java frames unless
				  * --show-art-frames */
};

struct stack_trace {
	struct stack_frame frames[UNWIND_MAX_FRAMES];
	size_t n;
	bool truncated;          /* the frame limit was reached */
	const char *end;         /* why the walk ended: "outermost frame", "stack slice ends", … */
};

/* "java", "native", "interpreted", "jit", "unknown" (inline: the sinks print
 * it without linking the unwinder). */
static inline const char *frame_kind_name(enum frame_kind k)
{
	switch (k) {
	case FRAME_NATIVE: return "native";
	case FRAME_JAVA: return "java";
	case FRAME_INTERPRETED: return "interpreted";
	case FRAME_JIT: return "jit";
	case FRAME_UNKNOWN: return "unknown";
	}
	return "unknown";
}

#endif
