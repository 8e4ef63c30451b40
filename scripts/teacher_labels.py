#!/usr/bin/env python3
"""Positions of c-gomoku-cli games labelled with another brain's evaluation (Rapfi), for
`examples/tune_eval.rs` (files ending in `.labels`).

Every position of every 15x15 freestyle game in the SGF files from the end of the opening on
(the last move excluded) is searched by the brain for MS milliseconds as the side to move; the
evaluation it reports (`MESSAGE ... Eval N`, Rapfi's format, the side to move's view) is
written after the position's moves:

    hhgigj... -37

A reported mate (`+M7` / `-M7`) is written as +-MATE (default 1000; 0 leaves such positions
out). Games are dealt round-robin to SHARDS so that several copies can run side by side:

    scripts/teacher_labels.py OUT MS SHARD SHARDS GAMES.sgf... [--mate N]

The brain is $RAPFI, run in its own folder. Rapfi now and then answers a `BOARD` line with
`ERROR Unknown command` (rare with `gomocup_brain`'s pause after each answer); such a
position is dropped and the brain restarted.
"""
import os
import sys

from gomocup_brain import Brain, letters, sgf_games


def main():
    args = sys.argv[1:]
    mate = 1000
    if "--mate" in args:
        i = args.index("--mate")
        mate = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 5:
        sys.exit(__doc__)
    out, ms, shard, shards = args[0], int(args[1]), int(args[2]), int(args[3])
    brain = Brain(os.environ.get("RAPFI") or sys.exit("set RAPFI to the brain's path"), ms)
    k = 0
    with open(out, "w") as fo:
        for path in args[4:]:
            for g, pts, opening in sgf_games(path):
                if "SZ[15]" not in g or "RU[0]" not in g:
                    continue
                k += 1
                if k % shards != shard:
                    continue
                for n in range(opening, len(pts)):
                    try:
                        ev = brain.evaluate(pts[:n], mate)
                    except RuntimeError:
                        brain.restart()
                        continue
                    if ev is None or abs(ev) > 5000:
                        continue
                    fo.write(f"{letters(pts[:n])} {ev}\n")
                fo.flush()
    brain.send("END")


if __name__ == "__main__":
    main()
