#!/bin/bash
# ptflame record --emulate: command line, errors, --max-insns with detach,
# tracing from exec (--start ''), attaching with -p.
. "$E2E_LIB"
E=("$PTFLAME" record --emulate)

expect_rc 0 "--help" -- "${E[@]}" --help
expect_grep 'usage: ptflame record --emulate' "$T/out" "help names the command"
expect_grep '--max-insns' "$T/out" "help lists --max-insns"
expect_rc 2 "no program" -- "${E[@]}"
expect_lines 1 "$T/err" "no program: one line"
expect_rc 2 "unknown option" -- "${E[@]}" --bogus -- true
expect_rc 2 "--cpus 0" -- "${E[@]}" --cpus 0 -- true
expect_rc 2 "--psb-period not a power of 2" -- "${E[@]}" --psb-period 1000 -- true
expect_rc 2 "-p with a program" -- "${E[@]}" -p 1 -- true
expect_grep '--inject-interrupts RATE' <("${E[@]}" --help) "help lists --inject-interrupts"
expect_rc 2 "--inject-interrupts 0" -- "${E[@]}" --inject-interrupts 0 -- true
expect_lines 1 "$T/err" "--inject-interrupts 0: one line"
expect_grep 'inject-interrupts.*1 to 1000000' "$T/err" "--inject-interrupts 0: says the range"
expect_rc 2 "--seed x" -- "${E[@]}" --seed x -- true

expect_rc 1 "missing program" -- "${E[@]}" -o miss.data -- ./no-such-program
expect_lines 1 "$T/err" "missing program: one line"
expect_grep 'no-such-program' "$T/err" "missing program: named"
[ -e miss.data ] && fail "missing program: left miss.data" || pass "missing program: no output file"

expect_rc 1 "unknown start symbol" -- "${E[@]}" -o sym.data --start no_such_fn -- "$TESTDATA/emu_nested"
expect_grep "no_such_fn" "$T/err" "unknown start symbol: named"
[ -e sym.data ] && fail "unknown start symbol: left sym.data" || pass "unknown start symbol: no output file"
# a "#!" script: the start symbol is looked for in the binary that runs it
printf '#!/bin/sh\necho "$0:$1"\n' >scr.sh && chmod +x scr.sh
# (its interpreter has no main: from exec, and record says so)
expect_rc 0 "a script, default start" -- "${E[@]}" -o sd.data --truth sd.truth -- ./scr.sh arg0
expect_grep "^\./scr\.sh:arg0$" "$T/out" "a script, default start: it ran"
expect_grep "note: no 'main' in $(readlink -f /bin/sh) .*traced from exec.*--start=SYMBOL" \
	"$T/err" "a script, default start: the note names its interpreter and what to do"
awk '$5 == "start"' sd.truth | grep -q . &&
	pass "a script, default start: traced from exec" || fail "a script, default start: nothing traced"
expect_rc 0 "a script, from exec" -- "${E[@]}" -q -o sc.data --start= -- ./scr.sh arg1
expect_grep "^\./scr\.sh:arg1$" "$T/out" "a script from exec: it ran with its arguments"

# --start at a function of the program: the first traced instruction is it
"${E[@]}" -q -o mid.data --start middle --truth mid.truth --dump-insns mid.dump \
	-- "$TESTDATA/emu_nested" 2>err || fail "--start middle: $(cat err)"
first=$(awk '$5 == "start" {print $6; exit}' mid.truth)
sym=$(nm "$TESTDATA/emu_nested" | awk '$3 == "middle" {print $1}')
map=$(awk '$5 == "mmap" && $9 ~ /emu_nested$/ && $8 == "0x1000" {print $6; exit}' mid.truth)
if [ -n "$first" ] && [ -n "$sym" ] && [ -n "$map" ] &&
	[ $((first - map + 0x1000)) -eq $((0x$sym)) ]; then
	pass "--start middle: tracing starts at middle"
else
	fail "--start middle: first traced ip $first, middle at 0x$sym, text mapped at $map"
fi
"$EMU_CHECK" mid.data mid.dump >chk 2>&1 && pass "--start middle: trace decodes exactly" ||
	fail "--start middle: $(head -c 400 chk)"

