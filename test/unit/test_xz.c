/* test_xz.c — the xz decoder against Debian's `xz` on inputs generated here:
 * random and text-like data of several sizes, every preset, the three check
 * types, custom LZMA2 options (dict, lc/lp/pb, mode), several blocks and
 * concatenated streams; damaged and truncated streams must fail cleanly. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/xz.h"
#include "ut.h"

static uint32_t rng(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* kind 0: random bytes; 1: text made of a small vocabulary; 2: runs. */
static uint8_t *gen(int kind, size_t n, uint32_t seed)
{
	static const char *const words[] = { "uprobe", "stack", "frame", "java", "native ",
					     "\n", "Landroid/os/Binder;", "0x7f001234", ", ",
					     "mini debug info", "the ", "of ", "libart.so" };
	uint8_t *b = malloc(n + 1);
	size_t i = 0;

	while (b && i < n) {
		uint32_t r = rng(&seed);
		if (kind == 0) {
			b[i++] = (uint8_t)r;
		} else if (kind == 1) {
			const char *w = words[r % 13];
			for (; *w && i < n; w++)
				b[i++] = (uint8_t)*w;
		} else {
			size_t run = 1 + r % 300;
			for (size_t k = 0; k < run && i < n; k++)
				b[i++] = (uint8_t)(r >> 24);
		}
	}
	return b;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long sz;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)sz + 1);
	if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*n = (size_t)sz;
	return b;
}

/* Compresses data with `xz opts` and returns the stream. */
static uint8_t *xz_compress(const uint8_t *data, size_t n, const char *opts, size_t *zn)
{
	char cmd[2048], in[1024], out[1024];
	FILE *f;

	snprintf(in, sizeof(in), "%s", ut_tmpfile("xz-in"));
	snprintf(out, sizeof(out), "%s", ut_tmpfile("xz-in.xz"));
	f = fopen(in, "wb");

	if (!f)
		return NULL;
	fwrite(data, 1, n, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "xz --format=xz -T1 -c %s < '%s' > '%s'", opts, in, out);
	if (system(cmd) != 0)
		return NULL;
	return slurp(out, zn);
}

static unsigned long n_checked;

static void round_trip(int kind, size_t n, const char *opts)
{
	uint8_t *data = gen(kind, n, (uint32_t)(n * 2654435761u + (unsigned)kind + 1));
	size_t zn = 0, on = 0;
	uint8_t *z = xz_compress(data, n, opts, &zn), *o = NULL;
	struct err e = { 0 };
	int rc;

	if (!z) {
		free(data);
		ut_fail(__FILE__, __LINE__, "xz %s failed", opts);
		return;
	}
	rc = xz_decode("t", z, zn, n + 16, &o, &on, &e);
	if (rc || on != n || (n && memcmp(o, data, n)))
		ut_fail(__FILE__, __LINE__, "kind %d size %zu xz %s: rc %d (%s), %zu bytes out",
			kind, n, opts, rc, e.msg, on);
	else
		n_checked++;
	free(o);
	free(z);
	free(data);
}

UT_TEST(xz_round_trip_presets_and_checks)
{
	static const size_t sizes[] = { 0, 1, 37, 4096, 65537, 200000 };
	static const char *const checks[] = { "--check=crc64", "--check=crc32", "--check=none" };
	char opts[256];

	n_checked = 0;
	for (int kind = 0; kind < 3; kind++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			for (int p = 0; p <= 9; p++) {
				/* every preset on the mid sizes; a spread elsewhere */
				if (sizes[s] > 65537 && p % 3)
					continue;
				snprintf(opts, sizeof(opts), "-%d %s", p, checks[(p + s) % 3]);
				round_trip(kind, sizes[s], opts);
			}
		}
	}
	UT_ASSERT(n_checked >= 120);
}

UT_TEST(xz_round_trip_lzma2_options)
{
	static const char *const opts[] = {
		"--lzma2=preset=6,dict=4KiB", "--lzma2=preset=1,dict=64KiB,lc=0,lp=0,pb=0",
		"--lzma2=preset=6,lc=4,lp=0,pb=4", "--lzma2=preset=6,lc=1,lp=3,pb=1",
		"--lzma2=preset=9e,nice=273,mf=bt4", "--lzma2=preset=3,mode=fast,mf=hc3",
		"--lzma2=preset=6,mode=normal,depth=0,dict=1MiB", "-6e --check=crc32",
		"--block-size=5000 -6", "--block-size=70000 --check=none -1",
	};
	n_checked = 0;
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		for (int kind = 0; kind < 3; kind++)
			round_trip(kind, 150000, opts[i]);
	UT_EQ_INT(n_checked, 30);
}

