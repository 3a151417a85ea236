#!/bin/bash
# report --vmlinux / --kcore / --kallsyms (issue 10 item 6, issue 11 item 3):
# the kernel code of a user+kernel trace decoded from the image the user
# passes, as frames under [kernel] with exact calls and times; without an
# image (or with one that is not the recording's kernel) [kernel] as before,
# never [lost]. kgen writes the recording (a fake kernel's code run by
# three syscalls, calling into a module, its text map moved as KASLR does)
# and the profile its own walk gives.
. "$E2E_LIB"
: "${KGEN:?}" "${KVMLINUX:?}" "${KRUN:?}" "${KRUN0:?}" "${KCHECK:?}"
CHECK="python3 $KCHECK"
SHIFT=2a00000   # where krun has the kernel (tests/e2e/kernel/meson.build)

"$KGEN" "$KVMLINUX" "$KRUN" k.perf exp.txt --shift $SHIFT --kallsyms ks.txt || { fail "kgen"; finish; }
mkdir kc && cp "$KRUN" kc/kcore && cp ks.txt kc/kallsyms
total=$(awk '$1 != "calls" {s += $NF} END {print s}' exp.txt)

# --vmlinux (the kernel's code) with --kcore (the module's): every stack
# and self time as the walk says; the calls too
"$PTFLAME" report -i k.perf --plain -k "$KVMLINUX" --kcore kc > vm.folded 2> vm.err
rc=$?
[ $rc -eq 0 ] && pass "--vmlinux: exit 0" || fail "--vmlinux: exit $rc: $(cat vm.err)"
$CHECK folded exp.txt vm.folded > d.txt && pass "--vmlinux --kcore: kernel and module frames, exact times ($total ns)" ||
	fail "--vmlinux --kcore: stacks differ: $(head -5 d.txt)"
grep -q warning vm.err && fail "--vmlinux: a warning: $(cat vm.err)" || pass "--vmlinux: no warning"
"$PTFLAME" report -i k.perf --vmlinux "$KVMLINUX" --kcore kc --table --raw > vm.table 2>/dev/null
$CHECK calls exp.txt vm.table > d.txt && pass "--vmlinux --kcore: exact call counts (tail call included)" ||
	fail "--vmlinux --kcore: calls differ: $(head -5 d.txt)"
# --vmlinux alone: the module's code is not there: kernel frames, no [lost]
"$PTFLAME" report -i k.perf --plain -k "$KVMLINUX" > vmo.folded 2> vmo.err || fail "--vmlinux alone: $(cat vmo.err)"
$CHECK total exp.txt vmo.folded > /dev/null && pass "--vmlinux alone: the same total" || fail "--vmlinux alone: another total"
expect_grep '^ku_main;ku_sys;\[kernel\];k_entry;k_do_syscall;k_work [0-9]+$' vmo.folded "--vmlinux alone: kernel frames"
grep -Eq 'm_func|\[lost\]' vmo.folded && fail "--vmlinux alone: $(grep -E 'm_func|\[lost\]' vmo.folded)" ||
	pass "--vmlinux alone: no module name, no [lost]"
# ... with --kallsyms: the module's function it called is named
"$PTFLAME" report -i k.perf --plain -k "$KVMLINUX" --kallsyms ks.txt > vmk.folded 2>/dev/null
expect_grep '^ku_main;ku_sys;\[kernel\];k_entry;k_do_syscall;m_func [0-9]+$' vmk.folded "--vmlinux --kallsyms: the module's function named"

# no image: [kernel] holds the kernel's time, the same total, no [lost]
"$PTFLAME" report -i k.perf --plain > none.folded 2> none.err || fail "no image: $(cat none.err)"
$CHECK total exp.txt none.folded > /dev/null && pass "no image: the same total" ||
	fail "no image: total $($CHECK total exp.txt none.folded), want $total"
expect_grep '^ku_main;ku_sys;\[kernel\] [0-9]+$' none.folded "no image: [kernel] on the syscall's stack"
grep -Eq 'k_|\[lost\]' none.folded && fail "no image: $(grep -E 'k_|\[lost\]' none.folded)" ||
	pass "no image: no kernel names, no [lost]"

# --kallsyms: names without code: the function a syscall entered
"$PTFLAME" report -i k.perf --plain --kallsyms ks.txt > ks.folded 2> ks.err || fail "--kallsyms: $(cat ks.err)"
$CHECK total exp.txt ks.folded > /dev/null && pass "--kallsyms: the same total" || fail "--kallsyms: another total"
expect_grep '^ku_main;ku_sys;\[kernel\];k_entry [0-9]+$' ks.folded "--kallsyms: the kernel entry named under [kernel]"

# --kcore DIR: kcore (the code at its run-time address) + kallsyms
"$PTFLAME" report -i k.perf --plain --kcore kc > kc.folded 2> kc.err || fail "--kcore: $(cat kc.err)"
$CHECK folded exp.txt kc.folded > d.txt && pass "--kcore: the same frames and times" ||
	fail "--kcore: stacks differ: $(head -5 d.txt)"

# a vmlinux that is not the recording's kernel (build-id): one warning, [kernel]
"$KGEN" "$KVMLINUX" "$KRUN" bad.perf exp_bad.txt --shift $SHIFT --bad-build-id || fail "kgen --bad-build-id"
"$PTFLAME" report -i bad.perf --plain -k "$KVMLINUX" > bad.folded 2> bad.err || fail "bad build-id: $(cat bad.err)"
n=$(grep -c 'warning: .*build-id.*not used' bad.err)
[ "$n" -eq 1 ] && pass "bad build-id: one warning" || fail "bad build-id: $n warnings: $(cat bad.err)"
"$PTFLAME" report -i bad.perf --plain > bad_none.folded 2>/dev/null
cmp -s bad.folded bad_none.folded && pass "bad build-id: the profile of no image" ||
	fail "bad build-id: decoded anyway: $(head -3 bad.folded)"
