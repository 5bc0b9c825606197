"""A copy of a recorded YCSB trace whose set-up fill writes the same blocks in a shuffled order.

    python3 scripts/lib/ycsb_why_shuffle.py TRACE.blkparse.gz WINDOWS OUT.blkparse.gz [SEED]

The fill (`dd` over the whole device, the trace's `fill` window) writes the volume front to
back, so a log lays the volume's first third into the first R-group the front-end filled, its
second third into the next, and so on. The copy gives each of the fill's full-size writes
the address of another, drawn by SEED (default 1); times, sizes, every other line and every
other phase are kept byte for byte. The fill still writes every block once, but each
R-group now holds blocks from all over the volume. Used by scripts/ycsb-why.sh.
"""

import gzip
import random
import re
import sys

trace, windows, out = sys.argv[1:4]
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
fill = next(tuple(map(float, l.split()[1:3])) for l in open(windows) if l.split()[:1] == ["fill"])
# A D line: "maj,min cpu seq time pid D RWBS SECTOR + COUNT [proc]".
write = re.compile(r"^(\s*\S+\s+\S+\s+\S+\s+(\S+)\s+\S+\s+D\s+W\S*\s+)(\d+)(\s+\+\s+(\d+).*)$")
with gzip.open(trace, "rt") as f:
    lines = f.read().split("\n")
slots = []  # (line index, sector) of the fill's writes of the common (largest) size
sizes = {}
for i, l in enumerate(lines):
    m = write.match(l)
    if m and fill[0] <= float(m.group(2)) <= fill[1]:
        slots.append((i, int(m.group(3)), int(m.group(5))))
        sizes[int(m.group(5))] = sizes.get(int(m.group(5)), 0) + 1
common = max(sizes, key=sizes.get)
chosen = [(i, s) for i, s, n in slots if n == common]
sectors = [s for _, s in chosen]
random.Random(seed).shuffle(sectors)
for (i, _), s in zip(chosen, sectors):
    m = write.match(lines[i])
    lines[i] = f"{m.group(1)}{s}{m.group(4)}"
with gzip.open(out, "wt") as f:
    f.write("\n".join(lines))
print(f"{out}: {len(chosen)} fill writes of {common} sectors shuffled (seed {seed}); {len(slots) - len(chosen)} others kept")
