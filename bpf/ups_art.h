/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ups_art.h — reading the managed (ART) world from a uprobe: Java arguments
 * in registers and in the caller's out-args area, 32-bit object references,
 * native pointers with arm64 top-byte tags, and java.lang.String contents
 * (compressed ASCII or UTF-16, always delivered as NUL-terminated UTF-8).
 * BPF side only; included by ups_bpf.h.
 *
 * ART's managed calling convention (uprobestats-upstream.md §2.5):
 *   arm64:  x0 = ArtMethod*, x1 = this (instance methods), Java argument i in
 *           x(2+i) up to x7; the out-args area is at sp: [sp] = ArtMethod*
 *           slot (8 bytes), then one slot per argument, `this` included
 *           (4 bytes per int/reference, 8 per long).
 *   x86_64: rdi = ArtMethod*, rsi = this, then rdx, rcx, r8, r9; later
 *           arguments only in their out-args slot.  The call pushed the
 *           return address, so the same area starts at rsp + 8.
 * UPS_ARG(ctx, i) is the i-th register of that list on both (x_i / rdi..r9). */
#ifndef UPROBESTATS_BPF_UPS_ART_H
#define UPROBESTATS_BPF_UPS_ART_H

#define UPS_EFAULT 14
#define UPS_ENOMEM 12

/* arm64 top-byte tags (TBI/MTE) on native pointers.  x86_64 user addresses
 * never use the top byte (even with 5-level paging), so this is harmless there. */
#define UPS_UNTAG(addr) ((__u64)(addr) & 0x00FFFFFFFFFFFFFFULL)

/* A reference or Java int/boolean held in a register: only the low 32 bits
 * are defined (AAPCS64 and SysV leave the upper half of a 32-bit value
 * unspecified). */
#define UPS_REF(v) ((__u64)(__u32)(v))
#define UPS_INT(v) ((__s32)(__u32)(v))

/* Managed out-args area: upstream's [sp + off]. */
#if defined(__TARGET_ARCH_arm64)
#define UPS_STACK_BASE(ctx) UPS_SP(ctx)
#else
#define UPS_STACK_BASE(ctx) (UPS_SP(ctx) + 8)
#endif

/* Reading user memory: the _user helpers need 5.5; before that bpf_probe_read
 * and bpf_probe_read_str read user addresses too (arm64 and x86_64 kernels of
 * that age make no difference between the two address spaces for them). */
#ifdef UPS_LEGACY
#define ups_probe_read_user bpf_probe_read
#define ups_probe_read_user_str bpf_probe_read_str
#else
#define ups_probe_read_user bpf_probe_read_user
#define ups_probe_read_user_str bpf_probe_read_user_str
#endif

static __always_inline __u32 ups_read_u32(__u64 addr)
{
	__u32 v = 0;

	ups_probe_read_user(&v, sizeof(v), (const void *)UPS_UNTAG(addr));
	return v;
}

static __always_inline __u64 ups_read_u64(__u64 addr)
{
	__u64 v = 0;

	ups_probe_read_user(&v, sizeof(v), (const void *)UPS_UNTAG(addr));
	return v;
}

/* The reference field at obj + off: 4 bytes, zero-extended (0 when obj is
 * null or unreadable). */
static __always_inline __u64 ups_read_ref(__u64 obj, __u32 off)
{
	return obj ? ups_read_u32(obj + off) : 0;
}

#define UPS_STACK_U32(ctx, off) ups_read_u32(UPS_STACK_BASE(ctx) + (off))
#define UPS_STACK_U64(ctx, off) ups_read_u64(UPS_STACK_BASE(ctx) + (off))

/* The Java argument that arm64 passes in register `reg` and whose out-args
 * slot is `slot`: x86_64 has no register for it when reg >= 6. */
#define UPS_ARG_OR_STACK32(ctx, reg, slot) \
	((reg) < UPS_NUM_ARG_REGS ? (__u32)UPS_ARG(ctx, reg) : UPS_STACK_U32(ctx, slot))
#define UPS_ARG_OR_STACK64(ctx, reg, slot) \
	((reg) < UPS_NUM_ARG_REGS ? (__u64)UPS_ARG(ctx, reg) : UPS_STACK_U64(ctx, slot))

