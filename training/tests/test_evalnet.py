"""Tests of the eval net trainer (training/pcn_train/evalnet.py): line codes against the
slow reference, the weight file's layout, a tiny training run, the golden file and the
quantized inference against the float model. `make test-train` runs them (unittest, about
20 s on the 2-core machine):

    PYTHONPATH=.tools/torch:training python3 -m unittest discover -s training/tests -v
"""

import argparse
import json
import math
import os
import struct
import tempfile
import unittest

import numpy as np
import torch

from pcn_train import evalnet as ev


def random_board(rng, w, h, density):
    """A random board (not necessarily reachable): stones of both colours anywhere."""
    b = np.zeros((h, w), dtype=np.int8)
    m = rng.random((h, w)) < density
    b[m] = rng.integers(1, 3, int(m.sum()))
    return b


def read(path):
    with open(path, "rb") as f:
        return f.read()


def tiny_reader(path):
    """Reads the weight file with struct only, as the layout of docs/model-format.md says."""
    with open(path, "rb") as f:
        blob = f.read()
    assert blob[:8] == b"PCNEVAL1", blob[:8]
    rule = blob[8:24].rstrip(b"\0").decode("ascii")
    assert all(c == 0 for c in blob[8 + len(rule):24])
    c, h, nc = struct.unpack_from("<3I", blob, 24)
    assert nc == 2460
    n_f = h * 2 * c + h + h * h + h + h + 1
    assert len(blob) == 36 + 2 * nc * c + 2 * c + 4 * n_f, len(blob)
    off = 36
    tq = struct.unpack_from(f"<{nc * c}h", blob, off)
    off += 2 * nc * c
    bq = struct.unpack_from(f"<{c}h", blob, off)
    off += 2 * c
    fl = struct.unpack_from(f"<{n_f}f", blob, off)
    off += 4 * n_f
    assert off == len(blob)
    k = 0

    def take(n):
        nonlocal k
        k += n
        return np.array(fl[k - n:k], dtype=np.float32)

    w1 = take(h * 2 * c).reshape(h, 2 * c)
    b1 = take(h)
    w2 = take(h * h).reshape(h, h)
    b2 = take(h)
    w3 = take(h)
    b3 = take(1)[0]
    return dict(rule=rule, C=c, H=h, Tq=np.array(tq, dtype=np.int32).reshape(nc, c),
                Bq=np.array(bq, dtype=np.int32), W1=w1, b1=b1, W2=w2, b2=b2, w3=w3, b3=b3)


def slow_value(wt, board, stm):
    """The spec's quantized inference, point by point with code_ref (independent of
    evalnet.codes and evalnet.quantized_value)."""
    h, w = board.shape
    xs = []
    for p in (stm, 3 - stm):
        acc = np.zeros(wt["C"], dtype=np.int64)
        for y in range(h):
            for x in range(w):
                f = wt["Bq"].astype(np.int64).copy()
                for d in range(4):
                    f += wt["Tq"][ev.code_ref(board, x, y, d, p)]
                assert np.abs(f).max() <= 32767
                acc += np.clip(f, 0, 128)
        xs.append(acc.astype(np.float32) / np.float32(4096.0))
    z = np.concatenate(xs)
    h1 = np.maximum(wt["W1"] @ z + wt["b1"], 0).astype(np.float32)
    h2 = np.maximum(wt["W2"] @ h1 + wt["b2"], 0).astype(np.float32)
    return float(wt["w3"] @ h2 + wt["b3"])


def random_game(rng, n, max_plies):
    """A random legal game on an n x n board, stopping at a five (freestyle) or max_plies."""
    b = np.zeros((n, n), dtype=np.int8)
    moves, result = [], "draw"
    free = [(x, y) for y in range(n) for x in range(n)]
    rng.shuffle(free)
    for i in range(min(max_plies, len(free))):
        x, y = free[i]
        b[y, x] = 1 + (i & 1)
        moves.append([int(x), int(y)])
        if ev.has_five(b, x, y):
            result = "black" if i % 2 == 0 else "white"
            break
    return moves, result


