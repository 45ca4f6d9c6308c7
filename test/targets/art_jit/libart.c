/* libart.so for the tests — ART's debugger interface as ART publishes it
 * (art/runtime/jit/debugger_interface.cc, Android 12+: "Android2"), written
 * from that protocol and not from uprobestats' reader, plus "JIT code" and
 * "interpreters" to be found through it.  No real ART runs here.
 *
 *   __jit_debug_descriptor, __dex_debug_descriptor: version 1, magic
 *     "Android2", sizeof_descriptor 56, sizeof_entry 48, action_seqlock and
 *     action_timestamp; each entry next, prev, symfile_addr, symfile_size,
 *     register_timestamp, seqlock; every change of a list is bracketed by
 *     the descriptor's seqlock (odd while it changes), an entry is removed by
 *     making its own seqlock odd, and __jit_debug_register_code /
 *     __dex_debug_register_code are called after each change, as ART does.
 *   JIT code: a memfd named "jit-cache" mapped twice, a writable view the
 *     "compiler" writes and an executable view the code runs from (ART's
 *     dual view).  Each method gets a symfile ELF built in memory: .text
 *     SHT_NOBITS at the code's address, .symtab with one STT_FUNC per method
 *     named as ART's mini debug info names it (PrettyMethod without the
 *     signature), .debug_frame with its CFI.  Methods are registered one
 *     entry each, then repacked as ART does (one entry per 64 KiB of code
 *     replaces the single ones, which are removed); one entry's debug data
 *     is xz-compressed into .gnu_debugdata (by the xz tool, at setup).
 *   interpreters: art_nterp_entry keeps the dex pc pointer in r12 and
 *     art_switch_entry in rbx, and their CFI carries ART's DEX1 rule over
 *     that register (a DW_CFA_val_expression: DW_OP_const4u "DEX1",
 *     DW_OP_drop, DW_OP_bregx reg 0), as Debian's real libart.so does
 *     (mterp: rdi over r12; ExecuteSwitchImplAsm: rax over rbx).  On arm64
 *     the nterp-like one keeps it in x22 and the switch-like one in x19, the
 *     rule over x0 as ART's arm64 interpreters have it.
 *
 * x86_64 (test/e2e/test_jit.py) and arm64 (the VM: test/vm/vmtest_jit.c).  The parts
 * that differ are the "compiler"'s code and CFI, the interpreters' inline
 * asm, the ELF machine, and the xz entry: on x86_64 the xz tool compresses
 * it; the arm64 VM has no xz compressor, so there the stream is written
 * here, its LZMA2 chunks stored (uncompressed chunks, as xz itself writes
 * incompressible data). */
#define _GNU_SOURCE
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "art_jit.h"

/* ---- the debugger interface ---- */

struct jit_code_entry {
	struct jit_code_entry *next, *prev;
	const uint8_t *symfile_addr;
	uint64_t symfile_size;
	uint64_t register_timestamp;
	uint32_t seqlock;
};

struct jit_descriptor {
	uint32_t version, action_flag;
	struct jit_code_entry *relevant_entry, *first_entry;
	uint8_t magic[8];
	uint32_t flags, sizeof_descriptor, sizeof_entry;
	uint32_t action_seqlock;
	uint64_t action_timestamp;
};

_Static_assert(sizeof(struct jit_descriptor) == 56, "Android2 descriptor");
_Static_assert(sizeof(struct jit_code_entry) == 48, "Android2 entry");

__attribute__((visibility("default"), used)) struct jit_descriptor __jit_debug_descriptor = {
	1, 0, NULL, NULL, "Android2", 0, sizeof(struct jit_descriptor),
	sizeof(struct jit_code_entry), 0, 1
};
__attribute__((visibility("default"), used)) struct jit_descriptor __dex_debug_descriptor = {
	1, 0, NULL, NULL, "Android2", 0, sizeof(struct jit_descriptor),
	sizeof(struct jit_code_entry), 0, 1
};

__attribute__((visibility("default"), noinline)) void __jit_debug_register_code(void)
{
	__asm__ volatile("");
}
__attribute__((visibility("default"), noinline)) void __dex_debug_register_code(void)
{
	__asm__ volatile("");
}

