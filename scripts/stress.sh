#!/bin/bash
# Record the emu_* testdata programs again and again with random record
# options and check each recording as the e2e tests do (run by hand: the
# e2e tests check a fixed set of recordings, but a recording depends on
# how the threads were scheduled, and a bug that shows in one recording
# in a hundred passes them most days).
#
# Each round picks a program and options from its seed (clock: CYC or not,
# --ns-per-insn, --mtc-period; --cpus, --time-slice; sometimes
# --inject-interrupts; a quarter of the rounds lose data: --inject-ovf or
# --drop-aux) and a backend: qemu (half the rounds), ptrace (from main, or
# from exec with --max-insns for a command) or -p (a fifth: a long-running
# program started natively, attached after a short sleep for -d a few
# tenths of a second: it must run on after the detach and end with the
# status of a run without the attach) and checks:
#  - report's annotated output fits the folded grammar (check_folded.py);
#  - without loss: every stack matches the truth log's profile
#    (truth_profile.py compare: call counts exact, self time within 0.1 %,
#    plus one MTC period per stretch without CYC), also --per-thread;
#  - with loss: no stack is a call path the program never had (paths), and
#    each thread's stacks add up to its traced wall time (lost time is
#    [lost]; without CYC within 0.1 % plus one MTC period);
#  - report -j 2 and -j 1 give the same bytes.
# A failing round keeps its recording, truth log, outputs and the command
# line in OUT/fail-SEED/ (recordings differ from run to run).
#
# usage: scripts/stress.sh [BUILDDIR] [ROUNDS] [FIRST_SEED]
#        (JOBS=N rounds at once, default the online CPUs; OUT=dir;
#        STRESS_PROGRAMS="threads signal": only those; STRESS_LOSS=ovf,
#        drop or none: every round so; STRESS_BACKEND=qemu, ptrace or
#        attach: every round so (qemu: the rounds of seeds drawn before
#        the backend was); STRESS_COMMANDS=FILE: the commands
#        in FILE instead, one per line, words split at blanks, $SRC the
#        source tree: real programs, such as scripts/stress-commands.txt's;
#        a line "-p CMD" is a command for the -p rounds only, which
#        otherwise attach to testdata's spin_attach, attach_blocked and
#        attach_sleepers)
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd) || exit 2
ROUNDS=${2:-100}
FIRST=${3:-1}
JOBS=${JOBS:-$(nproc)}
OUT=${OUT:-/tmp/ptflame-stress}
PTFLAME=$BUILD/cmd/ptflame
TESTDATA=$BUILD/testdata
TP="python3 $SRC/tests/e2e/report/truth_profile.py"
CHECK="python3 $SRC/tests/check_folded.py"
[ -x "$PTFLAME" ] || { echo "stress: no $PTFLAME: build first (meson setup build && ninja -C build)" >&2; exit 2; }
# the report e2e tests' program list (tests/e2e/report/common.sh)
PROGRAMS=${STRESS_PROGRAMS:-$(sed -n 's/^EMU_PROGRAMS="\(.*\)"$/\1/p' "$SRC/tests/e2e/report/common.sh")}
# STRESS_COMMANDS: program "@N" is line N of that file (comments and blank
# lines left out)
COMMANDS=
# the -p rounds' programs, one a line (run for a second or more natively)
ATTACH="$TESTDATA/spin_attach 2
$TESTDATA/attach_blocked 1.5
$TESTDATA/attach_sleepers 2"
if [ -n "${STRESS_COMMANDS:-}" ]; then
	COMMANDS=$(grep -v '^[[:space:]]*\(#\|$\|-p[[:space:]]\)' "$STRESS_COMMANDS" | sed "s|\$SRC|$SRC|g") ||
		{ echo "stress: no commands in $STRESS_COMMANDS" >&2; exit 2; }
	PROGRAMS=$(seq -f '@%g' 1 "$(wc -l <<<"$COMMANDS")" | tr '\n' ' ')
	ATTACH=$(sed -n "s|^-p[[:space:]]\+||p" "$STRESS_COMMANDS" | sed "s|\$SRC|$SRC|g")
