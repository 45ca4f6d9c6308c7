/* libstk_a.so — half of target_stack's call chain, built WITH frame pointers
 * (-fno-omit-frame-pointer).  Each function calls on through the PLT and
 * does work after the call, so no call is a tail call and every frame is on
 * the stack when the probe on stk_b5 fires. */
long stk_b3(long x);
long stk_b5(long x);

__attribute__((noinline, visibility("default"))) long stk_a4(long x)
{
	long r = stk_b5(x + 1);

	__asm__ volatile("" : "+r"(r)::"memory");
	return r + 4;
}

__attribute__((noinline, visibility("default"))) long stk_a2(long x)
{
	long r = stk_b3(x + 1);

	__asm__ volatile("" : "+r"(r)::"memory");
	return r + 2;
}