static void seq_lock(struct jit_descriptor *d)
{
	__atomic_fetch_add(&d->action_seqlock, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void seq_unlock(struct jit_descriptor *d)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_fetch_add(&d->action_seqlock, 1, __ATOMIC_RELAXED);
}

static struct jit_code_entry *add_entry(struct jit_descriptor *d, const void *sym, size_t size)
{
	struct jit_code_entry *e = calloc(1, sizeof(*e));
	uint64_t ts = d->action_timestamp + 1;

	e->symfile_addr = sym;
	e->symfile_size = size;
	e->register_timestamp = ts;
	seq_lock(d);
	e->next = d->first_entry;
	if (e->next)
		e->next->prev = e;
	d->first_entry = e;
	d->relevant_entry = e;
	d->action_flag = 1;   /* JIT_REGISTER_FN */
	d->action_timestamp = ts;
	seq_unlock(d);
	if (d == &__jit_debug_descriptor)
		__jit_debug_register_code();
	else
		__dex_debug_register_code();
	return e;
}

static void remove_entry(struct jit_descriptor *d, struct jit_code_entry *e)
{
	seq_lock(d);
	/* the entry's own seqlock odd: a reader holding it knows it is gone */
	__atomic_fetch_add(&e->seqlock, 1, __ATOMIC_RELAXED);
	if (e->prev)
		e->prev->next = e->next;
	else
		d->first_entry = e->next;
	if (e->next)
		e->next->prev = e->prev;
	d->relevant_entry = e;
	d->action_flag = 2;   /* JIT_UNREGISTER_FN */
	d->action_timestamp++;
	seq_unlock(d);
	__jit_debug_register_code();
	/* ART frees the entry and its symfile here; kept (zeroed) so that a late
	 * reader reads a dead entry rather than freed memory in this test */
	memset(e, 0, offsetof(struct jit_code_entry, seqlock));
}

/* ---- symfile ELFs ---- */

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put_u8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void align(struct buf *b, size_t a, uint8_t fill)
{
	while (b->n % a)
		put_u8(b, fill);
}

#ifdef __aarch64__
/* .debug_frame (arm64): one CIE (version 1, code align 4, data align -8,
 * return address x30; CFA sp+0, x30 holding the return address) and per
 * method an FDE: after the `stp x29, x30, [sp, #-16]!` the CFA is sp+16,
 * x29 at cfa-16 and x30 at cfa-8; at the final `ret` (after the ldp) sp+0,
 * both restored. */
static void cie_rules(struct buf *b)
{
	put_u8(b, 4);                  /* code alignment */
	put_u8(b, 0x78);               /* data alignment -8 (sleb) */
	put_u8(b, 30);                 /* return address column: x30 */
	put_u8(b, 0x0c); put_u8(b, 31); put_u8(b, 0);  /* def_cfa sp+0 */
}

static void fde_rules(struct buf *b, const struct jit_method *m)
{
	put_u8(b, 0x40 | 1);                            /* advance 1 insn */
	put_u8(b, 0x0e); put_u8(b, 16);                 /* def_cfa_offset 16 */
	put_u8(b, 0x80 | 29); put_u8(b, 2);             /* offset x29 cfa-16 */
	put_u8(b, 0x80 | 30); put_u8(b, 1);             /* offset x30 cfa-8 */
	put_u8(b, 0x40 | (uint8_t)((m->size - 8) / 4)); /* advance to ret */
	put_u8(b, 0x0e); put_u8(b, 0);                  /* def_cfa_offset 0 */
	put_u8(b, 0xc0 | 29);                           /* restore x29 */
	put_u8(b, 0xc0 | 30);                           /* restore x30 */
}
#else
/* .debug_frame (x86_64): one CIE (version 1, code align 1, data align -8,
 * return address r16; CFA rsp+8, ra at cfa-8) and per method an FDE: after
 * the 4-byte `sub $0x18,%rsp` the CFA is rsp+0x20, at the final `ret` rsp+8. */
static void cie_rules(struct buf *b)
{
	put_u8(b, 1);                  /* code alignment */
	put_u8(b, 0x78);               /* data alignment -8 (sleb) */
	put_u8(b, 16);                 /* return address column */
	put_u8(b, 0x0c); put_u8(b, 7); put_u8(b, 8);   /* def_cfa rsp+8 */
	put_u8(b, 0x80 | 16); put_u8(b, 1);            /* offset r16 cfa-8 */
}

static void fde_rules(struct buf *b, const struct jit_method *m)
{
	put_u8(b, 0x40 | 4);                            /* advance 4 */
	put_u8(b, 0x0e); put_u8(b, 0x20);               /* def_cfa_offset 0x20 */
	put_u8(b, 0x02); put_u8(b, (uint8_t)(m->size - 1 - 4)); /* advance to ret */
	put_u8(b, 0x0e); put_u8(b, 8);
}
#endif

static void debug_frame(struct buf *b, const struct jit_method *m, size_t n)
{
	size_t cie_at = b->n;

	put_u32(b, 0);                 /* length, patched */
	put_u32(b, 0xffffffffu);       /* CIE id in .debug_frame */
	put_u8(b, 1);                  /* version */
	put_u8(b, 0);                  /* augmentation "" */
	cie_rules(b);
	align(b, 8, 0);
	uint32_t len = (uint32_t)(b->n - cie_at - 4);
	memcpy(b->p + cie_at, &len, 4);
	for (size_t i = 0; i < n; i++) {
		size_t at = b->n;
		put_u32(b, 0);
		put_u32(b, (uint32_t)cie_at);
		put_u64(b, m[i].addr);
		put_u64(b, m[i].size);
		fde_rules(b, &m[i]);
		align(b, 8, 0);
		len = (uint32_t)(b->n - at - 4);
		memcpy(b->p + at, &len, 4);
	}
}

struct sec {
	const char *name;
	uint32_t type, link, info;
	uint64_t flags, addr, entsize;
	struct buf data;
	uint64_t nobits_size;
};

/* An ELF64 ET_DYN file (this machine's) of the sections given (index 0 added). */
static struct buf elf_of(struct sec *s, size_t n)
{
	struct buf out = { 0 }, shstr = { 0 };
	uint32_t name_off[16];
	uint64_t off[16];
	Elf64_Ehdr eh = { 0 };

	put_u8(&shstr, 0);
	for (size_t i = 0; i < n; i++) {
		name_off[i] = (uint32_t)shstr.n;
		put(&shstr, s[i].name, strlen(s[i].name) + 1);
	}
	name_off[n] = (uint32_t)shstr.n;
	put(&shstr, ".shstrtab", 10);
	put(&out, &eh, sizeof(eh));
	for (size_t i = 0; i < n; i++) {
		align(&out, 8, 0);
		off[i] = out.n;
		if (s[i].type != SHT_NOBITS)
			put(&out, s[i].data.p, s[i].data.n);
	}
	off[n] = out.n;
	put(&out, shstr.p, shstr.n);
	align(&out, 8, 0);
	size_t shoff = out.n;
	Elf64_Shdr sh = { 0 };
	put(&out, &sh, sizeof(sh));
	for (size_t i = 0; i <= n; i++) {
		sh = (Elf64_Shdr){ .sh_name = name_off[i], .sh_offset = off[i], .sh_addralign = 8 };
		if (i < n) {
			sh.sh_type = s[i].type;
			sh.sh_flags = s[i].flags;
			sh.sh_addr = s[i].addr;
			sh.sh_size = s[i].type == SHT_NOBITS ? s[i].nobits_size : s[i].data.n;
			sh.sh_link = s[i].link;
			sh.sh_info = s[i].info;
			sh.sh_entsize = s[i].entsize;
		} else {
			sh.sh_type = SHT_STRTAB;
			sh.sh_size = shstr.n;
		}
		put(&out, &sh, sizeof(sh));
	}
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
#ifdef __aarch64__
	eh.e_machine = EM_AARCH64;
#else
	eh.e_machine = EM_X86_64;
#endif
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = shoff;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (uint16_t)(n + 2);
	eh.e_shstrndx = (uint16_t)(n + 1);
	memcpy(out.p, &eh, sizeof(eh));
	free(shstr.p);
	for (size_t i = 0; i < n; i++)
		free(s[i].data.p);
	return out;
}

/* .text (NOBITS over the methods' span), .symtab/.strtab, .debug_frame. */
static size_t debug_sections(struct sec *s, const struct jit_method *m, size_t n, size_t first)
{
	uint64_t lo = m[0].addr, hi = m[0].addr + m[0].size;
	struct buf sym = { 0 }, str = { 0 }, df = { 0 };
	Elf64_Sym z = { 0 };

	for (size_t i = 1; i < n; i++) {
		lo = m[i].addr < lo ? m[i].addr : lo;
		hi = m[i].addr + m[i].size > hi ? m[i].addr + m[i].size : hi;
	}
	put_u8(&str, 0);
	put(&sym, &z, sizeof(z));
	for (size_t i = 0; i < n; i++) {
		Elf64_Sym e = { .st_name = (uint32_t)str.n, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = (uint16_t)(first + 1), .st_value = m[i].addr, .st_size = m[i].size };
		put(&str, m[i].name, strlen(m[i].name) + 1);
		put(&sym, &e, sizeof(e));
	}
	debug_frame(&df, m, n);
	s[0] = (struct sec){ ".text", SHT_NOBITS, 0, 0, SHF_ALLOC | SHF_EXECINSTR, lo, 0, { 0 }, hi - lo };
	s[1] = (struct sec){ ".symtab", SHT_SYMTAB, (uint32_t)(first + 3), 1, 0, 0, sizeof(Elf64_Sym), sym, 0 };
	s[2] = (struct sec){ ".strtab", SHT_STRTAB, 0, 0, 0, 0, 0, str, 0 };
	s[3] = (struct sec){ ".debug_frame", SHT_PROGBITS, 0, 0, 0, 0, 0, df, 0 };
	return 4;
}

static struct buf symfile(const struct jit_method *m, size_t n)
{
	struct sec s[4];

	debug_sections(s, m, n, 0);
	return elf_of(s, 4);
}

#ifdef __aarch64__
/* An .xz stream (the xz file format, 1.0.4) of one block whose LZMA2 chunks
 * are stored: control 1 (dictionary reset) then 2, at most 64 KiB each,
 * then the end marker; CRC32 check, index and footer. */
static uint32_t crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

static void put_varint(struct buf *b, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		put_u8(b, (uint8_t)(v | 0x80));
	put_u8(b, (uint8_t)v);
}

static struct buf xz_stored(const struct buf *in)
{
	static const uint8_t magic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
	static const uint8_t flags[2] = { 0, 1 };      /* check: CRC32 */
	/* block header: size (12 / 4 - 1), flags (one filter, no sizes),
	 * filter LZMA2 (0x21) with one property byte (dictionary 64 KiB),
	 * padding to 8, then its CRC32 */
	uint8_t bh[8] = { 2, 0, 0x21, 1, 8, 0, 0, 0 };
	struct buf b = { 0 }, idx = { 0 };
	size_t data_at;

	put(&b, magic, 6);
	put(&b, flags, 2);
	put_u32(&b, crc32(flags, 2));
	put(&b, bh, 8);
	put_u32(&b, crc32(bh, 8));
	data_at = b.n;
	for (size_t at = 0; at < in->n;) {
		size_t k = in->n - at > 65536 ? 65536 : in->n - at;
		put_u8(&b, at == 0 ? 1 : 2);
		put_u8(&b, (uint8_t)((k - 1) >> 8));
		put_u8(&b, (uint8_t)(k - 1));
		put(&b, in->p + at, k);
		at += k;
	}
	put_u8(&b, 0);
	uint64_t unpadded = 12 + (b.n - data_at) + 4;
	align(&b, 4, 0);
	put_u32(&b, crc32(in->p, in->n));
	put_u8(&idx, 0);                                /* index indicator */
	put_varint(&idx, 1);                            /* one record */
	put_varint(&idx, unpadded);
	put_varint(&idx, in->n);
	align(&idx, 4, 0);
	put_u32(&idx, crc32(idx.p, idx.n));
	put(&b, idx.p, idx.n);
	uint8_t foot[6];
	uint32_t backward = (uint32_t)(idx.n / 4 - 1);
	memcpy(foot, &backward, 4);
	memcpy(foot + 4, flags, 2);
	put_u32(&b, crc32(foot, 6));
	put(&b, foot, 6);
	put_u8(&b, 'Y');
	put_u8(&b, 'Z');
	free(idx.p);
	return b;
}

static struct buf xz_compress(const struct buf *in)
{
	return xz_stored(in);
}
#else
/* By the xz tool (LZMA2 compressed chunks, CRC64). */
static struct buf xz_compress(const struct buf *in)
{
	char in_path[] = "/tmp/art-jit-XXXXXX", cmd[128];
	int fd = mkstemp(in_path);
	struct buf xz = { 0 };
	uint8_t chunk[4096];
	size_t got;
	FILE *p;

	if (fd < 0 || write(fd, in->p, in->n) != (ssize_t)in->n)
		abort();
	close(fd);
	snprintf(cmd, sizeof(cmd), "xz --format=xz --check=crc64 -c %s", in_path);
	if (!(p = popen(cmd, "r")))
		abort();
	while ((got = fread(chunk, 1, sizeof(chunk), p)) > 0)
		put(&xz, chunk, got);
	if (pclose(p) != 0 || !xz.n)
		abort();
	unlink(in_path);
	return xz;
}
#endif

/* The debug data in .gnu_debugdata, xz-compressed. */
static struct buf symfile_xz(const struct jit_method *m, size_t n)
{
	struct buf inner = symfile(m, n), xz = xz_compress(&inner);
	struct sec s[2];

	free(inner.p);
	s[0] = (struct sec){ ".text", SHT_NOBITS, 0, 0, SHF_ALLOC | SHF_EXECINSTR, m[0].addr, 0, { 0 },
			     m[n - 1].addr + m[n - 1].size - m[0].addr };
	s[1] = (struct sec){ ".gnu_debugdata", SHT_PROGBITS, 0, 0, 0, 0, 0, xz, 0 };
	return elf_of(s, 2);
}

/* ---- the "compiler" ---- */

#ifdef __aarch64__
/* arm64 code, encoded here instruction by instruction:
 *   calls next:  stp x29, x30, [sp, #-16]!; ldr x16, [x0], #8; blr x16;
 *                ldp x29, x30, [sp], #16; ret
 *   calls write: stp x29, x30, [sp, #-16]!; ldr x16, [x0]; ldr x1, [x0, #16];
 *                ldr x2, [x0, #24]; ldr x0, [x0, #8]; blr x16;
 *                ldp x29, x30, [sp], #16; ret
 * Returns the code's size; *ret_off the offset after the blr. */
static uint32_t a64_ldr_post(unsigned t, unsigned n, unsigned imm9)
{
	return 0xf8400400u | (imm9 & 0x1ffu) << 12 | n << 5 | t;
}
static uint32_t a64_ldr(unsigned t, unsigned n, unsigned off)
{
	return 0xf9400000u | (off / 8) << 10 | n << 5 | t;
}
static uint32_t a64_blr(unsigned n) { return 0xd63f0000u | n << 5; }
#define A64_STP_FP_LR_PRE 0xa9bf7bfdu  /* stp x29, x30, [sp, #-16]! */
#define A64_LDP_FP_LR_POST 0xa8c17bfdu /* ldp x29, x30, [sp], #16 */
#define A64_RET 0xd65f03c0u

static size_t compile(uint8_t *to, bool calls_write, uint64_t *ret_off)
{
	uint32_t insn[8];
	size_t k = 0;

	insn[k++] = A64_STP_FP_LR_PRE;
	if (calls_write) {
		insn[k++] = a64_ldr(16, 0, 0);
		insn[k++] = a64_ldr(1, 0, 16);
		insn[k++] = a64_ldr(2, 0, 24);
		insn[k++] = a64_ldr(0, 0, 8);
	} else {
		insn[k++] = a64_ldr_post(16, 0, 8);
	}
	insn[k++] = a64_blr(16);
	*ret_off = k * 4;
	insn[k++] = A64_LDP_FP_LR_POST;
	insn[k++] = A64_RET;
	memcpy(to, insn, k * 4);
	return k * 4;
}
#else
/* sub $0x18,%rsp; mov (%rdi),%rax; add $8,%rdi; call *%rax; add $0x18,%rsp; ret */
static const uint8_t code_calls_next[] = { 0x48, 0x83, 0xec, 0x18, 0x48, 0x8b, 0x07, 0x48,
					   0x83, 0xc7, 0x08, 0xff, 0xd0, 0x48, 0x83, 0xc4,
					   0x18, 0xc3 };
/* sub $0x18,%rsp; mov (%rdi),%rax; mov 0x10(%rdi),%rsi; mov 0x18(%rdi),%rdx;
 * mov 0x8(%rdi),%rdi; call *%rax; add $0x18,%rsp; ret */
static const uint8_t code_calls_write[] = { 0x48, 0x83, 0xec, 0x18, 0x48, 0x8b, 0x07, 0x48,
					    0x8b, 0x77, 0x10, 0x48, 0x8b, 0x57, 0x18, 0x48,
					    0x8b, 0x7f, 0x08, 0xff, 0xd0, 0x48, 0x83, 0xc4,
					    0x18, 0xc3 };

static size_t compile(uint8_t *to, bool calls_write, uint64_t *ret_off)
{
	const uint8_t *code = calls_write ? code_calls_write : code_calls_next;
	size_t len = calls_write ? sizeof(code_calls_write) : sizeof(code_calls_next);

	memcpy(to, code, len);
	*ret_off = len - 5;   /* the instruction after `call *%rax` */
	return len;
}
#endif

#define CACHE_SIZE (256u << 10)

int art_jit_setup(struct jit_method *m, size_t n)
{
	int fd = memfd_create("jit-cache", MFD_CLOEXEC);
	uint8_t *rw, *rx;
	size_t at = 0;

	if (fd < 0 || ftruncate(fd, CACHE_SIZE) < 0)
		return -1;
	rw = mmap(NULL, CACHE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rx = mmap(NULL, CACHE_SIZE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	close(fd);
	if (rw == MAP_FAILED || rx == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < n; i++) {
		/* the last method in a 64 KiB group of its own, as a method compiled
		 * later lands elsewhere in the cache */
		if (i == n - 1)
			at = 64u << 10;
		size_t len = compile(rw + at, m[i].calls_write, &m[i].ret_off);
		m[i].addr = (uint64_t)(uintptr_t)(rx + at);
		m[i].size = len;
		at += (len + 15) & ~15u;
	}
	__builtin___clear_cache((char *)rx, (char *)rx + CACHE_SIZE);

	/* registered one entry per method, as each is compiled... */
	struct jit_code_entry *single[16];
	struct buf files[16];
	for (size_t i = 0; i < n && i < 16; i++) {
		files[i] = symfile(&m[i], 1);
		single[i] = add_entry(&__jit_debug_descriptor, files[i].p, files[i].n);
	}
	/* ...then repacked: one entry for the group of the first n-1 methods (the
	 * same 64 KiB), the last one's alone and compressed; the singles go */
	struct buf packed = symfile(m, n - 1), last = symfile_xz(&m[n - 1], 1);
	add_entry(&__jit_debug_descriptor, packed.p, packed.n);
	add_entry(&__jit_debug_descriptor, last.p, last.n);
	for (size_t i = 0; i < n && i < 16; i++)
		remove_entry(&__jit_debug_descriptor, single[i]);
	return 0;
}

void art_dex_register(const void *dex, size_t size)
{
	add_entry(&__dex_debug_descriptor, dex, size);
}

/* ---- native ART code around the Java frames ---- */

__attribute__((visibility("default"), noinline)) void art_quick_invoke(const uint64_t *chain)
{
	((void (*)(const uint64_t *))(uintptr_t)chain[0])(chain + 1);
	__asm__ volatile("" ::: "memory");
}

#ifdef __aarch64__
/* The interpreters (arm64): the dex pc pointer (x0) kept in x22 (nterp's
 * xPC) / x19 (ExecuteSwitchImplAsm's) across the call of the method's
 * callee (x1: a chain as art_quick_invoke's), the CFI saying so with ART's
 * DEX1 rule over x0, as ART's CFI_DEFINE_DEX_PC_WITH_OFFSET(0, reg, 0). */
__asm__(
	".text\n"
	".globl art_nterp_entry\n"
	".type art_nterp_entry,%function\n"
	".p2align 2\n"
	"art_nterp_entry:\n"
	".cfi_startproc\n"
	"	stp x29, x30, [sp, #-32]!\n"
	".cfi_def_cfa_offset 32\n"
	".cfi_offset 29, -32\n"
	".cfi_offset 30, -24\n"
	"	str x22, [sp, #16]\n"
	".cfi_offset 22, -16\n"
	"	mov x22, x0\n"
	/* DW_CFA_val_expression x0: const4u 'DEX1'; drop; bregx x22 0 */
	".cfi_escape 0x16, 0, 9, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 22, 0\n"
	"	ldr x16, [x1]\n"
	"	add x0, x1, #8\n"
	"	blr x16\n"
	"	ldr x22, [sp, #16]\n"
	"	ldp x29, x30, [sp], #32\n"
	".cfi_def_cfa_offset 0\n"
	"	ret\n"
	".cfi_endproc\n"
	".size art_nterp_entry, .-art_nterp_entry\n"
	".globl art_switch_entry\n"
	".type art_switch_entry,%function\n"
	".p2align 2\n"
	"art_switch_entry:\n"
	".cfi_startproc\n"
	"	stp x29, x30, [sp, #-32]!\n"
	".cfi_def_cfa_offset 32\n"
	".cfi_offset 29, -32\n"
	".cfi_offset 30, -24\n"
	"	str x19, [sp, #16]\n"
	".cfi_offset 19, -16\n"
	"	mov x19, x0\n"
	/* DW_CFA_val_expression x0: const4u 'DEX1'; drop; bregx x19 0 */
	".cfi_escape 0x16, 0, 9, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 19, 0\n"
	"	ldr x16, [x1]\n"
	"	add x0, x1, #8\n"
	"	blr x16\n"
	"	ldr x19, [sp, #16]\n"
	"	ldp x29, x30, [sp], #32\n"
	".cfi_def_cfa_offset 0\n"
	"	ret\n"
	".cfi_endproc\n"
	".size art_switch_entry, .-art_switch_entry\n");
#else
/* The interpreters: the dex pc pointer (rdi) kept in r12 / rbx across the
 * call of the method's callee (rsi: a chain as art_quick_invoke's), the CFI
 * saying so with ART's DEX1 rule. */
__asm__(
	".text\n"
	".globl art_nterp_entry\n"
	".type art_nterp_entry,@function\n"
	"art_nterp_entry:\n"
	".cfi_startproc\n"
	"	push %r12\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %r12, -16\n"
	"	mov %rdi, %r12\n"
	/* DW_CFA_val_expression rdi: const4u 'DEX1'; drop; bregx r12 0 */
	".cfi_escape 0x16, 5, 9, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 12, 0\n"
	"	mov (%rsi), %rax\n"
	"	lea 8(%rsi), %rdi\n"
	"	call *%rax\n"
	"	pop %r12\n"
	".cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size art_nterp_entry, .-art_nterp_entry\n"
	".globl art_switch_entry\n"
	".type art_switch_entry,@function\n"
	"art_switch_entry:\n"
	".cfi_startproc\n"
	"	push %rbx\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbx, -16\n"
	"	mov %rdi, %rbx\n"
	/* DW_CFA_val_expression rax: const4u 'DEX1'; drop; bregx rbx 0 */
	".cfi_escape 0x16, 0, 9, 0x0c, 0x44, 0x45, 0x58, 0x31, 0x13, 0x92, 3, 0\n"
	"	mov (%rsi), %rax\n"
	"	lea 8(%rsi), %rdi\n"
	"	call *%rax\n"
	"	pop %rbx\n"
	".cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size art_switch_entry, .-art_switch_entry\n");
#endif

void art_nterp_entry(const void *dex_pc, const uint64_t *chain);
void art_switch_entry(const void *dex_pc, const uint64_t *chain);

__attribute__((visibility("default"), noinline)) void art_interpret(int which, const void *dex_pc,
								     const uint64_t *chain)
{
	if (which)
		art_switch_entry(dex_pc, chain);
	else
		art_nterp_entry(dex_pc, chain);
	__asm__ volatile("" ::: "memory");
}
