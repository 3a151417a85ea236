#!/bin/bash
# A recording whose writer never finished it: perf record killed leaves a
# header that says data size 0 and no feature table, but every record it
# wrote up to the file's end. perf reads those with a warning; so do dump
# and report. A file cut inside its last record loses that record only.
# A finished file cut short is still refused (badinput.sh).
. "$E2E_LIB"

# perf record killed: the real thing
perf record -q -e dummy -o killed.data -- sleep 7.31 >perf.out 2>&1 &
rec=$!
sleep 1
kill -KILL "$rec"
wait "$rec" 2>/dev/null
pkill -KILL -f '^sleep 7[.]31$' 2>/dev/null
dsize=$(perl -e 'open F, "<", $ARGV[0]; binmode F; read F, $b, 56; print unpack("Q<", substr($b, 48, 8))' killed.data 2>/dev/null)
if [ "${dsize:-x}" != 0 ]; then
	fail "perf record killed after 1 s did not leave data size 0 (got '${dsize:-}'); the test's premise is wrong"
else
	"$PTFLAME" dump killed.data >killed.txt 2>killed.err
	rc=$?
	[ $rc -eq 0 ] && grep -q "warning: killed.data: the recording was not finished" killed.err &&
		pass "dump of a killed perf record: exit 0, with a warning" ||
		fail "dump of a killed perf record: exit $rc: $(head -c 300 killed.err)"
	grep -qE "COMM .*comm (perf-exec|sleep)" killed.txt && pass "dump shows the records written before the kill" ||
		fail "dump: no COMM of the recorded command: $(tail -3 killed.txt)"
fi

# an emulated recording made unfinished as perf record would leave it
rec_emu full threads || finish
"$PTFLAME" report -q -i full.data >full.out 2>full.err || fail "report of the finished file: $(cat full.err)"
read -r doff dsize < <(perl -e 'open F, "<", $ARGV[0]; binmode F; read F, $b, 56;
	print join(" ", unpack("Q<Q<", substr($b, 40, 16))), "\n"' full.data)
# unfinished FILE SIZE: full.data with data size 0, cut at SIZE bytes
unfinished() {
	head -c "$2" full.data >"$1"
	perl -e 'open F, "+<", $ARGV[0]; binmode F; seek F, 48, 0; print F pack("Q<", 0)' "$1"
}
unfinished whole.data $((doff + dsize))
"$PTFLAME" report -q -i whole.data >whole.out 2>whole.err
rc=$?
[ $rc -eq 0 ] && cmp -s full.out whole.out &&
	pass "every record there, no features: the same profile as the finished file's" ||
	fail "unfinished, uncut: exit $rc, $(diff full.out whole.out | head -5) $(head -c 300 whole.err)"
grep -q "the recording was not finished" whole.err && ! grep -q "cut after" whole.err &&
	pass "report warns that the recording was not finished" ||
	fail "report's warning: $(cat whole.err)"

# cut inside the last AUXTRACE's payload
last=$("$PTFLAME" dump full.data | awk '/ AUXTRACE size / {o = $1; s = $5} END {print o, s}')
read -r aoff asize <<<"$last"
cut=$((aoff + 0x30 + asize / 2))
unfinished cut.data $cut
"$PTFLAME" report -q -i cut.data >cut.out 2>cut.err
rc=$?
[ $rc -eq 0 ] && grep -q "its last record, cut after $((cut - aoff)) bytes, is left out" cut.err &&
	pass "cut in the last trace record: read up to it, and said so" ||
	fail "cut: exit $rc: $(head -c 300 cut.err)"
sum() { awk '{s += $NF} END {print s + 0}' "$1"; }
# (what the cut took is missing, or [lost] where a thread the recording made
# ran before its first packet left: its life is from its FORK either way)
traced() { grep -v '\[lost\]' "$1" | awk '{s += $NF} END {print s + 0}'; }
[ -s cut.out ] && [ "$(traced cut.out)" -lt "$(traced full.out)" ] &&
	pass "cut: a profile, less of it traced than of the whole one ($(traced cut.out) < $(traced full.out) ns)" ||
	fail "cut: $(traced cut.out) ns traced against the whole one's $(traced full.out)"
# a finished file cut the same way is refused
head -c $cut full.data >short.data
"$PTFLAME" report -q -i short.data >short.out 2>short.err
rc=$?
[ $rc -ne 0 ] && grep -q "truncated" short.err && [ "$(wc -l <short.err)" -eq 1 ] &&
	pass "a finished file cut short is refused: $(cat short.err)" ||
	fail "short: exit $rc: $(head -c 300 short.err)"
# dump of that file shows the records before the cut, then says it is
# truncated (one line, exit 1); without the features past the cut, a wake
# sample is not named, so only offsets, sizes and types are compared
"$PTFLAME" dump full.data | awk '/^0x/ {print $1, $2, $3}' >full.recs
"$PTFLAME" dump short.data >short.txt 2>short.derr
rc=$?
awk '/^0x/ {print $1, $2, $3}' short.txt >short.recs
n=$(wc -l <short.recs)
[ $rc -eq 1 ] && [ "$(wc -l <short.derr)" -eq 1 ] &&
	grep -q "truncated: data section ends at .* (the records before the cut are printed)" short.derr &&
	[ "$n" -gt 0 ] && head -n "$n" full.recs | cmp -s - short.recs &&
	pass "dump of a file cut short: its first $n records, then one line: $(cat short.derr)" ||
	fail "dump of a file cut short: exit $rc, $n records: $(head -c 300 short.derr)"
finish
