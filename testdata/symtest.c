/* symtest: symbolizer fixture (tests/unit/test_symbols.c). Static and global
 * C functions, libc calls through the PLT, and C++ functions with
 * namespaces and templates (symtest_ns.cpp). Built -O0 -g, plus a stripped
 * copy with separate debuginfo (.gnu_debuglink). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int symtest_cpp_entry(int n);

static int st_leaf(int x)
{
	return x * 3 + 1;
}

static int st_middle(int x)
{
	return st_leaf(x) + st_leaf(x + 1);
}

int st_global(const char *s)
{
	return (int)strlen(s) + st_middle((int)s[0]);
}

/* A function with a sized function symbol inside it (glibc 2.17's
 * __write with its __write_nocancel label): one function, the outer. */
__asm__(".text\n"
	".globl st_outer_asm\n.type st_outer_asm,@function\n"
	"st_outer_asm:\n\tnop\n\tnop\n"
	".globl st_inner_label\n.type st_inner_label,@function\n"
	"st_inner_label:\n\tnop\n\tret\n"
	".size st_inner_label,.-st_inner_label\n"
	"\tnop\n\tret\n"
	".size st_outer_asm,.-st_outer_asm\n");

int main(int argc, char **argv)
{
	int r = st_global(argc > 1 ? argv[1] : "symtest");

	r += symtest_cpp_entry(r & 7);
	printf("%d\n", r);
	puts(getenv("SYMTEST_QUIET") ? "" : "done");
	return r == 0;
}
