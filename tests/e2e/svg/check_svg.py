#!/usr/bin/env python3
"""Check an SVG flame graph from ptflame against its own folded input.

usage: check_svg.py SVG FOLDED [--width N] [--title TEXT] [--inverted] [--minwidth PX]
       check_svg.py SVG DIFF --diff [--width N]

FOLDED: the folded stacks the graph was drawn from (report -o); frames
narrower than --minwidth PX (default 0.1) are not drawn. DIFF: `ptflame diff` 3-column output of the same two
inputs. Checks, from the XML (parsed here, so it must be well formed):
  - width, title, the embedded script;
  - every frame's value (data-v) is the sum of its stacks in the folded
    file (diff: the after column), frames sit inside their parent;
  - root at the bottom, or at the top with --inverted;
  - diff: red frames grew, blue frames shrank, from the before/after
    columns summed per frame here;
  - otherwise each frame's colour is of its kind's family (flamegraph/svg.c's
    table, restated here): pseudo-frames by name, code by whether a
    "[woken by" frame lies below it (report --wakers: the waker's stack);
    --want-kinds K,K.. also requires frames of those kinds.
Prints ok/FAIL lines; exit 1 when a check failed."""
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
args = sys.argv[1:]
svg_path, data_path = args[0], args[1]
opt = {}
i = 2
while i < len(args):
    if args[i] in ("--width", "--title", "--minwidth", "--want-kinds"):
        opt[args[i]] = args[i + 1]
        i += 2
    else:
        opt[args[i]] = True
        i += 1
fails = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        fails.append(what)


ANN = re.compile(r":\d+(\(inferred\)|,avg:\d+)$")
diff = "--diff" in opt
after, before = {}, {}
for line in open(data_path, encoding="utf-8"):
    parts = line.split()
    if not parts:
        continue
    if diff:
        st, a, b = line.rsplit(" ", 2)
        va, vb = int(a), int(b)
    else:
        st, b = line.rsplit(" ", 1)
        va, vb = 0, int(b)
    frames = st.split(";")
    for k in range(1, len(frames) + 1):
        path = tuple(frames[:k])
        after[path] = after.get(path, 0) + vb
        before[path] = before.get(path, 0) + va

root = ET.parse(svg_path).getroot()
check(root.tag == NS + "svg", "well-formed SVG")
if "--width" in opt:
    check(root.get("width") == opt["--width"], "width %s" % root.get("width"))
title = root.find(".//*[@id='title']")
if "--title" in opt:
    check(title is not None and title.text == opt["--title"], "title %r" % (title.text,))
script = root.find(NS + "script")
check(script is not None and "function zoom" in (script.text or ""), "the script is embedded")

# rebuild each frame's path from levels and offsets
gs = root.findall(".//*[@id='frames']/" + NS + "g")
fr = []
for g in gs:
    t = g.find(NS + "title").text.split("\n")
    r = g.find(NS + "rect")
    fr.append({"name": t[0], "full": g.find(NS + "title").text, "x": int(g.get("data-x")),
               "v": int(g.get("data-v")), "l": int(g.get("data-l")), "y": float(r.get("y")),
               "fill": tuple(int(c) for c in re.findall(r"\d+", r.get("fill")))})
stack, paths, bad = [], {}, []
for f in fr:                               # depth first, parents before children
    del stack[f["l"]:]
    if f["l"] > 0 and (not stack or not (stack[-1]["x"] <= f["x"] and
                                         f["x"] + f["v"] <= stack[-1]["x"] + stack[-1]["v"])):
        bad.append(f["name"])
    stack.append(f)
    path = tuple(g["name"] for g in stack[1:])
    paths[path] = f
check(not bad, "every frame lies inside its parent%s" % (": %s" % bad[:3] if bad else ""))


def plain_path(p):
    return tuple(ANN.sub("", n) for n in p)


# drawn: frames with time at least --minwidth px wide (default 0.1)
minpx = float(opt.get("--minwidth", 0.1))
px = (float(root.get("width")) - 20) / max(after.get((), 0) or sum(
    v for p, v in after.items() if len(p) == 1), 1)