fi
NATTACH=0
[ -n "$ATTACH" ] && NATTACH=$(wc -l <<<"$ATTACH")
LOSS=${STRESS_LOSS:-}
case $LOSS in ""|ovf|drop|none) ;; *) echo "stress: STRESS_LOSS is ovf, drop or none, not '$LOSS'" >&2; exit 2 ;; esac
BACKEND=${STRESS_BACKEND:-}
case $BACKEND in ""|qemu|ptrace|attach) ;; *) echo "stress: STRESS_BACKEND is qemu, ptrace or attach, not '$BACKEND'" >&2; exit 2 ;; esac
[ "$BACKEND" = attach ] && [ "$NATTACH" -eq 0 ] && { echo "stress: STRESS_BACKEND=attach, but no '-p CMD' line in $STRESS_COMMANDS" >&2; exit 2; }
[ -n "$PROGRAMS" ] || { echo "stress: no EMU_PROGRAMS in tests/e2e/report/common.sh" >&2; exit 2; }
mkdir -p "$OUT"

# options SEED: "PROG|LOSS|SLACK|BACKEND|record options" for the round;
# BACKEND is qemu, ptrace or attach:SLEEP:SECONDS (PROG then "-pN", line N
# of ATTACH)
options() {
	python3 - "$1" "$PROGRAMS" "$LOSS" "$BACKEND" "$NATTACH" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]))
progs = sys.argv[2].split()
p = r.choice(progs)
opt, slack = [], 0
mtc = r.choice([0, 3, 3, 5, 9])
ns = r.choice([1, 1, 3, 7, 1000])
opt += ["--mtc-period", str(mtc), "--ns-per-insn", str(ns)]
if r.random() < 0.25:
    opt.append("--no-cyc")
    slack = (64 << mtc) // 2     # one MTC period (2 TSC/ns, 64 TSC/CTC)
opt += ["--cpus", str(r.choice([1, 2, 2, 3]))]
opt += ["--time-slice", str(r.choice([150, 300, 4000]))]
if r.random() < 0.3:
    opt += ["--inject-interrupts", str(r.choice([200, 2000, 20000])), "--seed", str(r.randrange(1, 1000))]
loss = "-"
u = r.random()
u = {"ovf": 0, "drop": 0.2, "none": 1}.get(sys.argv[3], u)
if u < 0.15:
    loss = "ovf"
    opt += ["--inject-ovf", str(r.randrange(15, 61))]
elif u < 0.25:
    loss = "drop"
    opt += ["--drop-aux", str(r.randrange(2, 6)), "--aux-chunk", "256"]
# (drawn after the rest: STRESS_BACKEND=qemu gives the older seeds' rounds)
u = r.random()
be = sys.argv[4] or ("qemu" if u < 0.5 else "ptrace" if u < 0.8 or not int(sys.argv[5]) else
                     "attach")
if be == "attach":
    p = "-p%d" % r.randint(1, int(sys.argv[5]))
    be = "attach:%s:%s" % (r.choice(["0.1", "0.2", "0.4"]), r.choice(["0.2", "0.3", "0.5"]))
elif be == "ptrace" and p.startswith("@"):
    # from exec: ld.so's start, 20,000 instructions a second
    opt += ["--max-insns", str(r.choice([20000, 60000, 150000]))]
print("%s|%s|%d|%s|%s" % (p, loss, slack, be, " ".join(opt)))
PY
}

# check N PROG LOSS SLACK: why the recording N.data / N.truth fails, or nothing
check() {
	local n=$1 p=$2 loss=$3 slack=$4 v
	"$PTFLAME" report -q -j 1 -i "$n.data" >"$n.out" 2>"$n.err" || { echo "report: $(head -c 300 "$n.err")"; return; }
	"$PTFLAME" report -q -j 2 -i "$n.data" >"$n.out2" 2>"$n.err2" || { echo "report -j 2: $(head -c 300 "$n.err2")"; return; }
	cmp -s "$n.out" "$n.out2" || { echo "report -j 2 differs from -j 1"; return; }
	$CHECK --annotated "$n.out" >"$n.g" 2>&1 || { echo "grammar: $(head -c 300 "$n.g")"; return; }
	if [ "$loss" = - ]; then
		for v in "" --per-thread; do
			case $p in cold|coldxx) [ -n "$v" ] && continue ;; esac
			[ -z "$v" ] || "$PTFLAME" report -q -i "$n.data" $v >"$n.out$v" 2>"$n.err" ||
				{ echo "report $v: $(head -c 300 "$n.err")"; return; }
			$TP compare "$n.truth" "$n.out$v" $v --slack-ns "$slack" >"$n.cmp$v" 2>&1 ||
				{ echo "compare $v: $(tail -4 "$n.cmp$v")"; return; }
		done
		return
	fi
	$TP paths "$n.truth" "$n.out" >"$n.paths" 2>&1 || { echo "paths: $(head -c 300 "$n.paths")"; return; }
	# every thread's stacks add up to its traced wall time (from its
	# switch-in when its first packet was dropped); without CYC a thread's
	# first time is its first MTC's: within 0.1 % plus one period
	"$PTFLAME" report -q -i "$n.data" --per-thread --plain >"$n.pt" 2>"$n.err" || { echo "report --per-thread: $(head -c 300 "$n.err")"; return; }
	$TP walltime "$n.truth" --perf-data "$n.data" | while read -r tid want comm; do
		awk -v t="$tid" -v want="$want" -v slack="$slack" '{split($0, f, ";"); if (f[1] ~ ("-" t "$")) s += $NF}
			END { d = s - want; if (d < 0) d = -d
			      if (d > (slack ? want / 1000 + slack : 0))
				      printf "tid %d sum %d ns, truth %d ns\n", t, s, want }' "$n.pt"
	done
}

