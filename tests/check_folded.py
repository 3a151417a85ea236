#!/usr/bin/env python3
"""Check folded-stack files against flamegraph.pl's input grammar.

usage: check_folded.py [--annotated] [--allow-empty] FILE...
       check_folded.py --self-test

Each line must be `frame;frame;... VALUE`: a non-empty stack of non-empty
frames separated by ';', one space, a decimal integer. No control
characters, and no frame may end in whitespace (so none ends in
"whitespace digits", which flamegraph.pl / difffolded.pl would read as an
extra value column). Same rules as fg_folded_line_valid() in
flamegraph/flamegraph.h.

--annotated also checks ptflame's annotated frames: every frame is
`name:CALLS(inferred)` or `name:CALLS,avg:NS`, except a first frame that is
a bare thread root (`comm-tid`, from --per-thread) and the bare "[unknown]"
pseudo-frame.

Exit status 0 when every line of every file is valid, 1 otherwise (each bad
line is printed as FILE:LINE: reason), 2 on usage errors.
"""
import re
import sys

VALUE = re.compile(r"[0-9]+")
ANNOTATED = re.compile(r".+:[0-9]+(\(inferred\)|,avg:[0-9]+)")
BAD_END = re.compile(r"\s(?:[0-9]+(?:\.[0-9]*)?)?\Z")
THREAD_ROOT = re.compile(r".*-[0-9]+")


def line_error(line, annotated):
    """Why the line (without its newline) is not valid folded, or None."""
    if not line:
        return "empty line"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in line):
        return "control character"
    stack, sep, value = line.rpartition(" ")
    if not sep or not stack:
        return "no 'stack value' separator"
    if not VALUE.fullmatch(value):
        return "value is not a decimal integer: %r" % value
    frames = stack.split(";")
    for i, frame in enumerate(frames):
        if not frame:
            return "empty frame %d" % (i + 1)
        if BAD_END.search(frame):
            return "frame %d ends in whitespace (or whitespace number): %r" % (i + 1, frame)
        if annotated and not ANNOTATED.fullmatch(frame):
            if frame != "[unknown]" and not (
                    i == 0 and len(frames) > 1 and THREAD_ROOT.fullmatch(frame)):
                return "frame %d is not annotated: %r" % (i + 1, frame)
    return None


def check_file(path, annotated, allow_empty):
    bad = 0
    n = 0
    with open(path, "r", encoding="utf-8", errors="surrogateescape") as f:
        for n, raw in enumerate(f, 1):
            if not raw.endswith("\n"):
                print("%s:%d: no newline at end of file" % (path, n))
                bad += 1
            err = line_error(raw[:-1] if raw.endswith("\n") else raw, annotated)
            if err:
                print("%s:%d: %s" % (path, n, err))
                bad += 1
    if n == 0 and not allow_empty:
        print("%s: no lines" % path)
        bad += 1
    return bad


def self_test():
    good = ["a 1", "a;b 0", "[kernel] futex:1,avg:5 3", "x 12:1(inferred) 4",
            "ns::f(int) const 9", "app-1;main 40"]
    bad = ["", "a", "a 1x", " 1", "a;;b 1", ";a 1", "a; 1", "a;b 12 5", "a\tb 1",
           "a 1 ", "a;b  5", "a 1.5", "a;b 1.5 5"]
    good_ann = ["app-1;main:1(inferred);a:2,avg:10 5", "main:1(inferred) 3",
                "app-1;[unknown] 2",
                "[kernel] futex:2,avg:42 1"]
    bad_ann = ["main 3", "main:1;a:1,avg:2 3", "app-1 3", "main:1(inferred);x-1 4"]
    fails = [l for l in good if line_error(l, False)]
    fails += [l for l in bad if not line_error(l, False)]
    fails += [l for l in good_ann if line_error(l, True)]
    fails += [l for l in bad_ann if not line_error(l, True)]
    for l in fails:
        print("self-test: wrong verdict for %r" % l)
    return 1 if fails else 0


def main(argv):
    annotated = "--annotated" in argv
    allow_empty = "--allow-empty" in argv
    if "--self-test" in argv:
        return self_test()
    files = [a for a in argv if not a.startswith("--")]
    unknown = [a for a in argv if a.startswith("--") and a not in ("--annotated", "--allow-empty")]
    if unknown or not files:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    bad = 0
    for path in files:
        try:
            bad += check_file(path, annotated, allow_empty)
        except OSError as e:
            print("%s: %s" % (path, e.strerror))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
