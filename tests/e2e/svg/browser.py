#!/usr/bin/env python3
"""Drive ptflame's SVG flame graph in headless Chromium and check what it shows.

usage: browser.py SVG FOLDED SCREENSHOT_DIR

SVG was drawn by `ptflame report --svg SVG --minwidth 0 -o FOLDED` (so every
frame with time is in the SVG). Expected values come from FOLDED, read here on
its own: frame names, shares, which frames a search matches. Checks:
  - every label fits its frame (the width Chromium measures), and frames wide
    enough for a label have one;
  - the legend names every frame kind present, kinds have clearly different
    colours;
  - a click on a frame zooms: it spans the full width, its ancestors too,
    frames outside its subtree are hidden, its children scale with it;
  - Search (a prompt) highlights exactly the matching frames and shows the
    matched share of the whole graph;
  - Reset Zoom and Reset Search restore the graph.
Screenshots go to SCREENSHOT_DIR (svg-zoomed-search.png, svg-full.png).
Exit 0 ok, 1 a check failed, 77 no Chromium / chromedriver / selenium."""
import os
import re
import shutil
import sys
import tempfile

SKIP = 77


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    skip("python3-selenium is not installed (scripts/setup.sh installs it)")

CHROME = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not CHROME or not DRIVER:
    skip("chromium or chromedriver is not installed (scripts/setup.sh installs them)")

svg_path, folded_path, shots = sys.argv[1:4]
FAILS = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        FAILS.append(what)


ANN = re.compile(r":\d+(\(inferred\)|,avg:\d+)$")


def plain(frame):
    return ANN.sub("", frame)


stacks = []
for line in open(folded_path, encoding="utf-8"):
    line = line.rstrip("\n")
    if not line:
        continue
    st, v = line.rsplit(" ", 1)
    stacks.append(([plain(f) for f in st.split(";")], int(v)))
total = sum(v for _, v in stacks)
names = {f for st, v in stacks if v > 0 for f in st}    # frames without time: not drawn
KINDS = ["[kernel]", "[off-cpu]", "[preempted]", "[lost]", "[unknown]", "[untraced]"]


def kind(name):
    for k in KINDS:
        if name == k or name.startswith(k + " "):
            return k
    return "on-CPU code"


profile = tempfile.mkdtemp(prefix="ptflame-chromium.")
opts = webdriver.ChromeOptions()
opts.binary_location = CHROME
for a in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--disable-dev-shm-usage", "--user-data-dir=" + profile, "--window-size=1300,900"]:
    opts.add_argument(a)
try:
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
except Exception as e:  # a browser that cannot start here is not a test failure
    shutil.rmtree(profile, ignore_errors=True)
    skip("chromium did not start: %s" % str(e).splitlines()[0])

JS_FRAMES = """
return window.ptflame.frames.map(function (f) {
  var hidden = getComputedStyle(f.g).display == 'none';
  return { name: f.name, x: f.x, v: f.v, l: f.l, hidden: hidden,
           rx: +f.r.getAttribute('x'), rw: +f.r.getAttribute('width'),
           fill: getComputedStyle(f.r).fill, label: f.t.textContent,
           tw: hidden ? 0 : f.t.getComputedTextLength() };
});"""


def frames():
    return drv.execute_script(JS_FRAMES)


def rgb(s):
    return tuple(int(c) for c in re.findall(r"\d+", s)[:3])


