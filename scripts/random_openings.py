#!/usr/bin/env python3
"""Random 15x15 freestyle openings (not judged for balance), for training data.

Each opening is 3 or 5 stones at distinct points of the central 9x9 (offsets -4..4,
alternating colours, Black first), the recipe of ../shared/openings; an opening equal to an
earlier one (as sets of black and of white stones) is drawn again.

    scripts/random_openings.py SEED COUNT OUT

Output: c-gomoku-cli's offset format, one opening a line. The games behind the player's
move-ordering table (weights/README.md) start from seeds 8101 (2 400 openings) and 8102
(4 000).
"""
import random
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    r = random.Random(seed)
    seen = set()
    lines = []
    while len(lines) < count:
        n = r.choice([3, 5])
        pts = set()
        while len(pts) < n:
            pts.add((r.randint(-4, 4), r.randint(-4, 4)))
        pts = list(pts)
        r.shuffle(pts)
        key = (frozenset(pts[0::2]), frozenset(pts[1::2]))
        if key in seen:
            continue
        seen.add(key)
        lines.append(", ".join(f"{x},{y}" for x, y in pts))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
