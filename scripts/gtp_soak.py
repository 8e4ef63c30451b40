#!/usr/bin/env python3
"""Killall-Go soak through GTP (docs/testing.md): pcn against pcn, each a `pcn gtp`
process, refereed here. Per game: `boardsize`/`clear_board`, Canadian byo-yomi of
--seconds per move (`time_settings 0 S 1`, `time_left` before every genmove), the generated move relayed with `play`; now and then both
engines `undo` the last move and it is played again, and now and then the second engine
reloads the game from the first one's `printsgf` with `loadsgf` (the two records must then
agree). A game ends when `final_score` answers (the rules ended it) or after MAX_PLIES.

Counted: games, finished games, time losses (a genmove slower than its period plus
TOLERANCE), illegal moves (the other engine refuses the generated move), refused
referee commands, crashes (an engine exits or stops answering), and each engine's peak RSS
(VmHWM) against its --memory cap. Prints one summary line and exits 1 on any failure.

  scripts/gtp_soak.py --pcn target/release/pcn --games 10 [--size 7] [--seconds 3]
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

MAX_PLIES = 160
TOLERANCE = 0.5


class Engine:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def cmd(self, line, timeout=30.0):
        """Sends one command; returns (ok, text). Raises RuntimeError on a crash or hang."""
        if self.p.poll() is not None:
            raise RuntimeError(f"engine exited with {self.p.returncode}")
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        out = []
        result = {}

        def read():
            lines = []
            while True:
                l = self.p.stdout.readline()
                if l == "":
                    result["eof"] = True
                    break
                l = l.rstrip("\n")
                if l == "" and lines:
                    break
                if l == "" and not lines:
                    continue
                lines.append(l)
            result["lines"] = lines

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        if t.is_alive():
            raise RuntimeError(f"no answer to {line!r} within {timeout} s")
        if result.get("eof"):
            raise RuntimeError(f"engine closed its output after {line!r}")
        out = result["lines"]
        first = out[0] if out else ""
        ok = first.startswith("=")
        text = "\n".join([first[1:].strip()] + out[1:]).strip()
        return ok, text

    def peak_rss_kb(self):
        try:
            with open(f"/proc/{self.p.pid}/status") as f:
                for l in f:
                    if l.startswith("VmHWM:"):
                        return int(l.split()[1])
        except OSError:
            pass
        return 0

    def close(self):
        try:
            self.cmd("quit", timeout=5)
        except Exception:
            pass
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pcn", required=True)
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--size", type=int, default=7, choices=[7, 9])
    ap.add_argument("--seconds", type=int, default=1, help="byo-yomi seconds per move")
    ap.add_argument("--memory", type=int, default=32, help="--memory of each engine, MB")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    stats = dict(games=0, finished=0, time_losses=0, illegal=0, refused=0, crashes=0,
                 undos=0, loads=0, load_mismatch=0, plies=0, max_move=0.0)
    peak = 0
    tmp = tempfile.mkdtemp(prefix="pcn-gtp-soak-")
    for g in range(a.games):
        argv = [a.pcn, "--memory", str(a.memory), "--seed", str(a.seed + g), "gtp",
                "--game", "killallgo", "--size", str(a.size)]
        eng = [Engine(argv), Engine(argv)]
        stats["games"] += 1
        try:
            for e in eng:
                for c in [f"boardsize {a.size}", "clear_board", f"time_settings 0 {a.seconds} 1"]:
                    ok, t = e.cmd(c)
                    if not ok:
                        stats["refused"] += 1
                        print(f"game {g}: {c!r} refused: {t}", file=sys.stderr)
            ply = 0
            while ply < MAX_PLIES:
                side = ply % 2
                color = "b" if side == 0 else "w"
                me, other = eng[side], eng[1 - side]
                me.cmd(f"time_left {color} {a.seconds} 1")
                t0 = time.monotonic()
                ok, mv = me.cmd(f"genmove {color}", timeout=a.seconds + 10)
                took = time.monotonic() - t0
                stats["max_move"] = max(stats["max_move"], took)
                if took > a.seconds + TOLERANCE:
                    stats["time_losses"] += 1
                    print(f"game {g}: {color} took {took:.2f} s", file=sys.stderr)
                    break
                if not ok:
                    stats["refused"] += 1
                    print(f"game {g}: genmove refused: {mv}", file=sys.stderr)
                    break
                if mv.lower() == "resign":
                    break
                ok, t = other.cmd(f"play {color} {mv}")
                if not ok:
                    stats["illegal"] += 1
                    print(f"game {g}: {color} {mv} refused by the other engine: {t}", file=sys.stderr)
                    break
                ply += 1
                stats["plies"] += 1
                # Undo the move on both sides and play it again.
                if rng.random() < 0.1:
                    oks = [e.cmd("undo")[0] for e in eng]
                    oks += [e.cmd(f"play {color} {mv}")[0] for e in eng]
                    stats["undos"] += 1
                    if not all(oks):
                        stats["refused"] += 1
                        print(f"game {g}: undo/replay refused", file=sys.stderr)
                        break
                # Reload the second engine from the first one's record.
                if rng.random() < 0.05:
                    path = os.path.join(tmp, f"g{g}-{ply}.sgf")
                    ok1, _ = eng[0].cmd(f"printsgf {path}")
                    ok2, t = eng[1].cmd(f"loadsgf {path}")
                    stats["loads"] += 1
                    if not (ok1 and ok2):
                        stats["refused"] += 1
                        print(f"game {g}: printsgf/loadsgf refused: {t}", file=sys.stderr)
                        break
                    if eng[0].cmd("printsgf")[1] != eng[1].cmd("printsgf")[1]:
                        stats["load_mismatch"] += 1
                        print(f"game {g}: records differ after loadsgf", file=sys.stderr)
                        break
                ok, _ = me.cmd("final_score")
                if ok:
                    stats["finished"] += 1
                    break
        except RuntimeError as ex:
            stats["crashes"] += 1
            print(f"game {g}: {ex}", file=sys.stderr)
        for e in eng:
            peak = max(peak, e.peak_rss_kb())
            e.close()
    fails = stats["time_losses"] + stats["illegal"] + stats["refused"] + stats["crashes"] + \
        stats["load_mismatch"]
    print("killallgo %dx%d GTP: %d games (%d finished, %d plies), time losses %d, illegal %d, "
          "refused %d, crashes %d, undos %d, loadsgf %d (mismatches %d), longest genmove %.2f s "
          "(limit %d s), peak RSS %.1f MB (--memory %d MB per search table)"
          % (a.size, a.size, stats["games"], stats["finished"], stats["plies"],
                                stats["time_losses"], stats["illegal"], stats["refused"],
                                stats["crashes"], stats["undos"], stats["loads"],
                                stats["load_mismatch"], stats["max_move"], a.seconds, peak / 1024, a.memory))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