def write_games(path, rng, games, sizes=(9, 15), classic=False):
    """Synthetic records: random games; Black wins most, so the side to move matters, and
    scores follow the result with noise (null for the first two plies). `classic`: with a
    `classic` field that knows half of what the scores say (null where no score is, and at
    every fifth scored ply)."""
    with open(path, "w") as f:
        for k in range(games):
            n = sizes[k % len(sizes)]
            moves, _ = random_game(rng, n, int(rng.integers(6, 30)))
            result = "black" if rng.random() < 0.8 else ("white" if rng.random() < 0.7 else "draw")
            scores = []
            for i in range(len(moves)):
                if i < 2:
                    scores.append(None)
                    continue
                stm_wins = (result == "black") == (i % 2 == 0)
                s = int(rng.normal(800 if stm_wins else -800, 400))
                if rng.random() < 0.05:
                    s = 999990 if stm_wins else -999990
                scores.append(s)
            line = {"size": [n, n], "rule": "freestyle", "seed": 1, "index": k,
                    "nodes": 100, "moves": moves, "scores": scores, "result": result}
            if classic:
                line["classic"] = [None if s is None or i % 5 == 4 else
                                   int(max(-3000, min(3000, s / 2)))
                                   for i, s in enumerate(scores)]
            f.write(json.dumps(line) + "\n")


def train_args(**kw):
    a = argparse.Namespace(data=[], out="", steps=40, seconds=0.0, batch=64, lam=0.5, lr=5e-3,
                           channels=16, hidden=8, rule=None, seed=0, threads=1, log_every=1000,
                           eval_cap=20000, no_augment=False, no_export=False, resume=False,
                           residual=False)
    for k, v in kw.items():
        setattr(a, k, v)
    return a


