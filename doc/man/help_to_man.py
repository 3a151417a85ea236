#!/usr/bin/env python3
"""Build step: write a man page (roff) from ptflame's own --help text.

usage: help_to_man.py PTFLAME COMMAND|main VERSION OUTPUT

The help text is the one source of truth for options, so the pages never
fall behind the program: `ptflame --help` becomes ptflame(1), `ptflame CMD
--help` becomes ptflame-CMD(1) (record also gets `record --emulate --help`).
The help text's layout is read as: the "usage:" lines (SYNOPSIS), plain
paragraphs, blocks under a heading line ending in ':' ("options:"), option
lines "  -x, --long ARG   text" with continuation lines indented deeper,
and other indented lines kept as they are (examples). Fixed sections (exit
status, files, see also) are added here."""
import re
import subprocess
import sys

ptflame, command, version, output = sys.argv[1:5]
COMMANDS = ["record", "report", "diff", "dump"]


def run(*args):
    r = subprocess.run([ptflame, *args], capture_output=True, text=True, check=False)
    if r.returncode != 0 or not r.stdout:
        sys.exit("help_to_man.py: '%s %s' failed: %s" % (ptflame, " ".join(args), r.stderr))
    return r.stdout


def esc(s):
    s = s.replace("\\", "\\e")
    return "\\&" + s if s.startswith((".", "'")) else s


OPT = r"(?:--?[A-Za-z0-9][\w-]*|--)"
META = r"(?:[A-Z\[<]\S*|\S*\|\S*)"
SPEC = r"%s(?:[ =]%s)*(?:, %s(?:[ =]%s)*)*" % (OPT, META, OPT, META)
OPTLINE = re.compile(r"^ {1,8}(%s)(?:\s+(.*))?$" % SPEC)


def spec_roff(spec):
    out = []
    for tok in re.split(r"(, | |=)", spec):
        if tok in (", ", " ", "="):
            out.append(tok)
        elif tok.startswith("-"):
            out.append("\\fB" + esc(tok).replace("-", "\\-") + "\\fR")
        elif tok:
            out.append("\\fI" + esc(tok) + "\\fR")
    return "".join(out)


def body(text, commands_block=False):
    """The help text after its usage lines, as roff."""
    out, pre = [], False
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        ind = len(line) - len(line.lstrip())
        if pre and (not line or ind == 0):
            out.append(".fi")
            pre = False
        if not line:
            i += 1
            continue
        m = OPTLINE.match(line) if ind else None
        if ind == 0 and line.endswith(":") and (i == 0 or not lines[i - 1].strip()):
            h = line[:-1]
            out.append(".SS " + esc(h[0].upper() + h[1:]))
            commands_block = h == "commands" and command == "main"
        elif ind == 0:
            para = [line]
            while i + 1 < len(lines) and lines[i + 1].strip() and not lines[i + 1].startswith(" ") \
                    and not lines[i + 1].rstrip().endswith(":"):
                i += 1
                para.append(lines[i].rstrip())
            out.append(".PP")
            out.extend(esc(p) for p in para)
        elif commands_block and re.match(r"^  \w+ +\S", line):
            name, summary = line.split(None, 1)
            out.append(".TP")
            out.append("\\fB%s\\fR" % name + (" (\\fBptflame\\-%s\\fR(1))" % name
                                                 if name in COMMANDS else ""))
            out.append(esc(summary))
        elif m:
            out.append(".TP")
            out.append(spec_roff(m.group(1)))
            desc = [m.group(2)] if m.group(2) else []
            while i + 1 < len(lines) and lines[i + 1].startswith(" " * 9) and \
                    not OPTLINE.match(lines[i + 1]):
                i += 1
                desc.append(lines[i].strip())
            out.extend(esc(d) for d in desc)
        else:
            if not pre:
                out.append(".PP")
                out.append(".nf")
                pre = True
            out.append(esc(line.strip() if ind <= 2 else line[2:]))
        i += 1
    if pre:
        out.append(".fi")
    return out


def split_usage(text):
    lines = text.split("\n")
    usage = []
    while lines and (lines[0].startswith("usage:") or (usage and lines[0].startswith("  ")
                                                       and lines[0].strip().startswith("ptflame"))):
        usage.append(lines.pop(0).replace("usage:", "", 1).strip())
    return usage, "\n".join(lines)


main_help = run("--help")
summaries = dict(re.findall(r"^  (\w+) +(.+)$", main_help.split("commands:")[1].split("\n\n")[0],
                            re.M))
name = "ptflame" if command == "main" else "ptflame-" + command
text = main_help if command == "main" else run(command, "--help")
usage, rest = split_usage(text)
page = ['.\\" generated from "ptflame%s --help" by doc/man/help_to_man.py' %
        ("" if command == "main" else " " + command),
        '.TH %s 1 "" "ptflame %s" "ptflame manual"' % (name.upper().replace("-", "\\-"),
                                                       esc(version)),
        ".nh", ".ad l",
        ".SH NAME",
        "%s \\- %s" % (name.replace("-", "\\-"),
                       esc("wall-clock flame graphs from Intel Processor Trace"
                           if command == "main" else summaries.get(command, command))),
        ".SH SYNOPSIS", ".nf"]
page += [esc(u) for u in usage]
page += [".fi", ".SH DESCRIPTION"]
page += body(rest)
if command == "record":
    eu, erest = split_usage(run("record", "--emulate", "--help"))
    page += [".SH EMULATED RECORDING", ".nf"] + [esc(u) for u in eu] + [".fi"] + body(erest)
if command == "main":
    page += [".SH FILES", ".TP", "\\fBperf.data\\fR",
             "the recording: written by \\fBptflame record\\fR (or \\fBperf record \\-e "
             "intel_pt//u\\fR), read by \\fBreport\\fR, \\fBdiff\\fR and \\fBdump\\fR.",
             ".SH BASH COMPLETION",
             "Completion of commands and options (read from each command's \\fB\\-\\-help\\fR) "
             "is installed as \\fIshare/bash\\-completion/completions/ptflame\\fR."]
page += [".SH EXIT STATUS",
         "0 on success, 1 when the work failed (the message names the problem), 2 for a "
         "usage error (an unknown option or a bad value).",
         ".SH SEE ALSO"]
see = ["ptflame"] + ["ptflame-" + c for c in COMMANDS]
page.append(", ".join("\\fB%s\\fR(1)" % s.replace("-", "\\-") for s in see if s != name) +
            ", \\fBperf\\-intel\\-pt\\fR(1), \\fBperf\\-script\\fR(1); FlameGraph's "
            "\\fBflamegraph.pl\\fR reads the folded output.")
with open(output, "w", encoding="utf-8") as f:
    f.write("\n".join(page) + "\n")
