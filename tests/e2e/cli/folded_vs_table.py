#!/usr/bin/env python3
"""Every frame of annotated folded output carries the calls and average of
its calling context as `report --table --by-stack --raw` counts them.
usage: folded_vs_table.py FOLDED TABLE"""
import re
import sys

ANNOT = re.compile(r"^(.*):([0-9]+)(\(inferred\)|,avg:([0-9]+))$")

table = {}
with open(sys.argv[2]) as fh:
    for line in fh:
        f = line.split()
        if len(f) < 10 or not f[0].isdigit():
            continue
        path = line.split(None, 9)[9].rstrip("\n")
        table[path] = (int(f[0]), f[4])

bad = checked = 0
seen = {}
with open(sys.argv[1]) as fh:
    for line in fh:
        stack = line.rstrip("\n").rpartition(" ")[0]
        plain = []
        for fr in stack.split(";"):
            m = ANNOT.match(fr)
            plain.append(m.group(1) if m else fr)
            if not m:
                continue
            key = ";".join(plain)
            calls, avg = int(m.group(2)), m.group(4)
            if seen.setdefault(key, (calls, avg)) != (calls, avg):
                print("%s: printed two ways" % key)
                bad += 1
            if key not in table:
                print("%s: not in the table" % key)
                bad += 1
                continue
            tcalls, tavg = table[key]
            checked += 1
            if tcalls != calls or (avg is not None and tavg.isdigit() and abs(int(tavg) - int(avg)) > 1):
                print("%s: folded %d calls avg %s, table %d calls avg %s" % (key, calls, avg, tcalls, tavg))
                bad += 1
print("%d frames checked, %d differ" % (len(seen), bad))
sys.exit(1 if bad or not checked else 0)
