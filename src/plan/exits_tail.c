/* exits_tail.c — the exits of a native function that continue in the
 * functions it tail-branches to (plan/exits.h: plan_native_exit_sites).
 *
 * Android's arm64 bionic system call wrappers end their error path in
 * `b.hi __set_errno_internal`: the call then returns from
 * __set_errno_internal's `ret`.  A direct branch out of a function F counts
 * as a way out only when it is proven that
 *   - F never writes sp (formats/exit_sites.h: exit_scan.moves_sp), so sp at
 *     the branch is F's entry sp, and makes no call (a callee runs at that sp
 *     too, and its way to one of these exits would pass for F's return), and
 *   - the branch lands exactly on the start of a sized function symbol G in
 *     an executable segment (code/codefile.h: code_file_function_at),
 * and then G's exits, proven the same way (its own returns, and recursively
 * its tail branches, at most TAIL_DEPTH functions deep and TAIL_FUNCS in
 * all), are F's exits too.  At them sp equals G's entry sp, that is F's, so
 * the exit pairs with F's entry by (thread, sp) as at F's own `ret`; a hit
 * there without a pending entry (G called from elsewhere) is no call of F's.
 * Anything unproven refuses F, naming F's branch the failure comes from. */
#include "plan/exits_tail.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/codefile.h"
#include "common/grow.h"

#define TAIL_DEPTH 4     /* functions reached through tail branches, one after another */
#define TAIL_FUNCS 32    /* functions reached in all */

struct tail_fn {
	uint64_t off, size;          /* file offset and size of the function */
	const struct exit_tail *root; /* the branch of the probed function leading here */
	unsigned depth;
};

struct closure {
	struct code_file *f;
	enum code_arch arch;
	struct tail_fn fn[TAIL_FUNCS + 1];
	unsigned n;
	uint64_t *sites;
	size_t n_sites, cap;
};

/* The refusal, named after the probed function's branch (the checker in
 * test/codecheck matches "tail call at +0x…" / "jump out of the function at
 * +0x…"). */
static int refuse(const struct exit_tail *t, struct err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(const struct exit_tail *t, struct err *err, const char *fmt, ...)
{
	char why[ERR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return err_set(err, -EINVAL, "%s at +0x%x (to %+lld from the function start): %s",
		       t->conditional ? "jump out of the function" : "tail call", t->at,
		       (long long)t->target, why);
}

static int add_sites(struct closure *c, uint64_t base, const struct exit_sites *s,
		     struct err *err)
{
	if (grow_array(&c->sites, &c->cap, c->n_sites + s->count, 16) < 0)
		return err_set(err, -ENOMEM, "out of memory for exit sites");
	for (uint32_t i = 0; i < s->count; i++)
		c->sites[c->n_sites++] = base + s->offsets[i];
	return 0;
}

static bool known(const struct closure *c, uint64_t off)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->fn[i].off == off)
			return true;
	return false;
}

/* Queues the functions fn's branches land on (fn moves no sp). */
static int queue_targets(struct closure *c, const struct tail_fn *fn,
			 const struct exit_scan *scan, struct err *err)
{
	for (uint32_t i = 0; i < scan->n_tails; i++) {
		const struct exit_tail *t = &scan->tails[i];
		const struct exit_tail *root = fn->root ? fn->root : t;
		int64_t to = (int64_t)fn->off + t->target;
		uint64_t size;

		if (to < 0)
			return refuse(root, err, "it lands before the file start");
		if (known(c, (uint64_t)to))
			continue;
		if (!(size = code_file_function_at(c->f, (uint64_t)to)))
			return refuse(root, err, "no function symbol starts at file offset 0x%llx "
				      "(the branch at file offset 0x%llx)", (long long)to,
				      (unsigned long long)(fn->off + t->at));
		if (fn->depth + 1 > TAIL_DEPTH)
			return refuse(root, err, "tail branches nested more than %d functions "
				      "deep", TAIL_DEPTH);
		if (c->n >= TAIL_FUNCS + 1)
			return refuse(root, err, "tail branches into more than %d functions",
				      TAIL_FUNCS);
		c->fn[c->n++] = (struct tail_fn){ (uint64_t)to, size, root, fn->depth + 1 };
	}
	return 0;
}

