# Shared helpers for e2e tests. Source it: . "$E2E_LIB"
# Each test runs in its own temporary directory, removed on exit.
set -u
: "${PTFLAME:?PTFLAME must point at the built ptflame}"
T=$(mktemp -d "${TMPDIR:-/tmp}/ptflame-e2e.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
FAILS=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

# expect_rc WANT DESC -- CMD...: run CMD, check its exit status.
expect_rc() {
	local want=$1 desc=$2; shift 3
	"$@" >"$T/out" 2>"$T/err"; local rc=$?
	if [ "$rc" -eq "$want" ]; then pass "$desc"; else
		fail "$desc: exit $rc, want $want; stderr: $(head -c 400 "$T/err")"; fi
}
# expect_grep PATTERN FILE DESC
expect_grep() {
	if grep -qE -- "$1" "$2"; then pass "$3"; else fail "$3: /$1/ not in $2: $(head -c 400 "$2")"; fi
}
# expect_lines N FILE DESC: FILE has exactly N lines
expect_lines() {
	local n; n=$(wc -l <"$2")
	if [ "$n" -eq "$1" ]; then pass "$3"; else fail "$3: $n lines, want $1"; fi
}
# rec_emu NAME PROG [record options]: testdata/emu_PROG recorded with
# --emulate into NAME.data (its output in NAME.rec); 1 if that failed
rec_emu() {
	local n=$1 p=$2; shift 2
	"$PTFLAME" record --emulate -q -o "$n.data" "$@" -- "$TESTDATA/emu_$p" >"$n.rec" 2>&1 ||
		{ fail "record $n: $(head -c 300 "$n.rec")"; return 1; }
}
# emu_programs: the emu_* testdata programs, by NAME (testdata/emu_NAME)
emu_programs() {
	local f
	for f in "$TESTDATA"/emu_*; do
		case $f in *.p|*.so) continue ;; esac
		[ -x "$f" ] && echo "${f##*/emu_}"
	done
}
# each_real FN [ARGS]: FN NAME FILE [ARGS] for each real Intel PT
# recording (../shared/realtraces/*.data), or a note that there are none
each_real() {
	local f
	if [ ! -d "$SRCDIR/../shared/realtraces" ]; then
		echo "skip: no ../shared/realtraces"
		return
	fi
	for f in "$SRCDIR"/../shared/realtraces/*.data; do
		[ -f "$f" ] && "$1" "$(basename "$f" .data)" "$f" "${@:2}"
	done
}
# lives_match NAME: each thread's time in NAME.trep (report --per-thread:
# its COMM-TID frame, on and off its CPU) is its life in NAME.truth
# (truth_profile.py walltime)
lives_match() {
	local n=$1 msg
	python3 "$SRCDIR/tests/e2e/report/truth_profile.py" walltime "$n.truth" | sort >"$n.wall"
	awk '{ split($1, f, ";"); k = split(f[1], a, "-"); s[a[k]] += $NF }
		END { for (t in s) printf "%s %.0f\n", t, s[t] }' "$n.trep" | sort >"$n.rwall"
	if msg=$(join -a1 -a2 -e missing -o 0,1.2,2.2 "$n.wall" "$n.rwall" |
		awk '$2 != $3 { printf "tid %s: truth %s ns, report %s ns; ", $1, $2, $3; bad = 1 }
		     END { exit bad }'); then
		pass "$n: each thread's time in report is its life in the truth"
	else
		fail "$n: $msg"
	fi
}
# ends_at_death NAME PROGNAME: NAME.truth's threads all exit at their
# process's death (its first exit), within a switch (1500 ns), and no line
# of any thread comes after (tests/e2e/emulate/ends.sh says why)
ends_at_death() {
	local n=$1 want=2 msg
	[ "$2" = kill_spin ] && want=3
	if msg=$(sort -n -s "$n.truth" | awk -v tol=1500 -v want=$want '
		/^#/ || $5 == "" || $5 == "wake" { next }
		{ t[NR] = $1; tid[NR] = $4; what[NR] = $5; seen[$4] = 1 }
		$5 == "exit" { ex[$4] = 1; if (!k || $1 < k) k = $1 }
		END { for (i in t) if (t[i] - k > tol) { late[tid[i]] = what[i] " " t[i] - k " ns"; bad = 1 }
		      for (x in late) printf "tid %s: %s after the death; ", x, late[x]
		      for (x in seen) { m++; if (!(x in ex)) { printf "tid %s has no exit; ", x; bad = 1 } }
		      if (m < want) { print m " threads, want " want; bad = 1 }
		      if (!bad) print m " threads exit with their process"; exit bad }'); then
		pass "$n: $msg"
	else
		fail "$n: $(echo "$msg" | cut -c1-400)"
	fi
}
finish() {
	if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed" >&2; exit 1; fi
	exit 0
}
