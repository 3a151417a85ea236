#!/bin/bash
# record --emulate backend selection and the qemu backend's errors: one
# line naming the problem and what to do, exit status 1/2, no file left.
. "$E2E_LIB"
command -v qemu-x86_64 >/dev/null ||
	{ echo "qemu-x86_64 not installed (apt-get install qemu-user): skipped"; exit 77; }
QEMU=$(command -v qemu-x86_64)
P="$TESTDATA/emu_nested"
expect_rc 2 "unknown backend" -- "$PTFLAME" record --emulate=bochs -o x.data -- "$P"
expect_grep "backends are qemu and ptrace" "$T/err" "unknown backend names the choices"
expect_rc 2 "qemu cannot attach" -- "$PTFLAME" record --emulate=qemu -p $$ -o x.data
expect_grep "need --emulate=ptrace" "$T/err" "attach says which backend can"
# no qemu-x86_64 on PATH: --emulate=qemu says how to install it; the
# default falls back to the stepper
mkdir nobin
PATH="$T/nobin" expect_rc 1 "qemu not installed" -- "$PTFLAME" record --emulate=qemu -q -o x.data -- "$P"
expect_grep "install qemu-user" "$T/err" "missing qemu says how to install it"
[ ! -e x.data ] && pass "no output file after an error" || fail "x.data left behind"
PTFLAME_EMULATE= PATH="$T/nobin" expect_rc 0 "default without qemu: the stepper" -- \
	"$PTFLAME" record --emulate -q -o x.data --truth x.truth -- "$P"
PTFLAME_EMULATE= expect_rc 0 "default with qemu" -- "$PTFLAME" record --emulate -o y.data -- "$P"
expect_grep "insns/s" "$T/err" "qemu run prints its summary"
PTFLAME_QEMU_PLUGIN=/nonexistent/plugin.so expect_rc 1 "plugin missing" -- \
	"$PTFLAME" record --emulate=qemu -q -o x.data -- "$P"
expect_grep "PTFLAME_QEMU_PLUGIN" "$T/err" "missing plugin names the variable"
expect_rc 1 "program missing" -- "$PTFLAME" record --emulate=qemu -q -o z.data -- ./no-such-prog
expect_grep "no such program" "$T/err" "missing program named"
[ ! -e z.data ] && pass "no output file for a missing program" || fail "z.data left behind"
printf 'echo hi\n' >noexec.sh
expect_rc 1 "a file without the exec bit" -- "$PTFLAME" record --emulate=qemu -q -o z.data -- ./noexec.sh
expect_grep "cannot run \./noexec\.sh: not executable \(Permission denied\)" "$T/err" \
	"a file without the exec bit: said so, not 'no such program'"
expect_rc 1 "start symbol missing" -- "$PTFLAME" record --emulate=qemu -q -o s.data --start no_such_fn -- "$P"
expect_grep "start symbol 'no_such_fn' not found" "$T/err" "missing start symbol named"
[ ! -e s.data ] && pass "no output file without the start symbol" || fail "s.data left behind"
# a "#!" script: qemu-user runs ELF files only, so the backend runs its
# interpreter as execve would (interpreter, its "#!" argument, the script,
# the arguments); the process is named after the script
printf '#!/bin/sh -e\necho "$0:$1"\n' >scr.sh && chmod +x scr.sh
expect_rc 0 "a script, from exec" -- "$PTFLAME" record --emulate=qemu -q -o sc.data --truth sc.truth \
	--start= -- ./scr.sh arg1
expect_grep "^\./scr\.sh:arg1$" "$T/out" "the script ran with its arguments"
expect_grep " comm scr\.sh$" sc.truth "the process is named after the script"
expect_grep " mmap .* $(readlink -f /bin/sh)$" sc.truth "the interpreter's code is traced"
# the default start, main, is not in the interpreter (stripped): from exec,
# as with --start=, and a note says so
expect_rc 0 "a script, default start" -- "$PTFLAME" record --emulate=qemu -q -o sd.data \
	--truth sd.truth -- ./scr.sh arg1
