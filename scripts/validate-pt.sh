#!/bin/bash
# validate-pt.sh: on a machine WITH Intel PT, check this ptflame build end to
# end in one command: record a testdata program with the hardware recorder,
# decode the trace with both `ptflame report` and `perf script --itrace=c`,
# and compare how often each of the program's functions was called.
#
# usage: scripts/validate-pt.sh [-B BUILDDIR] [--emulate] [-- PROGRAM [ARGS]]
#   BUILDDIR defaults to ./build (ptflame, testdata/validate_calls);
#   $PTFLAME overrides the ptflame binary. --emulate records with the ptrace
#   emulator instead of the hardware (tests the script itself without PT;
#   $VALIDATE_RECORD_OPTS adds record options, e.g. "--start worker").
# Exit: 0 the decoders agree, 1 they disagree (a table says where),
#       2 cannot validate here (no Intel PT, no perf, nothing built).
set -u
die2() { echo "validate-pt: $*" >&2; exit 2; }

cd "$(dirname "$0")/.." || exit 2
B=build
EMULATE=
while [ $# -gt 0 ]; do
	case $1 in
	-B) B=$2; shift 2 ;;
	--emulate) EMULATE=1; shift ;;
	--) shift; break ;;
	-h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) die2 "unknown argument '$1' (see --help)" ;;
	esac
done
SYSFS=${PTFLAME_SYSFS:-/sys}
PMU=$SYSFS/bus/event_source/devices/intel_pt
[ -n "$EMULATE" ] || [ -d "$PMU" ] || die2 "no Intel PT on this machine ($PMU missing): nothing to validate here; run this on an Intel CPU with PT (not in most VMs); 'ptflame record --emulate' works without PT"
case $B in /*) ;; *) B=$PWD/$B ;; esac
PTFLAME=${PTFLAME:-$B/cmd/ptflame}
[ -x "$PTFLAME" ] || die2 "no ptflame at $PTFLAME: build first (meson setup $B && ninja -C $B)"
command -v perf >/dev/null || die2 "perf is not installed (Debian: apt-get install linux-perf)"
if [ $# -gt 0 ]; then PROG=("$@"); else PROG=("$B/testdata/validate_calls"); fi
[ -x "${PROG[0]}" ] || die2 "no program ${PROG[0]}: build the testdata first (ninja -C $B)"
EXE=$(readlink -f "${PROG[0]}")

W=$(mktemp -d "${TMPDIR:-/tmp}/validate-pt.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 2

if [ -n "$EMULATE" ]; then
	REC=(record --emulate ${VALIDATE_RECORD_OPTS:-}); how="the PT emulator"
else
	REC=(record ${VALIDATE_RECORD_OPTS:-}); how="Intel PT"
fi
echo "validate-pt: recording ${PROG[*]} with $how" >&2
# record exits with the program's status: only a missing file is a failure
"$PTFLAME" "${REC[@]}" -o perf.data -- "${PROG[@]}" >record.out 2>record.err
[ -s perf.data ] || die2 "ptflame record failed: $(tail -n 1 record.err)"
cat record.err >&2
# How the recorder handled a full AUX buffer (the first thing to look at
# when the counts below differ): the PT event's aux_watermark (perf sets a
# quarter of the buffer; 0 = the kernel's default, half), how often the
# buffer filled (TRUNCATED AUX records in the file) and how often PT was
# re-enabled after a possible stop (record's summary).
wm=$(perf evlist -v -i perf.data 2>/dev/null | grep -o 'aux_watermark: [0-9]*' | head -n 1)
ntrunc=$("$PTFLAME" dump perf.data 2>/dev/null | grep -cE ' AUX aux_offset .* flags 0x[0-9a-f]*[13579bdf] ')
restarts=$(grep -o 'PT re-enabled [0-9]* times' record.err | grep -o '[0-9]*')
echo "validate-pt: ${wm:-aux_watermark: 0 (kernel default)}, $ntrunc TRUNCATED AUX records," \
	"PT re-enabled ${restarts:-0} times" >&2

# perf: one line per call, " => TARGET-ADDR SYMBOL+0xOFF (DSO)"; count calls
# to the entry (+0x0) of the program's own functions (a PLT stub shows as
# _init+0x30 and is not a function entry). ptflame keys functions by name,
# so a name also called in another object (each library has its own
# __do_global_dtors_aux) cannot be compared.
perf script -i perf.data --itrace=c -F addr,sym,symoff,dso >perf.calls 2>perf.err ||
	die2 "perf script failed: $(head -n 1 perf.err)"
awk -v exe="$EXE" 'NF >= 4 {
	sym = $(NF - 1); off = sym; sub(/\+0x[0-9a-f]+$/, "", sym); sub(/^.*\+/, "", off)
	if (sym ~ /@plt$|^\[unknown\]$/) next
	if ($NF != "(" exe ")") { other[sym] = 1; next }
	if (off == "0x0") n[sym]++
} END { for (f in n) if (!(f in other)) print f, n[f] }' perf.calls | sort >perf.count

# ptflame: annotated folded stacks, frames "name:calls[(...)][,avg:...]";
# a node appears in every stack below it, so count each path once.
"$PTFLAME" report >report.folded 2>report.err
rc=$?
grep -q "not built yet" report.err && die2 "this ptflame has no 'report' yet"
[ $rc -eq 0 ] || die2 "ptflame report failed: $(head -n 1 report.err)"
awk '{
	sub(/ [0-9]+$/, ""); n = split($0, fr, ";"); path = ""
	for (i = 1; i <= n; i++) {
		f = fr[i]; sub(/,avg:.*$/, "", f)
		if (!match(f, /:[0-9]+(\([^)]*\))?$/)) continue
		name = substr(f, 1, RSTART - 1); calls = substr(f, RSTART + 1); sub(/\(.*/, "", calls)
		path = path ";" name
		if (!(path in seen)) { seen[path] = 1; c[name] += calls }
	}
} END { for (f in c) print f, c[f] }' report.folded | sort >ptflame.all
# Only the functions perf attributes to the program are compared.
join -a 1 -e 0 -o 0,1.2,2.2 perf.count ptflame.all >both
if [ ! -s perf.count ]; then
	echo "validate-pt: perf decoded no calls into $EXE: is the trace empty? (see record output above)" >&2
	exit 1
fi
bad=$(awk '$2 != $3' both | wc -l)
printf '%-32s %10s %10s\n' function perf ptflame
awk '{ printf "%-32s %10d %10d%s\n", $1, $2, $3, ($2 != $3 ? "   <- differs" : "") }' both
if [ "$bad" -ne 0 ]; then
	echo "validate-pt: FAIL: $bad of $(wc -l <both) functions have different call counts" >&2
	exit 1
fi
echo "validate-pt: OK: ptflame and perf agree on the calls of $(wc -l <both) functions" >&2
exit 0
