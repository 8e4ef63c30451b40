#!/usr/bin/env python3
"""Quiet openings: those of an openings file whose games in a brain-against-itself run
lasted long with both colours.

Games on randomly drawn balanced openings are mostly decided by tactics soon after the
opening, while the shipped test openings stay positional for longer (the measurement:
docs/notebook/2026-11-28-device-gauntlet.md). This keeps the openings where both games of a
self-play run (each opening played with both colours, as `-repeat` does) reached MIN plies,
opening stones included.

    scripts/quiet_openings.py OPENINGS GAMES.pgn MIN OUT

GAMES.pgn comes from c-gomoku-cli run with `-repeat ... -openings file=OPENINGS
type=offset order=sequential` (games 2k+1 and 2k+2 play opening k), for instance Rapfi
against itself at 30 ms a move (docs/players.md, "Measuring strength").
"""
import re
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    openings_path, pgn_path, min_plies, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    openings = [line for line in open(openings_path) if line.strip()]
    plies = {}
    for game in open(pgn_path).read().split("[Event ")[1:]:
        event = re.match(r'"(\d+)"', game)
        count = re.search(r'\[PlyCount "(\d+)"\]', game)
        if event and count:
            plies[int(event.group(1))] = int(count.group(1))
    kept = [
        line
        for k, line in enumerate(openings)
        if min(plies.get(2 * k + 1, 0), plies.get(2 * k + 2, 0)) >= min_plies
    ]
    with open(out, "w") as f:
        f.writelines(kept)
    print(f"{len(kept)} of {len(openings)} openings kept ({len(plies)} games read)")


if __name__ == "__main__":
    main()
