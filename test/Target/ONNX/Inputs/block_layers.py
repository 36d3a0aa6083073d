"""Prints, for each transformer block of an imported program (printed with
--mlir-print-debuginfo), the dist.layer values of its ops:
'<block> <layers>' in order of first appearance.

usage: block_layers.py PROGRAM.mlir
"""
import re
import sys

text = open(sys.argv[1]).read()
names = dict(re.findall(r'^#(loc\d+) = loc\("([^"]*)"', text, re.M))
blocks = {}
for line in text.splitlines():
    layer = re.search(r"dist\.layer = (\d+) : i64", line)
    loc = re.search(r"loc\(#(loc\d+)\)\s*$", line)
    if not layer or not loc:
        continue
    name = names.get(loc.group(1), "")
    block = re.match(r"(.*?layers\.\d+)", name)
    if block:
        blocks.setdefault(block.group(1), set()).add(int(layer.group(1)))
for block, layers in blocks.items():
    print(block, sorted(layers))