/* One function of the closure: its own returns, and its branches out when
 * sp is proven at them.  Refused: a branch out after sp was written (sp is
 * not proven the entry's there), and a call in a function of the closure
 * that never lowers sp (the callee runs at the entry's sp and its way to
 * one of these exits would pass for the probed call's return). */
static int take(struct closure *c, const struct tail_fn *fn, const struct exit_scan *scan,
		struct err *err)
{
	int rc = add_sites(c, fn->off, &scan->sites, err);
	bool sp = scan->n_tails && scan->moves_sp, call = scan->calls && !scan->moves_sp;

	if (rc < 0 || (!scan->n_tails && !fn->root))
		return rc;
	if (sp || call)
		return refuse(fn->root ? fn->root : &scan->tails[0], err, "%s %s (at file offset "
			      "0x%llx), so %s", fn->root ? "a function it branches to" : "the function",
			      sp ? "writes sp" : "calls",
			      (unsigned long long)(fn->off + (sp ? scan->sp_write_at : scan->call_at)),
			      sp ? "sp at the branch is not proven to be the entry's"
			      : "a callee's return at the entry's sp could pass for the probed call's");
	return scan->n_tails ? queue_targets(c, fn, scan, err) : 0;
}

/* A function reached by a tail branch: its code scanned as the probed one's. */
static int take_target(struct closure *c, const struct tail_fn *fn, struct err *err)
{
	struct exit_scan scan;
	const uint8_t *code;
	struct err why = { 0 };
	int rc = code_file_bytes(c->f, fn->off, fn->size, &code, &why);

	if (rc == 0)
		rc = exit_sites_scan_native(c->arch, code, (size_t)fn->size, &scan, &why);
	if (rc < 0)
		return refuse(fn->root, err, "the function at file offset 0x%llx: %s",
			      (unsigned long long)fn->off, why.msg);
	rc = take(c, fn, &scan, err);
	exit_scan_free(&scan);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void keep_result(struct closure *c, struct native_exits *out)
{
	size_t w = 0;

	qsort(c->sites, c->n_sites, sizeof(*c->sites), cmp_u64);
	for (size_t i = 0; i < c->n_sites; i++)
		if (!w || c->sites[w - 1] != c->sites[i])
			c->sites[w++] = c->sites[i];
	out->offsets = c->sites;
	out->count = (uint32_t)w;
	out->n_funcs = c->n - 1;
	for (unsigned i = 1; i < c->n; i++)
		out->funcs[i - 1] = c->fn[i].off;
	c->sites = NULL;
}

int exits_tail_follow(struct code_file *f, enum code_arch arch, uint64_t offset,
		      uint64_t size, const struct exit_scan *scan, struct native_exits *out,
		      struct err *err)
{
	struct closure *c = calloc(1, sizeof(*c));
	int rc;

	memset(out, 0, sizeof(*out));
	if (!c)
		return err_set(err, -ENOMEM, "out of memory");
	c->f = f;
	c->arch = arch;
	c->fn[0] = (struct tail_fn){ offset, size, NULL, 0 };
	c->n = 1;
	rc = take(c, &c->fn[0], scan, err);
	/* breadth first: each function once, nearest first */
	for (unsigned i = 1; rc == 0 && i < c->n; i++)
		rc = take_target(c, &c->fn[i], err);
	if (rc == 0 && !(out->funcs = calloc(c->n, sizeof(*out->funcs))))
		rc = err_set(err, -ENOMEM, "out of memory");
	if (rc == 0)
		keep_result(c, out);
	free(c->sites);
	free(c);
	if (rc < 0)
		native_exits_free(out);
	return rc;
}

void native_exits_free(struct native_exits *x)
{
	if (!x)
		return;
	free(x->offsets);
	free(x->funcs);
	memset(x, 0, sizeof(*x));
}
