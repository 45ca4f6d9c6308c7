/* plan_call_shape.c — what the text output's one line per call shows of each
 * probe (vocab/event.h: struct call_shape): the arguments asked for (the
 * task's statsd positions: trace --args, or the config's), their registers
 * under the probe's ABI, names (a few well-known C functions' parameters;
 * otherwise argN) and how each is printed (a Java parameter by its type in
 * the signature; a C one decimal unless known to be a pointer or flags),
 * and whether an entry record waits for the return record of the same call
 * (a call_return probe on the same function in the task). */
#include "plan/plan.h"

#include <stdlib.h>
#include <string.h>

/* Parameters of well-known C functions: name and kind per position,
 * "name:k" with k d (int), u (size_t), l (long), x (pointer, flags); a
 * first word "=x" says the return value is a pointer. */
static const struct {
	const char *fn;
	const char *params;
} KNOWN[] = {
	{ "write", "fd:d buf:x count:u" },
	{ "read", "fd:d buf:x count:u" },
	{ "pwrite64", "fd:d buf:x count:u offset:l" },
	{ "pread64", "fd:d buf:x count:u offset:l" },
	{ "writev", "fd:d iov:x iovcnt:d" },
	{ "readv", "fd:d iov:x iovcnt:d" },
	{ "open", "path:x flags:x mode:x" },
	{ "openat", "dirfd:d path:x flags:x mode:x" },
	{ "close", "fd:d" },
	{ "fsync", "fd:d" },
	{ "lseek", "fd:d offset:l whence:d" },
	{ "ioctl", "fd:d request:x arg:x" },
	{ "socket", "domain:d type:d protocol:d" },
	{ "connect", "fd:d addr:x addrlen:u" },
	{ "accept", "fd:d addr:x addrlen:x" },
	{ "accept4", "fd:d addr:x addrlen:x flags:x" },
	{ "send", "fd:d buf:x len:u flags:x" },
	{ "recv", "fd:d buf:x len:u flags:x" },
	{ "sendto", "fd:d buf:x len:u flags:x dest_addr:x addrlen:u" },
	{ "recvfrom", "fd:d buf:x len:u flags:x src_addr:x addrlen:x" },
	{ "sendmsg", "fd:d msg:x flags:x" },
	{ "recvmsg", "fd:d msg:x flags:x" },
	{ "malloc", "=x size:u" },
	{ "free", "ptr:x" },
	{ "calloc", "=x nmemb:u size:u" },
	{ "realloc", "=x ptr:x size:u" },
	{ "mmap", "=x addr:x length:u prot:x flags:x fd:d offset:l" },
	{ "munmap", "addr:x length:u" },
	{ "memcpy", "=x dest:x src:x n:u" },
	{ "memset", "=x s:x c:d n:u" },
	{ "strlen", "s:x" },
	{ "nanosleep", "req:x rem:x" },
	{ "usleep", "usec:u" },
	{ "sleep", "seconds:u" },
	{ "unlink", "path:x" },
	{ "dlopen", "=x filename:x flags:x" },
	{ "fopen", "=x path:x mode:x" },
	{ "getaddrinfo", "node:x service:x hints:x res:x" },
	{ "kill", "pid:d sig:d" },
	{ "exit", "status:d" },
	{ "_exit", "status:d" },
	{ "puts", "s:x" },
};

static const char *const ARG_NAMES[CALL_SHAPE_MAX_ARGS] = {
	"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6", "arg7", "arg8", "arg9",
};

/* The function's name without a version ("write@@GLIBC_2.2.5"). */
static const char *known_params(const char *fn)
{
	size_t n = strcspn(fn, "@");

	for (size_t i = 0; i < sizeof(KNOWN) / sizeof(KNOWN[0]); i++)
		if (strlen(KNOWN[i].fn) == n && !memcmp(KNOWN[i].fn, fn, n))
			return KNOWN[i].params;
	return NULL;
}

static uint8_t kind_of_letter(char k)
{
	return k == 'x' ? CALL_ARG_HEX : k == 'u' ? CALL_ARG_U64 : k == 'l' ? CALL_ARG_I64
	       : CALL_ARG_I32;
}

/* A native parameter: its name and kind from KNOWN, else argN, decimal.
 * The names point into a static buffer per position (the table's strings
 * are "name:k" words, so each name is copied once into names[]). */
static void native_arg(const char *fn, uint8_t pos, struct call_arg *a, char *name_buf,
		       size_t size)
{
	const char *p = fn ? known_params(fn) : NULL;

	a->name = ARG_NAMES[pos];
	a->kind = CALL_ARG_I64;
	if (p && !strncmp(p, "=x ", 3))
		p += 3;
	for (uint8_t k = 0; p && *p; k++) {
		size_t len = strcspn(p, ":");
		if (k == pos && p[len] == ':' && len + 1 < size) {
			memcpy(name_buf, p, len);
			name_buf[len] = '\0';
			a->name = name_buf;
			a->kind = kind_of_letter(p[len + 1]);
			return;
		}
		p += strcspn(p, " ");
		p += *p == ' ';
	}
}

