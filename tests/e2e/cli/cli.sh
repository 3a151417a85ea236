#!/bin/bash
# The CLI contract: help, version, unknown commands and options.
. "$E2E_LIB"

expect_rc 0 "--help exits 0" -- "$PTFLAME" --help
expect_grep '^usage: ptflame' "$T/out" "--help prints usage on stdout"
for c in record report diff dump; do
	expect_grep "^  $c " "$T/out" "--help lists $c"
done
for c in record report diff dump; do
	expect_rc 0 "help $c" -- "$PTFLAME" help $c
	expect_grep "usage: ptflame $c" "$T/out" "help $c prints its usage"
	expect_rc 0 "$c --help" -- "$PTFLAME" $c --help
	expect_grep "usage: ptflame $c" "$T/out" "$c --help prints its usage"
done
expect_rc 0 "--version" -- "$PTFLAME" --version
expect_grep '^ptflame [0-9]+\.[0-9]+\.[0-9]+$' "$T/out" "--version prints a version"

expect_rc 2 "unknown command" -- "$PTFLAME" frobnicate
expect_lines 1 "$T/err" "unknown command: one line"
expect_grep "'frobnicate' is not a ptflame command.*--help" "$T/err" "unknown command is named, with a hint"
expect_rc 2 "unknown global option" -- "$PTFLAME" --frob
expect_grep "unknown option '--frob'" "$T/err" "unknown global option is named"
expect_rc 2 "help for unknown command" -- "$PTFLAME" help frobnicate
expect_rc 2 "no command" -- "$PTFLAME"
for c in report diff dump; do
	expect_rc 2 "$c unknown option" -- "$PTFLAME" $c --no-such-option
	expect_lines 1 "$T/err" "$c unknown option: one line"
	expect_grep "ptflame $c: unknown option '--no-such-option'.*ptflame $c --help" "$T/err" "$c names the unknown option"
done
finish