# --start with a demangled C++ name, whole or without its parameters, as
# report prints it (issue 15.4): the first traced ip is the function's
sym=$(nm "$TESTDATA/emu_except" | awk '$3 == "_ZL6level2i" {print $1}')
for st in 'level2(int)' level2; do
	"${E[@]}" -q -o cxx.data --start "$st" --truth cxx.truth -- "$TESTDATA/emu_except" 2>err ||
		{ fail "--start '$st': $(head -c 300 err)"; continue; }
	first=$(awk '$5 == "start" {print $6; exit}' cxx.truth)
	map=$(awk '$5 == "mmap" && $9 ~ /emu_except$/ && $8 == "0x1000" {print $6; exit}' cxx.truth)
	if [ -n "$first" ] && [ -n "$sym" ] && [ -n "$map" ] &&
		[ $((first - map + 0x1000)) -eq $((0x$sym)) ]; then
		pass "--start '$st': tracing starts at level2(int)"
	else
		fail "--start '$st': first traced ip $first, level2 at 0x$sym, text mapped at $map"
	fi
done

# --max-insns with --start '': trace from exec, detach after 300
# instructions; the program must run on and finish by itself.
"${E[@]}" -q -o max.data --start '' --max-insns 300 --truth max.truth --dump-insns max.dump \
	-- sh -c 'echo done >marker' 2>err || fail "--max-insns: $(cat err)"
n=$(wc -l <max.dump)
[ "$n" -eq 300 ] && pass "--max-insns: 300 instructions stepped" || fail "--max-insns: $n stepped"
grep -q ' stop$' max.truth && pass "--max-insns: truth says stop" || fail "--max-insns: no stop in truth"
[ -s marker ] && pass "--max-insns: the program ran on after the detach" || fail "--max-insns: program did not finish"
"$EMU_CHECK" max.data max.dump >chk 2>&1 && pass "--max-insns: trace decodes exactly" ||
	fail "--max-insns: $(head -c 400 chk)"

# -p: attach to a running loop, trace 3000 instructions, detach; it lives on
bash -c 'while :; do :; done' &
victim=$!
sleep 0.2
"${E[@]}" -q -o att.data -p "$victim" --max-insns 3000 --dump-insns att.dump --truth att.truth 2>err ||
	fail "-p: $(cat err)"
n=$(wc -l <att.dump 2>/dev/null || echo 0)
[ "$n" -eq 3000 ] && pass "-p: 3000 instructions stepped" || fail "-p: $n stepped"
"$EMU_CHECK" att.data att.dump >chk 2>&1 && pass "-p: trace decodes exactly" || fail "-p: $(head -c 400 chk)"
sleep 0.1
kill -0 "$victim" 2>/dev/null && pass "-p: the process lives on after the detach" || fail "-p: process gone"
grep -q "State:.*[tT]" /proc/"$victim"/status && fail "-p: process left stopped" || pass "-p: process not left stopped"
kill "$victim" 2>/dev/null
wait "$victim" 2>/dev/null

# SIGINT stops tracing, the file is still written (and decodes), the
# program is terminated like perf record does
"${E[@]}" -q -o int.data --dump-insns int.dump -- bash -c 'while :; do :; done' 2>err &
rec=$!
for _ in $(seq 50); do [ -s int.dump ] && break; sleep 0.1; done
sleep 0.3
kill -INT "$rec"
wait "$rec"
rc=$?
[ "$rc" -eq 0 ] && pass "SIGINT: exit 0" || fail "SIGINT: exit $rc: $(cat err)"
"$EMU_CHECK" int.data int.dump >chk 2>&1 && pass "SIGINT: trace decodes exactly" ||
	fail "SIGINT: $(head -c 400 chk)"
# what --emulate cannot follow says so, as a usage error (exit 2)
"$PTFLAME" record --emulate -t 1 -d 1 -o t.data >/dev/null 2>err
rc=$?
[ $rc -eq 2 ] && grep -q -- "--emulate follows whole processes, not single threads.*use -p PID" err &&
	pass "--emulate -t: says to use -p" || fail "--emulate -t: exit $rc: $(cat err)"
"$PTFLAME" record --emulate -p 1,2 -d 1 -o t.data >/dev/null 2>err
rc=$?
[ $rc -eq 2 ] && grep -q -- "-p takes one PID, not '1,2'" err &&
	pass "--emulate -p A,B: one PID" || fail "--emulate -p A,B: exit $rc: $(cat err)"
[ ! -e t.data ] && pass "no file written" || fail "t.data written"
finish
