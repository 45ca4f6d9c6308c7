/* fuzz_oat — the oat reader (header and record layout detection, OatClass,
 * method headers, dex-less listing, CodeInfo and exit sites of the methods
 * found) over arbitrary oat data.
 *
 * Input: u32 executable_offset (0 = no oatexec), u16 e_machine, u16 pad,
 * then the oat region (oatdata .. oatlastword + 4).  The target wraps it in a
 * minimal ELF64 (oatdata at vaddr/offset 0x1000, one RX PT_LOAD, .dynsym)
 * so the fuzzer spends its time on oat structures, not ELF plumbing.
 * Seeds are the oat regions cut out of real odex files (v170, v183, v225,
 * v236, v244) with that 8-byte prefix. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/oat.h"
#include "formats/oat_code.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_exits.h"
#include "formats/oat_methods.h"

#define BASE 0x1000u

static void put_sym(uint8_t *p, uint32_t name, uint64_t value, uint64_t size)
{
	Elf64_Sym s = { .st_name = name, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT),
			.st_shndx = 1, .st_value = value, .st_size = size };
	memcpy(p, &s, sizeof(s));
}

/* ELF header, program header, then (after the region) .dynstr, .dynsym and
 * the section headers. */
static uint8_t *wrap(const uint8_t *region, size_t len, uint32_t exec, uint16_t machine,
		     size_t *out_len)
{
	static const char dynstr[] = "\0oatdata\0oatexec\0oatlastword\0.dynstr\0.dynsym\0";
	size_t str_off = BASE + len, sym_off = (str_off + sizeof(dynstr) + 7) & ~7ul;
	size_t sh_off = sym_off + 4 * sizeof(Elf64_Sym), total = sh_off + 4 * sizeof(Elf64_Shdr);
	uint8_t *b = calloc(1, total);
	Elf64_Ehdr eh = { .e_type = ET_DYN, .e_machine = machine, .e_version = EV_CURRENT,
			  .e_phoff = sizeof(Elf64_Ehdr), .e_shoff = sh_off,
			  .e_ehsize = sizeof(Elf64_Ehdr), .e_phentsize = sizeof(Elf64_Phdr),
			  .e_phnum = 1, .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 4,
			  .e_shstrndx = 1 };
	Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = total,
			  .p_memsz = total, .p_align = 0x1000 };
	Elf64_Shdr sh[4] = {
		{ 0 },
		{ .sh_name = 29, .sh_type = SHT_STRTAB, .sh_offset = str_off, .sh_addr = str_off,
		  .sh_size = sizeof(dynstr) },
		{ .sh_name = 37, .sh_type = SHT_DYNSYM, .sh_offset = sym_off, .sh_addr = sym_off,
		  .sh_size = 4 * sizeof(Elf64_Sym), .sh_link = 1, .sh_entsize = sizeof(Elf64_Sym) },
		{ 0 },
	};

	if (!b)
		return NULL;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(b, &eh, sizeof(eh));
	memcpy(b + sizeof(eh), &ph, sizeof(ph));
	memcpy(b + BASE, region, len);
	memcpy(b + str_off, dynstr, sizeof(dynstr));
	put_sym(b + sym_off + sizeof(Elf64_Sym), 1, BASE, len);
	if (exec && exec < len)
		put_sym(b + sym_off + 2 * sizeof(Elf64_Sym), 9, BASE + exec, 0);
	put_sym(b + sym_off + 3 * sizeof(Elf64_Sym), 17, BASE + len - 4, 4);
	memcpy(b + sh_off, sh, sizeof(sh));
	*out_len = total;
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oat_file *o;
	struct oat_dexset *ds;
	struct oat_method_list l;
	struct err e;
	uint32_t exec;
	uint16_t machine;
	size_t len;
	uint8_t *elf;

	if (size < 8 + 8)
		return 0;
	memcpy(&exec, data, 4);
	memcpy(&machine, data + 4, 2);
	elf = wrap(data + 8, size - 8, exec, machine, &len);
	if (!elf)
		return 0;
	if (!oat_open_mem("fuzz.odex", elf, len, &o, &e)) {
		oat_kv_get(o, "compiler-filter");
		/* no dex can be found here: v194+ files are listed without one */
		if (!oat_dexset_new(o, "/nonexistent/fuzz.odex", NULL, 0, &ds, &e)) {
			if (!oat_list_methods(o, ds, &l, &e)) {
				for (size_t m = 0; m < l.n && m < 64; m++) {
					struct oat_method_exits x;  /* CodeInfo + exit sites */
					oat_method_exits_get(o, &l.v[m].code, &x);
					oat_method_exits_free(&x);
				}
				oat_method_list_free(&l);
			}
			oat_dexset_free(ds);
		}
		for (uint32_t i = 0; i < oat_dex_count(o) && i < 4; i++) {
			struct oat_class c;
			uint32_t co;
			enum oat_miss why;
			struct oat_code code;
			if (oat_class_get(o, i, 0, 3, &c, &e))
				continue;
			for (uint32_t k = 0; k < 3; k++)
				if (!oat_class_method(o, &c, k, NULL, &co, &why, &e) && co &&
				    !oat_code_at(o, co, &code, &e)) {
					struct oat_method_exits x;
					oat_method_exits_get(o, &code, &x);
					oat_method_exits_free(&x);
				}
		}
		oat_close(o);
	}
	free(elf);
	return 0;
}
