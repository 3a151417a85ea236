# Sourced by the bench scripts: their inputs, timed runs and medians, one way
# each.
# bench_input SPEC DATA BUILD OUT: writes perf.data DATA for SPEC and prints
# its label. SPEC is one of
#   N       a per-thread perf.data of N MiB of PT made by bench/ptenc_bench.c
#           (a steady loop of real code: calls, returns, branches); the
#           trace's code is the generator's own text, kept at OUT/ptenc_bench
#   sqlite  Debian's sqlite3 running an SQL workload (SQLITE_ROWS rows,
#           default 5000) recorded with record --emulate=qemu: many
#           functions, DSOs (sqlite3, libsqlite3, libc, ld.so), deep stacks
#   xz      xz compressing the first XZ_KB KiB (default 300) of libc in 40 KiB
#           blocks with 4 threads, recorded the same way: 5 threads, 4 of
#           them busy, so 4 large AUX queues (what -j spreads over cores)
# bench_sqlite_sql ROWS: the SQL workload (ROWS rows inserted, indexed,
# aggregated) on stdout
bench_sqlite_sql() {
	cat <<SQL
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i < $1)
INSERT INTO t SELECT i, hex(randomblob(16)), i*0.5 FROM r;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(c), max(b) FROM t WHERE b > '8';
SELECT substr(b,1,2), count(*) FROM t GROUP BY 1 ORDER BY 2 DESC LIMIT 3;
SQL
}

bench_input() {
	local spec=$1 data=$2 build=$3 out=$4 ptflame=$3/cmd/ptflame
	case $spec in
	sqlite)
		local rows=${SQLITE_ROWS:-5000}
		bench_sqlite_sql "$rows" >"$out/w.sql"
		nice "$ptflame" record --emulate=qemu --start '' -q -o "$data" -- sqlite3 :memory: \
			<"$out/w.sql" >/dev/null || return 1
		echo "sqlite3 ($rows rows)"
		;;
	xz)
		local kb=${XZ_KB:-300}
		head -c $((kb * 1024)) /lib/x86_64-linux-gnu/libc.so.6 >"$out/xz.in"
		nice "$ptflame" record --emulate=qemu --start '' -q -o "$data" -- \
			xz -T4 --block-size=40KiB -1 -c "$out/xz.in" >/dev/null || return 1
		echo "xz -T4 ($kb KiB)"
		;;
	*[!0-9]* | '')
		echo "bench_input: unknown input '$spec' (N, sqlite or xz)" >&2
		return 1
		;;
	*)
		cp "$build/tests/e2e/decode/dc_ptenc_bench" "$out/ptenc_bench" &&
			nice "$out/ptenc_bench" -s "$spec" -o "$out/b.bin" -p "$data" >/dev/null || return 1
		rm -f "$out/b.bin"
		echo "synthetic"
		;;
	esac
}

# bench_data SPEC BUILD OUT: sets data and label for SPEC, a perf.data file
# (as it is; its file name the label) or an input bench_input makes at
# OUT/in.data; non-zero when that fails.
bench_data() {
	if [ -f "$1" ]; then
		data=$1 label=$(basename "$1")
	else
		data=$3/in.data
		label=$(bench_input "$1" "$data" "$2" "$3")
	fi
}

# bench_run NAME CMD...: one timed run of CMD, its output in $OUT/NAME.out;
# appends "wall_s cpu_s rss_kib" (CPU: user + system) to $OUT/NAME.t
bench_run() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$OUT/time.tmp" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" ||
		{ echo "$name failed: $(head -c 300 "$OUT/$name.err")" >&2; exit 1; }
	awk '{ print $1, $2 + $3, $4 }' "$OUT/time.tmp" >>"$OUT/$name.t"
}

# median: of the numbers on stdin, one per line
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
