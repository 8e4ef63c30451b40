#!/usr/bin/env python3
"""Real-client test: pygomo-lib 0.1.1 (a third-party Gomocup controller) drives
engines/pbrain-pcn through complete games and checks every reply is a legal, unoccupied
point. Prints a short transcript of each game.

Usage: python3 protocol_tests/pygomo/real_client.py [ENGINE] (pygomo-lib must be importable;
`make test` installs it under .tools/py and sets PYTHONPATH).
Exit code 0 = all games completed correctly.
"""
import os
import random
import sys
import time

from pygomo import EngineClient
from pygomo.protocol.models import BoardPosition, Move

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENGINE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "engines", "pbrain-pcn")


class Fail(Exception):
    pass


def five(stones, size, x, y, exact):
    """Whether the stone just placed at (x, y) makes five (exactly five if `exact`)."""
    me = stones[(x, y)]
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        n = 1
        for s in (1, -1):
            cx, cy = x + s * dx, y + s * dy
            while 0 <= cx < size and 0 <= cy < size and stones.get((cx, cy)) == me:
                n += 1
                cx, cy = cx + s * dx, cy + s * dy
        if n == 5 or (n > 5 and not exact):
            return True
    return False


def check_move(result, stones, size, who):
    if result is None or result.move is None:
        raise Fail(f"{who}: no move returned")
    x, y = result.move.col, result.move.row
    if not (0 <= x < size and 0 <= y < size):
        raise Fail(f"{who}: off-board move {x},{y}")
    if (x, y) in stones:
        raise Fail(f"{who}: occupied point {x},{y}")
    return x, y


def configure(e, size, rule, turn_ms, match_ms):
    e.connect()
    info = e.about()
    if not info or 'name="pcn"' not in info:
        raise Fail(f"bad ABOUT answer: {info!r}")
    if not e.start(size):
        raise Fail("START not accepted")
    e.set_rule(rule)
    e.set_time(turn_time_ms=turn_ms, match_time_ms=match_ms, time_left_ms=match_ms)
    return info


def play_pcn_vs_pcn(size, rule, turn_ms, use_board, max_moves):
    """Two pbrain-pcn processes; A starts with BEGIN; B's first command is BEGIN/TURN or
    (use_board) a BOARD with A's stone, like c-gomoku-cli."""
    a, b = EngineClient(ENGINE), EngineClient(ENGINE)
    try:
        about = configure(a, size, rule, turn_ms, 60000)
        configure(b, size, rule, turn_ms, 60000)
        print(f"  ABOUT -> {about}")
        stones, moves = {}, []
        t0 = time.time()
        r = a.begin(timeout=10)
        x, y = check_move(r, stones, size, "A")
        stones[(x, y)] = "A"
        moves.append((x, y))
        print(f"  A <- BEGIN            A -> {x},{y}")
        players = [("B", b), ("A", a)]
        turn = 0
        first_b = True
        while len(moves) < max_moves:
            name, eng = players[turn % 2]
            px, py = moves[-1]
            if name == "B" and first_b and use_board:
                pos = BoardPosition()
                pos.add_move(Move((px, py)), BoardPosition.OPPONENT)
                r = eng.board(pos, timeout=10)
                sent = f"BOARD {px},{py},2 DONE"
            else:
                r = eng.turn((px, py), timeout=10)
                sent = f"TURN {px},{py}"
            if name == "B":
                first_b = False
            x, y = check_move(r, stones, size, name)
            stones[(x, y)] = name
            moves.append((x, y))
            if len(moves) <= 6 or len(moves) % 50 == 0:
                print(f"  {name} <- {sent:<16} {name} -> {x},{y}")
            if five(stones, size, x, y, exact=rule == 1):
                print(f"  {name} made five at move {len(moves)} ({time.time() - t0:.1f} s)")
                return name, moves
            turn += 1
        print(f"  stopped after {len(moves)} moves ({time.time() - t0:.1f} s)")
        return None, moves
    finally:
        a.quit()
        b.quit()


