#!/bin/bash
# Every way `ptflame record` (hardware PT) can fail to start: one line that
# says what to do, a non-zero exit, and no output file (nor a temporary one)
# left behind. The no-PMU case is real here; the PMU-present path runs
# against a fake sysfs (PTFLAME_SYSFS), permission and mlock limits are real
# (the unprivileged user 'nobody' via setpriv when run as root).
. "$E2E_LIB"
PROG=$TESTDATA/sideband_switch

# expect_fail RC DESC PATTERN -- CMD...: fails with RC, one stderr line
# matching PATTERN, and the (otherwise empty) work dir stays empty.
expect_fail() {
	local want=$1 desc=$2 pat=$3; shift 4
	rm -rf "$T/w"; mkdir -p "$T/w"; chmod 777 "$T/w"
	(cd "$T/w" && "$@" >"$T/out" 2>"$T/err"); local rc=$?
	if [ "$rc" -ne "$want" ]; then fail "$desc: exit $rc, want $want; stderr: $(head -c 400 "$T/err")"; return; fi
	if [ "$(wc -l <"$T/err")" -ne 1 ]; then fail "$desc: want one line, got: $(cat "$T/err")"; return; fi
	if ! grep -qE -- "$pat" "$T/err"; then fail "$desc: /$pat/ not in: $(cat "$T/err")"; return; fi
	if [ -n "$(ls -A "$T/w")" ]; then fail "$desc: left files behind: $(ls -A "$T/w")"; return; fi
	pass "$desc"
}
R="$PTFLAME record"

# -- no PT hardware (the real situation on these machines; a fake empty
# sysfs makes it so on a PT machine too)
mkdir -p "$T/nopt"
expect_fail 2 "no intel_pt PMU" \
	"^ptflame record: no Intel PT on this machine \(/sys/bus/event_source/devices/intel_pt missing\); use 'ptflame record --emulate' to trace without PT hardware$" \
	-- env -u PTFLAME_SYSFS $R -o out.data -- "$PROG"
if [ -d /sys/bus/event_source/devices/intel_pt ]; then
	echo "note: this machine has intel_pt; the check above ran against the real PMU"
fi
expect_fail 2 "no intel_pt PMU (fake sysfs root)" "no Intel PT on this machine \($T/nopt/bus/event_source/devices/intel_pt missing\).*--emulate" \
	-- env PTFLAME_SYSFS="$T/nopt" $R -p $$

# -- a PMU that exists in sysfs but that the kernel does not know
F=$T/fake/bus/event_source/devices/intel_pt
mkdir -p "$F/format" "$F/caps"
echo 4242 >"$F/type"
echo config:10 >"$F/format/tsc"; echo config:0 >"$F/format/pt"; echo config:13 >"$F/format/branch"
echo config:9 >"$F/format/mtc"; echo config:14-17 >"$F/format/mtc_period"
echo config:24-27 >"$F/format/psb_period"; echo config:1 >"$F/format/cyc"
echo 249 >"$F/caps/mtc_periods"; echo 3f >"$F/caps/psb_periods"; echo 1 >"$F/caps/mtc"; echo 0 >"$F/caps/psb_cyc"
FAKE="env PTFLAME_SYSFS=$T/fake"
expect_fail 1 "perf_event_open of the PT event fails" \
	"the kernel refused the intel_pt event \(type 4242, config 0xe601\).*$T/fake" -- $FAKE $R -o out.data -- "$PROG"
expect_fail 2 "--mtc-period not in caps/mtc_periods" "--mtc-period 5 is not supported by this CPU \(valid: 0,3,6,9" \
	-- $FAKE $R --mtc-period 5 -- "$PROG"
expect_fail 2 "--cyc without caps/psb_cyc" "--cyc: this CPU has no cycle-accurate mode" -- $FAKE $R --cyc -- "$PROG"
expect_fail 2 "--noretcomp without its format term" "no 'noretcomp' format term" -- $FAKE $R --noretcomp -- "$PROG"

# -- targets
nopid=4000000
while [ -e /proc/$nopid ]; do nopid=$((nopid + 1)); done
expect_fail 1 "a PID that does not exist" "no process with PID $nopid" -- $R --sideband-only -p $nopid
expect_fail 1 "a TID that does not exist" "no thread with TID $nopid" -- $R --sideband-only -t $nopid
expect_fail 1 "a command that cannot run" "cannot run '/nonexistent/prog': No such file" -- $R --sideband-only -- /nonexistent/prog
expect_fail 2 "--filter with a function the program lacks" "--filter: no function 'no_such_function' in .*sideband_switch" \
	-- $R --sideband-only --filter no_such_function -- "$PROG"
