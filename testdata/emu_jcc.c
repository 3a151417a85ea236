/* Emulator testdata: conditional branches at function boundaries (glibc's
 * __memmove_chk ends in a jb to __chk_fail and falls through into
 * __memmove, past bytes no symbol covers; GCC's hot/cold splitting jumps
 * into a function's .cold part with a jcc).
 * - jcc_tail: a taken conditional branch into another function, a tail
 *   call made with jcc (into jcc_target).
 * - jcc_fall: its last instruction, a conditional branch not taken, falls
 *   through into the next function (jcc_next): no jump at all.
 * - jcc_gap: the same into bytes no symbol covers, then into jcc_after. */
__asm__(
	".text\n"
	".p2align 4\n"
	".globl jcc_target\n.type jcc_target, @function\n"
	"jcc_target:\n"
	"	lea 1(%rdi), %eax\n"
	"	ret\n"
	".size jcc_target, .-jcc_target\n"
	".p2align 4\n"
	".globl jcc_tail\n.type jcc_tail, @function\n"
	"jcc_tail:\n"
	"	test %edi, %edi\n"
	"	jns jcc_target\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	".size jcc_tail, .-jcc_tail\n"
	".p2align 4\n"
	".globl jcc_fall\n.type jcc_fall, @function\n"
	"jcc_fall:\n"
	"	mov %edi, %eax\n"
	"	cmp $-1, %edi\n"
	"	je jcc_target\n"
	".size jcc_fall, .-jcc_fall\n"
	".globl jcc_next\n.type jcc_next, @function\n"
	"jcc_next:\n"
	"	add $2, %eax\n"
	"	ret\n"
	".size jcc_next, .-jcc_next\n"
	".p2align 4\n"
	".globl jcc_gap\n.type jcc_gap, @function\n"
	"jcc_gap:\n"
	"	mov %edi, %eax\n"
	"	cmp $-5, %edi\n"
	"	je jcc_target\n"
	".size jcc_gap, .-jcc_gap\n"
	"	nop\n"
	"	nopl 0(%rax)\n"
	".globl jcc_after\n.type jcc_after, @function\n"
	"jcc_after:\n"
	"	add $3, %eax\n"
	"	ret\n"
	".size jcc_after, .-jcc_after\n");

int jcc_tail(int x);
int jcc_fall(int x);
int jcc_gap(int x);

int main(int argc, char **argv)
{
	(void)argv;
	volatile int n = argc;
	int s = 0;

	for (int i = 0; i < 3; i++) {
		s += jcc_tail(i + n);
		s += jcc_fall(i + n);
		s += jcc_gap(i + n);
	}
	return s == 0;
}
