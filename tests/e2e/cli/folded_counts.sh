#!/bin/bash
# Folded output's calls and averages equal the table's (issue 11.6): nodes
# that print as the same frame (one name, two functions) are one frame with
# both nodes' calls. Over a real trace (hello_world_userspace.perf, where two
# _start contexts meet), skipped when the shared folder is absent.
. "$E2E_LIB"
real=$SRCDIR/../shared/realtraces/hello_world_userspace.perf
[ -f "$real" ] || { echo "SKIP: $real absent"; exit 77; }
CHECK=$1
"$PTFLAME" report -q -i "$real" >real.folded || fail "report"
"$PTFLAME" report -q -i "$real" --table --by-stack --raw >real.tab || fail "report --table"
if python3 "$CHECK" real.folded real.tab >check.out; then pass "$(tail -1 check.out)"
else fail "folded and table differ: $(head -5 check.out)"; fi
finish
