#!/usr/bin/env python3
"""Where a player's moves lost ground, judged by a stronger brain (Rapfi).

Reads the SGF of a c-gomoku-cli match (`scripts/gauntlet.sh` writes it as games.sgf) and
has the judge search every position of the chosen games, from the end of the opening until
one side is clearly lost, as the side to move. Each position gets the judge's evaluation
(its `MESSAGE ... Eval N`, the side to move's view; Rapfi's units, about 200 a logit) and
the judge's move. A move's *drop* is how much it lost by the judge's reckoning: the
evaluation before it minus the mover's evaluation after it (the next position's, negated).
In lost games the judge's evaluation also drifts against the loser from move to move
whatever is played, so drops are read against those of the moves the judge would have
played itself, which the summary gives apart.

    scripts/review_games.py GAMES.sgf [--player pcn] [--ms 1000] [--jobs 2] [--all]
                            [--stop 800] [--out FILE | --from FILE] [--top 20]

Only the games the player lost are reviewed unless `--all`. A game's review stops once the
side to move's evaluation passes +-STOP (the game is decided) or at a mate. `--out` keeps
one line per position: game number, ply, the moves (two letters each, x then y from 'a'),
who is to move, the evaluation, the judge's move and the move played. The summary gives,
per side, the moves judged, how often the judge would have played the same move, and the
mean, median and large drops; the same for the moves the judge would also have played,
whose drops are the judge's own noise (it finds more one move later); then the player's
largest drops where the judge would have played another move, with their positions (the
moves string, the judge's move, the move played), ready to be set up with `BOARD`.
`--from FILE` summarizes an earlier `--out` file again without running the judge.

The judge is $RAPFI (run in its own folder; see docs/players.md, 'Measuring strength'),
15x15 freestyle only, like `teacher_labels.py`.
"""
import argparse
import os
import queue
import re
import statistics
import sys
import threading

from gomocup_brain import Brain, letters, sgf_games

# A reported mate (`+M7`, `-M7`) counts as this, above any evaluation Rapfi gives.
MATE = 20000


def die(msg):
    print(f"review_games: {msg}", file=sys.stderr)
    sys.exit(2)


def games_of(path, player, everything):
    """(number, moves, opening length, player's colour) of the games to review."""
    out = []
    for k, (g, moves, opening) in enumerate(sgf_games(path), 1):
        if "SZ[15]" not in g or "RU[0]" not in g:
            continue
        names = dict(re.findall(r"P([BW])\[([^\]]*)\]", g))
        res = re.search(r"RE\[([BW])", g)
        if player not in names.values():
            continue
        colour = "B" if names.get("B") == player else "W"
        lost = res is not None and res.group(1) != colour
        if not (everything or lost):
            continue
        out.append((k, moves, opening, colour))
    return out


def review(brain, game, stop):
    """Rows (game, ply, moves, colour to move, eval, judge's move, move played)."""
    k, moves, opening, _ = game
    rows = []
    for n in range(opening, len(moves)):
        for _ in range(3):
            try:
                ev, best = brain.analyse(moves[:n], MATE)
                break
            except RuntimeError:
                brain.restart()
        else:
            break
        to_move = "B" if n % 2 == 0 else "W"
        rows.append((k, n, letters(moves[:n]), to_move, ev,
                     letters([best]) if best else "-", letters([moves[n]])))
        if ev is None or abs(ev) >= stop:
            break
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sgf")
    ap.add_argument("--player", default="pcn", help="the reviewed player's name in the SGF")
    ap.add_argument("--ms", type=int, default=1000, help="the judge's time a position")
    ap.add_argument("--jobs", type=int, default=2, help="judges run side by side")
    ap.add_argument("--all", action="store_true", help="review won games too")
    ap.add_argument("--stop", type=int, default=800, help="stop a game's review past +-STOP")
    ap.add_argument("--out", help="write one line per position here")
    ap.add_argument("--from", dest="src", help="summarize this earlier --out file instead")
    ap.add_argument("--top", type=int, default=20, help="largest drops to list")
    a = ap.parse_args()
    judge = os.environ.get("RAPFI", "")
    if not a.src and not judge:
        die("set RAPFI to the judge's pbrain-rapfi")
    if not a.src and not os.access(judge, os.X_OK):
        die(f"the judge '{judge}' is not an executable file")
    try:
        games = games_of(a.sgf, a.player, a.all)
    except OSError as e:
        die(f"cannot read {a.sgf}: {e.strerror}")
    if not games:
        die(f"no game of '{a.player}' to review in {a.sgf}")
    colour_of = {g[0]: g[3] for g in games}
    if a.src:
        rows = read_rows(a.src, colour_of)
    else:
        rows = judge_all(judge, games, a)
    summarize(rows, colour_of, len(games), judge or "the judge", a)


