/* pagecross: calls whose instruction crosses a page boundary, for the
 * emulators' page-crossing rule (tests/e2e/emulate/perf.sh). qemu-user 7.2
 * does not translate an instruction that reaches onto another page than
 * its block's first byte into that block: it reports it as the block's
 * last instruction but ends the block before it, and translates it again
 * as a block of its own. Two shapes, each a loop whose block is `mov;
 * call`:
 *   cross_split  the 5-byte call starts 4 bytes before a page end;
 *   cross_next   the call starts at the next page's first byte (the block's
 *                previous instruction ends at the page end).
 * Each calls leaf() N times; main calls both (the traced region). */
#include <stdlib.h>

int leaf(int x);
int cross_split(int n);
int cross_next(int n);

__attribute__((noinline)) int leaf(int x)
{
	return x + 1;
}

/* %ebx counts down; the loop's block is `mov; call` from 1: (on the page
 * of the call's first byte for cross_split, the page before for
 * cross_next); the first pass comes down a run of nops. */
#define CROSS(name, callpos)                                             \
	"	.text\n"                                                 \
	"	.balign 4096\n"                                          \
	name "_page:\n"                                                  \
	"	.skip 4096 - 64, 0xcc\n"                                 \
	"	.globl " name "\n"                                       \
	"	.type " name ", @function\n"                             \
	name ":\n"                                                       \
	"	push %rbp\n"                                             \
	"	mov %rsp, %rbp\n"                                        \
	"	push %rbx\n"                                             \
	"	sub $8, %rsp\n"                                          \
	"	mov %edi, %ebx\n"                                        \
	"	xor %eax, %eax\n"                                        \
	"	.org " name "_page + " callpos " - 2, 0x90\n"            \
	"1:	mov %eax, %edi\n"                                        \
	"	call leaf\n"                                             \
	"	dec %ebx\n"                                              \
	"	jnz 1b\n"                                                \
	"	add $8, %rsp\n"                                          \
	"	pop %rbx\n"                                              \
	"	pop %rbp\n"                                              \
	"	ret\n"                                                   \
	"	.size " name ", . - " name "\n"

__asm__(CROSS("cross_split", "4096 - 4") CROSS("cross_next", "4096"));

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	int a = cross_split(n);
	int b = cross_next(n);
	return a == n + 0 && b == n + 0 ? 0 : 1;
}
