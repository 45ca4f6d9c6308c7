/* elfwrap.h — for fuzz targets: wraps fuzzer bytes as sections of a minimal
 * little-endian ELF64 (no program headers), so section readers see arbitrary
 * contents behind a valid container. */
#ifndef UPROBESTATS_FUZZ_ELFWRAP_H
#define UPROBESTATS_FUZZ_ELFWRAP_H

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct wrap_sec {
	const char *name;
	const uint8_t *data;
	size_t size;
	uint64_t addr;
};

/* Returns a malloc'ed ELF (*len bytes) holding secs[0..n) (n <= 6). */
static uint8_t *elfwrap(uint16_t machine, const struct wrap_sec *secs, size_t n, size_t *len)
{
	char names[256] = "";
	size_t nl = 1, data = 0, off, shoff;
	uint32_t name_off[8];
	uint8_t *b;

	for (size_t i = 0; i < n; i++) {
		name_off[i] = (uint32_t)nl;
		nl += strlen(secs[i].name) + 1;
		data += secs[i].size;
	}
	name_off[n] = (uint32_t)nl;
	nl += strlen(".shstrtab") + 1;
	shoff = (64 + data + nl + 7) & ~(size_t)7;
	*len = shoff + 64 * (n + 2);
	if (!(b = calloc(1, *len)))
		return NULL;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = machine;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = 64;
	eh->e_shentsize = 64;
	eh->e_shnum = (uint16_t)(n + 2);
	eh->e_shstrndx = (uint16_t)(n + 1);
	eh->e_shoff = shoff;
	Elf64_Shdr *sh = (Elf64_Shdr *)(b + shoff);
	off = 64;
	for (size_t i = 0; i < n; i++) {
		memcpy(b + off, secs[i].data, secs[i].size);
		sh[i + 1] = (Elf64_Shdr){ .sh_name = name_off[i], .sh_type = SHT_PROGBITS,
					  .sh_flags = SHF_ALLOC, .sh_addr = secs[i].addr,
					  .sh_offset = off, .sh_size = secs[i].size,
					  .sh_addralign = 1 };
		off += secs[i].size;
	}
	char *p = names + 1;
	for (size_t i = 0; i < n; i++) {
		strcpy(p, secs[i].name);
		p += strlen(secs[i].name) + 1;
	}
	strcpy(p, ".shstrtab");
	memcpy(b + off, names, nl);
	sh[n + 1] = (Elf64_Shdr){ .sh_name = name_off[n], .sh_type = SHT_STRTAB, .sh_offset = off,
				  .sh_size = nl, .sh_addralign = 1 };
	return b;
}

#endif