try:
    drv.get("file://" + os.path.abspath(svg_path))
    WebDriverWait(drv, 20).until(lambda d: d.execute_script("return !!window.ptflame"))
    width = float(drv.find_element(By.ID, "ptflame").get_attribute("width"))
    W = width - 20                      # both side paddings
    fr = frames()
    check(len(fr) > 10, "the SVG has %d frames" % len(fr))
    check({f["name"] for f in fr if f["l"] > 0} == names,
          "the frames are the folded file's functions (%d names)" % len(names))
    cw = drv.execute_script("return fg_cfg.cw")

    def labels_fit(fr, when):
        bad = [f for f in fr if not f["hidden"] and f["label"] and f["tw"] > f["rw"] - 3 + 0.01]
        check(not bad, "%s: every label fits its frame%s" % (when, "" if not bad else
              ": %s is %.1f px in %.1f px" % (bad[0]["label"], bad[0]["tw"], bad[0]["rw"])))
        missing = [f for f in fr if not f["hidden"] and f["rw"] - 6 >= 3 * cw and not f["label"]]
        check(not missing, "%s: frames with room for a label have one" % when)
        cut = [f for f in fr if f["label"].endswith("..")]
        check(all(f["name"].startswith(f["label"][:-2]) for f in cut),
              "%s: cut labels (%d) are the name's start and '..'" % (when, len(cut)))

    labels_fit(fr, "whole graph")

    # legend and colours
    legend = drv.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#legend text'),"
        " function (t) { return t.textContent; });")
    present = {kind(n) for n in names}
    check(present <= set(legend), "the legend names every kind present: %s (legend: %s)"
          % (sorted(present), legend))
    by_kind = {}
    for f in fr:
        if f["l"] > 0:
            by_kind.setdefault(kind(f["name"]), []).append(rgb(f["fill"]))
    ks = sorted(by_kind)
    close = [(a, b) for i, a in enumerate(ks) for b in ks[i + 1:]
             if min(sum((p - q) ** 2 for p, q in zip(x, y)) ** 0.5
                    for x in by_kind[a] for y in by_kind[b]) < 60]
    check(not close, "frame kinds %s have clearly different colours%s"
          % (ks, "" if not close else ": too close: %s" % close))

    # zoom: a frame below the root with children, not full width
    kids = {}
    for f in fr:
        kids.setdefault(f["l"], []).append(f)
    cands = [f for f in fr if f["l"] >= 2 and f["v"] < total * 0.9 and f["rw"] > 20 and
             any(c["l"] == f["l"] + 1 and f["x"] <= c["x"] < f["x"] + f["v"] for c in fr)]
    check(bool(cands), "a frame to zoom into")
    z = max(cands, key=lambda f: f["rw"])
    idx = fr.index(z)
    el = drv.execute_script("return window.ptflame.frames[%d].r" % idx)
    ActionChains(drv).move_to_element(el).click().perform()
    fz = frames()
    zf = fz[idx]
    check(abs(zf["rw"] - W) < 0.2 and abs(zf["rx"] - 10) < 0.2,
          "clicked %s (%.1f px): it spans the full width (%.1f px at x %.1f)"
          % (z["name"], z["rw"], zf["rw"], zf["rx"]))
    inside = lambda f: f["l"] >= z["l"] and z["x"] <= f["x"] and f["x"] + f["v"] <= z["x"] + z["v"]
    above = lambda f: f["l"] < z["l"] and f["x"] <= z["x"] and f["x"] + f["v"] >= z["x"] + z["v"]
    check(all(abs(f["rw"] - W) < 0.2 for f in fz if above(f) and not f["hidden"]) and
          all(not f["hidden"] for f in fz if above(f)), "its ancestors span the full width")
    check(all(f["hidden"] for f in fz if not inside(f) and not above(f)),
          "frames outside its subtree are hidden")
    sub = [f for f in fz if inside(f) and f is not zf]
    check(sub and all(abs(f["rw"] - f["v"] / z["v"] * W) < 0.2 for f in sub if not f["hidden"]),
          "its %d descendants scale by %.1fx" % (len(sub), W / max(z["rw"], 1e-9)))
    labels_fit(fz, "zoomed")
    check(drv.find_element(By.ID, "unzoom").value_of_css_property("opacity") == "1",
          "Reset Zoom shows while zoomed")

    # search: two names, one called under the other (a match inside a
    # match counts once), the inner one the name in the most stacks
    code = [n for n in names if kind(n) == "on-CPU code"]
    lines = {n: sum(1 for st, v in stacks if v > 0 and n in st) for n in code}
    pairs = {(st[i], st[j]) for st, v in stacks if v > 0 for i in range(1, len(st))
             for j in range(i + 1, len(st)) if st[i] != st[j] and
             kind(st[i]) == kind(st[j]) == "on-CPU code"}
    outer, inner = max(pairs, key=lambda p: (lines[p[1]], lines[p[0]], p))
    term = "^(%s|%s)$" % (re.escape(outer), re.escape(inner))
    rx = re.compile(term)
    want = 100.0 * sum(v for st, v in stacks if any(rx.search(n) for n in st)) / total
    drv.find_element(By.ID, "search").click()
    WebDriverWait(drv, 10).until(lambda d: d.switch_to.alert)
    alert = drv.switch_to.alert
    alert.send_keys(term)
    alert.accept()
    matched = drv.find_element(By.ID, "matched").text
    got = re.search(r"Matched: ([\d.]+)%", matched)
    check(got is not None and abs(float(got.group(1)) - want) <= 0.0051,
          "search %r: shows '%s', the folded file says %.4f%%" % (term, matched, want))
    fs = frames()
    hl = [f for f in fs if rgb(f["fill"]) == (230, 0, 230)]
    check({f["name"] for f in hl} == {n for n in names if rx.search(n)} and
          all(rx.search(f["name"]) for f in hl),
          "search highlights exactly the %d matching frames" % len(hl))
    os.makedirs(shots, exist_ok=True)
    drv.save_screenshot(os.path.join(shots, "svg-zoomed-search.png"))

    # resets
    drv.find_element(By.ID, "unzoom").click()
    fr2 = frames()
    check(all(not f["hidden"] and abs(f["rw"] - a["rw"]) < 0.11 and abs(f["rx"] - a["rx"]) < 0.11
              for f, a in zip(fr2, fr)), "Reset Zoom restores every frame")
    check(drv.find_element(By.ID, "unzoom").value_of_css_property("opacity") == "0",
          "Reset Zoom hides again")
    drv.find_element(By.ID, "search").click()
    check(drv.find_element(By.ID, "matched").text == "" and
          not [f for f in frames() if rgb(f["fill"]) == (230, 0, 230)],
          "Reset Search clears the highlight and the matched share")
    drv.save_screenshot(os.path.join(shots, "svg-full.png"))
    errs = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]
    check(not errs, "no script errors%s" % ("" if not errs else ": %s" % errs[0]["message"]))
finally:
    drv.quit()
    shutil.rmtree(profile, ignore_errors=True)

if FAILS:
    print("%d check(s) failed" % len(FAILS), file=sys.stderr)
    sys.exit(1)