class Codes(unittest.TestCase):
    def test_vectorized_codes_match_the_reference(self):
        rng = np.random.default_rng(1)
        # Every point of each board is checked, so every edge, corner and every number of
        # leading on-board points (0..4 on each side) occurs; small and narrow boards too.
        shapes = [(15, 15), (20, 20), (1, 1), (1, 7), (6, 1), (3, 3), (4, 9), (9, 5), (8, 8)]
        for w, h in shapes:
            for density in (0.0, 0.3, 0.7, 1.0):
                boards = np.stack([random_board(rng, w, h, density) for _ in range(3)])
                for p in (1, 2):
                    got = ev.codes(boards, [p] * 3)
                    self.assertEqual(got.shape, (3, 4, h, w))
                    for k in range(3):
                        for y in range(h):
                            for x in range(w):
                                for d in range(4):
                                    self.assertEqual(got[k, d, y, x],
                                                     ev.code_ref(boards[k], x, y, d, p),
                                                     (w, h, density, p, x, y, d))
        # Mixed perspectives in one batch.
        boards = np.stack([random_board(rng, 15, 15, 0.4) for _ in range(4)])
        p = np.array([1, 2, 2, 1])
        got = ev.codes(boards, p)
        for k in range(4):
            np.testing.assert_array_equal(got[k], ev.codes(boards[k:k + 1], [p[k]])[0])

    def test_both_codes_swap_the_colours(self):
        rng = np.random.default_rng(5)
        for w, h in ((15, 15), (20, 20), (3, 6)):
            boards = np.stack([random_board(rng, w, h, 0.5) for _ in range(6)])
            stm = rng.integers(1, 3, 6)
            me, opp = ev.both_codes(boards, stm)
            np.testing.assert_array_equal(me, ev.codes(boards, stm))
            np.testing.assert_array_equal(opp, ev.codes(boards, 3 - stm))
        self.assertEqual(sorted(ev.SWAP[ev.SWAP].tolist()), list(range(ev.NCODES)))
        np.testing.assert_array_equal(ev.SWAP[ev.SWAP], np.arange(ev.NCODES))

    def test_code_values(self):
        b = np.zeros((15, 15), dtype=np.int8)
        def pair(a, b):
            a, b = min(a, b), max(a, b)
            return a * 40 - a * (a - 1) // 2 + (b - a)
        # The corner, direction (1, 0): no point on the left (OFF[0] = 39), three empty ones
        # on the right (OFF[3] + 0); the pair (0, 39).
        self.assertEqual(ev.code_ref(b, 0, 0, 0, 1), 0 * 820 + pair(39, 0))
        b[0, 1], b[0, 2], b[0, 0] = 1, 2, 2
        # Own stone at (1,0) (3^0 * 1), the other's at (2,0) (3^1 * 2), from Black's view;
        # the point itself is White's (state 2).
        self.assertEqual(ev.code_ref(b, 0, 0, 0, 1), 2 * 820 + pair(39, 1 + 6))
        self.assertEqual(ev.code_ref(b, 0, 0, 0, 2), 1 * 820 + pair(39, 2 + 3))
        # (1, 0) seen in direction (1, 0): one point on the left (OFF[1] = 36).
        self.assertEqual(ev.code_ref(b, 1, 0, 0, 1), 1 * 820 + pair(36 + 2, 2))
        # A line read backwards is the same shape: the mirrored board gives the same codes
        # in the horizontal direction.
        self.assertEqual(ev.code_ref(b, 1, 0, 0, 1), ev.code_ref(b[:, ::-1].copy(), 13, 0, 0, 1))
        # All codes are in range and nearly all 820 pairs occur (the rarest, two cut halves,
        # need a point near a corner on a short diagonal).
        rng = np.random.default_rng(2)
        boards = np.stack([random_board(rng, 15, 15, 0.6) for _ in range(40)])
        c = ev.codes(boards, [1] * 40)
        self.assertTrue(c.min() >= 0 and c.max() < ev.NCODES)
        self.assertGreater(len(np.unique(c % 820)), 800)

    def test_symmetries_are_the_board_group(self):
        rng = np.random.default_rng(3)
        b = random_board(rng, 7, 7, 0.5)[None]
        imgs = {ev.symmetry(b, t).tobytes() for t in range(8)}
        self.assertEqual(len(imgs), 8)
        r = random_board(rng, 7, 5, 0.5)[None]
        self.assertEqual(len({ev.symmetry(r, t).tobytes() for t in range(4)}), 4)
        self.assertEqual(ev.augment(np.repeat(r, 6, 0), rng).shape, (6, 5, 7))


class Model(unittest.TestCase):
    def test_board_sum_matches_plain_ops(self):
        rng = np.random.default_rng(6)
        w = (torch.randn(ev.NCODES, 16, dtype=torch.float64) * 0.4).requires_grad_()
        b = torch.rand(16, dtype=torch.float64, requires_grad=True)
        idx = torch.from_numpy(rng.integers(0, ev.NCODES, (500, 4)))
        idx[:300] = torch.from_numpy(rng.integers(0, 20, (300, 4)))  # repeated codes
        g = torch.randn(5, 16, dtype=torch.float64)
        x1 = ev.board_sum()(w, b, idx, 5)
        (x1 * g).sum().backward()
        gw, gb = w.grad.clone(), b.grad.clone()
        w.grad = b.grad = None
        x2 = (torch.nn.functional.embedding_bag(idx, w, mode="sum") + b).clamp(0, 1)
        x2 = x2.view(5, 100, 16).sum(1)
        (x2 * g).sum().backward()
        torch.testing.assert_close(x1, x2)
        torch.testing.assert_close(gw, w.grad)
        torch.testing.assert_close(gb, b.grad)