/* ---- java.lang.String ----
 * count (u32) at +8 is length << 1 | flag: flag 0 = compressed (one byte per
 * char; ART compresses only strings of chars 1..0x7f), 1 = UTF-16.  The chars
 * start at +16. */
#define UPS_JSTR_COUNT_OFF 8
#define UPS_JSTR_DATA_OFF 16
#define UPS_JSTR_MAX_UNITS 256

/* A real load from the map each time (the compiler would otherwise keep the
 * value in a register, where the verifier tracks it exactly). */
#define UPS_LOAD_ONCE(x) (*(volatile __typeof__(x) *)&(x))

/* Makes the compiler materialise a clamped value before using it, so the
 * verifier sees the bound on the very register passed to a helper. */
#define UPS_BARRIER_VAR(v) __asm__ volatile("" : "+r"(v))

#ifdef UPS_LEGACY
/* A legacy object copies a UTF-16 string's code units raw behind a 2-byte
 * header (records.h, UPS_RAW_UTF16_TAG) and user space converts them: the
 * conversion loop cannot be unrolled within 4,096 instructions.  At most
 * (size - 4) / 2 units fit, where the UTF-8 form holds size - 1 units. */
static __always_inline int ups_utf16_to_utf8(char *dst, __u64 size, __u64 data, __u64 len)
{
	__u64 n = len;

	UPS_BARRIER_VAR(n);
	if (n > (size - UPS_RAW_UTF16_HDR) / 2)
		n = (size - UPS_RAW_UTF16_HDR) / 2;
	UPS_BARRIER_VAR(n);
	if (n == 0)
		return 0;
	if (ups_probe_read_user(dst + UPS_RAW_UTF16_HDR, n * 2, (const void *)data) < 0)
		return -UPS_EFAULT;
	dst[0] = (char)UPS_RAW_UTF16_TAG;
	dst[1] = (char)n;
	dst[2] = (char)(size & 0xff);
	dst[3] = (char)(size >> 8);
	return 0;
}
#else
/* Per-CPU workspace of the UTF-16 path.  The output position lives here, not
 * in a register, on purpose: loaded from map memory it is a bounded unknown to
 * the verifier, so every loop iteration verifies as one state instead of one
 * state per possible output length. */
struct ups_jstr_scratch {
	__u16 units[UPS_JSTR_MAX_UNITS];
	__u32 out;
	__u32 high;   /* pending high surrogate, 0 if none */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ups_jstr_scratch);
} ups_jstr SEC(".maps");

/* Appends code point cp as UTF-8 if it fits with room for the final NUL.
 * Returns -1 when it does not (the string ends on a whole character).  Each
 * branch bounds o itself, so the verifier sees every store in range. */
