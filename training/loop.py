"""The training loop: self-play -> train -> export -> gate -> promote (``make train``).

    python3 training/loop.py --game killallgo --hours 2

Everything is resumable: the replay buffer (self-play records), the checkpoint, the
evaluation set and the loop's state live under ``runs/<game>/`` (gitignored); the promoted
network is ``weights/<game>-pcn/``, which the next self-play uses. The gate solves a fixed
evaluation set that the engine made from its own self-play games (``pcn selfplay
--emit-eval-set``, iteration 0 play, a separate seed) and promotes the candidate only if it
solves more positions than the current network (or none), or as many in less total time.
Nothing here reads ../shared: no third-party network or problem enters the loop.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

GAMES = {
    # game: (weights name, pcn selfplay args, the gate's --prove, default --eval-back)
    "killallgo": ("killallgo9-pcn", ["--game", "killallgo"], "white", 9),
    "gomoku": ("gomoku15-pcn", ["--game", "gomoku", "--rule", "4t"], "black", 15),
}
EVAL_SEED = 1_000_003


def log(*a):
    print("[loop]", *a, flush=True)


def run(cmd, **kw):
    log(" ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def gate(a, net, eval_dir):
    """Solves the evaluation set with `net` ('none' or a model dir): (solved, cost over all
    positions, the unsolved ones counting their full limit). The cost is seconds, or search
    nodes with --eval-nodes: a node limit gives the same answer on a loaded machine, where
    a wall-clock limit of a few seconds moves positions in and out of the solved count."""
    files = sorted((f for f in os.listdir(eval_dir) if f.endswith(".sgf")),
                   key=lambda f: (len(f), f))[: a.eval_positions]
    paths = [os.path.join(eval_dir, f) for f in files]
    if not paths:
        return 0, 0.0
    cmd = [a.pcn, "--net", net, "--threads", "1", "--symmetries", "1", "solve",
           "--prove", GAMES[a.game][2]]
    if a.eval_nodes > 0:
        cmd += ["--nodes", str(a.eval_nodes), "--time", "3600"]
    else:
        cmd += ["--time", a.eval_time]
    if a.game == "gomoku":
        cmd += ["--rule", "4t"]
    log(" ".join(cmd), f"({len(paths)} positions from {eval_dir})")
    p = subprocess.run(cmd + paths, capture_output=True, text=True)
    solved, secs = 0, 0.0
    for line in p.stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        secs += float(r.get("nodes" if a.eval_nodes > 0 else "seconds", 0.0) or 0.0)
        if r.get("result") in ("win", "loss"):
            solved += 1
    return solved, secs


def keep_proven_hard(a, raw_dir, eval_dir):
    """Fills eval_dir with the positions of raw_dir that a reference solve without a network
    proves within --eval-ref-nodes but not in fewer than --eval-min-nodes nodes. A position
    near the end of a won self-play game is often proved in one node by any solver, or is no
    win at all (the loser defended badly): neither can tell two networks apart. Proven,
    non-trivial positions are where a network's guidance shows as nodes saved."""
    files = sorted((f for f in os.listdir(raw_dir) if f.endswith(".sgf")),
                   key=lambda f: (len(f), f))
    cmd = [a.pcn, "--net", "none", "--threads", "1", "--symmetries", "1", "solve",
           "--prove", GAMES[a.game][2], "--nodes", str(a.eval_ref_nodes), "--time", "3600"]
    if a.game == "gomoku":
        cmd += ["--rule", "4t"]
    log(" ".join(cmd), f"({len(files)} raw positions from {raw_dir})")
    p = subprocess.run(cmd + [os.path.join(raw_dir, f) for f in files], capture_output=True,
                       text=True)
    os.makedirs(eval_dir + ".tmp", exist_ok=True)
    kept = 0
    for line in p.stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("result") == "win" and int(r.get("nodes", 0)) >= a.eval_min_nodes:
            shutil.copyfile(r["file"], os.path.join(eval_dir + ".tmp", f"{kept}.sgf"))
            kept += 1
    if os.path.isdir(eval_dir):
        shutil.rmtree(eval_dir)
    os.replace(eval_dir + ".tmp", eval_dir)
    log(f"evaluation set: {kept} of {len(files)} positions proved with "
        f"{a.eval_min_nodes}..{a.eval_ref_nodes} nodes")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--game", choices=sorted(GAMES), default="killallgo")
    p.add_argument("--hours", type=float, default=2.0, help="stop after this long")
    p.add_argument("--iterations", type=int, default=0, help="stop after this many (0: no limit)")
    p.add_argument("--work", help="run directory (default runs/<game>)")
    p.add_argument("--weights", help="promoted network directory (default weights/<game>-pcn)")
    p.add_argument("--pcn", default=os.path.join(ROOT, "target", "release", "pcn"))
    p.add_argument("--games-per-iter", type=int, default=400)
    p.add_argument("--steps-per-iter", type=int, default=400)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--blocks", type=int, default=3)
    p.add_argument("--filters", type=int, default=32)
    p.add_argument("--bins", type=int, default=500)
    p.add_argument("--label", choices=["max", "heur"], default="heur")
    p.add_argument("--window", type=int, default=300_000)
    p.add_argument("--sims", type=int, default=64)
    p.add_argument("--fast-sims", type=int, default=16)
    p.add_argument("--parallel", type=int, default=8)
    p.add_argument("--threads", type=int, default=1, help="network / PyTorch threads")
    p.add_argument("--eval-games", type=int, default=200, help="games that make the eval set")
    p.add_argument("--eval-positions", type=int, default=40)
    p.add_argument("--eval-back", type=int, default=0,
                   help="plies before the end of a game (odd; 0: 9 Killall-Go, 15 Gomoku)")
    p.add_argument("--eval-time", default="5", help="seconds per gate position")
    p.add_argument("--eval-nodes", type=int, default=0,
                   help="node limit per gate position instead of --eval-time (0: time)")
    p.add_argument("--eval-ref-nodes", type=int, default=0,
                   help="keep only eval positions that a solve without a network proves "
                        "within this many nodes (0: keep all; 500000 recommended)")
    p.add_argument("--eval-min-nodes", type=int, default=1000,
                   help="with --eval-ref-nodes: drop positions proved in fewer nodes")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--selfplay-net", choices=["best", "latest"], default="best",
                   help="self-play with the promoted network (best) or the last candidate "
                        "(latest: AlphaZero's way, for when the gate's bar is a solver "
                        "without a network that self-play without a network cannot teach)")
    p.add_argument("--selfplay-args", default="",
                   help="more `pcn selfplay` options for the training games and the eval set's "
                        "games, e.g. \"--mover player --player-nodes 10000 --random-plies 6\" "
                        "(Gomoku games of the alpha-beta player; docs/training.md)")
    a = p.parse_args(argv)
    name, sp_args, _, eval_back = GAMES[a.game]
    sp_args = sp_args + shlex.split(a.selfplay_args)
    work = a.work or os.path.join(ROOT, "runs", a.game)
    weights = a.weights or os.path.join(ROOT, "weights", name)
    os.makedirs(work, exist_ok=True)
    state_path = os.path.join(work, "state.json")
    state = {"iteration": 0, "games": 0, "best": None, "history": []}
    if os.path.exists(state_path):
        state = json.load(open(state_path))
    records = os.path.join(work, "selfplay.rec")
    eval_dir = os.path.join(work, "eval")
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    pypath = [os.path.join(ROOT, ".tools", "torch"), HERE, env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = ":".join(x for x in pypath if x)
    t_end = time.time() + a.hours * 3600
    if not os.path.isdir(eval_dir) or not os.listdir(eval_dir):
        raw_dir = eval_dir + "_raw" if a.eval_ref_nodes > 0 else eval_dir
        run([a.pcn, "--net", "none", "--seed", EVAL_SEED, "selfplay", *sp_args, "--games",
             a.eval_games, "--bins", a.bins, "--sims", a.sims, "--fast-sims", a.fast_sims,
             "--emit-eval-set", raw_dir, "--eval-back", a.eval_back or eval_back])
        if a.eval_ref_nodes > 0:
            keep_proven_hard(a, raw_dir, eval_dir)
    done = 0
    while time.time() < t_end and (a.iterations == 0 or done < a.iterations):
        it = state["iteration"] + 1
        have_best = os.path.exists(os.path.join(weights, "model.safetensors"))
        best = weights if have_best else "none"
        cand = os.path.join(work, "candidate")
        player = best
        if a.selfplay_net == "latest" and os.path.exists(os.path.join(cand, "model.safetensors")):
            player = cand
        t0 = time.time()
        state["games"] += a.games_per_iter
        run([a.pcn, "--net", player, "--threads", a.threads, "--seed", a.seed, "selfplay",
             *sp_args, "--games", state["games"], "--out", records, "--bins", a.bins,
             "--sims", a.sims, "--fast-sims", a.fast_sims, "--parallel", a.parallel])
        t1 = time.time()
        run([sys.executable, "-m", "pcn_train", "train", "--records", records, "--dir",
             os.path.join(work, "train"), "--export", cand, "--name", f"{name}-it{it}",
             "--steps", a.steps_per_iter, "--batch", a.batch, "--lr", a.lr, "--blocks",
             a.blocks, "--filters", a.filters, "--label", a.label, "--window", a.window,
             "--threads", a.threads, "--seed", a.seed + it], env=env)
        t2 = time.time()
        unit = "nodes" if a.eval_nodes > 0 else "s"
        # The current network's gate result is kept; it is measured again when the net,
        # the gate's limit or its unit changed since.
        limit = a.eval_nodes if a.eval_nodes > 0 else a.eval_time
        b = state.get("best")
        if (b is None or b.get("net") != best or b.get("unit", "s") != unit
                or str(b.get("limit", a.eval_time)) != str(limit)):
            s, sec = gate(a, best, eval_dir)
            state["best"] = {"net": best, "solved": s, "seconds": sec, "unit": unit,
                             "limit": limit}
        b = state["best"]
        s, sec = gate(a, cand, eval_dir)
        promote = s > b["solved"] or (s == b["solved"] and sec < b["seconds"])
        log(f"iteration {it}: candidate solves {s} in {sec:.1f} {unit}, current ({best}) "
            f"{b['solved']} in {b['seconds']:.1f} {unit} -> {'promote' if promote else 'keep'}")
        if promote:
            os.makedirs(weights, exist_ok=True)
            for f in ("model.safetensors", "model.json", "golden.safetensors", "golden.json"):
                shutil.copyfile(os.path.join(cand, f), os.path.join(weights, f + ".tmp"))
                os.replace(os.path.join(weights, f + ".tmp"), os.path.join(weights, f))
            state["best"] = {"net": weights, "solved": s, "seconds": sec, "unit": unit,
                             "limit": limit}
        state["iteration"] = it
        state["history"].append({
            "iteration": it, "games": state["games"], "selfplay_s": round(t1 - t0, 1),
            "train_s": round(t2 - t1, 1), "gate_s": round(time.time() - t2, 1),
            "candidate_solved": s, "candidate_seconds": round(sec, 2),
            "best_solved": b["solved"], "best_seconds": round(b["seconds"], 2),
            "gate_unit": unit, "selfplay_net": player,
            "promoted": promote, "eval_positions": min(a.eval_positions, len(os.listdir(eval_dir))),
        })
        json.dump(state, open(state_path + ".tmp", "w"), indent=1)
        os.replace(state_path + ".tmp", state_path)
        done += 1
    log(f"stopped after {done} iteration(s); state in {state_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
