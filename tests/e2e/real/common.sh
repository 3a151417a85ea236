# Shared by tests/e2e/real/*.sh: where the real traces are; skip without them.
. "$E2E_LIB"
RT=$SRCDIR/../shared/realtraces
if [ ! -d "$RT" ]; then
	echo "skip: $RT absent (real Intel PT recordings, see the project's README)"
	exit 77
fi
CHECK="python3 $REAL_DIR/real_check.py"
