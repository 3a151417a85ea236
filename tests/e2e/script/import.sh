#!/bin/bash
# The perf script importer on genuine `perf script` text: programs recorded
# with `ptflame record --emulate`, decoded by Debian's perf in both field
# sets the importer reads, imported by decoder/script_import (through the
# script_events tool), compared per thread with the emulator's truth log:
#  - `perf script --itrace=cr` (default fields, no flags): the same calls
#    and returns in the same order;
#  - pt-flame's `--itrace=b --ns -F-event,-period,+addr,-comm,+flags,-dso`:
#    the same calls and returns, and the same jumps between functions of
#    the program itself (perf and the emulator name library functions
#    differently, e.g. glibc's mempcpy/memmove tails);
#    and a syscall trace end for every syscall;
#  - `--itrace=cre` on a recording with injected overflows: LOST events.
. "$E2E_LIB"
EV=$1
if ! command -v perf >/dev/null; then echo "perf not installed: skip"; exit 77; fi

SCRIPT_B=(--itrace=b --ns -F-event,-period,+addr,-comm,+flags,-dso)

# calls/returns(/jumps) of the truth log: "tid kind from to", per thread.
truth_seq() { # FILE KINDS-REGEX
	awk -v k="$2" '$5 ~ k {print $4, $5, $6, $7}' "$1" | sort -s -k1,1n
}
ours_seq() { # FILE KINDS-REGEX
	awk -v k="$2" '$2 ~ k {print $1, $2, $3, $4}' "$1" | sort -s -k1,1n
}
# jumps whose ends both lie in the program's own mapping [LO, HI)
own_jumps() { # SEQFILE LO HI
	local tid kind from to
	while read -r tid kind from to; do
		[ "$kind" = jump ] || continue
		if (( from >= $2 && from < $3 && to >= $2 && to < $3 )); then
			echo "$tid $kind $from $to"
		fi
	done <"$1"
}
# "tid target" of the jumps that go into [LO, HI)
own_targets() { # SEQFILE LO HI
	local tid kind from to
	while read -r tid kind from to; do
		[ "$kind" = jump ] || continue
		if (( to >= $2 && to < $3 )); then echo "$tid $to"; fi
	done <"$1" | sort -u
}

