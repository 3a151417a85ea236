#!/bin/bash
# record --emulate -d of a program that ignores SIGTERM: after -d record
# sends it SIGTERM and waits; 1.5 s on, a note says so (and that Ctrl-C
# again kills it); a second SIGINT SIGKILLs it, the file is complete
# (report reads its stacks) and the exit status is 0 (record stopped it).
# MODE: ptrace (e2e-emulate-termwait) or qemu (e2e-qemu-termwait).
. "$REPORT_DIR/common.sh"
MODE=${MODE:-${PTFLAME_EMULATE:-ptrace}}
if [ "$MODE" = qemu ]; then
	command -v qemu-x86_64 >/dev/null || { echo "no qemu-x86_64: skipped"; exit 77; }
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
command -v cc >/dev/null || { echo "no cc: skipped"; exit 77; }
printf '#include <signal.h>\n#include <unistd.h>\nint main(void) { signal(SIGTERM, SIG_IGN);
for (int i = 0; i < 300; i++) usleep(100000); return 0; }\n' >"$T/ign.c"
cc -O0 -o "$T/ign" "$T/ign.c" || exit 1
"$PTFLAME" record --emulate="$MODE" -q -d 0.5 -o "$T/p.data" -- "$T/ign" 2>"$T/err" &
rec=$!
for _ in $(seq 100); do
	grep -q 'has not exited' "$T/err" && break
	sleep 0.1
done
grep -q "ptflame record: note: ign (pid [0-9]*) has not exited 1.5 s after SIGTERM.*Ctrl-C again kills it" "$T/err" ||
	{ kill -KILL $rec; cat "$T/err"; echo "FAIL: no note"; exit 1; }
kill -INT $rec
wait $rec
rc=$?
[ $rc -eq 0 ] || { cat "$T/err"; echo "FAIL: exit status $rc, not 0"; exit 1; }
[ "$(grep -c 'has not exited' "$T/err")" -eq 1 ] || { cat "$T/err"; echo "FAIL: note not once"; exit 1; }
"$PTFLAME" report --plain -i "$T/p.data" >"$T/out" 2>"$T/rerr" ||
	{ cat "$T/rerr"; echo "FAIL: report"; exit 1; }
[ -s "$T/out" ] || { echo "FAIL: no stacks"; exit 1; }
head -3 "$T/out"
echo "PASS ($MODE)"
