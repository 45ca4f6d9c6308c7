/* libstk_b.so — the other half of target_stack's call chain, built WITHOUT
 * frame pointers (-fomit-frame-pointer) but with .eh_frame.  stk_b3 also
 * uses rbp/x29 as an ordinary register, so a frame-pointer walk through it
 * would skip a frame: only the CFI unwinds it correctly. */
long stk_a4(long x);

__attribute__((noinline, visibility("default"))) long stk_b5(long x)
{
	__asm__ volatile("" : "+r"(x)::"memory");
	return x * 3;
}

__attribute__((noinline, visibility("default"))) long stk_b3(long x)
{
	long r;

#if defined(__x86_64__)
	__asm__ volatile("mov %0, %%rbp" ::"r"(x ^ 0x5a5a) : "rbp");
#elif defined(__aarch64__)
	__asm__ volatile("mov x29, %0" ::"r"(x ^ 0x5a5a) : "x29");
#endif
	r = stk_a4(x + 1);
	__asm__ volatile("" : "+r"(r)::"memory");
	return r + 3;
}
