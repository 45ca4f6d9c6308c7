/* test_catalog_embed.c — the BPF objects of an arch are embedded as one xz stream
 * (mk/embed-bpf.sh) and catalog_object_elf() copies each out of it, decoded once: each
 * comes back as a BPF ELF of its recorded size, the stream is much smaller than the
 * objects, and a damaged stream is refused with a message saying so instead of being
 * handed to libbpf. */
#include "ut.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>

#include "catalog/catalog.h"

static void check_bpf_elf(const void *bytes, size_t size)
{
	const Elf64_Ehdr *h = bytes;

	UT_ASSERT(size > sizeof(Elf64_Ehdr));
	UT_ASSERT(!memcmp(h->e_ident, ELFMAG, SELFMAG));
	UT_EQ_INT(h->e_machine, EM_BPF);
}

UT_TEST(catalog_objects_decode_to_bpf_elf)
{
	const unsigned char *z;
	size_t z_size, total, raw = 0;

	UT_ASSERT(catalog_object_count() >= 8);
	for (size_t i = 0; i < catalog_object_count(); i++) {
		const struct catalog_object *o = catalog_object_at(i);
		struct err e = { 0 };
		void *bytes = NULL;
		size_t size = 0;

		UT_EQ_INT(catalog_object_elf(o, &bytes, &size, &e), 0);
		UT_EQ_INT(size, o->elf_size);
		check_bpf_elf(bytes, size);
		free(bytes);
		UT_EQ_INT(catalog_object_legacy_elf(o, &bytes, &size, &e), 0);
		UT_EQ_INT(size, o->legacy_elf_size);
		check_bpf_elf(bytes, size);
		free(bytes);
		raw += o->elf_size + o->legacy_elf_size;
	}
	catalog_embedded(&z, &z_size, &total);
	UT_EQ_INT(raw, total);               /* every byte of the stream is some object's */
	/* the point of one stream: measured about 1/10 (one stream per object: 1/7) */
	UT_ASSERT(z_size * 7 < total);
}

UT_TEST(catalog_damaged_stream_is_refused)
{
	const unsigned char *z;
	size_t z_size, size;
	unsigned char *copy;
	uint8_t *out = NULL;
	struct err e = { 0 };

	catalog_embedded(&z, &z_size, &size);
	UT_ASSERT((copy = malloc(z_size)) != NULL);
	memcpy(copy, z, z_size);
	UT_EQ_INT(catalog_decode_blob(copy, z_size, size, &out, &e), 0);
	free(out);
	out = NULL;
	copy[z_size / 2] ^= 0x55;
	UT_EQ_INT(catalog_decode_blob(copy, z_size, size, &out, &e), -EINVAL);
	UT_CONTAINS(e.msg, "damaged");
	copy[z_size / 2] ^= 0x55;
	UT_EQ_INT(catalog_decode_blob(copy, z_size - 8, size, &out, &e), -EINVAL); /* truncated */
	UT_EQ_INT(catalog_decode_blob(copy, z_size, size + 1, &out, &e), -EINVAL); /* short */
	UT_ASSERT(out == NULL);
	free(copy);
}
