#include "ut.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/elf.h"
#include "formats/minidebug.h"
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

/* Real names (g++ 12 and clang 14 on std::tuple, std::apply and templates
 * with packs and late-specified return types; libc++ from Android 11's
 * libbinder), each with c++filt's (binutils 2.40) spelling. */
UT_TEST(demangle_packs_decltype_expressions_and_special_names)
{
	static const char *const cases[][2] = {
		{ "_Z1fIJEEvDpT_", "void f<>()" },
		{ "_Z1fIJidcEEvDpT_", "void f<int, double, char>(int, double, char)" },
		/* reference collapsing through the pack: & + && is & */
		{ "_Z1gIJRiiiEEvDpOT_", "void g<int&, int, int>(int&, int&&, int&&)" },
		{ "_Z1hIiJEEvT_DpRKT0_", "void h<int>(int)" },
		{ "_Z1hIiJlA2_cEEvT_DpRKT0_",
		  "void h<int, long, char [2]>(int, long const&, char const (&) [2])" },
		{ "_ZN1SIJicEE1mEPiPc", "S<int, char>::m(int*, char*)" },
		{ "_ZSt12__get_helperILm1ElJEERT0_RSt11_Tuple_implIXT_EJS0_DpT1_EE",
		  "long& std::__get_helper<1ul, long>(std::_Tuple_impl<1ul, long>&)" },
		{ "_Z2d1IiEDTplfp_Li1EET_", "decltype ({parm#1}+(1)) d1<int>(int)" },
		{ "_Z2d2I1VEDTcldtfp_4sizeEET_", "decltype (({parm#1}.size)()) d2<V>(V)" },
		{ "_Z2d3IidEDTmlfp_fp0_ET_T0_",
		  "decltype ({parm#1}*{parm#2}) d3<int, double>(int, double)" },
		{ "_Z2d4IiEDTstT_ES0_", "decltype (sizeof (int)) d4<int>(int)" },
		{ "_Z2d7ILi3EE1IIXplT_Li1EEES0_IXT_EE", "I<(3)+(1)> d7<3>(I<3>)" },
		{ "_Z2d8IiEDTcvT__EES0_", "decltype ((int)()) d8<int>(int)" },
		{ "_Z2d9IPiEDTixfp_Li0EET_", "decltype ({parm#1}[0]) d9<int*>(int*)" },
		{ "_Z3d11IJiiEEDTcl2fnspfp_EEDpT_",
		  "decltype (fn({parm#1}...)) d11<int, int>(int, int)" },
		{ "_Z3d12IiEDTsclfp_ET_", "decltype (static_cast<long>({parm#1})) d12<int>(int)" },
		{ "_Z3d13IP1VEDTclptfp_4sizeEET_", "decltype (({parm#1}->size)()) d13<V*>(V*)" },
		{ "_ZSt12__apply_implIZ3usevE3$_0RSt5tupleIJilEEJLm0ELm1EEEDcOT_OT0_St16"
		  "integer_sequenceImJXspT1_EEE",
		  "decltype(auto) std::__apply_impl<use()::$_0, std::tuple<int, long>&, 0ul, 1ul>"
		  "(use()::$_0&&, std::tuple<int, long>&, std::integer_sequence<unsigned long, "
		  "0ul, 1ul>)" },
		{ "_ZNSt3__16vectorIbNS_9allocatorIbEEE18__construct_at_endINS_14__bit_iteratorIS3_"
		  "Lb0ELm0EEEEENS_9enable_ifIXsr21__is_forward_iteratorIT_EE5valueEvE4typeES8_S8_",
		  "std::__1::enable_if<__is_forward_iterator<std::__1::__bit_iterator<std::__1::"
		  "vector<bool, std::__1::allocator<bool> >, false, 0ul> >::value, void>::type "
		  "std::__1::vector<bool, std::__1::allocator<bool> >::__construct_at_end<std::__1::"
		  "__bit_iterator<std::__1::vector<bool, std::__1::allocator<bool> >, false, 0ul> >"
		  "(std::__1::__bit_iterator<std::__1::vector<bool, std::__1::allocator<bool> >, "
		  "false, 0ul>, std::__1::__bit_iterator<std::__1::vector<bool, std::__1::"
		  "allocator<bool> >, false, 0ul>)" },
		/* an empty pack last: c++filt writes ">>" */
		{ "_Z1fRN1PIiN1AIiJEEEJEEE", "f(P<int, A<int>>&)" },
		{ "_ZTVN7android7BBinderE", "vtable for android::BBinder" },
		{ "_ZTCN7android10MemoryBaseE8_NS_7IBinderE",
		  "construction vtable for android::IBinder-in-android::MemoryBase" },
		{ "_ZGVZ1fvE1x", "guard variable for f()::x" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		UT_EQ_STR(dm(cases[i][0]), cases[i][1]);
	UT_EQ_STR(dm("_Z1fIJiEEvT_"), "(unsupported)");      /* a pack outside an expansion */
	UT_EQ_STR(dm("_Z1fIiEDTnw_T_EEv"), "(unsupported)");  /* new in an expression */
	UT_EQ_STR(dm("_ZTVN1AE.cold"), "vtable for A [clone .cold]");
	UT_EQ_STR(dm("_ZTVN1AE1x"), "(error)");
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
 * demangle(): a different answer is a failure; -ENOTSUP is counted (not demangled); a
 * name c++filt leaves as it is too is not counted. */
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
	struct minidebug md;   /* Android's stripped libraries: the local functions too */
	if (minidebug_open(elf, &md, &e) == 0) {
		elf_foreach_symbol(md.elf, collect_sym, &c);
		minidebug_close(&md);
	}
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
		if (rc && !strcmp(a, b))
			continue;    /* no name to c++filt either ("…Ev$3d66…": an LTO suffix) */
		(*total)++;
		(*per)++;
		if (rc == -ENOTSUP) {
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

/* Every mangled name of Android 11's libbinder.so and libutils.so (x86_64 and
 * arm64; .dynsym and the .gnu_debugdata symbols: libc++ templates with
 * packs, expressions in template arguments, lambdas, vtables) demangles as
 * c++filt has it, none left out. */
UT_TEST(demangle_matches_cxxfilt_on_android_libbinder_and_libutils)
{
	static const char *const libs[] = {
		"x86_64-android11/system/lib64/libbinder.so",
		"x86_64-android11/system/lib64/libutils.so",
		"arm64-android11/system/lib64/libbinder.so",
		"arm64-android11/system/lib64/libutils.so",
	};
	size_t total = 0, unsup = 0, wrong = 0;
	char rel[256];

	if (system("c++filt --version > /dev/null 2>&1") != 0) {
		ut_fail(__FILE__, __LINE__, "c++filt (binutils) is needed for this test");
		return;
	}
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		snprintf(rel, sizeof(rel), "android-userland/%s", libs[i]);
		compare_library(ut_testdata(rel), &total, &unsup, &wrong);
	}
	UT_ASSERT(total > 5000);
	UT_EQ_U64(wrong, 0);
	UT_EQ_U64(unsup, 0);
}
