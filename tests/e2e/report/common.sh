# Shared by the report e2e scripts: record each emu_* program once, run
# ptflame report, check outputs against the truth log (truth_profile.py).
. "$E2E_LIB"
TP="python3 $REPORT_DIR/truth_profile.py"
CHECK_FOLDED="python3 $SRCDIR/tests/check_folded.py"
# The emu_* programs of testdata/meson.build (all of them: a new one must be
# added here; the list is checked against $TESTDATA below).
EMU_PROGRAMS="cold coldxx cxxthread demo dlopen except fault forkexec fptr inline jcc longjmp nested sigctx signal syscalls blockread tail threads ucontext vdso"
for f in "$TESTDATA"/emu_*; do
	case $f in *.p|*.so) continue ;; esac
	[ -x "$f" ] || continue
	case " $EMU_PROGRAMS " in *" ${f##*/emu_} "*) ;; *)
		fail "testdata program ${f##*/} is not in EMU_PROGRAMS" ;; esac
done

# record NAME PROG [record options...]: NAME.data + NAME.truth
record() {
	local name=$1 prog=$2; shift 2
	if ! "$PTFLAME" record --emulate -q -o "$name.data" --truth "$name.truth" "$@" \
		-- "$TESTDATA/$prog" >"$name.rec.out" 2>&1; then
		fail "record $name: $(head -c 400 "$name.rec.out")"
		return 1
	fi
}
# report OUT [report options...]: run ptflame report (-q), check the
# output's folded grammar (check 6: every output of every run).
report() {
	local out=$1; shift
	if ! "$PTFLAME" report -q "$@" >"$out" 2>"$out.err"; then
		fail "report $*: $(head -c 400 "$out.err")"
		return 1
	fi
	local ann=--annotated
	case " $* " in *" --plain "*) ann= ;; esac
	if ! $CHECK_FOLDED $ann "$out" >"$out.grammar" 2>&1; then
		fail "report $* output breaks the folded grammar: $(head -c 400 "$out.grammar")"
	fi
	GRAMMAR_CHECKED=$((${GRAMMAR_CHECKED:-0} + $(wc -l <"$out")))
}
# sum_col FILE: sum of the last column
sum_col() { awk '{s += $NF} END {printf "%d\n", s}' "$1"; }