/* How a Java value of type p[0..n) ("int", "java.lang.String") prints. */
static uint8_t java_type_kind(const char *p, size_t n)
{
#define IS(t) (n == sizeof(t) - 1 && !memcmp(p, t, n))
	if (IS("int") || IS("short") || IS("byte"))
		return CALL_ARG_I32;
	if (IS("long"))
		return CALL_ARG_I64;
	if (IS("boolean"))
		return CALL_ARG_BOOL;
	if (IS("char"))
		return CALL_ARG_CHAR;
#undef IS
	return CALL_ARG_HEX;   /* a reference, or a float/double's register bits */
}

/* Java: the parameter type at pos in "ret a.B.m(int, java.lang.String)". */
static uint8_t java_kind(const char *sig, uint8_t pos)
{
	const char *p = sig ? strchr(sig, '(') : NULL;

	if (!p)
		return CALL_ARG_I64;
	p++;
	for (uint8_t k = 0; k < pos && *p && *p != ')'; k++) {
		p = strchr(p, ',');
		if (!p)
			return CALL_ARG_I64;
		p += 1 + (p[1] == ' ');
	}
	return java_type_kind(p, strcspn(p, ",)"));
}

/* The return value's kind: the Java signature's return type, or a known C
 * function's ("=x": a pointer); decimal otherwise. */
static void return_kind(const struct plan_probe *p, const char *fn, struct call_shape *s)
{
	const char *sig = p->desc.method ? p->desc.method : "";
	const char *sp = strchr(sig, ' '), *paren = strchr(sig, '(');

	s->ret_kind = CALL_ARG_I64;
	if (p->java && sp && paren && sp < paren) {
		s->ret_void = sp - sig == 4 && !memcmp(sig, "void", 4);
		s->ret_kind = java_type_kind(sig, (size_t)(sp - sig));
		return;
	}
	const char *k = known_params(fn);
	if (k && !strncmp(k, "=x ", 3))
		s->ret_kind = CALL_ARG_HEX;
}

static bool is_string_pos(const struct plan_probe *p, int32_t pos)
{
	for (size_t k = 0; k < sizeof(p->string_pos); k++)
		if (p->string_pos[k] == pos && p->string_reg[k] != 0xff)
			return true;
	return false;
}

/* The native function's bare name: the display or symbol, up to '('. */
static void native_name(const struct plan_probe *p, char *buf, size_t size)
{
	const char *m = p->desc.method ? p->desc.method : "";
	size_t n = strcspn(m, "(");

	if (n >= size)
		n = size - 1;
	memcpy(buf, m, n);
	buf[n] = '\0';
}

void plan_call_shape(struct plan_probe *p)
{
	const char *prog = p->prog ? p->prog->name : "";
	struct call_shape *s = &p->shape;
	char fn[128];

	memset(s, 0, sizeof(*s));
	s->entry = !strcmp(prog, "call_detail") || !strcmp(prog, "call_args");
	s->ret = !strcmp(prog, "call_return");
	if (!s->entry && !s->ret)
		return;
	p->desc.call = s;
	native_name(p, fn, sizeof(fn));
	return_kind(p, fn, s);
	if (!s->entry || !p->task_cfg->has_statsd_logging_config)
		return;
	const struct i32_list *pos = &p->task_cfg->statsd.primitive_argument_positions;
	for (size_t i = 0; i < pos->n && s->n_args < CALL_SHAPE_MAX_ARGS; i++) {
		int32_t at = pos->v[i];
		struct call_arg *a = &s->args[s->n_args];
		if (at < 0 || at >= CALL_SHAPE_MAX_ARGS)
			continue;
		a->pos = (uint8_t)at;
		a->reg = (int8_t)plan_arg_register(p->abi, at);
		if (p->java) {
			a->name = ARG_NAMES[at];
			a->kind = java_kind(p->desc.method, a->pos);
		} else {
			native_arg(fn, a->pos, a, p->arg_names[s->n_args],
				   sizeof(p->arg_names[0]));
		}
		if (is_string_pos(p, at) && !strcmp(prog, "call_args"))
			a->kind = CALL_ARG_STR;
		s->n_args++;
	}
}

/* ---- entries waiting for their return ---- */

struct ret_key {
	const char *path;
	uint64_t offset;
};

static int cmp_key(const void *a, const void *b)
{
	const struct ret_key *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (x->offset > y->offset) - (x->offset < y->offset);
}

int plan_call_pairs(struct plan *plan)
{
	size_t n = plan->n_probes;
	struct ret_key *keys = calloc(n ? n : 1, sizeof(*keys));
	size_t k = 0;

	if (!keys)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct plan_probe *p = plan->probe_by_id[i];
		if (p->shape.ret)
			keys[k++] = (struct ret_key){ p->path, p->offset };
	}
	qsort(keys, k, sizeof(*keys), cmp_key);
	for (size_t i = 0; i < n && k; i++) {
		struct plan_probe *p = plan->probe_by_id[i];
		struct ret_key want = { p->path, p->offset };
		if (p->shape.entry)
			p->shape.paired = bsearch(&want, keys, k, sizeof(*keys), cmp_key);
	}
	free(keys);
	return 0;
}
