#!/usr/bin/env python3
"""Reads `dist.task = "stage S forward|backward M"` lines in program order
and prints, per stage, how many forwards run before its first backward."""
import re
import sys

seen = {}
for line in sys.stdin:
    m = re.search(r'stage (\d+) (forward|backward)', line)
    if not m:
        continue
    stage, phase = int(m.group(1)), m.group(2)
    forwards, done = seen.get(stage, (0, False))
    if not done:
        if phase == "forward":
            forwards += 1
        else:
            done = True
    seen[stage] = (forwards, done)
print("forwards before the first backward per stage:",
      " ".join(str(seen[s][0]) for s in sorted(seen)))