expect_grep "note: no 'main' in $(readlink -f /bin/sh) .*traced from exec.*--start=SYMBOL" "$T/err" \
	"a script, default start: the note names the interpreter and what to do"
expect_grep " mmap .* $(readlink -f /bin/sh)$" sd.truth "a script, default start: the interpreter is traced"
if [ "$(awk '$5 == "start" {print $6; exit}' sd.truth)" = "$(awk '$5 == "start" {print $6; exit}' sc.truth)" ]; then
	pass "a script, default start: traced from the same first instruction as --start="
else
	fail "a script, default start: not traced from exec"
fi
printf '#!/no/such/interp\n' >bad.sh && chmod +x bad.sh
expect_rc 1 "a script whose interpreter is missing" -- "$PTFLAME" record --emulate=qemu -q \
	-o sb.data --start= -- ./bad.sh
expect_grep "interpreter /no/such/interp is not there" "$T/err" "the missing interpreter named"
# "#!/usr/bin/env NAME": env would exec NAME, which qemu-user cannot follow,
# so NAME (found on PATH) runs the script, named as env's exec names it
printf '#!/usr/bin/env sh\necho "$0:$1"\n' >env.sh && chmod +x env.sh
expect_rc 0 "an env script, from exec" -- "$PTFLAME" record --emulate=qemu -q -o se.data \
	--truth se.truth --start= -- ./env.sh arg2
expect_grep "^\./env\.sh:arg2$" "$T/out" "the env script ran with its arguments"
expect_grep " comm sh$" se.truth "the process is named after env's program"
expect_grep " mmap .* $(readlink -f /bin/sh)$" se.truth "env's program is traced, not env"
grep -q ' mmap .*/env$' se.truth && fail "env itself was run" || pass "env itself is not run"
# NAME itself a script (a pyenv shim): qemu cannot run it, so env runs
# as written (untraced after its exec, and record says so)
mkdir -p bin && printf '#!/bin/sh\nexec /bin/sh "$@"\n' >bin/myinterp && chmod +x bin/myinterp
printf '#!/usr/bin/env myinterp\necho "$0:$1"\n' >env3.sh && chmod +x env3.sh
PATH=$T/bin:$PATH expect_rc 0 "an env script whose program is a script" -- "$PTFLAME" record \
	--emulate=qemu -q -o se3.data --start= -- ./env3.sh arg3
expect_grep "^\./env3\.sh:arg3$" "$T/out" "it ran, through env"
expect_grep "warning: 1 process\(es\) called execve" "$T/err" "and the exec out of the trace is reported"
# argv[0] is the name the program was given, not the path qemu runs
expect_rc 0 "argv[0]" -- "$PTFLAME" record --emulate=qemu -q -o a0.data --start= -- sh -c 'echo "a0=$0"'
expect_grep "^a0=sh$" "$T/out" "the program's argv[0] is the name given"
printf '#!/usr/bin/env no-such-interp-x\n' >env2.sh && chmod +x env2.sh
expect_rc 1 "an env script whose program is not on PATH" -- "$PTFLAME" record --emulate=qemu -q \
	-o se2.data --start= -- ./env2.sh
expect_grep "env finds no no-such-interp-x" "$T/err" "the missing program named"
[ ! -e se2.data ] && pass "no output file then" || fail "se2.data left behind"
# an exec leaves qemu: the new program runs untraced, and record says so
expect_rc 0 "a program that execs" -- "$PTFLAME" record --emulate=qemu -q -o ex.data --start= \
	-- /bin/sh -c 'exec /bin/true'
expect_grep "warning: 1 process\(es\) called execve: .*untraced .*--emulate=ptrace" "$T/err" \
	"the exec out of the trace is reported"
# (emu_forkexec's child execs before it reaches child_work)
expect_rc 0 "a program that execs before its start symbol" -- "$PTFLAME" record --emulate=qemu -q \
	--follow-fork -o ex2.data --start child_work -- "$TESTDATA/emu_forkexec"
