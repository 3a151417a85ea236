/* ptflame tests: a fake kernel module's code (see ktext.S), in its own
 * section placed at a module address; it calls back into the kernel. */
	.section .modtext, "ax"
	.globl m_func
	.type m_func, @function
m_func:
	nop
	call k_tail
	ret
	.size m_func, . - m_func
	.section .note.GNU-stack, "", @progbits
