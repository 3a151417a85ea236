#!/bin/bash
# Run one libFuzzer target: run.sh NAME EXE (meson test --suite fuzz, and
# scripts/fuzz.sh). FUZZ_SECONDS (default 45) bounds the run, and FUZZ_RUNS
# (default: none) the number of inputs it runs; one input may
# take FUZZ_TIMEOUT seconds (default 30: wall-clock time, which a busy
# machine stretches; a slow input here costs well under 1 s of CPU) and
# FUZZ_RSS_MB of memory (default 2048). Exit 0: no crash, hang, leak or
# out-of-memory input; else the input is saved under $FUZZ_DIR/artifacts/
# and named here.
#
# Seeds are made here, once per build directory ($FUZZ_DIR/seeds/), from
# this build: emulated recordings of testdata programs (perfdata, report),
# `ptflame report` of them (folded), `perf script` text of them and pieces
# of ../shared/realtraces/*.perf (or $REALTRACES) when present (script). The corpus the
# fuzzer grows stays in $FUZZ_DIR/corpus/NAME for the next run.
set -u
name=$1 exe=$2
: "${PTFLAME:?}" "${TESTDATA:?}" "${SRCDIR:?}" "${FUZZ_DIR:?}"
secs=${FUZZ_SECONDS:-45}
# (REALTRACES: where they are when this is not a checkout beside shared/)
real=${REALTRACES:-$SRCDIR/../shared/realtraces}
[ -d "$real" ] || echo "run.sh: no real Intel PT recordings at $real (set REALTRACES): $name is fuzzed without them" >&2
seeds=$FUZZ_DIR/seeds

# seed_perf: emulated recordings (a few KB each) of varied programs:
# threads on 2 CPUs, signals, longjmp, tail calls, C++ exceptions, fork+exec,
# dlopen, overflows, lost AUX chunks, a short PSB period without CYC (on
# emu_threads, 2.6 KB of trace; on emu_signal, 44 KB, it and the inputs
# fuzzed from it took the report target 180-240 ms each, 30 times the
# others: a quarter of its corpus and most of its time).
seed_perf() {
	local d=$seeds/perf
	mkdir -p "$d"
	rec() {  # rec NAME PROG [OPTIONS...]
		local n=$1 p=$2; shift 2
		[ -s "$d/$n.data" ] && return 0
		"$PTFLAME" record --emulate -q -o "$d/$n.data" "$@" -- "$TESTDATA/$p" >/dev/null 2>"$d/$n.err" ||
			{ echo "run.sh: recording $p failed: $(head -c 300 "$d/$n.err")" >&2; return 1; }
		rm -f "$d/$n.err"
	}
	rec nested emu_nested && rec fptr emu_fptr && rec longjmp emu_longjmp &&
	rec signal emu_signal && rec tail emu_tail && rec except emu_except &&
	rec threads emu_threads --cpus 2 --time-slice 300 &&
	rec forkexec emu_forkexec --follow-fork && rec dlopen emu_dlopen &&
	rec ovf emu_nested --inject-ovf 40 && rec drop emu_threads --drop-aux 3 --aux-chunk 512 &&
	rec psb emu_threads --psb-period 256 --no-cyc &&
	rec zstd emu_threads -z --cpus 2 --time-slice 300 &&
	pipe_seed
}

# pipe_seed: a pipe-mode copy of a recording with its HEADER_BUILD_ID
# records (perf inject --buildid-all -o -), when perf is installed; without
# wake events, which perf inject cannot copy without this machine's tracefs;
# and one of a recording with compressed sideband (-z), which it keeps so
pipe_seed() {
	local d=$seeds/perf n z
	command -v perf >/dev/null || return 0
	for n in pipe pipez; do
		[ -s "$d/$n.data" ] && continue
		z=; [ $n = pipez ] && z=-z
		"$PTFLAME" record --emulate -q --no-wakers $z -o "$d/$n.in" -- "$TESTDATA/emu_nested" \
			>/dev/null 2>&1 &&
			perf inject --buildid-all -i "$d/$n.in" -o - >"$d/$n.data" 2>/dev/null ||
			rm -f "$d/$n.data"
		rm -f "$d/$n.in"
	done
	return 0
}

