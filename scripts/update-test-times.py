#!/usr/bin/python3
"""Writes test/.lit_test_times.txt from the times lit recorded in the build
trees (build/ and build-asan/, summed per test).

lit runs the slowest tests first when it knows their times; a fresh build
tree (CI's clean clone) has none, and lit then reads this file from the
source tree instead. Without it the longest tests may start last and
lengthen the run. Regenerate it after adding or changing slow tests:

    scripts/update-test-times.py [BUILD_DIR...]
"""
import os
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
builds = sys.argv[1:] or [os.path.join(root, "build"),
                          os.path.join(root, "build-asan")]
total = {}
for build in builds:
    path = os.path.join(build, "test", ".lit_test_times.txt")
    if not os.path.exists(path):
        continue
    for line in open(path):
        time, name = line.split(maxsplit=1)
        name = name.strip()
        # Failed tests are recorded with negative times.
        total[name] = total.get(name, 0.0) + abs(float(time))
names = [n for n in total if os.path.exists(os.path.join(root, "test", n))]
with open(os.path.join(root, "test", ".lit_test_times.txt"), "w") as out:
    for name in sorted(names, key=lambda n: (-total[n], n)):
        out.write("%.1f %s\n" % (total[name], name))
print("%d tests" % len(names))
