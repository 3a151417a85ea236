#!/bin/bash
# bench/qemu_bench.sh [ROWS]: the qemu backend of record --emulate on a real
# program, Debian's sqlite3 running an SQL workload (ROWS rows inserted,
# indexed, aggregated; default 100000). Prints wall times of: the native
# run, qemu-x86_64 without plugin, ptflame record --emulate=qemu (guest
# instructions/s), ptflame report, the ptrace stepper (--max-insns 300000,
# its instructions/s), uftrace (library calls: sqlite3 has no -pg) and
# valgrind's callgrind; then cross-checks call counts: the truth log's
# calls vs `perf script --itrace=c` vs the sum of report --table calls is
# not comparable (frames are functions), so truth vs perf only. By hand;
# needs sqlite3, perf, uftrace, valgrind. Run from the source root after
# building in build/.
set -eu
ROWS=${1:-100000}
B=${BUILD:-build}
PTFLAME=$(realpath "$B/cmd/ptflame")
W=$(mktemp -d /tmp/qemu-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/bench_lib.sh"
bench_sqlite_sql "$ROWS" >"$W/w.sql"
cd "$W"
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>"$W/last.err" <"$W/w.sql"; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
echo "sqlite3 workload, $ROWS rows; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
n=$(secs sqlite3 :memory:); echo "native:                 $n s"
q=$(secs qemu-x86_64 "$(command -v sqlite3)" :memory:); echo "qemu-x86_64, no plugin: $q s"
r=$(secs "$PTFLAME" record --emulate=qemu --start '' -o q.data --truth q.truth -- sqlite3 :memory:)
echo "record --emulate=qemu:  $r s  ($(grep -o 'emulated.*' "$W/last.err"))"
insns=$(grep -o 'emulated [0-9]*' "$W/last.err" | cut -d' ' -f2)
echo "  slowdown vs native: $(echo "$r / $n" | bc)x; guest insns/s: $(echo "$insns / $r" | bc)"
t0=$(date +%s.%N); "$PTFLAME" report -q -i q.data >q.folded; t1=$(date +%s.%N)
echo "report:                 $(echo "$t1 - $t0" | bc) s ($(wc -l <q.folded) stacks)"
p=$(secs "$PTFLAME" record --emulate=ptrace --start '' --max-insns 300000 -o p.data -- sqlite3 :memory:)
pi=$(grep -o '([0-9]* insns/s)' "$W/last.err" | tr -dc 0-9)
echo "record --emulate=ptrace (300k insns): $p s, $pi insns/s; qemu/ptrace: $(echo "$insns / $r / $pi" | bc)x"
if command -v uftrace >/dev/null; then
	u=$(secs uftrace record --force -d u.data sqlite3 :memory:); echo "uftrace (library calls): $u s"
fi
if command -v valgrind >/dev/null; then
	c=$(secs valgrind --tool=callgrind --callgrind-out-file=cg.out sqlite3 :memory:); echo "callgrind:              $c s"
fi
tc=$(grep -c ' call ' q.truth || true)
# perf's call samples also include syscalls ('tr end syscall'): count the
# lines whose flags are a plain call
pc=$(perf script --itrace=c -F flags,ip -i q.data 2>/dev/null | awk '$1 == "call"' | wc -l)
echo "calls: truth log $tc, perf script --itrace=c $pc $([ "$tc" = "$pc" ] && echo "(equal)" || echo "(DIFFER)")"
