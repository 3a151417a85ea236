#!/bin/bash
# Done-criterion 1 of issue 3: for every emulator testdata program, libipt's
# instruction decoder walking the emitted trace over the recorded mappings
# (emu_check) reproduces exactly the per-thread sequence of instruction
# addresses the emulator stepped (--dump-insns), with no decode error.
# Each run also checks, in the truth log, that the program exercised what
# it is there for (threads, signals, exec, dlopen, jumps...).
. "$E2E_LIB"

# rec NAME [record options] -- PROG [ARGS]: record and check with libipt.
rec() {
	local name=$1; shift
	if ! "$PTFLAME" record --emulate -q -o "$name.data" --truth "$name.truth" \
		--dump-insns "$name.dump" "$@" >"$name.out" 2>&1; then
		fail "$name: record failed: $(head -c 400 "$name.out")"
		return 1
	fi
	if "$EMU_CHECK" "$name.data" "$name.dump" >"$name.chk" 2>&1; then
		pass "$name: libipt reproduces $(awk '{n += $3} END {print n}' "$name.chk") stepped instructions of $(grep -c match "$name.chk") thread(s)"
	else
		fail "$name: $(head -c 800 "$name.chk")"
	fi
}
# has NAME REGEX MIN WHAT: the truth log of NAME has at least MIN lines matching
has() {
	local n; n=$(grep -cE -- "$2" "$1.truth")
	if [ "$n" -ge "$3" ]; then pass "$1: $4 ($n)"; else fail "$1: $4: $n lines /$2/, want >= $3"; fi
}

rec nested -- "$TESTDATA/emu_nested" && has nested ' call ' 40 'calls'
rec fptr -- "$TESTDATA/emu_fptr" && has fptr ' call ' 20 'calls'
rec tail -- "$TESTDATA/emu_tail" && has tail ' jump ' 3 'inter-function jumps (tail calls, PLT)'
rec longjmp -- "$TESTDATA/emu_longjmp" && has longjmp ' jump ' 1 'longjmp'
rec except -- "$TESTDATA/emu_except" && has except ' call ' 200 'unwinder calls'
rec signal -- "$TESTDATA/emu_signal" && has signal ' signal (10|14) ' 2 'SIGUSR1 and SIGALRM handlers' &&
	has signal ' sigreturn ' 2 'sigreturns'
rec threads -- "$TESTDATA/emu_threads" && has threads ' clone ' 2 'threads' &&
	has threads ' switch-out block' 4 'blocking switches'
# one CPU, short slices: preemption and migration-free interleaving
rec threads1 --cpus 1 --time-slice 150 -- "$TESTDATA/emu_threads" &&
	has threads1 ' switch-out preempt' 2 'preemptions'
# no CYC: the decoder's times are MTC-precise only
rec threads-nocyc --no-cyc --cpus 3 -- "$TESTDATA/emu_threads"
rec demo -- "$TESTDATA/emu_demo"
# Virtual time of a mutex wait: the waiter (blocked in futex 202) resumes
# right after the holder's unlock (its futex wake), not after the real time
# the emulator took to step the holder there.
if [ -s demo.truth ]; then
	set -- $(perl "$EMU_DIR/futexwait.pl" demo.truth 5000)
	if [ "${1:-0}" -ge 1 ] && [ "${2:-1}" -eq 0 ]; then
		pass "demo: $1 blocked futex waits end within 5 us after another thread's wake"
	else
		fail "demo: blocked futex waits: ${2:-?} of ${1:-?} end far from any wake"
	fi
fi
rec dlopen -- "$TESTDATA/emu_dlopen" "$TESTDATA/libemu_plugin.so" &&
	has dlopen 'mmap .*libemu_plugin\.so' 1 'mapping of the dlopened library'
rec vdso -- "$TESTDATA/emu_vdso" && has vdso 'mmap .*\[vdso\]' 1 '[vdso] mapping'
rec forkexec --follow-fork -- "$TESTDATA/emu_forkexec" && has forkexec ' fork ' 1 'fork' &&
	has forkexec ' exec ' 1 'exec'

# The checker must notice a difference: drop one stepped instruction.
if [ -s nested.dump ]; then
	sed '100d' nested.dump >bad.dump
	if "$EMU_CHECK" nested.data bad.dump >bad.chk 2>&1; then
		fail "emu_check accepted a dump with one instruction missing"
	else
		pass "emu_check rejects a dump with one instruction missing"
	fi
fi
finish