want = {plain_path(p): v for p, v in after.items() if v > 0 and v * px >= minpx}
got = {p: f["v"] for p, f in paths.items() if p}
check(want == got, "frame values are the folded stacks' sums (%d frames)%s" % (
    len(got), "" if want == got else ": e.g. %s" % (next(
        ((p, want.get(p), got.get(p)) for p in set(want) | set(got) if want.get(p) != got.get(p))),)))
lv = {}
for f in fr:
    lv.setdefault(f["l"], f["y"])
if len(lv) > 1:
    up = lv[0] < lv[1]
    check(up == ("--inverted" in opt), "the root is at the %s" % ("top" if up else "bottom"))

if diff:
    wrong = []
    for p, f in paths.items():
        if not p:
            continue
        a, b = before.get(p, 0), after.get(p, 0)
        r, g, bl = f["fill"]
        colour = "red" if r > bl else "blue" if bl > r else "grey"
        exp = "red" if b > a else "blue" if b < a else "grey"
        if colour != exp:
            wrong.append((p[-1], a, b, f["fill"]))
    check(not wrong and len(paths) > 1,
          "diff: red frames grew, blue shrank, grey unchanged (%d frames)%s"
          % (len(paths), ": %s" % wrong[:2] if wrong else ""))
    tips = [f for f in paths.values() if "before " in f["full"] and "change " in f["full"]]
    check(len(tips) == len(paths), "diff: every tooltip has the before value and the change")
else:
    # kind -> (name prefix, base rgb, spread): rgb = base + [0, spread]
    FAMILIES = {
        "code": (None, (205, 60, 0), (50, 170, 55)),
        "[kernel]": ("[kernel]", (0, 165, 150), (40, 35, 35)),
        "[off-cpu]": ("[off-cpu]", (60, 110, 230), (30, 35, 25)),
        "[preempted]": ("[preempted]", (165, 115, 235), (25, 25, 20)),
        "[lost]": ("[lost]", (138, 138, 138), (12, 12, 12)),
        "[unknown]": ("[unknown]", (208, 208, 208), (12, 12, 12)),
        "[untraced]": ("[untraced]", (150, 170, 70), (20, 20, 20)),
        "[woken by": ("[woken by", (0, 150, 140), (20, 20, 20)),
        "waker": (None, (120, 200, 225), (40, 35, 30)),
    }

    def kind_of(path):
        name = path[-1]
        for k, (pre, _, _) in FAMILIES.items():
            if pre and (name == pre or name.startswith(pre + " ")):
                return k
        return "waker" if any(n.startswith("[woken by ") for n in path[:-1]) else "code"

    wrong, seen = [], set()
    for p, f in paths.items():
        if not p:
            continue
        k = kind_of(p)
        seen.add(k)
        _, base, spread = FAMILIES[k]
        if not all(b <= c <= b + d for c, b, d in zip(f["fill"], base, spread)):
            wrong.append((p[-1], k, f["fill"]))
    check(not wrong, "every frame has its kind's colour (%s)%s"
          % (", ".join(sorted(seen)), ": %s" % wrong[:3] if wrong else ""))
    want_kinds = set(opt["--want-kinds"].split(",")) if "--want-kinds" in opt else set()
    check(want_kinds <= seen, "frames of the kinds %s are drawn (%s)"
          % (sorted(want_kinds), sorted(seen)))
    legend = [t.text for t in root.findall(".//*[@id='legend']//" + NS + "text")]
    need = {"waker": "waker's stack", "[woken by": "[woken by ..]"}
    check(all(need[k] in legend for k in seen if k in need),
          "the legend names the waker kinds drawn (%s)" % legend)
    ann = [f for f in fr if f["l"] > 0 and re.search(r"\n\d+ calls?(, avg | \(inferred)", f["full"])]
    check(len(ann) == len(fr) - 1, "every tooltip keeps calls and avg (%d of %d)"
          % (len(ann), len(fr) - 1))

sys.exit(1 if fails else 0)