class Export(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        torch.manual_seed(0)
        self.model = ev.make_model(16, 8)
        with torch.no_grad():
            self.model.table.weight.uniform_(-1.0, 1.0)
            self.model.table.weight[5, 3] = -46.0
            self.model.table.weight[7, 0] = 46.0

    def tearDown(self):
        self.tmp.cleanup()

    def test_layout_reads_back(self):
        path = os.path.join(self.tmp.name, "w.bin")
        ev.export(self.model, "freestyle", path)
        size = os.path.getsize(path)
        self.assertEqual(size, 36 + 2 * 2460 * 16 + 2 * 16 + 4 * (8 * 32 + 8 + 64 + 8 + 8 + 1))
        wt = tiny_reader(path)
        pr = self.model.params()
        self.assertEqual((wt["rule"], wt["C"], wt["H"]), ("freestyle", 16, 8))
        np.testing.assert_array_equal(wt["Tq"], np.round(pr["T"].astype(np.float64) * 128))
        np.testing.assert_array_equal(wt["Bq"], np.round(pr["B"].astype(np.float64) * 128))
        self.assertEqual(wt["Tq"][5, 3], -5888)
        self.assertEqual(wt["Tq"][7, 0], 5888)
        for k in ("W1", "b1", "W2", "b2", "w3"):
            np.testing.assert_array_equal(wt[k], pr[k])
        self.assertEqual(wt["b3"], pr["b3"])
        rule, q = ev.read_weights(path)
        self.assertEqual(rule, "freestyle")
        np.testing.assert_array_equal(q["Tq"], wt["Tq"])
        # Truncated or padded files are refused by the module's reader.
        blob = read(path)
        for bad in (blob[:-1], blob + b"\0"):
            with open(path, "wb") as f:
                f.write(bad)
            with self.assertRaises(ValueError):
                ev.read_weights(path)

    def test_refuses_out_of_range(self):
        path = os.path.join(self.tmp.name, "w.bin")
        for k, v in (("T", 47.0), ("T", -46.9), ("B", 50.0), ("T", float("nan"))):
            pr = self.model.params()
            pr[k] = pr[k].copy()
            pr[k].flat[3] = v
            with self.assertRaises(ValueError, msg=(k, v)):
                ev.quantize(pr)
        pr = self.model.params()
        pr["W2"] = pr["W2"].copy()
        pr["W2"][0, 0] = float("inf")
        with self.assertRaises(ValueError):
            ev.quantize(pr)
        with self.assertRaises(ValueError):
            ev.write_weights(path, ev.quantize(self.model.params()), "gomoku")
        self.assertFalse(os.path.exists(path))
        # 46.875 * 128 = 6000 is still accepted.
        pr = self.model.params()
        pr["T"] = pr["T"].copy()
        pr["T"][0, 0] = 46.875
        self.assertEqual(ev.quantize(pr)["Tq"][0, 0], 6000)

    def test_golden_equals_reference(self):
        path = os.path.join(self.tmp.name, "w.bin")
        golden = os.path.join(self.tmp.name, "g.txt")
        # Large table values, so that the clamps to 0 and 128 both matter.
        with torch.no_grad():
            self.model.table.weight.normal_(0.0, 0.4)
        diff = ev.export(self.model, "freestyle", path, golden)
        items = ev.read_golden(golden)
        self.assertGreaterEqual(len(items), 28)
        wt = tiny_reader(path)
        sizes = {s for s, _, _, _ in items}
        self.assertEqual(sizes, {(15, 15), (20, 20)})
        self.assertIn(((15, 15), []), [(s, m) for s, m, _, _ in items])
        stms = set()
        for (w, h), moves, rule, v in items:
            self.assertEqual(rule, "freestyle")
            b = ev.play((w, h), moves)
            stm = 1 + (len(moves) & 1)
            stms.add(stm)
            for x, y in moves:
                self.assertFalse(ev.has_five(b, x, y))
            self.assertAlmostEqual(v, slow_value(wt, b, stm), delta=2e-6)
            self.assertEqual(f"{ev.quantized_value(ev.read_weights(path)[1], b, stm):.6f}",
                             f"{v:.6f}")
        self.assertEqual(stms, {1, 2})
        # The golden lines' text.
        first = read(golden).decode().splitlines()[0]
        self.assertRegex(first, r"^15 15 freestyle ; -?\d+\.\d{6}$")
        self.assertLess(diff, 0.5)


class Training(unittest.TestCase):
    def test_tiny_run_lowers_loss_and_quantized_agrees(self):
        rng = np.random.default_rng(4)
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "games.jsonl")
            write_games(data, rng, 30)
            rule, games = ev.read_games([data])
            pos = ev.positions(games, 0.5)
            self.assertEqual(set(pos), {(9, 9), (15, 15)})
            # Targets by hand for one game's first scored ply.
            g = games[0]
            s = g["scores"][2]
            z = 1.0 if g["result"] == "black" else (0.5 if g["result"] == "draw" else 0.0)
            sp = 1.0 if s >= 990000 else (0.0 if s <= -990000 else 1 / (1 + math.exp(-s / 1000)))
            b, stm, t, gi, off = pos[(9, 9)]
            self.assertEqual((stm[0], gi[0]), (1, 0))
            self.assertFalse(off.any())
            self.assertAlmostEqual(float(t[0]), 0.5 * sp + 0.5 * z, places=6)
            np.testing.assert_array_equal(b[0], ev.play((9, 9), g["moves"][:2]))

            out = os.path.join(d, "run")
            model, rule, st = ev.train(train_args(data=[data], out=out, steps=60, log_every=20))
            self.assertIn(st["best_step"], (20, 40, 60))
            self.assertEqual(rule, "freestyle")
            self.assertLess(st["train_end"], st["train_start"] - 0.02, st)
            self.assertLess(st["max_quant_diff"], 0.05, st)
            for f in ("checkpoint.pt", "best.pt", "train_log.csv", "eval.bin", "eval.golden.txt",
                      "stats.json"):
                self.assertTrue(os.path.exists(os.path.join(out, f)), f)
            # Float model and quantized reference on trained weights, on the records'
            # positions (both sizes).
            rule2, q = ev.read_weights(os.path.join(out, "eval.bin"))
            worst = 0.0
            for size, (b, stm, t, gi, _) in pos.items():
                fv = ev.float_values(model, b[:40], stm[:40])
                for k in range(min(40, len(b))):
                    worst = max(worst, abs(fv[k] - ev.quantized_value(q, b[k], int(stm[k]))))
            self.assertLess(worst, 0.05)
            # Resume continues the step count; export from best.pt gives the same file.
            _, _, st2 = ev.train(train_args(data=[data], out=out, steps=5, resume=True))
            self.assertEqual(st2["step"], 65)
            bin2 = os.path.join(d, "again.bin")
            self.assertEqual(ev.main(["export", os.path.join(out, "best.pt"), "--out", bin2,
                                      "--golden", os.path.join(d, "again.txt")]), 0)
            self.assertEqual(read(bin2), read(os.path.join(out, "eval.bin")))
            play_a_game_with(self, os.path.join(out, "eval.bin"))


