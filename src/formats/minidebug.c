/* minidebug.c — .gnu_debugdata (see minidebug.h). */
#include "formats/minidebug.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "formats/xz.h"

int minidebug_open(const struct elf_file *outer, struct minidebug *out, struct err *err)
{
	struct elf_section s;
	const uint8_t *d;
	size_t len;
	char name[512];
	int rc;

	memset(out, 0, sizeof(*out));
	if (elf_find_section(outer, ".gnu_debugdata", &s))
		return err_set(err, -ENOENT, "%s: no .gnu_debugdata section", elf_name(outer));
	d = elf_data(outer, &len);
	if (s.type == SHT_NOBITS || !rng_ok(len, s.offset, s.size))
		return err_set(err, -EINVAL,
			       "%s: .gnu_debugdata (0x%llx+0x%llx) lies outside the file",
			       elf_name(outer), (unsigned long long)s.offset,
			       (unsigned long long)s.size);
	snprintf(name, sizeof(name), "%s!.gnu_debugdata", elf_name(outer));
	rc = xz_decode(name, d + s.offset, s.size, MINIDEBUG_MAX_SIZE, &out->buf, &out->len, err);
	if (rc)
		return rc;
	rc = elf_open_mem(name, out->buf, out->len, &out->elf, err);
	if (rc) {
		free(out->buf);
		memset(out, 0, sizeof(*out));
		return rc;
	}
	uint16_t inner_m = elf_machine(out->elf);
	if (inner_m != elf_machine(outer)) {
		minidebug_close(out);
		return err_set(err, -EINVAL, "%s: embedded ELF is for machine %u, the file for %u",
			       name, inner_m, elf_machine(outer));
	}
	return 0;
}

void minidebug_close(struct minidebug *m)
{
	if (!m)
		return;
	elf_close(m->elf);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}
