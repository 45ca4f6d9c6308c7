/* test_artdebug.c — ART's debugger interface reader (code/artdebug.h) over a
 * memory image: test/fuzz/corpus/artdebug/jit_and_dex, which
 * test/fuzz/gen_artdebug_seed.py writes (an Android2 JIT descriptor with one
 * symfile ELF naming com.example.Fuzz.m at 0x70000000, and a dex descriptor
 * with the real classes.dex of the shared test data's camera jar).  Then the
 * same image damaged the ways a hostile or changing process could: every
 * answer bounded, counted, never a crash (ASan), never a hang. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/artdebug.h"
#include "ut.h"

#define BASE 0x10000u

struct mem {
	uint8_t *p;
	size_t n;
	unsigned reads;
	int bump_at;          /* >0: the descriptor's seqlock moves on that read */
};

static int rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem *m = ctx;

	m->reads++;
	if (m->bump_at && (int)m->reads % m->bump_at == 0) {
		uint32_t s;
		memcpy(&s, m->p + 44, 4);
		s += 2;
		memcpy(m->p + 44, &s, 4);
	}
	if (addr < BASE || addr - BASE > m->n || len > m->n - (addr - BASE))
		return -EFAULT;
	memcpy(buf, m->p + (addr - BASE), len);
	return 0;
}

static uint8_t *image(size_t *n)
{
	const char *me = __FILE__, *cut = strstr(me, "test/unit/");
	char path[4096];
	FILE *f;
	uint8_t *p;

	snprintf(path, sizeof(path), "%.*stest/fuzz/corpus/artdebug/jit_and_dex",
		 cut ? (int)(cut - me) : 0, me);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	p = malloc(1 << 20);
	*n = fread(p, 1, 1 << 20, f);
	fclose(f);
	return p;
}

static void put64(uint8_t *p, size_t at, uint64_t v)
{
	memcpy(p + at, &v, 8);
}

UT_TEST(artdebug_names_jit_code_and_steps_by_its_cfi)
{
	struct mem m = { 0 };
	struct art_debug *a;
	struct code_info ci = { 0 };
	struct art_debug_stats st;

	UT_ASSERT((m.p = image(&m.n)));
	a = art_debug_new(BASE, BASE + 0x80, false, rd, &m);
	UT_ASSERT(art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	UT_EQ_INT(ci.kind, FRAME_JIT);
	UT_EQ_STR(ci.symbol, "com.example.Fuzz.m");
	UT_EQ_U64(ci.symbol_off, 0xd);
	UT_ASSERT(ci.has_cfi);
	UT_EQ_INT(ci.cfi.cfa_reg, 7);
	UT_EQ_INT(ci.cfi.cfa_off, 0x20);
	/* outside the method: not JIT code it knows */
	memset(&ci, 0, sizeof(ci));
	UT_ASSERT(!art_debug_jit(a, 0x70000100, 0x700000ff, &ci));
	art_debug_get_stats(a, &st);
	UT_EQ_U64(st.entries, 1);
	UT_EQ_U64(st.bad, 0);
	/* nothing changed (the seqlock): the miss did not read the list again */
	UT_EQ_U64(st.reads, 1);
	art_debug_free(a);
	free(m.p);
}

/* The dex descriptor: a dex address inside <clinit>'s code item of the
 * camera jar's classes.dex (dexdump: insns at 0x714; dex pc 0x14 is line
 * 77) names the method, its dex pc and line. */
UT_TEST(artdebug_names_an_interpreted_dex_pc)
{
	struct mem m = { 0 };
	struct art_debug *a;
	struct code_info ci = { 0 };
	uint64_t dex_at;

	UT_ASSERT((m.p = image(&m.n)));
	memcpy(&dex_at, m.p + 0xc0 + 16, 8);
	a = art_debug_new(BASE, BASE + 0x80, false, rd, &m);
	UT_ASSERT(art_debug_dex(a, dex_at + 0x714 + 2 * 0x14, &ci));
	UT_EQ_INT(ci.kind, FRAME_INTERPRETED);
	UT_EQ_STR(ci.symbol,
		  "void com.google.android.camera.experimental2019.ExperimentalKeys.<clinit>()");
	UT_EQ_U64(ci.dex_pc, 0x14);
	UT_EQ_INT(ci.line, 77);
	/* the header is no method's code */
	memset(&ci, 0, sizeof(ci));
	UT_ASSERT(!art_debug_dex(a, dex_at + 8, &ci));
	art_debug_free(a);
	free(m.p);
}

/* An entry whose next points back at itself, sizes past the caps, pointers
 * outside any memory, a version that is not 1: each read ends, counted. */
UT_TEST(artdebug_hostile_descriptors_are_bounded)
{
	struct mem m = { 0 };
	struct art_debug *a;
	struct code_info ci = { 0 };
	struct art_debug_stats st;

	UT_ASSERT((m.p = image(&m.n)));
	put64(m.p, 0x40, BASE + 0x40);              /* a loop */
	a = art_debug_new(BASE, 0, false, rd, &m);
	UT_ASSERT(art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));   /* the entry, once */
	art_debug_get_stats(a, &st);
	UT_EQ_U64(st.loops, 1);
	UT_EQ_U64(st.entries, 1);
	art_debug_free(a);

	put64(m.p, 0x40, 0);
	put64(m.p, 0x40 + 24, 1ull << 40);          /* a symfile of a TiB */
	a = art_debug_new(BASE, 0, false, rd, &m);
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	art_debug_get_stats(a, &st);
	UT_EQ_U64(st.bad, 1);
	art_debug_free(a);

	put64(m.p, 0x40 + 24, 0x300);
	put64(m.p, 0x40 + 16, 0xdead0000);          /* outside the memory */
	a = art_debug_new(BASE, 0, false, rd, &m);
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	art_debug_get_stats(a, &st);
	UT_EQ_U64(st.bad, 1);
	art_debug_free(a);

	put64(m.p, 16, 0xdead0000);                 /* the first entry outside: read fails */
	a = art_debug_new(BASE, 0, false, rd, &m);
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	art_debug_free(a);

	m.p[0] = 2;                                 /* version 2: not this protocol */
	a = art_debug_new(BASE, 0, false, rd, &m);
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	art_debug_get_stats(a, &st);
	UT_EQ_U64(st.entries, 0);
	art_debug_free(a);
	free(m.p);
}

