#!/bin/bash
# issue 14.4: orientation. The summary line gives the recording's time range
# as --time takes it (from the truth log: the first traced start to the
# last event), and that window keeps the whole profile; each filter that
# matches nothing says so on stderr, naming it, with "did you mean" for a
# name close to one the recording has (still exit 0); the table's options
# without --table are refused.
. "$E2E_LIB"
"$PTFLAME" record --emulate -q -o t.data --truth t.truth -- "$TESTDATA/emu_threads" ||
	{ fail "record failed"; finish; }
"$PTFLAME" report -i t.data >all.folded 2>sum.err || fail "report failed"
lo=$(awk '$5 == "start" {print $1}' t.truth | sort -n | head -1)
hi=$(grep -v '^#' t.truth | awk '{print $1}' | sort -n | tail -1)
want=$(printf '%d.%09d,%d.%09d' $((lo / 1000000000)) $((lo % 1000000000)) \
	$((hi / 1000000000)) $((hi % 1000000000)))
expect_grep "traced .* in $want, " sum.err "summary: the time range $want"
range=$(sed -n 's/.* in \([0-9.]*,[0-9.]*\), .*/\1/p' sum.err)
"$PTFLAME" report -q -i t.data --time "$range" >win.folded
cmp -s win.folded all.folded && [ -s all.folded ] && pass "--time RANGE keeps everything" ||
	fail "--time $range differs from the whole profile"

# filters that match nothing, one by one
note() {  # DESC PATTERN -- report options
	local desc=$1 pat=$2; shift 3
	expect_rc 0 "$desc: exit 0" -- "$PTFLAME" report -q -i t.data "$@"
	expect_grep "$pat" "$T/err" "$desc: said"
}
note "--root typo" "nothing matched --root wroker \(did you mean 'worker'\?\)" -- --root wroker
note "--root part" "nothing matched --root work \(did you mean 'worker'\?\)" -- --root work
note "--root far" "nothing matched --root qqqqqqqq$" -- --root qqqqqqqq
# a PLT stub is folded into the function it calls: no frame of its own, no
# suggestion of one, unless --show-plt
note "--root NAME@plt" "nothing matched --root pthread_mutex_lock@plt .*PLT stubs are folded into the function they call; --show-plt keeps them" -- --root pthread_mutex_lock@plt
"$PTFLAME" report -q -i t.data --root pthread_mutex_lo >/dev/null 2>plt.err
grep -q "@plt" plt.err && fail "--root: a PLT stub suggested: $(cat plt.err)" || pass "--root: no PLT stub suggested"
"$PTFLAME" report -q -i t.data --show-plt --root pthread_mutex_lock@plt >plt.folded 2>plt.err
[ -s plt.folded ] && [ ! -s plt.err ] && pass "--show-plt --root NAME@plt: its stacks" ||
	fail "--show-plt --root NAME@plt: $(head -c 300 plt.err)"
note "--comm typo" "nothing matched --comm emu_thread \(did you mean 'emu_threads'\?\)" -- --comm emu_thread
note "--tid" "nothing matched --tid 4000000 \(no such thread" -- --tid 4000000
note "--tid one of two" "nothing matched --tid 4000000 " -- --tid "4000000,$(awk '$5 == "start" {print $4; exit}' t.truth)"
note "--time" "nothing matched --time \(the recording spans $want\)" -- --time 1ns,2ns
"$PTFLAME" report -q -i t.data --root worker >/dev/null 2>ok.err
[ -s ok.err ] && fail "--root worker matched but said: $(cat ok.err)" || pass "a filter that matches says nothing"

# table options need --table
for o in "--sort p99" "--top 3" "--by-stack"; do
	expect_rc 2 "report $o without --table" -- "$PTFLAME" report -q -i t.data $o
	expect_grep "${o%% *} is an option of the table: add --table" "$T/err" "$o: says to add --table"
	expect_lines 1 "$T/err" "$o: one line"
	expect_rc 0 "report --table $o" -- "$PTFLAME" report -q -i t.data --table $o
done
# options that would do nothing are refused, not ignored
refused() {  # PATTERN -- report options
	local pat=$1; shift 2
	expect_rc 2 "report $*: refused" -- "$PTFLAME" report -q -i t.data "$@"
	expect_grep "$pat" "$T/err" "report $*: says why"
}
refused "--oncpu and --offcpu exclude each other" -- --oncpu --offcpu
refused "--oncpu and --offcpu exclude each other" -- --offcpu --oncpu
for o in "--title T" "--width 800" "--minwidth 1" --inverted; do
	refused "${o%% *} is an option of the SVG: add --svg FILE" -- $o
done
refused "--raw is an option of the table and of --slowest" -- --raw
refused "--per-thread is not an option of the table" -- --table --per-thread
refused "--min-ns is not an option of the table" -- --table --min-ns 1ms
refused "--srcline is an option of the table: add --table" -- --srcline
refused "--comm wants a name, not ''" -- --comm ""
refused "--root wants a name, not ''" -- --root ""
refused "--symfs /no/such/dir: No such file or directory" -- --symfs /no/such/dir
refused "--symfs t.data: not a directory" -- --symfs t.data
expect_rc 0 "--slowest of a function never traced" -- "$PTFLAME" report -q -i t.data --slowest 2 wroker
expect_grep "no function wroker was traced \(did you mean 'worker'\?\)" "$T/err" "--slowest NAME: did you mean"
expect_rc 0 "--oncpu twice" -- "$PTFLAME" report -q -i t.data --oncpu --oncpu
expect_rc 0 "--raw with --slowest" -- "$PTFLAME" report -q -i t.data --slowest 2 worker --raw
finish
