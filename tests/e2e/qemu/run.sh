#!/bin/bash
# Run another area's e2e script (tests/e2e/AREA/NAME.sh, $1) on the qemu
# backend of record --emulate (the meson env sets PTFLAME_EMULATE=qemu), so
# that both backends pass the same checks. Skips without qemu-user.
command -v qemu-x86_64 >/dev/null ||
	{ echo "qemu-x86_64 not installed (apt-get install qemu-user): skipped"; exit 77; }
exec bash "$SRCDIR/tests/e2e/$1"