# no build-id in the recording: nothing to check against, the image is used
"$KGEN" "$KVMLINUX" "$KRUN" nob.perf exp_nob.txt --shift $SHIFT --no-build-id || fail "kgen --no-build-id"
"$PTFLAME" report -i nob.perf --plain -k "$KVMLINUX" --kcore kc > nob.folded 2>/dev/null
$CHECK folded exp_nob.txt nob.folded > d.txt && pass "no build-id recorded: decoded" || fail "no build-id: $(head -3 d.txt)"
# a kcore of another boot (the kernel ran elsewhere: no shift): one warning
"$KGEN" "$KVMLINUX" "$KRUN0" s0.perf exp0.txt --kallsyms ks0.txt || fail "kgen (no shift)"
"$PTFLAME" report -i s0.perf --plain --kcore kc > s0.folded 2> s0.err || fail "kcore mismatch: $(cat s0.err)"
expect_grep 'warning: .*another boot' s0.err "kcore of another boot: a warning"
grep -q 'k_' s0.folded && fail "kcore of another boot: decoded: $(head -3 s0.folded)" ||
	pass "kcore of another boot: [kernel] only"
# kallsyms of another boot: one warning, its names not used
"$PTFLAME" report -i s0.perf --plain --kallsyms ks.txt > s0ks.folded 2> s0ks.err || fail "kallsyms mismatch: $(cat s0ks.err)"
expect_grep 'warning: ks.txt puts _text at .*another boot' s0ks.err "kallsyms of another boot: a warning"
grep -q 'k_' s0ks.folded && fail "kallsyms of another boot: named: $(head -3 s0ks.folded)" ||
	pass "kallsyms of another boot: no names"
# the image linked where it ran (no shift) is used as is
mkdir kc0 && cp "$KRUN0" kc0/kcore && cp ks0.txt kc0/kallsyms
"$PTFLAME" report -i s0.perf --plain -k "$KVMLINUX" --kcore kc0 > s0vm.folded 2>/dev/null
$CHECK folded exp0.txt s0vm.folded > d.txt && pass "--vmlinux without KASLR" || fail "no shift: $(head -3 d.txt)"

# a vmlinux without symbols: placed where it is linked (one warning), its
# names from kallsyms
objcopy --strip-all "$KVMLINUX" kv.stripped
"$PTFLAME" report -i s0.perf --plain -k kv.stripped --kcore kc0 > strip.folded 2> strip.err
expect_grep 'warning: kv.stripped has no symbol _text' strip.err "stripped vmlinux: a warning"
$CHECK folded exp0.txt strip.folded > d.txt && pass "stripped vmlinux: decoded, named by kallsyms" ||
	fail "stripped vmlinux: $(head -3 d.txt)"

# a real user+kernel recording (kernel 4.14, modules mapped by their .ko
# paths) whose user binaries are missing: kallsyms of its boot changes
# nothing where no kernel entry is seen (the user code is not decoded)
R="$SRCDIR/../shared/realtraces/skylake-echo.intel_pt.data"
if [ -f "$R" ]; then
	python3 -c "
print('ffffffffb9600000 T _text')
for i in range(109): print('%016x t ksym_%d' % (0xffffffffb9600000 + i * 0x100000, i))" > sky.ks
	"$PTFLAME" report -i "$R" --per-thread --plain > sky.folded 2>/dev/null
	"$PTFLAME" report -i "$R" --per-thread --plain --kallsyms sky.ks > skyks.folded 2> skyks.err
	rc=$?
	[ $rc -eq 0 ] && cmp -s sky.folded skyks.folded && ! grep -q 'warning: .*sky.ks' skyks.err &&
		pass "skylake-echo: --kallsyms of its boot accepted, the profile unchanged" ||
		fail "skylake-echo --kallsyms: exit $rc, $(diff sky.folded skyks.folded | head -3) $(grep sky.ks skyks.err)"
else
	echo "skip: $R absent (real traces)"
fi

# bad input: one line, non-zero exit, no output file
expect_rc 1 "--vmlinux missing file" -- "$PTFLAME" report -i k.perf -k nosuch -o out.folded
expect_grep 'cannot open nosuch' "$T/err" "--vmlinux missing file: named"
[ ! -e out.folded ] && pass "no output written on error" || fail "out.folded written"
echo "not kallsyms" > junk.txt
expect_rc 1 "--kallsyms of another file" -- "$PTFLAME" report -i k.perf --kallsyms junk.txt
expect_grep 'junk.txt: no symbols' "$T/err" "--kallsyms: the problem named"
expect_rc 1 "--vmlinux not ELF" -- "$PTFLAME" report -i k.perf -k junk.txt
expect_grep 'junk.txt: not a 64-bit ELF' "$T/err" "--vmlinux not ELF: named"
expect_rc 1 "--kcore without kcore" -- "$PTFLAME" report -i k.perf --kcore .
expect_rc 1 "--kcore and --kallsyms" -- "$PTFLAME" report -i k.perf --kcore kc --kallsyms ks.txt
printf '  ku 1/1 [000] 1.000000000: 1 branches: 401000 main => 401010 f\n' > t.txt
expect_rc 1 "--vmlinux with perf script text" -- "$PTFLAME" report -i t.txt -k "$KVMLINUX"
expect_grep 't.txt: perf script text names its kernel code itself' "$T/err" "--vmlinux with text: said why"
for f in "$T/err"; do [ "$(wc -l < "$f")" -eq 1 ] && pass "one-line error" || fail "error: $(cat "$f")"; done
finish
