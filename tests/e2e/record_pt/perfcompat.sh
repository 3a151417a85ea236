#!/bin/bash
# What perf 6.x writes and expects from `perf record`, on our files: the
# header features of `perf report --header-only` and the bookkeeping
# records (ID_INDEX, FINISHED_INIT) of a `perf record -e dummy` file must be
# in a --sideband-only recording too, the events must have names, and perf
# must read our files (sideband-only and emulated) without a warning.
. "$E2E_LIB"
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
	echo "skip: kernel.perf_event_paranoid > 2 forbids perf events to non-root users"; exit 77
fi
command -v perf >/dev/null || { echo "skip: perf not installed"; exit 77; }
PROG=$TESTDATA/ending

perf record -q -e dummy -o ref.data -- "$PROG" status 0 >/dev/null 2>&1 ||
	{ fail "perf record -e dummy failed"; finish; }
"$PTFLAME" record --sideband-only -o sb.data -- "$PROG" status 0 2>/dev/null || fail "record --sideband-only"
"$PTFLAME" record --emulate -q -o em.data -- "$PROG" status 0 || fail "record --emulate"

feats() { perf report --header-only -i "$1" 2>"$1.herr" | sed -n 's/^# \([a-z][a-z ]*[a-z]\) *:.*/\1/p' | sort -u; }
feats ref.data >ref.feats
feats sb.data >sb.feats
# where and when it was recorded, and the events; not what perf adds for
# its own reports (topology, caches, sample times) nor its version
for f in hostname "os release" arch "nrcpus online" "nrcpus avail" cpudesc cpuid "total memory" \
	cmdline event "pmu mappings"; do
	if ! grep -qx "$f" ref.feats; then echo "note: perf wrote no '$f' here"; continue; fi
	grep -qx "$f" sb.feats && pass "header has '$f' like perf's" || fail "header lacks '$f' (perf has it)"
done
records() { perf report -D -i "$1" 2>/dev/null | grep -oE 'PERF_RECORD_[A-Z_0-9]+' | sort -u; }
records ref.data >ref.recs
records sb.data >sb.recs
for t in PERF_RECORD_ID_INDEX PERF_RECORD_FINISHED_INIT; do
	grep -qx "$t" ref.recs || { echo "note: perf wrote no $t here"; continue; }
	grep -qx "$t" sb.recs && pass "has $t like perf's" || fail "no $t (perf has it)"
done
perf evlist -i sb.data >sb.ev 2>&1
grep -qx 'dummy:u' sb.ev && ! grep -q unknown sb.ev && pass "events named (dummy:u)" || fail "event names: $(cat sb.ev)"
perf evlist -i em.data >em.ev 2>&1
grep -qx 'intel_pt//u' em.ev && pass "PT event named intel_pt//u" || fail "event names: $(cat em.ev)"
# --kernel: kernel text changes (TEXT_POKE, KSYMBOL) recorded as perf does
# (kernels >= 5.9 have them), and the kernel's text mapped
if "$PTFLAME" record --sideband-only --kernel -o k.data -- /bin/true 2>k.err; then
	read -r maj min _ < <(uname -r | tr '.-' '  ')
	if [ "$maj" -gt 5 ] || { [ "$maj" -eq 5 ] && [ "$min" -ge 9 ]; }; then
		perf evlist -v -i k.data 2>/dev/null | grep -q 'text_poke: 1.*ksymbol: 1\|ksymbol: 1.*text_poke: 1' &&
			pass "--kernel: text_poke and ksymbol on" || fail "--kernel: no text_poke/ksymbol event"
	fi
	if grep -q ' _text$' /proc/kallsyms && [ "$(awk '$3 == "_text" {print $1; exit}' /proc/kallsyms)" != 0000000000000000 ]; then
		perf script --show-mmap-events -i k.data 2>/dev/null | grep -q '\[kernel.kallsyms\]_text' &&
			pass "--kernel: kernel text mapped" || fail "--kernel: no [kernel.kallsyms]_text mapping"
	fi
else
	echo "skip: --kernel not allowed here: $(cat k.err)"
fi
for f in sb em; do
	[ -s "$f.data.herr" ] || perf report --header-only -i "$f.data" >/dev/null 2>"$f.data.herr"
	[ -s "$f.data.herr" ] && fail "$f: perf report --header-only warns: $(head -c 300 "$f.data.herr")" ||
		pass "$f: perf report --header-only says nothing on stderr"
	perf script --itrace=cr -i "$f.data" >/dev/null 2>"$f.serr"
	[ -s "$f.serr" ] && fail "$f: perf script --itrace=cr warns: $(head -c 300 "$f.serr")" ||
		pass "$f: perf script --itrace=cr says nothing on stderr"
done
finish
