#include "plan/exits.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "formats/exit_sites.h"
#include "formats/oat_exits.h"
#include "plan/exits_tail.h"

/* Larger code than this is not read (no compiled method or function we
 * would probe comes near it). */
#define MAX_CODE_BYTES (16u << 20)

/* A file that is no ELF (nothing the code cache reads as one): its bytes
 * read directly. */
static int read_raw(const char *path, uint64_t offset, uint64_t size, uint8_t **out,
		    struct err *err)
{
	uint8_t *buf = malloc(size);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 || !buf ? -1 : pread(fd, buf, size, (off_t)offset);
	int e = n < 0 ? (buf ? errno : ENOMEM) : EIO;

	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)size) {
		free(buf);
		return err_set(err, -e, "%s+0x%llx: reading %llu bytes of code: %s", path,
			       (unsigned long long)offset, (unsigned long long)size,
			       n < 0 ? strerror(e) : "file too short");
	}
	*out = buf;
	return 0;
}

/* The code bytes: in the cached file's mapping (*owned NULL), or read. */
static int read_code(const char *path, uint64_t offset, uint64_t size,
		     const struct code_file *f, const uint8_t **out, uint8_t **owned,
		     struct err *err)
{
	struct err e = { 0 };

	*owned = NULL;
	if (size == 0)
		return err_set(err, -ENODATA, "the code size is unknown (the symbol has no "
			       "size)");
	if (size > MAX_CODE_BYTES)
		return err_set(err, -EFBIG, "%llu bytes of code, over the %u we read",
			       (unsigned long long)size, MAX_CODE_BYTES);
	if (code_file_elf(f, &e))
		return code_file_bytes(f, offset, size, out, err);
	if (read_raw(path, offset, size, owned, err) < 0)
		return err->code;
	*out = *owned;
	return 0;
}

/* Code whose first instruction is a return: entry and exit are one
 * instruction (nothing after it is reached from the entry). */
static bool is_lone_ret(const struct exit_sites *sites)
{
	return sites->count && sites->offsets[0] == 0;
}

/* Both programs would run at one instruction, in an order the kernel does
 * not promise: the call could not be paired. */
static int check_not_bare(const struct exit_sites *sites, struct err *err)
{
	if (is_lone_ret(sites))
		return err_set(err, -ENOTSUP, "its first instruction is a return (an empty "
			       "function): an entry and an exit probe on one instruction cannot "
			       "be ordered");
	return 0;
}

/* ART code that is a lone `ret`: the exit program alone, at the entry. */
static int keep_lone_ret(struct exits_choice *out, uint64_t base, struct err *err)
{
	out->exit_offsets = calloc(1, sizeof(*out->exit_offsets));
	if (!out->exit_offsets)
		return err_set(err, -ENOMEM, "out of memory");
	out->exit_offsets[0] = base;
	out->n_exits = 1;
	out->lone_ret = true;
	return 0;
}

/* The exit sites as file offsets; ART code (lone_ok) that is a lone `ret`
 * gets its one probe, native code is refused then (it has a uretprobe). */
static int keep_sites(struct exits_choice *out, const struct exit_sites *sites,
		      uint64_t base, bool lone_ok, struct err *err)
{
	int rc;

	if (lone_ok && is_lone_ret(sites))
		return keep_lone_ret(out, base, err);
	rc = check_not_bare(sites, err);
	if (rc < 0)
		return rc;
	out->exit_offsets = calloc(sites->count ? sites->count : 1, sizeof(*out->exit_offsets));
	if (!out->exit_offsets)
		return err_set(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < sites->count; i++)
		out->exit_offsets[i] = base + sites->offsets[i];
	out->n_exits = sites->count;
	return 0;
}

/* A Java method: the oat reader's exits, each epilogue checked against the
 * frame CodeInfo records (and that frame against the method's prologue). */
static int method_exits(const struct exits_query *p, struct code_file *f,
			struct oat_method_exits *m, struct err *err)
{
	const struct oat_file *o;
	int rc = code_file_oat(f, &o, err);

	if (rc < 0) {
		memset(m, 0, sizeof(*m));
		return rc;
	}
	return oat_method_exits_in(o, p->offset, m, err);
}

/* The analysis of a Java method (p->offset): its sites from the method
 * header found there, or why there are none. */
static int analyse_java(void *ctx, struct code_file *f, uint64_t *base,
			struct exit_sites *sites, struct err *err)
{
	const struct exits_query *p = ctx;
	struct oat_method_exits m;
	int rc = method_exits(p, f, &m, err);

	if (rc < 0)
		return rc;
	if (m.exits_rc < 0) {
		*err = m.exits_err;
		rc = m.exits_rc;
	} else if (m.code_file_offset != p->offset) {
		rc = err_set(err, -EINVAL, "%s: the method header found for +0x%llx starts its "
			     "code at +0x%llx", p->path, (unsigned long long)p->offset,
			     (unsigned long long)m.code_file_offset);
	} else {
		*base = m.code_file_offset;
		*sites = m.sites;
		m.sites = (struct exit_sites){ 0 };
	}
	oat_method_exits_free(&m);
	return rc;
}

