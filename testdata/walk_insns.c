/* walker.sh (tests/e2e/decode): code whose blocks our block decoder
 * (decoder/ptwalk.c) and libipt's must give the same events for:
 *  - wi_fa falls into wi_fb with no branch, wi_fb called first: the first
 *    time through, libipt's block cache ends a block at wi_fb's entry (an
 *    address it knows), the second time not; the events must not show it;
 *  - loop and jrcxz (conditional branches: a TNT bit each);
 *  - a call to the next instruction (no return address kept). */
__asm__(
	".text\n"
	".globl wi_fa\n.type wi_fa, @function\n"
	"wi_fa:\n\tnop\n\tnop\n\tnop\n"
	".size wi_fa, . - wi_fa\n"
	".globl wi_fb\n.type wi_fb, @function\n"
	"wi_fb:\n\tnop\n\tnop\n\tret\n"
	".size wi_fb, . - wi_fb\n"
	".globl wi_loop\n.type wi_loop, @function\n"
	"wi_loop:\n"
	"\tmov $5, %ecx\n"
	"1:\tnop\n\tloop 1b\n"
	"\tjrcxz 2f\n\tnop\n"
	"2:\tmov $3, %ecx\n"
	"3:\tjrcxz 4f\n\tdec %ecx\n\tjmp 3b\n"
	"4:\tret\n"
	".size wi_loop, . - wi_loop\n"
	".globl wi_pic\n.type wi_pic, @function\n"
	"wi_pic:\n\tcall 1f\n1:\tpop %rax\n\tret\n"
	".size wi_pic, . - wi_pic\n");

void wi_fa(void);
void wi_fb(void);
void wi_loop(void);
void wi_pic(void);

int main(void)
{
	wi_fb();
	wi_fa();
	wi_fa();
	wi_loop();
	wi_pic();
	return 0;
}
