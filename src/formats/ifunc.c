#include "formats/ifunc.h"

#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "formats/insn.h"

#define IFUNC_MAX_TARGETS 16
#define IFUNC_MAX_CODE 512      /* resolvers are a few instructions; bionic's 12-60 bytes */

static size_t add_target(uint64_t *out, size_t n, size_t max, uint64_t t)
{
	for (size_t i = 0; i < n; i++)
		if (out[i] == t)
			return n;
	if (n < max)
		out[n++] = t;
	return n;
}

/* adrp Xd, page then add Xd', Xd, #imm: the page per register, completed by the add. */
static size_t arm64_targets(const uint8_t *code, size_t size, uint64_t vaddr, uint64_t *out,
			    size_t max)
{
	uint64_t page[32];
	bool have[32] = { false };
	size_t n = 0;

	for (size_t i = 0; i + 4 <= size; i += 4) {
		uint32_t w = a64_word(code + i);
		uint64_t pc = vaddr + i;
		unsigned rd = w & 31, rn = (w >> 5) & 31;
		if ((w & 0x9f000000u) == 0x90000000u) {             /* adrp */
			uint64_t imm = ((uint64_t)((w >> 5) & 0x7ffff) << 2) | ((w >> 29) & 3);
			int64_t off = (int64_t)(imm << 43) >> 31;       /* sign-extend 21 bits, << 12 */
			page[rd] = (pc & ~(uint64_t)0xfff) + (uint64_t)off;
			have[rd] = true;
		} else if ((w & 0xff800000u) == 0x91000000u) {      /* add Xd, Xn, #imm{, lsl 12} */
			uint64_t imm = (w >> 10) & 0xfff;
			if (have[rn])
				n = add_target(out, n, max, page[rn] + (w & (1u << 22) ? imm << 12 : imm));
			have[rd] = false;
		} else {
			have[rd] = false;   /* anything else may overwrite Xd */
		}
	}
	return n;
}

/* lea r64, [rip+disp32], decoded instruction by instruction from the start. */
static size_t x86_64_targets(const uint8_t *code, size_t size, uint64_t vaddr, uint64_t *out,
			     size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < size;) {
		struct insn_x86_64 in;
		unsigned len = insn_x86_64_decode(code + i, size - i, &in);
		if (!len)
			break;
		if (in.map == 0 && in.opcode == 0x8d && in.rip_relative)
			n = add_target(out, n, max, vaddr + i + len + (int64_t)in.rip_disp);
		i += len;   /* past a ret too: a resolver may have several exits */
	}
	return n;
}

size_t ifunc_targets(uint16_t machine, const uint8_t *code, size_t size, uint64_t vaddr,
		     uint64_t *out, size_t max)
{
	if (machine == EM_AARCH64)
		return arm64_targets(code, size, vaddr, out, max);
	if (machine == EM_X86_64)
		return x86_64_targets(code, size, vaddr, out, max);
	return 0;
}

struct naming {
	const struct elf_file *f;
	const uint64_t *targets;
	size_t n;
	const char *names[IFUNC_MAX_TARGETS];
};

static bool in_code(const struct elf_file *f, uint16_t shndx)
{
	struct elf_section sh;

	return shndx != SHN_UNDEF && shndx < SHN_LORESERVE && !elf_section_at(f, shndx, &sh) &&
	       (sh.flags & SHF_EXECINSTR);
}

static int name_target(void *ctx, const char *name, const struct elf_symbol *sym)
{
	struct naming *nm = ctx;

	if (sym->type != STT_FUNC || !*name || !in_code(nm->f, sym->shndx))
		return 0;
	for (size_t i = 0; i < nm->n; i++)
		if (nm->targets[i] == sym->value && !nm->names[i])
			nm->names[i] = name;
	return 0;
}

void ifunc_describe(const struct elf_file *f, const char *name, const struct elf_symbol *sym,
		    char *buf, size_t size)
{
	uint64_t targets[IFUNC_MAX_TARGETS], off;
	uint32_t flags;
	size_t file_size, len = 0, named = 0;
	const uint8_t *data = elf_data(f, &file_size);
	struct naming nm = { .f = f, .targets = targets };

	if (data && !elf_vaddr_to_offset(f, sym->value, &off, &flags) && off < file_size) {
		size_t code = sym->size && sym->size < IFUNC_MAX_CODE ? sym->size : IFUNC_MAX_CODE;
		if (code > file_size - off)
			code = file_size - off;
		nm.n = ifunc_targets(elf_machine(f), data + off, code, sym->value, targets,
				     IFUNC_MAX_TARGETS);
		elf_foreach_symbol(f, name_target, &nm);
	}
	len = (size_t)snprintf(buf, size, "GNU ifunc: %s is its resolver, run once at load "
			       "time to pick the implementation every call goes to", name);
	for (size_t i = 0; i < nm.n && len < size; i++) {
		if (!nm.names[i])
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					named++ ? ", " : "; probe one of those instead: ",
					nm.names[i]);
	}
	if (!named && len < size)
		snprintf(buf + len, size - len, "; its implementations could not be read from "
			 "its code: probe the function it picks");
}