# seed_folded: report's folded output of the recordings, in each form,
# and two wide files, which 4 KB of report's output (40 long lines) are
# not: 400 distinct stacks (the growth of the tables and maps), and 140
# annotated ones that are 100 without their annotations (the growth of
# the reader's map of annotated stacks, which only a 16 KB input of the
# corpus reached before).
seed_folded() {
	local d=$seeds/folded f n
	mkdir -p "$d"
	awk 'BEGIN { for (i = 0; i < 400; i++) printf "f%d %d\n", i, i + 1 }' >"$d/wide.folded"
	awk 'BEGIN { for (i = 0; i < 140; i++) printf "main;f%d:1,avg:%d %d\n", i % 100, i, i + 1 }' \
		>"$d/wide-annotated.folded"
	for f in "$seeds"/perf/*.data; do
		n=$(basename "$f" .data)
		"$PTFLAME" report -q -i "$f" >"$d/$n.folded" 2>/dev/null &&
		"$PTFLAME" report -q --plain --per-thread -i "$f" >"$d/$n-plain.folded" 2>/dev/null ||
			{ echo "run.sh: report of $f failed" >&2; return 1; }
	done
}

# seed_script: perf script text (both field sets report understands) of the
# recordings, and pieces of 40 lines of each real trace (at most 60 per
# trace, spread over it).
seed_script() {
	local d=$seeds/script f n lines step
	mkdir -p "$d"
	if command -v perf >/dev/null; then
		for f in "$seeds"/perf/*.data; do
			n=$(basename "$f" .data)
			perf script -i "$f" --itrace=cr 2>/dev/null | head -n 400 >"$d/$n-cr.perf"
			perf script -i "$f" --itrace=b --ns -F-event,-period,+addr,-comm,+flags,-dso \
				2>/dev/null | head -n 400 >"$d/$n-flags.perf"
		done
	fi
	[ -d "$real" ] || return 0
	for f in "$real"/*.perf; do
		n=$(basename "$f" .perf)
		lines=$(wc -l <"$f")
		step=$(( (lines / 40 + 59) / 60 ))
		[ "$step" -ge 1 ] || step=1
		awk -v n="$n" -v d="$d" -v step="$step" '
			{ c = int((NR - 1) / 40); if (c % step == 0) print > (d "/" n "-" c ".perf") }' "$f"
	done
}

# seed_ptq: the first 4 KiB of PT of each recording (its first AUXTRACE's
# payload, as `ptflame dump` places it), after 4 bytes of configuration:
# MTC period 3, CPUID 0x15 ratio 2/1 (perf's defaults for the emulator),
# nominal ratio 0, the emulated CPU's errata (BDM70, SKD022, SKL014, SKZ84:
# of those the query decoder reads BDM70; libipt reads SKZ84 only where
# ours hands over, a TMA with reserved bits set).
seed_ptq() {
	local d=$seeds/ptquery f
	mkdir -p "$d"
	for f in "$seeds"/perf/*.data; do
		"$PTFLAME" dump "$f" 2>/dev/null | python3 -c '
import re, sys
m = re.search(r"AUXTRACE size (0x[0-9a-f]+) .*payload@(0x[0-9a-f]+)", sys.stdin.read())
if m:
    size, off = int(m.group(1), 16), int(m.group(2), 16)
    d = open(sys.argv[1], "rb").read()[off:off + min(size, 4096)]
    open(sys.argv[2], "wb").write(bytes([3, 2 << 2 | 1, 0, 0x41]) + d)
' "$f" "$d/$(basename "$f" .data).pt" || return 1
	done
}

# Made once, by the first of the targets meson runs in parallel (the others
# wait on the lock); a failed attempt leaves no stamp and is retried. The
# stamp holds the seeds' version: when the seeds change, a build directory
# makes them again.
seeds_version=5
mkdir -p "$FUZZ_DIR"
exec 9>"$FUZZ_DIR/.seeds.lock"
flock 9
if [ "$(cat "$seeds/.done" 2>/dev/null)" != "$seeds_version" ]; then
	rm -rf "$seeds"
	seed_perf && seed_folded && seed_script && seed_ptq ||
		{ echo "run.sh: cannot make the seeds" >&2; exit 1; }
	echo "$seeds_version" >"$seeds/.done"
fi
flock -u 9
exec 9>&-
dirs=() maxlen=() sched=()
case $name in
perfdata)
	# and the real recordings' perf.data files (linked, not copied)
	mkdir -p "$seeds/realdata"
	[ -d "$real" ] && ln -sf "$real"/*.data "$seeds/realdata/" 2>/dev/null
	dirs=("$seeds/perf" "$seeds/realdata") ;;
# A recording's decoding takes 3-250 ms here: inputs that run faster are
# chosen more often (up to 30 times), none is left out.
report) dirs=("$seeds/perf") sched=(-entropic_scale_per_exec_time=1) ;;
# Text is read line by line: 16 KB inputs (longer seeds are cut) reach
# every state and run several times faster than the seeds' 100 KB.
script) dirs=("$seeds/script") maxlen=(-max_len=16384) ;;
# A folded input's cost is its output's size (tables, SVG): 3-4 ms for
# 16 KB, 35 ms for a 16 KB line of 14,000 frames. 4 KB reach the same
# code (a line deeper than --max-stack, 2,000 frames; hundreds of
# distinct stacks): see README, Fuzzing, for what was compared.
folded) dirs=("$seeds/folded") maxlen=(-max_len=4096) ;;
# The decoders run until the trace ends or ours hands over: 4 KiB of
# trace is a few thousand queries.
ptquery) dirs=("$seeds/ptquery") maxlen=(-max_len=8192) ;;
*) echo "run.sh: no target '$name'" >&2; exit 2 ;;
esac
corpus=$FUZZ_DIR/corpus/$name
art=$FUZZ_DIR/artifacts/$name
mkdir -p "$corpus" "$art"
log=$FUZZ_DIR/fuzz-$name.log
# UBSan aborts (the code is built -fno-sanitize-recover); leaks fail the run.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
# Inputs that once crashed or hung a target (kept as regression tests) run
# first, each whole (a seed directory would cut them to -max_len), then
# seed the fuzzer.
reg=$SRCDIR/tests/fuzz/regress/$name
if [ -d "$reg" ]; then
	if ! "$exe" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
		-malloc_limit_mb="${FUZZ_RSS_MB:-2048}" "$reg"/* >"$log" 2>&1; then
		echo "FAIL: fuzz-$name: a regression input fails again; the log's end ($log):" >&2
		tail -n 40 "$log" >&2
		exit 1
	fi
	dirs+=("$reg")
fi
start=$SECONDS
"$exe" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
	-malloc_limit_mb="${FUZZ_RSS_MB:-2048}" -close_fd_mask=3 -print_final_stats=1 \
	-artifact_prefix="$art/" ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} "${maxlen[@]}" "${sched[@]}" "$corpus" "${dirs[@]}" >"$log" 2>&1
rc=$?
execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log" | tail -n 1)
rate=$(awk '/stat::average_exec_per_sec:/ {print $2}' "$log" | tail -n 1)
cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[^ ]+' "$log" | tail -n 1)
if [ "$rc" -eq 0 ]; then
	echo "fuzz-$name: ${execs:-?} execs in $((SECONDS - start)) s (${rate:-?}/s), $cov: no crash, hang or leak"
	exit 0
fi
newest=$(ls -t "$art" 2>/dev/null | head -n 1)
# A timeout is wall-clock time, which a stalled machine (a 2-CPU CI VM,
# its host busy) stretches too: the input runs again alone, three times,
# each within RERUN_TIMEOUT seconds (default 10; fuzzed inputs here take
# milliseconds). A hang or a slow input times out again and fails; an
# input that runs in time each time was the machine's stall, said so.
if grep -q 'ERROR: libFuzzer: timeout' "$log" && [ "${newest#timeout-}" != "$newest" ]; then
	ok=0 worst=0
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		"$exe" -timeout="${RERUN_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
			-runs=1 "$art/$newest" >"$log.rerun" 2>&1 || break
		t=$(( ($(date +%s%N) - t0) / 1000000 ))
		[ "$t" -gt "$worst" ] && worst=$t
		ok=$((ok + 1))
	done
	if [ "$ok" -eq 3 ]; then
		mv "$log" "$log.stalled"
		echo "fuzz-$name: ${execs:-?} execs; note: input $art/$newest timed out while fuzzing" \
			"but ran alone in at most $worst ms, 3 times of 3: the machine stalled, not the" \
			"code (the fuzzer's log: $log.stalled); no crash, hang or leak"
		exit 0
	fi
	echo "fuzz-$name: the timed-out input timed out again alone (${RERUN_TIMEOUT:-10} s): a hang" >&2
fi
echo "FAIL: fuzz-$name: exit $rc after ${execs:-?} execs; the log's end ($log):" >&2
grep -vE '^#[0-9]+' "$log" | tail -n 40 >&2
[ -n "$newest" ] && echo "input: $art/$newest (run it again: $exe $art/$newest)" >&2
exit 1
