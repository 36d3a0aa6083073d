#!/usr/bin/env python3
"""Reads `dist.task = "stage S forward|backward M"` lines in program order
and prints each stage's task sequence, e.g. `stage 0: F0 F1 B0 B1`."""
import re
import sys

order = {}
for line in sys.stdin:
    m = re.search(r'stage (\d+) (forward|backward) (\d+)', line)
    if not m:
        continue
    stage, task = int(m.group(1)), m.group(2)[0].upper() + m.group(3)
    tasks = order.setdefault(stage, [])
    if not tasks or tasks[-1] != task:
        tasks.append(task)
for stage in sorted(order):
    print(f"stage {stage}: " + " ".join(order[stage]))
