/* subproc.h — run a helper program (oatdump) with a timeout, capturing its
 * stdout (bounded) and the tail of its stderr for error messages. */
#ifndef UPROBESTATS_RESOLVE_SUBPROC_H
#define UPROBESTATS_RESOLVE_SUBPROC_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct subproc_result {
	char *out;                  /* NUL-terminated stdout (malloc'ed) */
	size_t out_len;
	char err_tail[2048];        /* last bytes of stderr, NUL-terminated */
	int exit_code;              /* valid when !signaled && !timed_out */
	int signal;                 /* valid when signaled */
	bool signaled, timed_out;
};

/* argv[0] is looked up on PATH when it has no '/'.  Returns 0 once the
 * program ran to completion (whatever its exit code), -ETIMEDOUT after
 * killing it at timeout_ms, -ENOENT when it cannot be executed, -EFBIG when
 * stdout exceeds max_out bytes.  result is filled in every case. */
int subproc_run(char *const argv[], int timeout_ms, size_t max_out, struct subproc_result *r,
		struct err *err);
void subproc_result_free(struct subproc_result *r);

#endif
