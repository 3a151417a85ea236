/* ptflame tests: the code of a small fake kernel, linked at a kernel
 * address (see meson.build) into an ELF with a build-id and a symtab, as a
 * vmlinux is. Never run: tests/e2e/kernel/kgen.c walks it as the kernel
 * part of a synthetic user+kernel trace. A syscall enters k_entry, which
 * calls k_do_syscall; that calls k_work (a loop whose length the walk
 * decides), k_copy, which tail-calls k_tail, and through a pointer a
 * module's m_func (kmod.S, linked in only where the code runs, as a
 * kcore holds it); k_entry goes back to user mode with iretq. */
	.text
	.globl _start, _text, _stext, k_entry, k_do_syscall, k_work, k_copy, k_tail
	.type k_entry, @function
	.type k_do_syscall, @function
	.type k_work, @function
	.type k_copy, @function
	.type k_tail, @function
_start:
_text:
_stext:
	ud2
	.p2align 4
k_entry:
	push %rcx
	call k_do_syscall
	pop %rcx
	iretq
	.size k_entry, . - k_entry
	.p2align 4
k_do_syscall:
	mov %eax, %ecx
	call k_work
	call k_copy
	call *%r11              /* a module's function (m_func, kmod.S) */
	ret
	.size k_do_syscall, . - k_do_syscall
	.p2align 4
k_work:
1:	add $1, %rdx
	dec %ecx
	jnz 1b
	ret
	.size k_work, . - k_work
	.p2align 4
k_copy:
	mov %rdx, %r8
	add %r8, %r9
	jmp k_tail
	.size k_copy, . - k_copy
	.p2align 4
k_tail:
	xor %r9, %r8
	ret
	.size k_tail, . - k_tail
	.section .note.GNU-stack, "", @progbits
