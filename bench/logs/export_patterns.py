#!/usr/bin/env python3
"""Reads `ccdiag logs --list-signatures --json` on stdin and writes the same
patterns for ripgrep (patterns.rg: Rust regex, groups made non-capturing) and GNU
grep -E (patterns.ere: POSIX ERE + GNU escapes) into DIR. Kernel signatures
with a dedicated parser keep their literal prefilter pattern."""
import json
import os
import re
import sys

out = sys.argv[1]
sigs = json.load(sys.stdin)
rg, ere = [], []
for s in sigs:
    p = s["pattern"]
    rg.append(re.sub(r"\(\?P<\w+>", "(?:", p))  # rg joins patterns with |: group names would clash
    e = re.sub(r"\(\?P<\w+>", "(", p).replace("(?:", "(")
    e = e.replace(r"\d", "[0-9]").replace("*?", "*").replace("+?", "+").replace("??", "?")
    ere.append(e)
with open(os.path.join(out, "patterns.rg"), "w") as f:
    f.write("\n".join(rg) + "\n")
with open(os.path.join(out, "patterns.ere"), "w") as f:
    f.write("\n".join(ere) + "\n")