/* An ELF function's own proven exits (offsets from its start, the first one
 * maybe the entry itself) and its branches out, or the refusal. */
static int native_scan(const char *path, uint64_t offset, uint64_t size, uint16_t machine,
		       const struct code_file *f, enum code_arch *arch, struct exit_scan *scan,
		       struct err *err)
{
	const uint8_t *code;
	uint8_t *owned;
	int rc;

	memset(scan, 0, sizeof(*scan));
	if (machine == EM_X86_64)
		*arch = CODE_ARCH_X86_64;
	else if (machine == EM_AARCH64)
		*arch = CODE_ARCH_ARM64;
	else
		return err_set(err, -ENOTSUP, "no exit-site finder for ELF machine %u (x86_64 and "
			       "arm64 only)", machine);
	rc = read_code(path, offset, size, f, &code, &owned, err);
	if (rc < 0)
		return rc;
	rc = exit_sites_scan_native(*arch, code, (size_t)size, scan, err);
	free(owned);
	return rc;
}

/* The exits through the function's tail branches (plan/exits_tail.c), as
 * file offsets (*base 0). */
static int tail_sites(const struct exits_query *p, struct code_file *f, enum code_arch arch,
		      const struct exit_scan *scan, uint64_t *base, struct exit_sites *sites,
		      struct err *err)
{
	struct native_exits x;
	int rc = exits_tail_follow(f, arch, p->offset, p->code_size, scan, &x, err);

	if (rc == 0 && x.count && x.offsets[x.count - 1] > UINT32_MAX)
		rc = err_set(err, -EFBIG, "exit sites past 4 GiB into the file");
	if (rc == 0 && !(sites->offsets = calloc(x.count ? x.count : 1, sizeof(uint32_t))))
		rc = err_set(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; rc == 0 && i < x.count; i++)
		sites->offsets[i] = (uint32_t)x.offsets[i];
	if (rc == 0) {
		sites->count = x.count;
		*base = 0;
	}
	native_exits_free(&x);
	return rc;
}

/* The analysis of an ELF function (p->offset, p->code_size bytes): its own
 * returns (a lone `ret` left to keep_sites), and those its tail branches reach. */
static int analyse_native(void *ctx, struct code_file *f, uint64_t *base,
			  struct exit_sites *sites, struct err *err)
{
	const struct exits_query *p = ctx;
	struct exit_scan scan;
	enum code_arch arch;
	int rc = native_scan(p->path, p->offset, p->code_size, p->machine, f, &arch, &scan, err);

	*base = p->offset;
	if (rc == 0 && (!scan.n_tails || is_lone_ret(&scan.sites))) {
		*sites = scan.sites;
		scan.sites = (struct exit_sites){ 0 };
	} else if (rc == 0) {
		rc = tail_sites(p, f, arch, &scan, base, sites, err);
	}
	exit_scan_free(&scan);
	return rc;
}

/* The query's exit analysis, run once per method for the whole run (the
 * code cache keeps each answer: code/codefile.h's code_file_exits). */
static const struct code_exits *memo_exits(const struct exits_query *p, struct code_file *f,
					   struct err *err)
{
	const struct code_exits *x = code_file_exits(f, p->offset, p->java ? 0 : p->code_size,
						     p->java, p->java ? analyse_java
								      : analyse_native,
						     (void *)p);

	if (!x)
		err_set(err, -ENOMEM, "out of memory");
	else if (x->rc < 0)
		err_set(err, x->rc, "%s", x->why);
	return x && x->rc == 0 ? x : NULL;
}

int plan_native_exit_sites(struct code_cache *c, const char *path, uint64_t offset,
			   uint64_t code_size, uint16_t machine, const struct exit_sites **sites,
			   uint64_t *base, struct err *err)
{
	const struct exits_query q = { .path = path, .offset = offset, .code_size = code_size,
				       .machine = machine };
	struct code_file *f = code_cache_file(c, path);
	const struct code_exits *x = f ? memo_exits(&q, f, err) : NULL;

	*sites = x ? &x->sites : NULL;
	*base = x ? x->base : offset;
	if (!f)
		return err_set(err, -ENOMEM, "out of memory");
	return x ? check_not_bare(&x->sites, err) : err->code;
}

/* The exit sites as file offsets, analysed once per method (art: ART code,
 * where a lone `ret` gets its one probe). */
static int find_exits(const struct exits_query *p, struct code_file *f, bool art,
		      struct exits_choice *out, struct err *err)
{
	const struct code_exits *x = memo_exits(p, f, err);

	return x ? keep_sites(out, &x->sites, x->base, art, err) : err->code;
}

