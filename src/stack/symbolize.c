/* symbolize.c — PC -> frame description with per-file caches (see
 * symbolize.h).  Stub: filled in next. */
#include "stack/symbolize.h"

#include <errno.h>
#include <string.h>

int sym_new(const char *root, struct symbolizer **out, struct err *err)
{
	(void)root;
	*out = NULL;
	return err_set(err, -ENOTSUP, "symbolizer: not implemented yet");
}

void sym_free(struct symbolizer *s) { (void)s; }

int sym_maps_parse(struct symbolizer *s, const char *text, size_t len, struct sym_maps **out,
		   struct err *err)
{
	(void)s; (void)text; (void)len;
	*out = NULL;
	return err_set(err, -ENOTSUP, "symbolizer: not implemented yet");
}

int sym_maps_read(struct symbolizer *s, const char *proc_dir, pid_t pid, struct sym_maps **out,
		  struct err *err)
{
	(void)s; (void)proc_dir; (void)pid;
	*out = NULL;
	return err_set(err, -ENOTSUP, "symbolizer: not implemented yet");
}

void sym_maps_free(struct sym_maps *m) { (void)m; }

int sym_lookup(struct symbolizer *s, const struct sym_maps *m, uint64_t pc, unsigned flags,
	       struct sym_frame *out, struct err *err)
{
	(void)s; (void)m; (void)flags; (void)err;
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->dex_pc = SYM_NO_DEX_PC;
	return 0;
}

int sym_java_method_at(struct symbolizer *s, const struct sym_maps *m, uint64_t pc,
		       unsigned flags, struct sym_java_method *out, struct err *err)
{
	(void)s; (void)m; (void)pc; (void)flags; (void)out;
	return err_set(err, -ENOTSUP, "symbolizer: not implemented yet");
}

int sym_cfi_at(struct symbolizer *s, const struct sym_maps *m, uint64_t pc, unsigned flags,
	       struct cfi_row *row, uint64_t *bias, struct err *err)
{
	(void)s; (void)m; (void)pc; (void)flags; (void)row; (void)bias;
	return err_set(err, -ENOTSUP, "symbolizer: not implemented yet");
}

const char *sym_kind_name(enum sym_kind k)
{
	static const char *const names[] = { "unknown", "native", "java", "interpreted", "jit" };
	return (unsigned)k < 5 ? names[k] : "unknown";
}

void sym_get_stats(const struct symbolizer *s, struct sym_stats *out)
{
	(void)s;
	memset(out, 0, sizeof(*out));
}
