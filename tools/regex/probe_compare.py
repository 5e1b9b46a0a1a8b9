#!/usr/bin/env python3
"""Compares pyregex with the reference `regex` module on every prefix of a text, through the
`probe` example of `crates/pyregex` (build it first):

    cargo build --release -p pyregex --example probe
    /tmp/oracle525/bin/python tools/regex/probe_compare.py PATTERN TEXT [POS]

For each prefix of TEXT it runs the partial search and the plain search from POS (code points;
the pattern compiled with DOTALL) on both sides and prints the prefixes where they differ, then
the number of differing prefixes. `PROBE` names another probe binary (default: the release
build under `CARGO_TARGET_DIR`, else `target/`).
"""
import os
import subprocess
import sys

import regex


def reference(pattern, text, pos):
    r = regex.compile(pattern, regex.DOTALL)
    try:
        m = r.search(text, pos, partial=True)
        if m is None:
            part = "P %d" % len(text)
        elif m.partial:
            part = "P %d" % m.start()
        else:
            part = "C %d %d" % m.span()
    except Exception as e:  # noqa: BLE001 - the reference's own failures are compared too
        part = "E %s" % type(e).__name__
    try:
        m = r.search(text, pos)
        plain = "None" if m is None else "%d %d" % m.span()
    except Exception as e:  # noqa: BLE001
        plain = "E %s" % type(e).__name__
    return part + " | " + plain


def main():
    pattern, text = sys.argv[1], sys.argv[2]
    pos = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    probe = os.environ.get("PROBE", os.path.join(target, "release", "examples", "probe"))
    prefixes = [text[:k] for k in range(pos, len(text) + 1)]
    feed = "".join("%s\t%s\t%d\n" % (pattern.encode().hex(), h.encode().hex(), pos) for h in prefixes)
    ours = subprocess.run([probe], input=feed, capture_output=True, text=True, check=True).stdout.splitlines()
    differ = 0
    for h, o in zip(prefixes, ours):
        ref = reference(pattern, h, pos)
        if ref != o:
            differ += 1
            print("%r: reference %s, pyregex %s" % (h, ref, o))
    print("%d prefixes, %d differ" % (len(prefixes), differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
