# The waits of a wake_fd-like program's "fd-waiter" thread and the actions
# of its main thread that end them, from a truth log (tests/TRUTH.md):
# the k-th wait is the waiter's k-th syscall numbered waits[k] (up to its
# sysret or signal), the k-th action main's k-th syscall numbered acts[k].
# Each wait must end no earlier than its action, and the action must write
# a wake of the waiter one instruction (ns) after it, unless k is in nowake.
# awk -v ns=NS -v waits="NR..." -v acts="NR..." -v names="a/b ..."
#     [-v nowake="K..."] -f wait_action.awk T.truth
BEGIN {
	nw = split(waits, W)
	split(acts, A)
	split(names, N)
	wi = ai = 1
	split(nowake, x)
	for (k in x) nw_ok[x[k]] = 1
}
$1 !~ /^[0-9]+$/ { next }
!m { m = $4 }
$5 == "comm" && $6 == "fd-waiter" { wt = $4 }
!wt { next }
$4 == m && $5 == "syscall" && ai <= nw && $6 == A[ai] { a[ai++] = $1 }
$4 == wt && $5 == "syscall" && wi <= nw && $6 == W[wi] && !open { s[wi] = $1; open = 1 }
$4 == wt && open && ($5 == "sysret" || $5 == "signal") { r[wi++] = $1; open = 0 }
$5 == "wake" && $4 == m && $6 == wt { wk[$1] = 1 }
END {
	if (wi <= nw || ai <= nw) { printf "want %d waits and actions, got %d, %d\n", nw, wi - 1, ai - 1; exit 1 }
	bad = 0
	for (k = 1; k <= nw; k++) {
		if (r[k] < a[k]) { printf "%d %s: the wait ends %.0f ns before its action\n", k, N[k], a[k] - r[k]; bad = 1 }
		if (!(k in nw_ok) && !(sprintf("%.0f", a[k] + ns) in wk)) { printf "%d %s: the action woke no waiter\n", k, N[k]; bad = 1 }
	}
	if (bad) exit 1
	print "each of the " nw " waits ends no earlier than its action, which wakes the waiter" (nowake ? " (but " nowake ")" : "")
}