/* A descriptor that is always being changed: an odd seqlock, or one that moves
 * during every walk (Android1, no entry seqlocks to fall back on): 16 retries,
 * then given up, counted. */
UT_TEST(artdebug_seqlock_races_retry_then_give_up)
{
	struct mem m = { 0 };
	struct art_debug *a;
	struct code_info ci = { 0 };
	struct art_debug_stats st;

	UT_ASSERT((m.p = image(&m.n)));
	m.p[44] = 3;                                 /* locked, forever */
	a = art_debug_new(BASE, 0, false, rd, &m);
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	art_debug_get_stats(a, &st);
	UT_EQ_U64(st.races, ART_MAX_RETRIES);
	UT_EQ_U64(st.gave_up, 1);
	art_debug_free(a);

	m.p[44] = 2;
	m.p[24 + 7] = '1';                           /* Android1 */
	m.bump_at = 2;                               /* moves while it is read */
	a = art_debug_new(BASE, 0, false, rd, &m);
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	art_debug_get_stats(a, &st);
	UT_EQ_U64(st.gave_up, 1);
	art_debug_free(a);

	/* Android2: the entry's own seqlock vouches for it when the descriptor's moved */
	m.p[24 + 7] = '2';
	m.reads = 0;
	a = art_debug_new(BASE, 0, false, rd, &m);
	UT_ASSERT(art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	UT_EQ_STR(ci.symbol, "com.example.Fuzz.m");
	art_debug_free(a);
	free(m.p);
}

/* arm64: a tagged pointer (top byte set, as MTE/HWASan heaps give) is read
 * with its tag cleared. */
UT_TEST(artdebug_arm64_tags_are_stripped)
{
	struct mem m = { 0 };
	struct art_debug *a;
	struct code_info ci = { 0 };

	UT_ASSERT((m.p = image(&m.n)));
	put64(m.p, 16, (0xb4ull << 56) | (BASE + 0x40));
	put64(m.p, 0x40 + 16, (0x0cull << 56) | (BASE + 0x100));
	a = art_debug_new(BASE, 0, true, rd, &m);
	UT_ASSERT(art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	art_debug_free(a);
	a = art_debug_new(BASE, 0, false, rd, &m);   /* x86_64 keeps the bits: no such address */
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	art_debug_free(a);
	free(m.p);
}

/* JIT code published after the last read: a PC no symfile knows reads the
 * list again once the descriptor's seqlock moved, and only then. */
UT_TEST(artdebug_rereads_when_the_seqlock_moved)
{
	struct mem m = { 0 };
	struct art_debug *a;
	struct code_info ci = { 0 };
	struct art_debug_stats st;

	UT_ASSERT((m.p = image(&m.n)));
	put64(m.p, 16, 0);                           /* nothing compiled yet */
	a = art_debug_new(BASE, 0, false, rd, &m);
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	art_debug_get_stats(a, &st);
	UT_EQ_U64(st.reads, 1);                      /* the second miss: seqlock unchanged */
	put64(m.p, 16, BASE + 0x40);                 /* the method registered... */
	UT_ASSERT(!art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));   /* ...seqlock not moved */
	m.p[44] = 4;
	UT_ASSERT(art_debug_jit(a, 0x7000000d, 0x7000000c, &ci));
	UT_EQ_STR(ci.symbol, "com.example.Fuzz.m");
	art_debug_get_stats(a, &st);
	UT_EQ_U64(st.reads, 2);
	art_debug_free(a);
	free(m.p);
}

/* Compact dex (cdex001, Android 10's vdex): the shared test data's
 * TrustZoneAccessService.vdex holds one, its shared data after it; registered
 * from its header to the vdex's end, as a process maps it.  dexdump reads it:
 * `a.a.a.a.a.a.<init>(Object)`'s code item is at data offset 0x5a, 6 code
 * units (dex pcs 0..5: invoke-direct, iput-object-quick, return-void); the
 * compact code item's instructions start 4 bytes in.  A dex address at dex pc
 * 3 names that method and dex pc; the code item's own header is no method's
 * instruction. */
#define TZ_VDEX "/oat/android-10/arm64/google_coral_QD1A.190821.011.C4/" \
	"TrustZoneAccessService.vdex"

UT_TEST(artdebug_names_a_compact_dex_pc)
{
	const char *td = getenv("UPROBESTATS_TESTDATA");
	char path[4096];
	struct mem m = { 0 };
	struct art_debug *a;
	struct code_info ci = { 0 };
	uint8_t *vdex = malloc(1 << 20), *cdex;
	size_t n = 0, at = 0;
	uint32_t data_off;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", td ? td : "../shared/testdata", TZ_VDEX);
	UT_ASSERT(vdex && (f = fopen(path, "rb")));
	n = fread(vdex, 1, 1 << 20, f);
	fclose(f);
	while (at + 8 <= n && memcmp(vdex + at, "cdex001", 8))
		at++;
	UT_ASSERT(at + 0x88 <= n);
	cdex = vdex + at;
	memcpy(&data_off, cdex + 0x6c, 4);   /* the header's data_off */
	/* the image: an empty JIT descriptor at BASE, the dex one at BASE+0x80 with
	 * one entry at BASE+0x100, the cdex at BASE+0x1000 */
	m.n = 0x1000 + (n - at);
	UT_ASSERT((m.p = calloc(1, m.n)));
	for (size_t d = 0; d <= 0x80; d += 0x80) {
		uint32_t one = 1, dsz = 56, esz = 48;
		memcpy(m.p + d, &one, 4);
		memcpy(m.p + d + 24, "Android2", 8);
		memcpy(m.p + d + 36, &dsz, 4);
		memcpy(m.p + d + 40, &esz, 4);
	}
	put64(m.p, 0x80 + 16, BASE + 0x100);
	put64(m.p, 0x100 + 16, BASE + 0x1000);
	put64(m.p, 0x100 + 24, n - at);
	memcpy(m.p + 0x1000, cdex, n - at);
	a = art_debug_new(BASE, BASE + 0x80, false, rd, &m);
	uint64_t insns = BASE + 0x1000 + data_off + 0x5a + 4;
	UT_ASSERT(art_debug_dex(a, insns + 2 * 3, &ci));
	UT_EQ_INT(ci.kind, FRAME_INTERPRETED);
	UT_EQ_STR(ci.symbol, "void a.a.a.a.a.a.<init>(java.lang.Object)");
	UT_EQ_U64(ci.dex_pc, 3);
	memset(&ci, 0, sizeof(ci));
	UT_ASSERT(art_debug_dex(a, insns, &ci));
	UT_EQ_U64(ci.dex_pc, 0);
	memset(&ci, 0, sizeof(ci));
	UT_ASSERT(!art_debug_dex(a, insns - 2, &ci));   /* the code item's header */
	art_debug_free(a);
	free(m.p);
	free(vdex);
}
