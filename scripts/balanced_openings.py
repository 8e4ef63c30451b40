#!/usr/bin/env python3
"""Random balanced 15x15 freestyle openings, judged by another Gomocup brain (Rapfi).

Each candidate is 3 or 5 stones at distinct points of the central 9x9 (offsets -4..4,
alternating colours, Black first), the recipe of ../shared/openings; a brain searches it for
T seconds as the side to move (White) and the opening is kept when the evaluation it reports
(`MESSAGE ... Eval N`, Rapfi's format) is within +-LIMIT. Openings equal (as sets of black
and of white stones) to one in an EXCLUDE file, or drawn twice, are skipped.

    scripts/balanced_openings.py SEED COUNT OUT [T [LIMIT [EXCLUDE...]]]

Output: c-gomoku-cli's offset format, one opening a line. The brain is $RAPFI (run in its
own folder, so that Rapfi finds its config.toml; docs/players.md says how to build it).
docs/data/gauntlet/openings15-bal-7005.txt is seeds 7005 and 7006, 250 each, T 0.5, LIMIT 80
(made before a brain error restarted the brain; the file, not a rerun, is the gate set).
"""
import os
import random
import sys

from gomocup_brain import Brain


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    t = float(sys.argv[4]) if len(sys.argv) > 4 else 0.5
    limit = int(sys.argv[5]) if len(sys.argv) > 5 else 80
    brain_path = os.environ.get("RAPFI") or sys.exit("set RAPFI to the brain's path")

    def key(points):
        return (frozenset(points[0::2]), frozenset(points[1::2]))

    excluded = set()
    for path in sys.argv[6:]:
        for line in open(path):
            v = [int(x) for x in line.replace(" ", "").strip().split(",") if x]
            if v:
                excluded.add(key([(v[i], v[i + 1]) for i in range(0, len(v), 2)]))

    brain = Brain(brain_path, int(t * 1000))
    rng = random.Random(seed)
    square = [(x, y) for x in range(-4, 5) for y in range(-4, 5)]
    seen, kept, tried = set(), 0, 0
    with open(out, "w") as fo:
        while kept < count:
            pts = rng.sample(square, rng.choice([3, 5]))
            k = key(pts)
            if k in excluded or k in seen:
                continue
            seen.add(k)
            tried += 1
            try:
                # White is to move; a mate (0 here: none) is not balanced.
                ev = brain.evaluate([(x + 7, y + 7) for x, y in pts], 0)
            except RuntimeError:
                brain.restart()
                continue
            if ev is not None and abs(ev) <= limit:
                fo.write(", ".join(f"{x},{y}" for x, y in pts) + "\n")
                fo.flush()
                kept += 1
    print(f"tried {tried}, kept {kept}", file=sys.stderr)
    brain.send("END")


if __name__ == "__main__":
    main()
