#!/bin/bash
# `meson install` puts ptflame, its man pages (ptflame(1) and one per
# command), the bash completion and the LICENSE in place (into a DESTDIR
# here); the pages render without groff warnings and name every option of
# the command's --help; the installed completion completes commands, options
# and option values.
. "$E2E_LIB"
MESON=$(command -v meson) || { echo "SKIP: meson is not on PATH"; exit 77; }
command -v groff >/dev/null || { echo "SKIP: groff is not installed (scripts/setup.sh installs groff-base)"; exit 77; }

"$MESON" install -C "$BUILDDIR" --destdir "$T/root" --no-rebuild --quiet >out 2>err ||
	{ fail "meson install: $(tail -c 400 err)"; finish; }
bin=$(find "$T/root" -path '*/bin/ptflame' -type f | head -n 1)
[ -x "$bin" ] || { fail "no bin/ptflame installed: $(cd "$T/root" && find . -type f | head)"; finish; }
prefix=${bin%/bin/ptflame}
"$bin" --version | grep -q '^ptflame ' && pass "installed $bin runs" || fail "installed ptflame --version"

for page in ptflame ptflame-record ptflame-report ptflame-diff ptflame-dump; do
	f=$prefix/share/man/man1/$page.1
	[ -s "$f" ] || { fail "$page.1 not installed in share/man/man1"; continue; }
	groff -man -Tascii -ww -z "$f" 2>warn
	[ -s warn ] && fail "$page.1: groff warns: $(head -c 300 warn)"
	groff -man -Tascii "$f" 2>/dev/null | col -b >page.txt
	cmd=${page#ptflame}; cmd=${cmd#-}
	"$bin" $cmd --help >help.txt
	[ "$cmd" = record ] && "$bin" record --emulate --help >>help.txt
	missing=
	for o in $(grep -oE -- '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' help.txt | tr -d ' ,' | sort -u); do
		grep -qe "$o" page.txt || missing="$missing $o"
	done
	if [ -z "$missing" ]; then pass "$page(1) renders cleanly and names every option of its --help"
	else fail "$page(1) lacks$missing"; fi
done
grep -q 'ptflame-report(1)' "$prefix/share/man/man1/ptflame.1" ||
	{ groff -man -Tascii "$prefix/share/man/man1/ptflame.1" | col -b | grep -q 'ptflame-report(1)'; } ||
	fail "ptflame(1) does not point to ptflame-report(1)"
[ -s "$prefix/share/doc/ptflame/LICENSE" ] && grep -q 'MIT License' "$prefix/share/doc/ptflame/LICENSE" &&
	pass "LICENSE installed" || fail "no LICENSE in share/doc/ptflame"

comp=$prefix/share/bash-completion/completions/ptflame
[ -s "$comp" ] || { fail "no bash completion in share/bash-completion/completions"; finish; }
# complete WORDS...: what the completion offers for the last word
complete_words() {
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ptflame
		printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"
}
expect_completion() { # DESC WANT WORDS...
	local desc=$1 want=$2; shift 2
	if complete_words "$bin" "$@" | grep -qx -- "$want"; then pass "completion: $desc"
	else fail "completion: $desc: '$*' does not offer $want (got: $(complete_words "$bin" "$@" | tr '\n' ' '))"; fi
}
expect_completion "commands" report ""
expect_completion "report's options" --svg report --s
expect_completion "diff's options" --table diff --ta
expect_completion "record --emulate's options" --truth record --emulate --tr
expect_completion "--sort's keys" p99 report --sort ""
touch "$T/trace.data"
expect_completion "a FILE argument" "$T/trace.data" report -i "$T/tra"
finish
