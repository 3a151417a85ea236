#!/usr/bin/env python3
"""Per-frame distributions and the table for scripts (issue 14.3).

usage: distrib_check.py SVG TABLE RAW CSV JSON

TABLE: `report --table` text, RAW: `--table --raw`, CSV and JSON: `--table
--format csv|json` of the same recording and options.
- CSV and JSON parse; their rows, in order, are RAW's rows with equal values
  (an unknown "-" is empty in CSV, null in JSON).
- In the SVG, every frame whose function name is on no other frame (so the
  frame holds all of that function's calls) has a tooltip whose calls,
  avg, p50, p90, p99 and max are TABLE's for that function, and one
  histogram line with a block per log2 bucket that starts at its min and
  ends at its max. At least 3 frames are compared.
"""
import csv
import html
import json
import re
import sys

COLS = ["calls", "inferred", "total_ns", "self_ns", "avg_ns", "p50_ns", "p90_ns", "p99_ns",
        "max_ns"]


def table_rows(path):
    rows = []
    with open(path) as fh:
        for ln in fh:
            if ln.startswith("#") or not ln.strip() or set(ln.split()[0]) <= set("=") \
                    or ln.split()[0] == "Calls":
                continue
            f = ln.rstrip("\n").split("  ")
            f = [x.strip() for x in f if x.strip()]
            rows.append(f)
    return rows


def raw_rows(path):
    out = []
    with open(path) as fh:
        for ln in fh:
            m = re.match(r"^\s*((?:\S+\s+){9})(.*)$", ln.rstrip("\n"))
            if not m or ln.lstrip().startswith(("Calls", "=")) or ln.startswith("#"):
                continue
            vals = m.group(1).split()
            out.append((m.group(2), [None if v == "-" else int(v) for v in vals]))
    return out


def main(argv):
    svg, table, raw, csvf, jsonf = argv[1:6]
    want = raw_rows(raw)
    with open(csvf, newline="") as fh:
        got = list(csv.DictReader(fh))
    if len(got) != len(want):
        raise SystemExit("csv: %d rows, the table has %d" % (len(got), len(want)))
    for g, (name, vals) in zip(got, want):
        if g["function"] != name or [None if g[c] == "" else int(g[c]) for c in COLS] != vals:
            raise SystemExit("csv: row %r differs from the table's %r %r" % (g, name, vals))
    with open(jsonf) as fh:
        doc = json.load(fh)
    if len(doc["rows"]) != len(want):
        raise SystemExit("json: %d rows, the table has %d" % (len(doc["rows"]), len(want)))
    for g, (name, vals) in zip(doc["rows"], want):
        if g["function"] != name or [g[c] for c in COLS] != vals:
            raise SystemExit("json: row %r differs from the table's %r %r" % (g, name, vals))

    # the text table: name -> [calls, inferred, total, self, avg, p50, p90, p99, max]
    fmt = {}
    with open(table) as fh:
        for ln in fh:
            m = re.match(r"^\s*(\d+)\s+(\d+)\s+(.*)$", ln.rstrip("\n"))
            if not m:
                continue
            cells = re.findall(r"(-|[0-9.]+ (?:ns|µs|ms|s))\s+", m.group(3) + " ")
            rest = m.group(3)
            for c in cells:
                rest = rest[rest.index(c) + len(c):]
            fmt[rest.strip()] = [m.group(1), m.group(2)] + cells[:7]
    with open(svg) as fh:
        text = fh.read()
    titles = [html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", text, re.S)]
    frames = {}
    for t in titles:
        lines = t.split("\n")
        frames.setdefault(lines[0], []).append(lines)
    checked = 0
    for name, fl in frames.items():
        if len(fl) != 1 or name not in fmt:
            continue
        lines = fl[0]
        row = fmt[name]
        calls = re.match(r"^(\d+) calls?, avg (.*)$", lines[2]) if len(lines) > 2 else None
        if not calls or row[4] == "-":
            continue
        if calls.group(1) != row[0] or calls.group(2) != row[4]:
            raise SystemExit("svg: %s: %s; the table: %s calls, avg %s" % (
                name, lines[2], row[0], row[4]))
        want_p = "p50 %s, p90 %s, p99 %s, max %s" % tuple(row[5:9])
        if len(lines) < 5 or lines[3] != want_p:
            raise SystemExit("svg: %s: %r; the table: %r" % (name, lines[3:4], want_p))
        h = re.match(r"^(.*? (?:ns|µs|ms|s)) ([\u2581-\u2588\u2007]+) (.*) \(log2 buckets\)$",
                     lines[4])
        if not h or h.group(3) != row[8] or h.group(2)[0] == "\u2007" or \
                h.group(2)[-1] == "\u2007" or "\u2588" not in h.group(2):
            raise SystemExit("svg: %s: histogram line %r" % (name, lines[4]))
        checked += 1
    if checked < 3:
        raise SystemExit("svg: only %d frames to compare" % checked)
    print("csv and json: %d rows equal to the table; svg: %d frames' distributions equal "
          "to the table's" % (len(want), checked))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
