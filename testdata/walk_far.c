/* walker.sh (tests/e2e/decode): a far return (lretq, to the same code
 * segment) from wf_hop into another function, three times: libipt's block
 * decoder classes the branch ptic_far_return the first time and, once its
 * block cache holds it, ptic_error (our walker always the former); the
 * events must not depend on which. */
__asm__(
	".text\n"
	".globl wf_hop\n.type wf_hop, @function\n"
	"wf_hop:\n"
	"\tmov %cs, %eax\n"
	"\tpushq %rax\n"
	"\tlea wf_dst(%rip), %rax\n"
	"\tpushq %rax\n"
	"\tlretq\n"
	".size wf_hop, . - wf_hop\n"
	".globl wf_dst\n.type wf_dst, @function\n"
	"wf_dst:\n\tnop\n\tret\n"
	".size wf_dst, . - wf_dst\n");

void wf_hop(void);

int main(void)
{
	wf_hop();
	wf_hop();
	wf_hop();
	return 0;
}