def read_rows(path, colour_of):
    """The rows of an earlier `--out` file, for the games still chosen."""
    rows = []
    try:
        for line in open(path):
            f = line.split()
            if len(f) != 7:
                die(f"{path}: not a line of --out: {line.strip()}")
            ev = None if f[4] == "None" else int(f[4])
            row = (int(f[0]), int(f[1]), f[2], f[3], ev, f[5], f[6])
            if row[0] in colour_of:
                rows.append(row)
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")
    except ValueError:
        die(f"{path}: not an --out file of this script")
    return sorted(rows)


def judge_all(judge, games, a):
    """Every chosen game reviewed by `a.jobs` judges side by side."""
    todo = queue.Queue()
    for g in games:
        todo.put(g)
    rows, lock = [], threading.Lock()

    def work():
        brain = Brain(judge, a.ms)
        while True:
            try:
                g = todo.get_nowait()
            except queue.Empty:
                break
            r = review(brain, g, a.stop)
            with lock:
                rows.extend(r)
        brain.send("END")

    threads = [threading.Thread(target=work) for _ in range(max(1, a.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows.sort()
    if a.out:
        with open(a.out, "w") as fo:
            for r in rows:
                fo.write(" ".join(str(x) for x in r) + "\n")
    return rows


def summarize(rows, colour_of, n_games, judge, a):
    """Prints the per-side drop statistics and the player's largest drops."""
    at = {(r[0], r[1]): r for r in rows}
    drops = {"player": [], "opponent": []}
    for r in rows:
        nxt = at.get((r[0], r[1] + 1))
        if nxt is None or r[4] is None or nxt[4] is None:
            continue
        if abs(r[4]) >= MATE or abs(nxt[4]) >= MATE:
            continue
        side = "player" if r[3] == colour_of[r[0]] else "opponent"
        drops[side].append((r[4] + nxt[4], r))
    print(f"{n_games} games of {a.player} reviewed by {os.path.basename(judge)}, "
          f"{len(rows)} positions")

    def line(label, moves):
        d = [x[0] for x in moves]
        if not d:
            return
        same = sum(1 for _, r in moves if r[5] == r[6])
        print(f"{label}: {len(d)} moves, judge's move {100 * same / len(d):.0f}%, "
              f"drop mean {statistics.mean(d):.0f} median {statistics.median(d):.0f}, "
              f"over 50: {sum(x > 50 for x in d)}, over 100: {sum(x > 100 for x in d)}, "
              f"over 200: {sum(x > 200 for x in d)}")

    for side, name in (("player", a.player), ("opponent", "opponent")):
        line(name, drops[side])
        line(f"  {name}, the judge's own moves", [x for x in drops[side] if x[1][5] == x[1][6]])
    other = [x for x in drops["player"] if x[1][5] != x[1][6]]
    print(f"largest drops of {a.player} where the judge would have played another move "
          "(game ply drop eval-before judge's-move played moves):")
    for drop, r in sorted(other, key=lambda x: -x[0])[:a.top]:
        print(f"  {r[0]} {r[1]} {drop} {r[4]} {r[5]} {r[6]} {r[2]}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        # The summary was piped into a reader that stopped early (`| head`).
        sys.stderr.close()
