#!/bin/bash
# Pipe-mode perf.data (perf record -o -, here perf inject -o - of an
# emulated recording: attrs, features, time conversion and AUXTRACE
# payloads as records in the stream) reads as its file-mode original:
# byte-identical folded output and table.
. "$E2E_LIB"
command -v perf >/dev/null || { echo "SKIP: perf (linux-perf) not installed"; exit 77; }
# --no-wakers: perf inject writes a tracepoint's format into the stream
# from the machine's own tracefs, and without one its stream is broken
# (perf script cannot read it either: "unexpected end of event stream")
"$PTFLAME" record --emulate -q --no-wakers -o e.data --cpus 2 -- "$TESTDATA/emu_threads" >rec.out 2>rec.err ||
	{ fail "record: $(head -c 300 rec.err)"; finish; }
perf inject -i e.data -o - >e.piped 2>inj.err || { fail "perf inject: $(head -c 300 inj.err)"; finish; }
[ "$(head -c 16 e.piped | od -An -tx1 | tr -d ' \n')" = "50455246494c45321000000000000000" ] &&
	pass "perf inject wrote a pipe-mode header" || fail "not a pipe-mode header"
"$PTFLAME" report -i e.data >f.folded 2>f.err || fail "report file: $(head -c 300 f.err)"
"$PTFLAME" report -i e.piped >p.folded 2>p.err || fail "report pipe-mode: $(head -c 300 p.err)"
[ -s f.folded ] && cmp -s f.folded p.folded && pass "same folded output ($(wc -l <f.folded) lines)" ||
	fail "folded output differs: $(diff f.folded p.folded | head -5)"
cmp -s f.err p.err && pass "same summary" || fail "summary differs: $(cat f.err p.err)"
"$PTFLAME" report -i e.data --table >f.table 2>/dev/null
"$PTFLAME" report -i e.piped --table >p.table 2>/dev/null
[ -s f.table ] && cmp -s f.table p.table && pass "same table" || fail "table differs"
finish