expect_fail 1 "an output directory that does not exist" "/nonexistent/dir/x.data" -- $R --sideband-only -o /nonexistent/dir/x.data -- "$PROG"

# -- bad options
expect_fail 2 "unknown option" "unknown option '--frob'" -- $R --frob -- "$PROG"
expect_fail 2 "-d junk" "-d: 'abc' is not a duration" -- $R -d abc -- "$PROG"
expect_fail 2 "-d 0" "-d: '0' is not a duration" -- $R -d 0 -- "$PROG"
expect_fail 2 "-d negative" "-d: '-1' is not a duration" -- $R -d -1 -- "$PROG"
expect_fail 2 "-d hex" "-d: '0x10' is not a duration" -- $R -d 0x10 -- "$PROG"
expect_fail 2 "-d with a space" "-d: ' 5' is not a duration" -- $R -d ' 5' -- "$PROG"
expect_fail 2 "-d of an unknown unit" "-d: '5min' is not a duration" -- $R -d 5min -- "$PROG"
expect_fail 2 "-p junk" "-p: 'abc' is not a process/thread id" -- $R -p abc
expect_fail 2 "-p 0" "-p: '0' is not a process/thread id" -- $R -p 1,0
expect_fail 2 "no target" "nothing to record" -- $R -o x.data
expect_fail 2 "two targets" "give only one target" -- $R -p 1 -- "$PROG"
expect_fail 2 "-m not a power of two" "aux-size 12288: must be a power of two" -- $R --sideband-only -m 12K -- "$PROG"
expect_fail 2 "-m junk" "bad size 'lots'" -- $R -m lots -- "$PROG"
expect_fail 2 "--psb-period out of range" "--psb-period: '64' is not a period" -- $R --psb-period 64 -- "$PROG"
expect_fail 2 "--snapshot with --sideband-only" "--snapshot needs the PT event" -- $R --snapshot --sideband-only -- "$PROG"
expect_rc 0 "--pt-help (the hardware backend's options)" -- $R --pt-help
expect_grep "^usage: ptflame record .*-p PID" "$T/out" "--help prints usage"
expect_grep "perf_event_paranoid" "$T/out" "--help names the paranoid sysctl"
expect_grep "sideband-only.*test/diagnostic" "$T/out" "--help documents the test mode"

# -- permissions and locked memory, as an unprivileged user
if [ "$(id -u)" -eq 0 ]; then
	if command -v setpriv >/dev/null; then
		chmod 711 "$T"
		AS="setpriv --reuid 65534 --regid 65534 --clear-groups"
		if ! $AS test -x "$PTFLAME"; then
			AS=; echo "skip: user nobody cannot run $PTFLAME (a private checkout?)"
		fi
	else AS=; echo "skip: no setpriv, cannot drop root for the permission checks"; fi
else AS="env"; fi
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ -n "$AS" ] && [ "$paranoid" -ge 2 ]; then
	expect_fail 1 "--kernel with perf_event_paranoid >= 2" \
		"not allowed .*--kernel \(kernel.perf_event_paranoid = $paranoid, this needs <= 1\).*CAP_PERFMON" \
		-- $AS $R --sideband-only --kernel -o out.data -- /bin/true
elif [ -n "$AS" ]; then echo "skip: kernel.perf_event_paranoid is $paranoid (< 2), --kernel is allowed"; fi
if [ -n "$AS" ] && [ "$paranoid" -ge 3 ]; then
	echo "skip: kernel.perf_event_paranoid is $paranoid: unprivileged users get no perf events at all"
elif [ -n "$AS" ]; then
	expect_fail 1 "ring buffers over the mlock limit" \
		"cannot map .* KiB of perf ring buffers.*/proc/sys/kernel/perf_event_mlock_kb.*ulimit -l" \
		-- $AS bash -c "ulimit -l 64; exec $R --sideband-only --data-size 64M -o out.data -- /bin/true"
	if [ "$(id -u)" -eq 0 ] || [ "$(stat -c %u /proc/1)" -ne "$(id -u)" ]; then
		expect_fail 1 "a PID of another user" "cannot trace PID 1: it belongs to another user \(uid 0\)" \
			-- $AS $R --sideband-only -o out.data -p 1
	fi
fi
finish
