#!/usr/bin/env python3
"""Build step: turn a text file into a C string constant.

usage: embed_script.py INPUT OUTPUT.c SYMBOL
Writes `const char SYMBOL[] = "...";` (the file's bytes, escaped), so the
SVG writer can embed flamegraph/svg_script.js without a runtime file."""
import sys

src, dst, sym = sys.argv[1:4]
with open(src, encoding="utf-8") as f:
    text = f.read()
if "]]>" in text:
    sys.exit(f"{src}: contains ']]>', which would end the SVG's CDATA section")
out = ["/* generated from %s by embed_script.py: do not edit */" % src.split("/")[-1],
       "const char %s[] =" % sym]
for line in text.splitlines(keepends=True):
    # octal escapes (always 3 digits): quotes, backslashes, '?' (no
    # trigraphs), control and non-ASCII bytes
    esc = "".join("\\%03o" % b if b < 0x20 or b >= 0x7f or b in b'"\\?' else chr(b)
                  for b in line.encode("utf-8"))
    out.append('\t"%s"' % esc)
out.append('\t"";')
with open(dst, "w", encoding="ascii") as f:
    f.write("\n".join(out) + "\n")
