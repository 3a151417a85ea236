#!/usr/bin/env python3
"""usage: noswitch.py IN OUT

A copy of perf.data file IN without its context switches, as `perf record`
without --switch-events (and without a CPU-wide switch event) writes it:
every SWITCH and SWITCH_CPU_WIDE record of the data section becomes a
record of a type no reader knows (so sizes and the AUXTRACE index's file
offsets stay), which readers skip."""
import struct
import sys

SWITCH, SWITCH_CPU_WIDE, AUXTRACE = 14, 15, 71
UNKNOWN = 0x7ff0


def main(src, dst):
    buf = bytearray(open(src, "rb").read())
    if buf[:8] != b"PERFILE2":
        raise SystemExit("noswitch: %s: not a perf.data file (or a pipe-mode one)" % src)
    off, size = struct.unpack_from("<QQ", buf, 40)
    pos, end, n = off, off + size, 0
    while pos + 8 <= end:
        typ, misc, rsize = struct.unpack_from("<IHH", buf, pos)
        if rsize < 8:
            raise SystemExit("noswitch: bad record at %#x" % pos)
        if typ in (SWITCH, SWITCH_CPU_WIDE):
            struct.pack_into("<I", buf, pos, UNKNOWN)
            n += 1
        nxt = pos + rsize
        if typ == AUXTRACE:
            nxt += struct.unpack_from("<Q", buf, pos + 8)[0]
        pos = nxt
    open(dst, "wb").write(buf)
    print("noswitch: %d switch records hidden" % n)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