/* A 3 MiB text crosses LZMA2's 2 MiB chunk limit. */
UT_TEST(xz_round_trip_large_chunks)
{
	n_checked = 0;
	round_trip(1, 3u << 20, "-0");
	round_trip(2, 3u << 20, "-1 --check=crc32");
	UT_EQ_INT(n_checked, 2);
}

UT_TEST(xz_concatenated_streams_and_padding)
{
	uint8_t *a = gen(1, 5000, 7), *b = gen(0, 3000, 9);
	size_t an, bn, on;
	uint8_t *za = xz_compress(a, 5000, "-6", &an), *zb = xz_compress(b, 3000, "-1", &bn);
	uint8_t *cat = malloc(an + 8 + bn), *o = NULL;
	struct err e = { 0 };

	UT_ASSERT(za && zb && cat);
	memcpy(cat, za, an);
	memset(cat + an, 0, 8);     /* stream padding */
	memcpy(cat + an + 8, zb, bn);
	UT_EQ_INT(xz_decode("cat", cat, an + 8 + bn, 1 << 20, &o, &on, &e), 0);
	UT_EQ_INT(on, 8000);
	UT_ASSERT(!memcmp(o, a, 5000) && !memcmp(o + 5000, b, 3000));
	free(o);
	/* padding that is not a multiple of four is an error */
	memmove(cat + an + 7, cat + an + 8, bn);
	UT_ASSERT(xz_decode("cat", cat, an + 7 + bn, 1 << 20, &o, &on, &e) < 0);
	free(cat), free(za), free(zb), free(a), free(b);
}

UT_TEST(xz_damaged_streams_fail_cleanly)
{
	uint8_t *d = gen(1, 3000, 3);
	size_t zn, on;
	uint8_t *z = xz_compress(d, 3000, "-6 --check=crc64", &zn), *o = NULL;
	struct err e = { 0 };
	unsigned errors = 0;

	UT_ASSERT(z);
	for (size_t i = 0; i < zn; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			z[i] ^= (uint8_t)(1 << bit);
			e.msg[0] = 0;
			int rc = xz_decode("dmg", z, zn, 1 << 20, &o, &on, &e);
			z[i] ^= (uint8_t)(1 << bit);
			if (!rc) {
				ut_fail(__FILE__, __LINE__, "flip at %zu bit %d not detected", i,
					bit);
				free(o);
				break;
			}
			UT_ASSERT(e.msg[0] && o == NULL);
			errors++;
		}
	}
	for (size_t n = 0; n < zn; n++) {
		UT_ASSERT(xz_decode("trunc", z, n, 1 << 20, &o, &on, &e) < 0);
		UT_CONTAINS(e.msg, "trunc: xz");
	}
	UT_EQ_INT(xz_decode("cap", z, zn, 2999, &o, &on, &e), -EFBIG);
	UT_EQ_INT(xz_decode("cap", z, zn, 3000, &o, &on, &e), 0);
	free(o);
	UT_ASSERT(errors == 3 * zn);
	free(z), free(d);
}

UT_TEST(xz_refuses_bcj_and_sha256)
{
	uint8_t *d = gen(1, 4000, 5), *o = NULL;
	size_t zn, on;
	uint8_t *z = xz_compress(d, 4000, "--x86 --lzma2=preset=6", &zn);
	struct err e = { 0 };

	UT_ASSERT(z);
	UT_EQ_INT(xz_decode("bcj", z, zn, 1 << 20, &o, &on, &e), -ENOTSUP);
	UT_CONTAINS(e.msg, "BCJ");
	free(z);
	z = xz_compress(d, 4000, "--check=sha256", &zn);
	UT_ASSERT(z);
	UT_EQ_INT(xz_decode("sha", z, zn, 1 << 20, &o, &on, &e), -ENOTSUP);
	UT_CONTAINS(e.msg, "check type 10");
	free(z), free(d);
}
