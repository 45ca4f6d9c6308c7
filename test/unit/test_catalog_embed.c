/* test_catalog_embed.c — the BPF objects are embedded xz-compressed (mk/embed-bpf.sh)
 * and catalog_object_elf() decodes them: each comes back as a BPF ELF of its recorded
 * size, much smaller embedded than decoded, and a damaged copy is refused with a
 * message naming the object instead of being handed to libbpf. */
#include "ut.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>

#include "catalog/catalog.h"

UT_TEST(catalog_objects_inflate_to_bpf_elf)
{
	size_t z = 0, raw = 0;

	UT_ASSERT(catalog_object_count() >= 8);
	for (size_t i = 0; i < catalog_object_count(); i++) {
		const struct catalog_object *o = catalog_object_at(i);
		struct err e = { 0 };
		void *bytes = NULL;
		size_t size = 0;

		UT_EQ_INT(catalog_object_elf(o, &bytes, &size, &e), 0);
		UT_EQ_INT(size, o->elf_size);
		UT_ASSERT(size > sizeof(Elf64_Ehdr));
		const Elf64_Ehdr *h = bytes;
		UT_ASSERT(!memcmp(h->e_ident, ELFMAG, SELFMAG));
		UT_EQ_INT(h->e_machine, EM_BPF);
		z += o->elf_z_size;
		raw += size;
		free(bytes);
	}
	/* the point of compressing: measured about 1/5 */
	UT_ASSERT(z * 3 < raw);
}

UT_TEST(catalog_damaged_object_is_refused)
{
	const struct catalog_object *o = catalog_object_at(0);
	struct catalog_object bad = *o;
	unsigned char *copy = malloc(o->elf_z_size);
	struct err e = { 0 };
	void *bytes = NULL;
	size_t size = 0;

	UT_ASSERT(copy);
	memcpy(copy, o->elf_z, o->elf_z_size);
	copy[o->elf_z_size / 2] ^= 0x55;
	bad.elf_z = copy;
	UT_EQ_INT(catalog_object_elf(&bad, &bytes, &size, &e), -EINVAL);
	UT_CONTAINS(e.msg, o->name);
	UT_CONTAINS(e.msg, "damaged");
	bad.elf_z = o->elf_z;
	bad.elf_z_size = o->elf_z_size - 8;        /* truncated: the xz stream footer is cut */
	UT_EQ_INT(catalog_object_elf(&bad, &bytes, &size, &e), -EINVAL);
	bad.elf_z_size = o->elf_z_size;
	bad.elf_size = o->elf_size + 1;            /* decodes short of the recorded size */
	UT_EQ_INT(catalog_object_elf(&bad, &bytes, &size, &e), -EINVAL);
	UT_ASSERT(bytes == NULL);
	free(copy);
}
