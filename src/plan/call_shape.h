/* call_shape.h — per probe, how the text output's line per call shows it
 * (vocab/event.h: struct call_shape; plan/call_shape.c says how). */
#ifndef UPROBESTATS_PLAN_CALL_SHAPE_H
#define UPROBESTATS_PLAN_CALL_SHAPE_H

#include <stddef.h>

#include "plan/plan.h"

/* Fills p->shape (and p->desc.call) once p is resolved: the arguments of
 * a call's entry program, or that it is a call's return. */
void plan_call_shape(struct plan_probe *p);

/* Marks each entry probe of the plan that a return probe of the same
 * function (file and offset) follows.  0, or -1 when out of memory. */
int plan_call_pairs(struct plan *plan);

#endif