def play_a_game_with(test, weights):
    """The engine plays with the exported file: the release binary (built by `make test`
    before this runs) loads it through `--eval` and plays a short Gomocup game, its debug log
    saying the network was used. Skipped with a notice where the binary is missing."""
    import subprocess
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    pcn = os.path.join(root, "target", "release", "pcn")
    if not os.path.exists(pcn):
        print(f"NOTICE: {pcn} missing (cargo build --release): the exported network was not played")
        return
    script = "START 9\nBEGIN\nTURN 4,5\nTURN 3,3\nTURN 5,5\nEND\n"
    r = subprocess.run([pcn, "--eval", weights, "--nodes", "2000", "--log-level", "debug",
                        "gomocup"], input=script, capture_output=True, text=True, timeout=120)
    test.assertEqual(r.returncode, 0, r.stderr)
    moves = [l for l in r.stdout.splitlines() if l.count(",") == 1]
    test.assertEqual(len(moves), 4, r.stdout)
    test.assertIn("evaluation network (freestyle", r.stderr)



class Residual(unittest.TestCase):
    def test_a_residual_run_starts_at_the_offset_and_exports_pcneval2(self):
        rng = np.random.default_rng(7)
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "games.jsonl")
            write_games(data, rng, 30, classic=True)
            rule, games = ev.read_games([data])
            pos = ev.positions(games, 1.0, residual=True)
            plain = ev.positions(games, 1.0)
            # Only positions with a classic value, each with it (in logits) as the offset.
            for size in pos:
                n_res, n_plain = len(pos[size][2]), len(plain[size][2])
                self.assertTrue(0 < n_res < n_plain, (size, n_res, n_plain))
            g = games[0]
            want = [c / 1000.0 for s, c in zip(g["scores"], g["classic"])
                    if s is not None and c is not None]
            b, stm, t, gi, off = pos[tuple(g["size"])]
            np.testing.assert_allclose(off[gi == 0], want, rtol=1e-6)

            out = os.path.join(d, "run")
            model, rule, st = ev.train(train_args(data=[data], out=out, steps=60, log_every=20,
                                                  residual=True, lam=1.0))
            # The correction starts at zero: the first loss is the offset's alone.
            ho_sets = []
            for size, (b, stm, t, gi, off) in pos.items():
                ho = np.array([ev.held_out(games[k], k) for k in gi], dtype=bool)
                if ho.any():
                    ho_sets.append((t[ho], off[ho]))
            tt = np.concatenate([x[0] for x in ho_sets]).astype(np.float64)
            oo = np.concatenate([x[1] for x in ho_sets]).astype(np.float64)
            self.assertAlmostEqual(st["heldout_start"], ev.bce(1 / (1 + np.exp(-oo)), tt), places=4)
            self.assertLess(st["train_end"], st["train_start"], st)
            with open(os.path.join(out, "eval.bin"), "rb") as f:
                self.assertEqual(f.read(8), b"PCNEVAL2")
            _, q = ev.read_weights(os.path.join(out, "eval.bin"))
            self.assertTrue(q["residual"])
            # Records without the field cannot train a residual network.
            bare = os.path.join(d, "bare.jsonl")
            write_games(bare, rng, 4)
            with self.assertRaises(ValueError):
                ev.positions(ev.read_games([bare])[1], 1.0, residual=True)


