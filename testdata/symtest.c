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

/* Labels (no .type: STT_NOTYPE), as hand-written asm has them. st_lbl_entry
 * and st_lbl_next name code no function symbol covers (ld.so's _start,
 * which calls _dl_start and runs on in _dl_start_user); st_lbl_inside lies
 * in a sized function and st_lbl_in_unsized in the room of an unsized one
 * (up to the next function symbol): both name nothing. */
__asm__(".text\n.p2align 4\n"
	".globl st_lbl_entry\n"
	"st_lbl_entry:\n\tnop\n\tcall st_lbl_func\n"
	"st_lbl_next:\n\tnop\n\tret\n"
	".p2align 4\n"
	".globl st_lbl_func\n.type st_lbl_func,@function\n"
	"st_lbl_func:\n\tnop\n\tnop\n"
	"st_lbl_inside:\n\tnop\n\tret\n"
	".size st_lbl_func,.-st_lbl_func\n"
	".p2align 4\n"
	".globl st_lbl_unsized\n.type st_lbl_unsized,@function\n"
	"st_lbl_unsized:\n\tnop\n\tnop\n"
	".globl st_lbl_in_unsized\n"
	"st_lbl_in_unsized:\n\tnop\n\tret\n"
	".p2align 4\n"
	".globl st_lbl_after\n.type st_lbl_after,@function\n"
	"st_lbl_after:\n\tret\n"
	".size st_lbl_after,.-st_lbl_after\n");

void st_lbl_entry(void);

int main(int argc, char **argv)
{
	int r = st_global(argc > 1 ? argv[1] : "symtest");

	st_lbl_entry();

	r += symtest_cpp_entry(r & 7);
	printf("%d\n", r);
	puts(getenv("SYMTEST_QUIET") ? "" : "done");
	return r == 0;
}