# round SEED: one recording and its checks; prints one line
round() {
	local seed=$1 spec p loss slack be opts d why rc want
	spec=$(options "$seed") || { echo "seed $seed: no options"; return 1; }
	IFS='|' read -r p loss slack be opts <<<"$spec"
	d=$(mktemp -d "$OUT/r$seed.XXXX")
	local -a prog=("$TESTDATA/emu_$p")
	[ "$p" = dlopen ] && prog+=("$TESTDATA/libemu_plugin.so")
	[[ $p == @* ]] && read -ra prog <<<"$(sed -n "${p#@}p" <<<"$COMMANDS")"
	[[ $p == -p* ]] && read -ra prog <<<"$(sed -n "${p#-p}p" <<<"$ATTACH")"
	local rec="ptflame record --emulate=$be $opts -- ${prog[*]}"
	# shellcheck disable=SC2086 # (opts: words)
	if [[ $be == attach:* ]]; then
		local nap=${be#attach:} secs pid
		secs=${nap#*:} nap=${nap%%:*}
		rec="${prog[*]} & sleep $nap; ptflame record --emulate=ptrace -p \$! -d $secs $opts"
		# the status of a run without the attach
		timeout -s KILL 60 "${prog[@]}" >/dev/null 2>&1 </dev/null
		want=$?
		"${prog[@]}" >/dev/null 2>&1 </dev/null &
		pid=$!
		sleep "$nap"
		if ! kill -0 "$pid" 2>/dev/null; then
			why="the program ended before the attach"
		elif ! timeout -s KILL 120 "$PTFLAME" record --emulate=ptrace -q -p "$pid" -d "$secs" \
			-o "$d/t.data" --truth "$d/t.truth" $opts >"$d/rec" 2>&1; then
			why="record -p: $(head -c 300 "$d/rec")"
		fi
		sleep 0.1
		grep -q 'State:.*[tT]' "/proc/$pid/status" 2>/dev/null && why="${why:+$why; }the program is left stopped"
		for _ in $(seq 600); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid"
		rc=$?
		[ "$rc" -eq "$want" ] || why="${why:+$why; }the program ended with status $rc, not $want as without the attach"
		[ -n "$why" ] || why=$(cd "$d" && check t "$p" "$loss" "$slack")
	elif ! "$PTFLAME" record --emulate="$be" -q -o "$d/t.data" --truth "$d/t.truth" $opts \
		-- "${prog[@]}" >"$d/rec" 2>&1; then
		why="record: $(head -c 300 "$d/rec")"
	else
		why=$(cd "$d" && check t "$p" "$loss" "$slack")
	fi
	if [ -z "$why" ]; then
		rm -rf "$d"
		echo "seed $seed ok: ${be%%:*} ${prog[*]##*/} $opts"
		return 0
	fi
	rm -rf "$OUT/fail-$seed"
	mv "$d" "$OUT/fail-$seed"
	echo "$rec" >"$OUT/fail-$seed/cmd"
	echo "seed $seed FAIL: ${be%%:*} ${prog[*]##*/} $opts: $why" | tr '\n' ' '
	echo
	return 1
}
export -f options check round
export PTFLAME TESTDATA TP CHECK PROGRAMS COMMANDS ATTACH NATTACH LOSS BACKEND OUT

seq "$FIRST" $((FIRST + ROUNDS - 1)) | xargs -P "$JOBS" -I{} bash -c 'round {}' >"$OUT/log" 2>&1
fails=$(grep -c ' FAIL: ' "$OUT/log")
grep ' FAIL: ' "$OUT/log" >&2
echo "stress: $ROUNDS rounds (seeds $FIRST..$((FIRST + ROUNDS - 1))), $fails failed; log $OUT/log" >&2
[ "$fails" -eq 0 ]