def play_vs_random(size, rule, turn_ms, seed, max_moves):
    """pcn (White, answering TURN) against a random mover in Python; also exercises
    TAKEBACK once."""
    rng = random.Random(seed)
    e = EngineClient(ENGINE)
    try:
        configure(e, size, rule, turn_ms, 0)
        stones, moves = {}, []
        t0 = time.time()
        took_back = False
        while len(moves) < max_moves:
            free = [(x, y) for x in range(size) for y in range(size) if (x, y) not in stones]
            if not free:
                print("  board full: draw")
                return None, moves
            rx, ry = rng.choice(free)
            stones[(rx, ry)] = "R"
            moves.append((rx, ry))
            if five(stones, size, rx, ry, exact=rule == 1):
                raise Fail("the random mover beat pcn")
            r = e.turn((rx, ry), timeout=10)
            x, y = check_move(r, stones, size, "pcn")
            if len(moves) == 3 and not took_back:
                # Undo pcn's reply and ask again: must answer the same position legally.
                if not e.takeback(Move((x, y))):
                    raise Fail("TAKEBACK not accepted")
                took_back = True
                e.takeback(Move((rx, ry)))
                r = e.turn((rx, ry), timeout=10)
                x, y = check_move(r, stones, size, "pcn")
                print(f"  TAKEBACK {x},{y}/{rx},{ry} then TURN {rx},{ry} -> {x},{y}")
            stones[(x, y)] = "P"
            moves.append((x, y))
            if len(moves) <= 6:
                print(f"  pcn <- TURN {rx},{ry:<8} pcn -> {x},{y}")
            if five(stones, size, x, y, exact=rule == 1):
                print(f"  pcn made five at move {len(moves)} ({time.time() - t0:.1f} s)")
                return "pcn", moves
        return None, moves
    finally:
        e.quit()


def check_nbest():
    """YXNBEST through pygomo-lib's own MESSAGE parser: n lines, multipv 1..n, the answered
    move is the first line's first PV move and is legal."""
    e = EngineClient(ENGINE)
    try:
        configure(e, 15, 0, 500, 0)
        r = e.turn((7, 7), timeout=10)
        stones = {(7, 7): "O"}
        x, y = check_move(r, stones, 15, "pcn")
        stones[(x, y)] = "P"
        r = e.nbest(3, timeout=10)
        bx, by = check_move(r, stones, 15, "pcn nbest")
        infos = r.all_info
        if [i.multipv for i in infos] != [1, 2, 3]:
            raise Fail(f"multipv lines {[i.multipv for i in infos]}")
        first = infos[0].pv[0]
        if (first.col, first.row) != (bx, by):
            raise Fail(f"move {bx},{by} is not the best line's {first.col},{first.row}")
        print(f"  YXNBEST 3 -> {len(infos)} lines, best {bx},{by}, "
              f"evals {[i.eval.raw_value for i in infos]}")
        return "pcn", [(7, 7), (x, y), (bx, by)]
    finally:
        e.quit()


def main():
    if not os.access(ENGINE, os.X_OK):
        print(f"real_client: {ENGINE} not found or not executable (run `make engines`)")
        return 1
    failures = 0
    games = [
        ("pcn vs pcn, 15x15 freestyle, 300 ms/move, TURN only",
         lambda: play_pcn_vs_pcn(15, 0, 300, False, 225)),
        ("pcn vs pcn, 20x20 freestyle, 200 ms/move, first move by BOARD",
         lambda: play_pcn_vs_pcn(20, 0, 200, True, 400)),
        ("pcn vs pcn, 15x15 standard (exact five), 200 ms/move",
         lambda: play_pcn_vs_pcn(15, 1, 200, False, 225)),
        ("pcn vs random mover, 15x15 freestyle, 200 ms/move",
         lambda: play_vs_random(15, 0, 200, 1, 225)),
        ("YXNBEST parsed by pygomo-lib", check_nbest),
    ]
    for title, game in games:
        print(f"game: {title}")
        try:
            winner, moves = game()
            print(f"  result: {winner or 'no winner'} after {len(moves)} moves, all replies legal")
        except Exception as ex:  # noqa: BLE001 - report any client or engine failure
            failures += 1
            print(f"  FAILED: {type(ex).__name__}: {ex}")
    print("real_client: " + ("OK" if failures == 0 else f"{failures} game(s) FAILED"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
