#include "ut.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/elf.h"
#include "resolve/demangle.h"

static const char *dm(const char *m)
{
	static char buf[4096];   /* test-only scratch */
	int rc = demangle(m, buf, sizeof(buf), NULL, NULL);
	if (rc == -ENOTSUP)
		return "(unsupported)";
	return rc ? "(error)" : buf;
}

UT_TEST(demangle_known_forms)
{
	UT_EQ_STR(dm("_ZNKSt6vectorIS_IiSaIiEESaIS1_EE4sizeEv"),
		  "std::vector<std::vector<int, std::allocator<int> >, std::allocator<std::vector"
		  "<int, std::allocator<int> > > >::size() const");
	UT_EQ_STR(dm("_Z1fPFviE"), "f(void (*)(int))");
	UT_EQ_STR(dm("_Z1fRA3_i"), "f(int (&) [3])");
	UT_EQ_STR(dm("_ZN1AC2Ev"), "A::A()");
	UT_EQ_STR(dm("_ZN1AD0Ev"), "A::~A()");
	UT_EQ_STR(dm("_Z1fIiEvT_"), "void f<int>(int)");
	UT_EQ_STR(dm("_ZN3foo3barB5cxx11Ev"), "foo::bar[abi:cxx11]()");
	UT_EQ_STR(dm("_ZZ1fvE1x"), "f()::x");
	UT_EQ_STR(dm("_ZZ1fvENKUliE_clEi"), "f()::{lambda(int)#1}::operator()(int) const");
	UT_EQ_STR(dm("_Z1fM1AFviE"), "f(void (A::*)(int))");
	/* pointers to cv member functions (libbinder's Parcel); only the qualified
	 * function type is a substitution candidate, as c++filt has it */
	UT_EQ_STR(dm("_Z1fM1AKFviE"), "f(void (A::*)(int) const)");
	UT_EQ_STR(dm("_Z1fM1AKFviES1_"),
		  "f(void (A::*)(int) const, void (A::*)(int) const)");
	UT_EQ_STR(dm("_Z1fM1AVKFvvRE"), "f(void (A::*)() const volatile &)");
	UT_EQ_STR(dm("_Z1fM1AKFvvOES1_"), "f(void (A::*)() const &&, void (A::*)() const &&)");
	UT_EQ_STR(dm("_ZNK7android6Parcel21unsafeReadTypedVectorIiiEEiPNSt3__16vectorIT_NS2_9"
		     "allocatorIS4_EEEEMS0_KFiPT0_E"),
		  "int android::Parcel::unsafeReadTypedVector<int, int>(std::__1::vector<int, "
		  "std::__1::allocator<int> >*, int (android::Parcel::*)(int*) const) const");
	UT_EQ_STR(dm("_Z1fPKc"), "f(char const*)");
	UT_EQ_STR(dm("_ZplRK1AS1_"), "operator+(A const&, A const&)");
	UT_EQ_STR(dm("_Z3fooILi3EEvv"), "void foo<3>()");
	UT_EQ_STR(dm("_ZNSt8ios_base4InitC1Ev.cold"), "std::ios_base::Init::Init() [clone .cold]");
	UT_EQ_STR(dm("_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_"),
		  "std::basic_ostream<char, std::char_traits<char> >& std::endl<char, "
		  "std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&)");
	UT_EQ_STR(dm("_ZNSsC1Ev"), "std::basic_string<char, std::char_traits<char>, "
		  "std::allocator<char> >::basic_string()");
	UT_EQ_STR(dm("_Z1fPFPFivEvE"), "f(int (*(*)())())");
	UT_EQ_STR(dm("_ZN12_GLOBAL__N_11fEv"), "(anonymous namespace)::f()");
	UT_EQ_STR(dm("_ZThn8_N1A1fEv"), "non-virtual thunk to A::f()");
	UT_EQ_STR(dm("_ZN1AcviEv"), "A::operator int()");
	UT_EQ_STR(dm("_Z1fILb1EEvv"), "void f<true>()");
	UT_EQ_STR(dm("_Z1fILin3EEvv"), "void f<-3>()");
	UT_EQ_STR(dm("_ZNO1A1fEv"), "A::f() &&");
	UT_EQ_STR(dm("main"), "(error)");
	UT_EQ_STR(dm("_Z"), "(error)");
	UT_EQ_STR(dm("_ZN1A"), "(error)");
	UT_EQ_STR(dm("_Z1fS9_"), "(error)");
	UT_EQ_STR(dm("_Z1fT_"), "(unsupported)");
}

UT_TEST(demangle_name_range)
{
	char buf[256];
	size_t s, e;

	UT_EQ_INT(demangle("_Z1fIiEvT_", buf, sizeof(buf), &s, &e), 0);
	UT_EQ_STR(buf + s, "f<int>(int)");
	UT_EQ_INT((int)(e - s), 6);
	UT_EQ_INT(demangle("_ZNK1A1fEi", buf, sizeof(buf), &s, &e), 0);
	UT_EQ_INT((int)s, 0);
	UT_EQ_INT((int)e, 4);
	UT_EQ_INT(demangle("_ZNK1A1fEi", buf, 8, &s, &e), -ENAMETOOLONG);
}

