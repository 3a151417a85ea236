#!/bin/bash
# Kernel code the text carries (page_fault.perf: a user+kernel trace whose
# page fault runs kernel branches up to iret) is frames under [kernel] on
# the faulting thread's stack, not [lost] (issue 11, item 3, text input).
. "$REAL_DIR/common.sh"

f=$RT/page_fault.perf
"$PTFLAME" report --plain -i "$f" > pf.folded 2> pf.err || fail "report: $(cat pf.err)"
expect_grep ', 1 lost segment \(0\.00% of time\)' pf.err "page_fault: the overflow loses no time (the trace restarts at once, in the kernel)"
$CHECK stack pf.folded '.*;\[kernel\];asm_exc_page_fault;exc_page_fault;do_user_addr_fault;handle_mm_fault(;.*)?' > v.txt &&
	pass "page_fault: kernel frames under [kernel] ($(cat v.txt) ns under handle_mm_fault)" ||
	fail "page_fault: no [kernel];asm_exc_page_fault;...;handle_mm_fault stack"
# [kernel] holds the time from the trace's restart in the kernel to the
# iret back to user code, as the text's own timestamps say
want=$(awk '/tr strt/ && / => *ffff/ { sub(":", "", $2); s = $2 } / iret / { sub(":", "", $2); e = $2 }
	END { split(s, a, "."); split(e, b, "."); print (b[1] - a[1]) * 1000000000 + (b[2] - a[2]) }' "$f")
got=$($CHECK stack pf.folded '.*;\[kernel\](;.*)?')
[ -n "$want" ] && [ "$got" = "$want" ] && pass "page_fault: [kernel] holds the fault's $want ns" ||
	fail "page_fault: [kernel] has '$got' ns, the text says $want"
{ awk '/\[lost\]/ && $NF > 0' pf.folded; grep -F '[kernel];[unknown]' pf.folded; } > bad.txt; [ ! -s bad.txt ] &&
	pass "page_fault: no [lost] time, no [unknown] kernel frame" || fail "page_fault: $(head -3 bad.txt)"
finish