for p in emu_nested emu_threads emu_tail emu_fptr emu_signal emu_longjmp emu_dlopen emu_forkexec; do
	if ! "$PTFLAME" record --emulate -q -o "$T/$p.data" --truth "$T/$p.truth" \
		-- "$TESTDATA/$p" >/dev/null 2>"$T/rec.err"; then
		fail "$p: record --emulate failed: $(head -c 300 "$T/rec.err")"
		continue
	fi
	truth_seq "$T/$p.truth" '^(call|ret)$' >"$T/truth.cr"
	truth_seq "$T/$p.truth" '^(call|ret|jump)$' >"$T/truth.b"
	ncalls=$(grep -c ' call ' "$T/truth.cr")
	[ "$ncalls" -gt 5 ] || fail "$p: only $ncalls calls in the truth log"

	# default fields, no flags
	perf script -i "$T/$p.data" --itrace=cr >"$T/$p.cr.txt" 2>/dev/null
	if "$EV" <"$T/$p.cr.txt" >"$T/$p.ev.cr" 2>"$T/ev.err"; then
		ours_seq "$T/$p.ev.cr" '^(call|ret)$' >"$T/ours.cr"
		# jumps to a function's entry (tail calls, PLT); a longjmp shows
		# up only somewhere inside the function it went to
		awk '$2 == "jump" && $8 == "entry" {print $1, $2, $3, $4}' "$T/$p.ev.cr" >"$T/ours.crj"
		if cmp -s "$T/truth.cr" "$T/ours.cr"; then
			pass "$p: --itrace=cr text gives the truth's $(wc -l <"$T/ours.cr") calls/returns"
		else
			fail "$p: --itrace=cr calls/returns differ from the truth: $(diff "$T/truth.cr" "$T/ours.cr" | head -4 | tr '\n' '|')"
		fi
	else
		fail "$p: importing --itrace=cr text failed: $(cat "$T/ev.err")"
	fi

	# pt-flame's field set, with flags and all branches
	perf script -i "$T/$p.data" "${SCRIPT_B[@]}" >"$T/$p.b.txt" 2>/dev/null
	if "$EV" <"$T/$p.b.txt" >"$T/$p.ev.b" 2>"$T/ev.err"; then
		ours_seq "$T/$p.ev.b" '^(call|ret|jump)$' >"$T/ours.b"
		grep -v ' jump ' "$T/ours.b" >"$T/ours.b.cr"
		# "tr end  syscall" -> TRACE_OFF(SYSCALL), one per syscall issued
		nsys=$(awk '$5 == "syscall"' "$T/$p.truth" | wc -l)
		osys=$(awk '$2 == "off" && $5 == 1' "$T/$p.ev.b" | wc -l)
		nsig=$(awk '$5 == "signal"' "$T/$p.truth" | wc -l)
		ofault=$(awk '$2 == "off" && $5 == 2' "$T/$p.ev.b" | wc -l)
		if [ "$nsys" -eq "$osys" ] && [ "$ofault" -ge "$nsig" ]; then
			pass "$p: $osys syscall trace ends, $ofault async ($nsig signals)"
		else
			fail "$p: $osys syscall trace ends for $nsys syscalls, $ofault async for $nsig signals"
		fi
		if cmp -s "$T/truth.cr" "$T/ours.b.cr"; then
			pass "$p: pt-flame field set gives the truth's calls/returns"
		else
			fail "$p: pt-flame field set calls/returns differ: $(diff "$T/truth.cr" "$T/ours.b.cr" | head -4 | tr '\n' '|')"
		fi
		# the program's own mapping, from the truth's mmap lines
		read -r lo len < <(awk -v path="$TESTDATA/$p" '$5 == "mmap" && $9 == path {print $6, $7; exit}' "$T/$p.truth")
		if [ -n "$lo" ]; then
			hi=$(printf '0x%x' $((lo + len)))
			# without flags a jump shows only when a later branch comes
			# from its target: each one must go where a real one went
			own_targets "$T/ours.crj" "$lo" "$hi" >"$T/crj"
			own_targets "$T/truth.b" "$lo" "$hi" >"$T/tjt"
			if [ -z "$(comm -23 "$T/crj" "$T/tjt")" ]; then
				pass "$p: the $(wc -l <"$T/crj") tail call/PLT targets seen without flags are real ones"
			else
				fail "$p: jumps without flags to $(comm -23 "$T/crj" "$T/tjt" | head -3 | tr '\n' '|'), no such jump in the truth"
			fi
			own_jumps "$T/truth.b" "$lo" "$hi" >"$T/tj"
			own_jumps "$T/ours.b" "$lo" "$hi" >"$T/oj"
			if cmp -s "$T/tj" "$T/oj"; then
				pass "$p: the same $(wc -l <"$T/oj") jumps between the program's functions"
			else
				fail "$p: jumps differ: $(diff "$T/tj" "$T/oj" | head -4 | tr '\n' '|')"
			fi
		else
			fail "$p: no mmap of $TESTDATA/$p in the truth log"
		fi
	else
		fail "$p: importing pt-flame field set failed: $(cat "$T/ev.err")"
	fi
done

# tail calls: the -O2 program must show jumps (else the jump check is empty)
if [ -s "$T/emu_tail.ev.b" ] && ! grep -q ' jump ' "$T/emu_tail.ev.b"; then
	fail "emu_tail: no jump events from the pt-flame field set"
fi

# injected overflows: perf's error lines become LOST events
if "$PTFLAME" record --emulate -q --inject-ovf 40 -o "$T/ovf.data" --truth "$T/ovf.truth" \
	-- "$TESTDATA/emu_nested" >/dev/null 2>"$T/rec.err"; then
	perf script -i "$T/ovf.data" --itrace=cre >"$T/ovf.txt" 2>/dev/null
	nerr=$(grep -c 'instruction trace error' "$T/ovf.txt")
	"$EV" <"$T/ovf.txt" >"$T/ovf.ev" 2>"$T/ev.err" || fail "ovf: import failed: $(cat "$T/ev.err")"
	nlost=$(grep -c ' lost ' "$T/ovf.ev")
	if [ "$nerr" -gt 0 ] && [ "$nlost" -eq "$nerr" ]; then
		pass "ovf: $nerr instruction trace errors became $nlost LOST events"
	else
		fail "ovf: $nerr error lines, $nlost LOST events"
	fi
else
	fail "record --emulate --inject-ovf failed: $(head -c 300 "$T/rec.err")"
fi
finish
