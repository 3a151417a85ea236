#!/bin/bash
. "$REAL_DIR/common.sh"
finish