UT_TEST(demangle_hostile)
{
	char in[DEMANGLE_MAX_IN + 8], out[256];
	size_t n = 0;

	n += (size_t)snprintf(in, sizeof(in), "_Z1f");
	while (n + 2 < DEMANGLE_MAX_IN)
		in[n++] = 'P';
	in[n++] = 'i';
	in[n] = 0;
	UT_ASSERT(demangle(in, out, sizeof(out), NULL, NULL) < 0);
	memset(in, 'N', DEMANGLE_MAX_IN);
	in[DEMANGLE_MAX_IN] = 0;
	UT_EQ_INT(demangle(in, out, sizeof(out), NULL, NULL), -EINVAL);
	in[0] = '_';
	in[1] = 'Z';
	UT_ASSERT(demangle(in, out, sizeof(out), NULL, NULL) < 0);
}

/* Every defined symbol of the C++ libraries on this machine, through c++filt and through
 * demangle(): a different answer is a failure; -ENOTSUP is counted (not demangled). */
struct collect {
	FILE *f;
	size_t n;
};

static int collect_sym(void *ctx, const char *name, const struct elf_symbol *sym)
{
	struct collect *c = ctx;
	(void)sym;
	if (!strncmp(name, "_Z", 2) && !strchr(name, '\n') && strlen(name) < DEMANGLE_MAX_IN) {
		fprintf(c->f, "%s\n", name);
		c->n++;
	}
	return 0;
}

static void compare_library(const char *lib, size_t *total, size_t *unsupported,
			    size_t *wrong)
{
	size_t n0 = *total, u0 = *unsupported, w0 = *wrong, cnt = 0, *per = &cnt;
	struct elf_file *elf;
	struct err e;
	static char cmd[8192], a[8192], b[1 << 17], mine[1 << 17];   /* test-only scratch */
	char in[4096], out[4096];
	snprintf(in, sizeof(in), "%s", ut_tmpfile("syms.txt"));
	snprintf(out, sizeof(out), "%s", ut_tmpfile("filt.txt"));
	struct collect c = { fopen(in, "w"), 0 };

	if (!c.f || elf_open(lib, &elf, &e) < 0) {
		if (c.f)
			fclose(c.f);
		return;
	}
	elf_foreach_symbol(elf, collect_sym, &c);
	elf_close(elf);
	fclose(c.f);
	snprintf(cmd, sizeof(cmd), "c++filt < %s > %s", in, out);
	if (system(cmd) != 0)
		return;
	FILE *fa = fopen(in, "r"), *fb = fopen(out, "r");
	struct demangler *w = demangler_new();
	while (fa && fb && fgets(a, sizeof(a), fa) && fgets(b, sizeof(b), fb)) {
		a[strcspn(a, "\n")] = 0;
		b[strcspn(b, "\n")] = 0;
		int rc = w ? demangle_with(w, a, mine, sizeof(mine), NULL, NULL) : -ENOMEM;
		(*total)++;
		(*per)++;
		if (rc == -ENOTSUP || (rc && !strcmp(a, b))) {
			(*unsupported)++;
		} else if (rc || strcmp(mine, b)) {
			if ((*wrong)++ < 15)
				fprintf(stderr, "    %s\n      c++filt: %s\n      ours:    %s\n",
					a, b, rc ? "(error)" : mine);
		}
	}
	demangler_free(w);
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	fprintf(stderr, "    %s: %zu symbols, %zu not demangled, %zu wrong\n", lib,
		*total - n0, *unsupported - u0, *wrong - w0);
}

UT_TEST(demangle_matches_cxxfilt_on_real_libraries)
{
	/* libstdc++ (required), then whichever big C++ libraries this machine has */
	const char *libs[] = { "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
			       "/usr/lib/aarch64-linux-gnu/libstdc++.so.6", NULL };
	const char *more[] = { "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
			       "/usr/lib/x86_64-linux-gnu/libboost_regex.so.1.74.0",
			       "/usr/lib/x86_64-linux-gnu/libclang-14.so.1", NULL };
	size_t total = 0, unsup = 0, wrong = 0;

	if (system("c++filt --version > /dev/null 2>&1") != 0) {
		ut_fail(__FILE__, __LINE__, "c++filt (binutils) is needed for this test");
		return;
	}
	for (const char *const *l = libs; *l && !total; l++)
		compare_library(*l, &total, &unsup, &wrong);
	for (const char *const *l = more; *l; l++)
		compare_library(*l, &total, &unsup, &wrong);
	fprintf(stderr, "    demangle vs c++filt: %zu symbols, %zu not demangled, %zu wrong\n",
		total, unsup, wrong);
	UT_ASSERT(total > 1000);
	UT_EQ_U64(wrong, 0);
	UT_ASSERT(unsup * 2 < total);
}
