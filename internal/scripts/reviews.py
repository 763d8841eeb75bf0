#!/usr/bin/env python3
"""Drop-in replacement for the predecessor's scripts/reviews.py.

Every call is handed to `baton reviews` with its arguments unchanged, so prompts
that say `python3 scripts/reviews.py ...` get baton's locked, validated answer.
Set BATON to the binary's path if `baton` is not on PATH.
"""
import os
import sys

binary = os.environ.get("BATON", "baton")
try:
    os.execvp(binary, [binary, "reviews"] + sys.argv[1:])
except OSError as err:
    sys.stderr.write("ERROR: cannot run %s (%s); install baton or set BATON to its path\n" % (binary, err))
    sys.exit(1)