expect_grep "warning: 1 process\(es\) called execve" "$T/err" "an exec before tracing began is reported"
expect_rc 0 "a program that does not exec" -- "$PTFLAME" record --emulate=qemu -q -o nx.data --start= \
	-- /bin/sh -c 'true'
grep -q execve "$T/err" && fail "execve reported without one: $(cat "$T/err")" || pass "no exec, no warning"
# --max-insns: tracing stops, the program runs on to its end untraced
# (and is not killed by the plugin's pipe)
expect_rc 0 "--max-insns" -- "$PTFLAME" record --emulate=qemu -o m.data --truth m.truth \
	--start '' --max-insns 500 -- /bin/sh -c 'echo done-$((6*7))'
expect_grep "emulated [5-9][0-9][0-9] instructions" "$T/err" "--max-insns stops near N instructions"
expect_grep "^done-42$" "$T/out" "--max-insns: the program ran to its end"
expect_grep " stop$" m.truth "--max-insns: the truth says the trace stopped"
# the plugin refuses to load without its pipe, with a line saying so
PLUGIN=$(dirname "$PTFLAME")/../record/libptflame_qemu.so
"$QEMU" -plugin "$PLUGIN" "$P" >out 2>&1; rc=$?
[ "$rc" -ne 0 ] && grep -q "wants fd=N" out && pass "plugin without fd= refuses to load" ||
	fail "plugin without fd=: exit $rc, $(head -c 300 out)"
# nor with a ptflame that speaks another version of the stream (a plugin
# left from an older install): it would be misread
expect_rc 1 "plugin of another stream version" -- "$QEMU" -plugin "$PLUGIN,fd=1,proto=1" "$P"
expect_grep "ptflame speaks stream version 1, this plugin [0-9]*: use the plugin built with this ptflame" \
	"$T/err" "the plugin names both versions"
# --mtc-period reaches the qemu backend's encoder (it was fixed at 3):
# the PT event's config says the period (bits 14-17) and period 0 writes
# many more MTC packets than period 9
for mp in 0 9; do
	"$PTFLAME" record --emulate=qemu -q -o mtc$mp.data --mtc-period $mp -- "$P" >/dev/null 2>&1
	cfg=$("$PTFLAME" dump mtc$mp.data | sed -n 's/^# attr 0: type [0-9]* size [0-9]* config \(0x[0-9a-f]*\).*/\1/p')
	[ -n "$cfg" ] && [ $(((cfg >> 14) & 15)) -eq $mp ] && pass "--mtc-period $mp: config $cfg" ||
		fail "--mtc-period $mp: config '${cfg}' has MTC period $(((${cfg:-0} >> 14) & 15))"
done
if command -v perf >/dev/null; then
	n0=$(perf script -D -i mtc0.data 2>/dev/null | grep -c ' MTC ')
	n9=$(perf script -D -i mtc9.data 2>/dev/null | grep -c ' MTC ')
	[ "$n0" -gt $((4 * n9)) ] && pass "MTC packets: $n0 at period 0, $n9 at period 9" ||
		fail "MTC packets: $n0 at period 0, $n9 at period 9"
fi
# traced from exec (--start ''): ld.so maps libc and the program, and qemu
# tells of a code mapping only when it first runs code there, in the middle
# of a traced run; the mapping is announced as made by its mmap syscall
# (before that syscall's TIP.PGE), so the decoder has the code when the
# first call into libc comes (it was decoded as lost from there on: 10 %
# of emu_nested's time, everything after ld.so's relocation)
"$PTFLAME" record --emulate=qemu -q --start '' -o exec.data -- "$P" >/dev/null 2>&1
"$PTFLAME" report -i exec.data -o exec.out 2>exec.err
if grep -q ' 0 lost segments' exec.err && ! grep -q '\[lost\]' exec.out && grep -q ';main:1' exec.out; then
	pass "--start '': traced from exec, no loss, main in the profile"
else
	fail "--start '': $(head -c 200 exec.err) $(grep -c '\[lost\]' exec.out) [lost] lines"
fi
finish