/* What a uretprobe risks, said wherever one is refused or used. */
#define NATIVE_URETPROBE_RISK \
	"it replaces the return address with the kernel's trampoline, so a C++ exception, " \
	"longjmp or unwinder passing through the function finds an address it does not know " \
	"and the program aborts (std::terminate)"

static int refuse_uretprobe(const struct exits_query *p, bool art, const char *why,
			    struct err *err)
{
	if (!art)
		return err_set(err, PLAN_REFUSED, "probe %s: %s: refusing a uretprobe (%s): %s; "
			       "--unsafe-uretprobe attaches it anyway", p->program, p->what, why,
			       NATIVE_URETPROBE_RISK);
	return err_set(err, PLAN_REFUSED, "probe %s: %s: refusing a uretprobe on ART code (%s): "
		       "it rewrites the return address that ART walks its stack by, which aborts "
		       "the runtime or corrupts GC roots (system_server: a phone restart); "
		       "--unsafe-uretprobe attaches it anyway", p->program, p->what, why);
}

static void add_note(struct exits_choice *out, const char *text)
{
	snprintf(out->note, sizeof(out->note), "%s", text);
}

/* ART code: a Java method, or anything in an OAT file named by an ELF
 * symbol (oat files carry oatdata/oatexec, never one per method). */
static bool is_art_code(const struct exits_query *p, const struct code_file *f)
{
	return p->java || code_file_is_oat(f);
}

/* The note of a uretprobe used behind --unsafe-uretprobe (the plan and
 * check print it: what was chosen and what it risks). */
static void note_uretprobe(struct exits_choice *out, bool art, const char *when)
{
	char note[sizeof(out->note)];

	snprintf(note, sizeof(note), "UNSAFE: uretprobe%s (--unsafe-uretprobe%s)%s",
		 art ? " on ART code" : "", when,
		 art ? "" : ": a C++ exception or longjmp through it aborts the program");
	add_note(out, note);
}

/* The exits were found: exit probes, or the lone `ret`'s one probe. */
static int keep_exits(struct exits_choice *out)
{
	char note[160];

	out->exit_probes = true;
	if (out->lone_ret) {
		add_note(out, "one exit probe at its lone ret (the entry): call and return in "
			 "one hit, duration 0");
		return 0;
	}
	snprintf(note, sizeof(note), "exit probes at %u exit site%s", out->n_exits,
		 out->n_exits == 1 ? "" : "s");
	add_note(out, note);
	return 0;
}

/* Every return program gets exit probes, native and Java alike, unless its
 * config says exit_probes: false; a uretprobe is used only behind
 * --unsafe-uretprobe (it breaks C++ exceptions, longjmp and ART's stack
 * walk).  Exits that cannot be proven are refused, never guessed: behind
 * --unsafe-uretprobe a uretprobe takes their place, unless exit probes were
 * asked for explicitly (exit_probes: true, --exit-probes) on native code. */
static int choose(const struct exits_query *q, struct code_file *f, struct exits_choice *out,
		  struct err *err)
{
	struct err why = { 0 };
	char reason[ERR_MSG_MAX];
	bool art = is_art_code(q, f);
	bool asked = q->has_exit_probes ? q->exit_probes : q->opt_exit_probes;

	if (q->has_exit_probes && !q->exit_probes) {
		if (!q->unsafe_uretprobe)
			return refuse_uretprobe(q, art, "the probe sets exit_probes: false", err);
		note_uretprobe(out, art, "");
		return 0;
	}
	if (find_exits(q, f, art, out, &why) == 0)
		return keep_exits(out);
	if (!art && (asked || !q->unsafe_uretprobe))
		return err_set(err, PLAN_REFUSED, "probe %s: %s: no exit probes: its exits "
			       "cannot be proven: %s (%s)", q->program, q->what, why.msg,
			       q->no_exits_advice ? q->no_exits_advice
			       : asked ? "exit probes were asked for: a uretprobe is used only "
					 "without exit_probes: true and --exit-probes"
			       : "--unsafe-uretprobe puts a uretprobe on it instead, which "
				 "aborts a C++ program when an exception or longjmp passes "
				 "through it");
	if (art && !q->unsafe_uretprobe) {
		snprintf(reason, sizeof(reason), "no exit sites: %s", why.msg);
		return refuse_uretprobe(q, art, reason, err);
	}
	note_uretprobe(out, art, "; no exit sites");
	return 0;
}

int exits_choose(const struct exits_query *q, struct exits_choice *out, struct err *err)
{
	/* the file's entry in the run's code cache (code/codefile.h: opened and
	 * parsed once for every probe and every reader of the run) */
	struct code_file *f = code_cache_file(q->code, q->path);

	memset(out, 0, sizeof(*out));
	if (!f)
		return err_set(err, -ENOMEM, "out of memory");
	return choose(q, f, out, err);
}
