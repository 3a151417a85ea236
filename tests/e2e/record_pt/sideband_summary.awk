# Reduce `perf script --show-task-events --show-mmap-events
# --show-switch-events` output of a sideband_switch recording to its
# structure, without pids or times: which comms, executable mappings, and
# which threads (labelled main / sb-one / sb-two / child) forked, exited
# and have context-switch records of their own.
# Lines look like: "COMM TID [CPU] TIME: PERF_RECORD_X ...".
function label(t) {
	if (t == main) return "main"
	if (kind[t] == "proc") return "child"
	if (t in name) return name[t]
	return "thread?"
}
/PERF_RECORD_COMM exec: / && !main {
	split($0, a, "PERF_RECORD_COMM exec: "); split(a[2], b, ":"); split(b[2], c, "/")
	main = c[1]; target[main] = 1; comm[b[1]] = 1; next
}
/PERF_RECORD_COMM: / {
	split($0, a, "PERF_RECORD_COMM: "); n = split(a[2], b, ":"); split(b[n], c, "/")
	if (c[2] in target) { name[c[2]] = b[1]; comm[b[1]] = 1 }
	next
}
/PERF_RECORD_FORK\(/ {
	match($0, /FORK\([0-9]+:[0-9]+\):\([0-9]+:[0-9]+\)/)
	s = substr($0, RSTART + 5, RLENGTH - 5); gsub(/[()]/, "", s); gsub(/:/, " ", s)
	split(s, f, " ")   # pid tid ppid ptid
	if (f[4] in target) {
		target[f[2]] = 1; kind[f[2]] = (f[1] == f[3]) ? "thread" : "proc"
		forked[f[2]] = 1
	}
	next
}
/PERF_RECORD_EXIT\(/ {
	match($0, /EXIT\([0-9]+:[0-9]+\)/); s = substr($0, RSTART + 5, RLENGTH - 6)
	split(s, f, ":"); if (f[2] in target) exited[f[2]] = 1
	next
}
/PERF_RECORD_MMAP2 / {
	if ($0 ~ /: r-xp /) { sub(/.*: r-xp /, ""); mmap[$0] = 1 }
	next
}
/PERF_RECORD_SWITCH/ {
	for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9-]+\]$/) break
	t = $(i - 1); if (t in target) sw[t] = 1
	next
}
END {
	for (k in comm) print "comm " k
	for (m in mmap) print "mmap " m
	for (t in forked) print "fork " label(t)
	for (t in exited) print "exit " label(t)
	for (t in sw) print "switch " label(t)
}