static __always_inline int ups_put_cp(char *dst, __u64 size, struct ups_jstr_scratch *s,
				      __u32 cp)
{
	__u64 o = UPS_LOAD_ONCE(s->out);

	if (cp < 0x80) {
		if (o > size - 2)
			return -1;
		dst[o] = (char)cp;
		s->out = (__u32)(o + 1);
	} else if (cp < 0x800) {
		if (o > size - 3)
			return -1;
		dst[o] = (char)(0xC0 | (cp >> 6));
		dst[o + 1] = (char)(0x80 | (cp & 0x3F));
		s->out = (__u32)(o + 2);
	} else if (cp < 0x10000) {
		if (o > size - 4)
			return -1;
		dst[o] = (char)(0xE0 | (cp >> 12));
		dst[o + 1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		dst[o + 2] = (char)(0x80 | (cp & 0x3F));
		s->out = (__u32)(o + 3);
	} else {
		if (o > size - 5)
			return -1;
		dst[o] = (char)(0xF0 | (cp >> 18));
		dst[o + 1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		dst[o + 2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		dst[o + 3] = (char)(0x80 | (cp & 0x3F));
		s->out = (__u32)(o + 4);
	}
	return 0;
}

/* One UTF-16 code unit: pairs surrogates, replaces unpaired ones by U+FFFD. */
static __always_inline int ups_put_unit(char *dst, __u64 size, struct ups_jstr_scratch *s,
					__u32 c)
{
	__u32 high = UPS_LOAD_ONCE(s->high);

	if (high) {
		s->high = 0;
		if (c >= 0xDC00 && c <= 0xDFFF)
			return ups_put_cp(dst, size, s,
					  0x10000 + ((high - 0xD800) << 10) + (c - 0xDC00));
		if (ups_put_cp(dst, size, s, 0xFFFD) < 0)
			return -1;
	}
	if (c >= 0xD800 && c <= 0xDBFF) {
		s->high = c;
		return 0;
	}
	if (c >= 0xDC00 && c <= 0xDFFF)
		c = 0xFFFD;
	return ups_put_cp(dst, size, s, c);
}

static __always_inline int ups_utf16_to_utf8(char *dst, __u64 size, __u64 data, __u64 len)
{
	struct ups_jstr_scratch *s;
	__u32 zero = 0;
	__u64 n, o;

	s = bpf_map_lookup_elem(&ups_jstr, &zero);
	if (!s)
		return -UPS_ENOMEM;
	/* Every unit yields at least one byte: size - 1 units fill the field. */
	n = len;
	UPS_BARRIER_VAR(n);
	if (n > size - 1)
		n = size - 1;
	if (n > UPS_JSTR_MAX_UNITS)
		n = UPS_JSTR_MAX_UNITS;
	UPS_BARRIER_VAR(n);
	if (ups_probe_read_user(s->units, n * 2, (const void *)data) < 0)
		return -UPS_EFAULT;
	s->out = 0;
	s->high = 0;
#pragma clang loop unroll(disable)
	for (__u64 i = 0; i < UPS_JSTR_MAX_UNITS; i++) {
		if (i >= n || ups_put_unit(dst, size, s, s->units[i]) < 0)
			break;
	}
	if (UPS_LOAD_ONCE(s->high))
		ups_put_cp(dst, size, s, 0xFFFD);
	o = UPS_LOAD_ONCE(s->out);
	if (o > size - 1)
		o = size - 1;
	dst[o] = 0;
	return 0;
}

#endif

/* Copies the Java String referenced by str into dst[size] (size a constant
 * >= 8) as NUL-terminated UTF-8, truncated on a character boundary.  A null
 * or unreadable string leaves "" and returns -EFAULT. */
static __always_inline int ups_read_jstring(char *dst, __u64 size, __u64 str)
{
	__u32 count = 0;
	__u64 len;
	long rc;

	dst[0] = 0;
	if (!str)
		return -UPS_EFAULT;
	if (ups_probe_read_user(&count, sizeof(count),
				(const void *)(str + UPS_JSTR_COUNT_OFF)) < 0)
		return -UPS_EFAULT;
	len = count >> 1;
	UPS_BARRIER_VAR(len);   /* compare len itself, not count, below */
	if (count & 1)
		return ups_utf16_to_utf8(dst, size, str + UPS_JSTR_DATA_OFF, len);
	if (len > size - 1)
		len = size - 1;
	UPS_BARRIER_VAR(len);
	rc = ups_probe_read_user_str(dst, len + 1, (const void *)(str + UPS_JSTR_DATA_OFF));
	return rc < 0 ? (int)rc : 0;
}

/* A native NUL-terminated C string (char *) at str, up to size - 1 bytes
 * and a NUL; "" when str is NULL or unreadable.  The bytes are copied as
 * they are: user space cuts them before the first invalid UTF-8 sequence.
 * Helper: bpf_probe_read_user_str (5.5+; the pre-5.5 build maps it to
 * bpf_probe_read_str, as for Java Strings). */
static __always_inline int ups_read_cstring(char *dst, __u64 size, __u64 str)
{
	long rc;

	dst[0] = 0;
	if (!str)
		return -UPS_EFAULT;
	rc = ups_probe_read_user_str(dst, size, (const void *)str);
	if (rc < 0)
		dst[0] = 0;
	return rc < 0 ? (int)rc : 0;
}

/* The String whose reference is in field `off` of object obj. */
static __always_inline int ups_read_jstring_field(char *dst, __u64 size, __u64 obj, __u32 off)
{
	return ups_read_jstring(dst, size, ups_read_ref(obj, off));
}

#endif
