/* cfi.c — DWARF CFI reader (see cfi.h).  Stub: filled in next. */
#include "formats/cfi.h"

#include <errno.h>
#include <stdio.h>

int cfi_open(const struct elf_file *elf, struct cfi_table **out, struct err *err)
{
	(void)elf;
	*out = NULL;
	return err_set(err, -ENOTSUP, "cfi: not implemented yet");
}

void cfi_close(struct cfi_table *t) { (void)t; }

int cfi_row_at(const struct cfi_table *t, uint64_t vaddr, struct cfi_row *row, struct err *err)
{
	(void)t; (void)vaddr; (void)row;
	return err_set(err, -ENOTSUP, "cfi: not implemented yet");
}

size_t cfi_fde_count(const struct cfi_table *t) { (void)t; return 0; }

int cfi_fde_range(const struct cfi_table *t, size_t i, uint64_t *start, uint64_t *end)
{
	(void)t; (void)i; (void)start; (void)end;
	return -ENOTSUP;
}

size_t cfi_bad_fdes(const struct cfi_table *t) { (void)t; return 0; }

const char *cfi_reg_name(uint16_t e_machine, uint32_t reg, char *buf, size_t size)
{
	(void)e_machine;
	snprintf(buf, size, "r%u", reg);
	return buf;
}
