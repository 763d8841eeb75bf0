#!/usr/bin/env python3
"""Drop-in replacement for the predecessor's scripts/verification.py.

Every call is handed to `baton verification` with its arguments unchanged
(the predecessor's short -s and -f for --session-id and --feature-ids are
spelled out: baton's -f names a state file), so prompts that say
`python3 scripts/verification.py prepare ...` get the same folders and files.
Set BATON to the binary's path if `baton` is not on PATH.
"""
import os
import sys

binary = os.environ.get("BATON", "baton")
args = []
for arg in sys.argv[1:]:
    for short, long in (("-f", "--feature-ids"), ("-s", "--session-id")):
        if arg == short:
            arg = long
        elif arg.startswith(short) and not arg.startswith("--"):
            arg = long + "=" + arg[2:].lstrip("=")
    args.append(arg)
try:
    os.execvp(binary, [binary, "verification"] + args)
except OSError as err:
    sys.stderr.write("ERROR: cannot run %s (%s); install baton or set BATON to its path\n" % (binary, err))
    sys.exit(1)
