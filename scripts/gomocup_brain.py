"""A Gomocup brain (Rapfi) driven through pipes to evaluate 15x15 positions, and the games
of a c-gomoku-cli SGF; used by scripts/teacher_labels.py, scripts/balanced_openings.py and
scripts/review_games.py."""
import os
import re
import subprocess
import time

# A `BOARD` sent the moment Rapfi has answered is sometimes not taken as a command (its stone
# lines then fail with `ERROR Unknown command` and the brain must be restarted); a short
# pause after each answer avoids it (measured in docs/notebook/2026-11-28-teacher-and-leaf-eval.md).
SETTLE_S = 0.003


def sgf_games(path):
    """Each game record of a c-gomoku-cli SGF file, in order: (the record's text, its moves
    as (x, y), how many of them are the opening's, marked `C[opening move]`)."""
    with open(path) as f:
        text = f.read()
    for g in re.split(r"\(;", text)[1:]:
        mv = re.findall(r";[BW]\[([a-z])([a-z])\](C\[opening move\])?", g)
        yield g, [(ord(a) - 97, ord(b) - 97) for a, b, _ in mv], sum(1 for m in mv if m[2])


def letters(points):
    """Points as letter pairs, x then y from 'a' (the SGF's coordinates)."""
    return "".join(chr(x + 97) + chr(y + 97) for x, y in points)


class Brain:
    """One brain process; `ms` milliseconds a search. When the brain answers a `BOARD` with
    `ERROR` or exits, `evaluate` raises RuntimeError, and `restart` gives a fresh process."""

    def __init__(self, path, ms):
        self.path, self.ms = path, ms
        self.start()

    def start(self):
        self.p = subprocess.Popen([self.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1,
                                  cwd=os.path.dirname(os.path.abspath(self.path)))
        self.send("START 15")
        while self.read() != "OK":
            pass
        self.send(f"INFO timeout_turn {self.ms}")
        self.send("INFO timeout_match 100000000")
        self.send("INFO max_memory 350000000")

    def send(self, s):
        self.p.stdin.write(s + "\n")
        self.p.stdin.flush()

    def read(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("the brain exited")
        return line.strip()

    def evaluate(self, moves, mate):
        """The brain's evaluation of the position after `moves`, None when it has none."""
        return self.analyse(moves, mate)[0]

    def analyse(self, moves, mate):
        """The brain's evaluation of the position after `moves` (None when it has none; a
        mate it reports is +-`mate`, None when `mate` is 0) and its move there, (x, y)."""
        self.send("BOARD")
        n = len(moves)
        for i, (x, y) in enumerate(moves):
            # 1: the side to move's stones (the brain's own), 2: the opponent's.
            self.send(f"{x},{y},{1 if (n - i) % 2 == 0 else 2}")
        self.send("DONE")
        ev = None
        while True:
            line = self.read()
            if line.startswith("MESSAGE") and "Eval " in line:
                tok = line.split("Eval ")[1].split()[0]
                try:
                    ev = int(tok)
                except ValueError:
                    ev = mate if tok.startswith("+M") else -mate if tok.startswith("-M") else None
                    ev = ev or None
            elif line.startswith("ERROR"):
                raise RuntimeError(line)
            elif not line.startswith(("MESSAGE", "DEBUG")) and "," in line:
                time.sleep(SETTLE_S)
                x, y = line.split(",")[:2]
                try:
                    return ev, (int(x), int(y))
                except ValueError:
                    raise RuntimeError(f"not a move: {line}") from None

    def restart(self):
        self.p.kill()
        self.start()