class Leaves(unittest.TestCase):
    def test_a_leaf_lines_target_is_its_score_whatever_lambda(self):
        """`pcn leaf-labels` lines: only the last position is scored, its `result` is the
        root game's, so the target is the score's alone; a game line still mixes."""
        leaf = {"size": [9, 9], "rule": "freestyle", "seed": 1, "index": 0, "nodes": 600,
                "moves": [[4, 4], [3, 3], [5, 5]], "scores": [None, None, 700],
                "result": "white", "classic": [None, None, 300], "leaf": True, "_where": "t"}
        game = dict(leaf, leaf=False, scores=[None, 700, None], classic=[None, 300, None])
        for lam in (0.0, 0.5, 1.0):
            b, stm, t, gi, off = ev.positions([leaf], lam, residual=True)[(9, 9)]
            self.assertEqual(len(t), 1)
            self.assertAlmostEqual(float(t[0]), 1 / (1 + math.exp(-0.7)), places=6)
            self.assertAlmostEqual(float(off[0]), 0.3, places=6)
            self.assertEqual(int(stm[0]), 1)
            np.testing.assert_array_equal(b[0], ev.play((9, 9), leaf["moves"][:2]))
            _, stm2, t2, _, _ = ev.positions([game], lam, residual=True)[(9, 9)]
            # White to move at ply 1 and White won: z = 1.
            self.assertEqual(int(stm2[0]), 2)
            self.assertAlmostEqual(float(t2[0]), lam / (1 + math.exp(-0.7)) + (1 - lam), places=6)


if __name__ == "__main__":
    unittest.main()
