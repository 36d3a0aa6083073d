#!/usr/bin/env python3
"""Reads distir-exec --report-resources lines from stdin and checks that
every rank made EXPECTED communicator splits (once per group, not per step)
and that its resident memory after the last step exceeds the first step's
by less than LIMIT_KIB. Prints one summary line or fails with the reason."""
import re
import sys

expected_ranks, expected_splits, limit_kib = map(int, sys.argv[1:4])
pattern = re.compile(
    r"^rank (\d+): (\d+) steps, communicator splits: (\d+), cached "
    r"communicators: (\d+), resident memory after step 1: (\d+) KiB, "
    r"after step \d+: (\d+) KiB$")
ranks = {}
for line in sys.stdin:
    m = pattern.match(line.strip())
    if m:
        ranks[int(m.group(1))] = tuple(map(int, m.groups()[1:]))
if sorted(ranks) != list(range(expected_ranks)):
    sys.exit("FAIL: reports from ranks %s, expected %d ranks" %
             (sorted(ranks), expected_ranks))
growth = 0
for rank, (steps, splits, cached, first, last) in sorted(ranks.items()):
    if splits != expected_splits or cached != expected_splits:
        sys.exit("FAIL: rank %d made %d splits (%d cached) in %d steps, "
                 "expected %d" % (rank, splits, cached, steps,
                                  expected_splits))
    growth = max(growth, last - first)
    if last - first >= limit_kib:
        sys.exit("FAIL: rank %d grew by %d KiB from step 1 to step %d" %
                 (rank, last - first, steps))
print("%d ranks, %d steps: %d communicator splits each, resident growth "
      "below %d KiB" % (expected_ranks, steps, expected_splits, limit_kib))
