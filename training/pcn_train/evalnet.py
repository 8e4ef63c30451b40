"""The eval net of the alpha-beta Gomoku player (issue 61): training, export, golden file.

Line codes, network, quantization and file layout are those of docs/model-format.md
("Eval net weight file"); docs/training.md ("The eval net") has the commands.

    python -m pcn_train.evalnet train --data games.jsonl [...] --out DIR [--steps N] [--resume]
    python -m pcn_train.evalnet export DIR/checkpoint.pt --out FILE.bin --golden FILE.txt

Boards are int8 arrays [H, W] (row y, column x; pcn's Move index y*W + x) holding 0 empty,
1 Black, 2 White. The weight file, the golden values and the max |float - quantized|
check come from the numpy integer reference below (`quantized_value`), not the float model.
"""

import argparse
import csv
import json
import math
import os
import struct
import sys
import time
import warnings

import numpy as np

REACH = 3  # points looked at on each side of a point along a line
HS = 40  # half-line shapes (3^3 + 3^2 + 3 + 1)
NPAIRS = HS * (HS + 1) // 2  # unordered pairs of half-lines: 820
NCODES = 3 * NPAIRS  # 2460
DIRS = ((1, 0), (0, 1), (1, 1), (1, -1))
OFF = (39, 36, 27, 0)  # OFF[n], n = leading on-board points of a half line
WALL = 3
MAGIC = b"PCNEVAL1"
# A residual network: the same layout; its value is a correction the player adds to the
# pattern evaluation (the `classic` field of the game records was its fixed offset).
MAGIC_RESIDUAL = b"PCNEVAL2"
RULES = ("freestyle", "exact", "renju", "caro", "caro-exact", "4t")
QSCALE = 128  # Tq = round(T * 128)
QLIMIT = 6000  # |T * 128| bound: a sum of 5 stays within i16
CLAMP = 46.0  # training keeps T and B within +-46 (46 * 128 = 5888)
XSCALE = 4096.0  # 128 * 32
WIN_SCORE = 990000  # |score| >= this: a proven win / loss


# ---------------------------------------------------------------------------------------
# Line codes


def code_ref(board, x, y, d, p):
    """code(c, dir, p) of the spec for point (x, y), direction DIRS[d], perspective p,
    one point at a time (the obviously-correct reference for `codes`)."""
    h, w = board.shape
    dx, dy = DIRS[d]

    def state(qx, qy):
        v = int(board[qy, qx])
        return 0 if v == 0 else (1 if v == p else 2)

    def half(s):
        n, acc = 0, 0
        for i in range(1, REACH + 1):
            qx, qy = x + i * s * dx, y + i * s * dy
            if not (0 <= qx < w and 0 <= qy < h):
                break
            acc += state(qx, qy) * 3 ** (i - 1)
            n += 1
        return OFF[n] + acc

    a, b = sorted((half(-1), half(1)))
    return state(x, y) * NPAIRS + a * HS - a * (a - 1) // 2 + (b - a)


def pair_index(h0, h1):
    """The unordered pair id of half ids h0, h1 (arrays): a line read backwards is the same
    shape."""
    a, b = np.minimum(h0, h1), np.maximum(h0, h1)
    return a * HS - a * (a - 1) // 2 + (b - a)


def relative(boards, p):
    """0 empty, 1 a stone of colour p[k], 2 the other colour; boards [N, H, W], p [N]."""
    p = np.asarray(p, dtype=np.int8).reshape(-1, 1, 1)
    return np.where(boards == 0, 0, np.where(boards == p, 1, 2)).astype(np.int64)


_OFF = np.array(OFF, dtype=np.int64)
_GEOMETRY = {}


def geometry(h, w):
    """For each direction and half (left, right): the weights lead_i * 3^(i-1) [REACH, H, W]
    (lead_i: q_1..q_i all on the board) and OFF[n] [H, W] (n: the leading on-board points),
    found on an H x W board padded with the wall state. Cached per board shape."""
    g = _GEOMETRY.get((h, w))
    if g is None:
        pad = np.full((h + 8, w + 8), WALL, dtype=np.int64)
        pad[4:4 + h, 4:4 + w] = 0
        g = []
        for dx, dy in DIRS:
            for s in (-1, 1):
                lead = np.ones((h, w), dtype=bool)
                cnt = np.zeros((h, w), dtype=np.int64)
                wts = np.zeros((REACH, h, w), dtype=np.int32)
                for i in range(1, REACH + 1):
                    oy, ox = 4 + s * i * dy, 4 + s * i * dx
                    lead &= pad[oy:oy + h, ox:ox + w] != WALL
                    cnt += lead
                    wts[i - 1] = lead * 3 ** (i - 1)
                g.append((wts, _OFF[cnt].astype(np.int32)))
        _GEOMETRY[(h, w)] = g
    return g


def codes(boards, p):
    """The line codes of every point of a batch of boards of one size: [N, 4, H, W] int64.
    boards [N, H, W] (0/1/2), p [N] the perspective colour (1 Black, 2 White).
    The half ids count the leading on-board points only (`geometry`: the wall rule)."""
    rel = relative(boards, p).astype(np.int32)
    n, h, w = rel.shape
    pad = np.zeros((n, h + 8, w + 8), dtype=np.int32)
    pad[:, 4:4 + h, 4:4 + w] = rel
    g = geometry(h, w)
    out = np.empty((n, 4, h, w), dtype=np.int64)
    for d, (dx, dy) in enumerate(DIRS):
        halves = []
        for k, s in enumerate((-1, 1)):
            wts, off = g[2 * d + k]
            acc = np.broadcast_to(off, (n, h, w)).copy()
            for i in range(1, REACH + 1):
                oy, ox = 4 + s * i * dy, 4 + s * i * dx
                acc += pad[:, oy:oy + h, ox:ox + w] * wts[i - 1]
            halves.append(acc)
        out[:, d] = rel * NPAIRS + pair_index(halves[0], halves[1])
    return out


def _swap_table():
    """SWAP[code(c, d, p)] = code(c, d, other colour): own and other stones exchanged."""
    half = np.empty(HS, dtype=np.int64)
    for n in range(REACH + 1):
        for v in range(3 ** n):
            digits = [(v // 3 ** i) % 3 for i in range(n)]
            half[OFF[n] + v] = OFF[n] + sum(((3 - t) % 3) * 3 ** i for i, t in enumerate(digits))
    pa, pb = np.empty(NPAIRS, dtype=np.int64), np.empty(NPAIRS, dtype=np.int64)
    for a in range(HS):
        for b in range(a, HS):
            k = a * HS - a * (a - 1) // 2 + (b - a)
            pa[k], pb[k] = a, b
    c = np.arange(NCODES)
    centre, k = c // NPAIRS, c % NPAIRS
    return ((3 - centre) % 3) * NPAIRS + pair_index(half[pa[k]], half[pb[k]])


SWAP = _swap_table()


def both_codes(boards, stm):
    """(codes for the side to move, codes for the other side)."""
    me = codes(boards, np.asarray(stm, dtype=np.int8))
    return me, SWAP[me]


def symmetry(boards, t):
    """Board symmetry t of a batch [N, H, W]: 8 on square boards (t % 4 quarter turns, then a
    mirror for t >= 4), 4 on others (identity, the two mirrors, the half turn)."""
    h, w = boards.shape[1:]
    if h == w:
        b = np.rot90(boards, t % 4, axes=(1, 2))
        if t >= 4:
            b = b[:, :, ::-1]
    else:
        b = boards
        if t & 1:
            b = b[:, ::-1, :]
        if t & 2:
            b = b[:, :, ::-1]
    return np.ascontiguousarray(b)


def augment(boards, rng):
    """Each board of the batch under one of its symmetries drawn at random."""
    k = 8 if boards.shape[1] == boards.shape[2] else 4
    s = rng.integers(0, k, boards.shape[0])
    out = np.empty_like(boards)
    for t in range(k):
        m = s == t
        if m.any():
            out[m] = symmetry(boards[m], t)
    return out


# ---------------------------------------------------------------------------------------
# Game records -> positions


def play(size, moves):
    """The board [H, W] after `moves` [(x, y), ...] from the empty board, Black first."""
    w, h = size
    b = np.zeros((h, w), dtype=np.int8)
    for i, (x, y) in enumerate(moves):
        if not (0 <= x < w and 0 <= y < h) or b[y, x] != 0:
            raise ValueError(f"move {i} ({x},{y}) is off the board or on a stone")
        b[y, x] = 1 + (i & 1)
    return b


def score_prob(s):
    """sigmoid(score / 1000), exactly 1 / 0 for a proven win / loss."""
    if s >= WIN_SCORE:
        return 1.0
    if s <= -WIN_SCORE:
        return 0.0
    return 1.0 / (1.0 + math.exp(-s / 1000.0))


def read_games(paths, rule=None):
    """The games of JSON-lines record files (those of `rule`, or of the first game's rule
    when all games share it). Returns (rule, [record dict, ...])."""
    games = []
    for path in paths:
        with open(path) as f:
            for ln, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    g = json.loads(line)
                except json.JSONDecodeError:
                    # A line being written by a running self-play: only the last may be cut.
                    print(f"NOTICE: {path}:{ln}: not JSON, skipped", file=sys.stderr)
                    continue
                g["_where"] = f"{path}:{ln}"
                games.append(g)
    rules = sorted({g["rule"] for g in games})
    if rule is None:
        if len(rules) > 1:
            raise SystemExit(f"records of several rules {rules}: pick one with --rule")
        rule = rules[0] if rules else "freestyle"
    return rule, [g for g in games if g["rule"] == rule]


def positions(games, lam=0.5, residual=False):
    """Every scored position of the games: dict size (W, H) -> (boards [N, H, W] int8,
    side to move [N] int8, target [N] float32, game number [N] int64 (into `games`),
    offset [N] float32). With `residual`, only the positions the pattern evaluation scored
    (the records' `classic` field), each with that value as a logit for its offset; without,
    every scored position, offset 0."""
    acc = {}
    for gi, g in enumerate(games):
        w, h = g["size"]
        moves, scores = g["moves"], g["scores"]
        if len(scores) != len(moves):
            raise ValueError(f"{g['_where']}: {len(moves)} moves but {len(scores)} scores")
        classic = g.get("classic")
        if residual:
            if classic is None:
                raise ValueError(f"{g['_where']}: no `classic` field (a residual network needs "
                                 "records written by a pcn that keeps it)")
            if len(classic) != len(moves):
                raise ValueError(f"{g['_where']}: {len(moves)} moves but {len(classic)} classic values")
        res = {"black": 1, "white": 2, "draw": 0}[g["result"]]
        # A leaf line's result is its root game's, not the leaf's: its target is the score.
        lam_g = 1.0 if g.get("leaf") else lam
        b = np.zeros((h, w), dtype=np.int8)
        dst = acc.setdefault((w, h), ([], [], [], [], []))
        for i, (x, y) in enumerate(moves):
            stm = 1 + (i & 1)
            s = scores[i]
            if s is not None and not (residual and classic[i] is None):
                z = 0.5 if res == 0 else (1.0 if res == stm else 0.0)
                dst[0].append(b.copy())
                dst[1].append(stm)
                dst[2].append(lam_g * score_prob(s) + (1.0 - lam_g) * z)
                dst[3].append(gi)
                dst[4].append(classic[i] / 1000.0 if residual else 0.0)
            if not (0 <= x < w and 0 <= y < h) or b[y, x] != 0:
                raise ValueError(f"{g['_where']}: move {i} ({x},{y}) is off the board or on a stone")
            b[y, x] = stm
    out = {}
    for size, (bs, stm, t, gi, off) in acc.items():
        if bs:
            out[size] = (np.stack(bs), np.array(stm, dtype=np.int8),
                         np.array(t, dtype=np.float32), np.array(gi, dtype=np.int64),
                         np.array(off, dtype=np.float32))
    return out


def held_out(game, k):
    """Every 10th game (by its record index; k, its place in the files, without one) is
    held out."""
    return game.get("index", k) % 10 == 9


# ---------------------------------------------------------------------------------------
# Quantized weights: the file and the numpy integer reference


def quantize(params):
    """Float parameters (dict of numpy arrays: T [NCODES, C], B [C], W1 [H, 2C], b1 [H],
    W2 [H, H], b2 [H], w3 [H], b3 [] ) -> the file's values; refuses out-of-range ones."""
    q = {}
    for k in ("T", "B"):
        v = np.asarray(params[k], dtype=np.float64) * QSCALE
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{k}: value not finite")
        if np.abs(v).max(initial=0.0) > QLIMIT:
            raise ValueError(f"{k}: |{k} * 128| = {np.abs(v).max():.1f} > {QLIMIT} "
                             f"(training clamps to +-{CLAMP})")
        q[k + "q"] = np.round(v).astype(np.int16)
    for k in ("W1", "b1", "W2", "b2", "w3", "b3"):
        v = np.asarray(params[k], dtype=np.float32)
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{k}: value not finite")
        q[k] = v
    return q


def file_size(c, h):
    return 8 + 16 + 12 + 2 * NCODES * c + 2 * c + 4 * (h * 2 * c + h + h * h + h + h + 1)


def write_weights(path, q, rule, residual=False):
    """Writes the weight file (little-endian) of quantized values `q` (see `quantize`);
    `residual`: marked as a correction to the pattern evaluation (MAGIC_RESIDUAL)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r} (one of {', '.join(RULES)})")
    c = q["Bq"].shape[0]
    h = q["b1"].shape[0]
    if not (16 <= c <= 256 and c % 16 == 0) or not (1 <= h <= 256):
        raise ValueError(f"C = {c} must be a multiple of 16 in 16..=256, H = {h} in 1..=256")
    shapes = {"Tq": (NCODES, c), "Bq": (c,), "W1": (h, 2 * c), "b1": (h,), "W2": (h, h),
              "b2": (h,), "w3": (h,), "b3": ()}
    for k, s in shapes.items():
        if tuple(q[k].shape) != s:
            raise ValueError(f"{k}: shape {q[k].shape}, expected {s}")
    parts = [MAGIC_RESIDUAL if residual else MAGIC, rule.encode("ascii").ljust(16, b"\0"), struct.pack("<III", c, h, NCODES),
             q["Tq"].astype("<i2").tobytes(), q["Bq"].astype("<i2").tobytes()]
    for k in ("W1", "b1", "W2", "b2", "w3", "b3"):
        parts.append(np.ascontiguousarray(q[k], dtype="<f4").tobytes())
    blob = b"".join(parts)
    assert len(blob) == file_size(c, h)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)


def read_weights(path):
    """Reads and checks a weight file as the engine does. Returns (rule, q); q["residual"]
    says whether it is a residual network."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 36 or blob[:8] not in (MAGIC, MAGIC_RESIDUAL):
        raise ValueError(f"{path}: not a {MAGIC.decode()} file")
    rule = blob[8:24].rstrip(b"\0").decode("ascii")
    c, h, nc = struct.unpack_from("<III", blob, 24)
    if nc != NCODES or not (16 <= c <= 256 and c % 16 == 0) or not (1 <= h <= 256):
        raise ValueError(f"{path}: C {c}, H {h}, NCODES {nc} out of range")
    if len(blob) != file_size(c, h):
        raise ValueError(f"{path}: {len(blob)} bytes, expected {file_size(c, h)}")
    off = 36
    q = {}
    for k, dt, shape in (("Tq", "<i2", (NCODES, c)), ("Bq", "<i2", (c,)), ("W1", "<f4", (h, 2 * c)),
                         ("b1", "<f4", (h,)), ("W2", "<f4", (h, h)), ("b2", "<f4", (h,)),
                         ("w3", "<f4", (h,)), ("b3", "<f4", ())):
        n = int(np.prod(shape))
        a = np.frombuffer(blob, dtype=dt, count=n, offset=off).reshape(shape)
        off += n * np.dtype(dt).itemsize
        q[k] = a.astype(np.int16 if dt == "<i2" else np.float32)
    if np.abs(q["Tq"].astype(np.int32)).max() > QLIMIT or np.abs(q["Bq"].astype(np.int32)).max() > QLIMIT:
        raise ValueError(f"{path}: |Tq| or |Bq| > {QLIMIT}")
    for k in ("W1", "b1", "W2", "b2", "w3", "b3"):
        if not np.all(np.isfinite(q[k])):
            raise ValueError(f"{path}: {k} not finite")
    q["residual"] = blob[:8] == MAGIC_RESIDUAL
    return rule, q


def quantized_x(q, board, p):
    """x_p of the quantized inference: P_p = sum_c clamp(Bq + sum_dir Tq[code], 0, 128),
    x_p = P_p / 4096 (f32)."""
    cd = codes(board[None], [p])[0]  # [4, H, W]
    fq = q["Bq"].astype(np.int32) + q["Tq"][cd].astype(np.int32).sum(0)  # [H, W, C]
    assert np.abs(fq).max() <= 32767, "i16 overflow"
    aq = np.clip(fq, 0, 128)
    pp = aq.reshape(-1, aq.shape[-1]).sum(0, dtype=np.int32)
    return pp.astype(np.float32) / np.float32(XSCALE)


def quantized_value(q, board, stm):
    """The engine's logit v for the side to move `stm` (1 Black, 2 White), in f32."""
    z = np.concatenate([quantized_x(q, board, stm), quantized_x(q, board, 3 - stm)])
    h1 = np.maximum(q["W1"] @ z + q["b1"], np.float32(0))
    h2 = np.maximum(q["W2"] @ h1 + q["b2"], np.float32(0))
    return float(np.float32(q["w3"] @ h2 + q["b3"]))


# ---------------------------------------------------------------------------------------
# Golden positions


def has_five(b, x, y):
    """Whether the stone at (x, y) is in a line of five or more of its colour."""
    h, w = b.shape
    v = b[y, x]
    for dx, dy in DIRS:
        n = 1
        for s in (-1, 1):
            qx, qy = x + s * dx, y + s * dy
            while 0 <= qx < w and 0 <= qy < h and b[qy, qx] == v:
                n += 1
                qx, qy = qx + s * dx, qy + s * dy
        if n >= 5:
            return True
    return False


def random_moves(rng, size, count, where=None):
    """`count` alternate moves (Black first) on points drawn from `where` (a list of (x, y),
    default every point) that never make a line of five."""
    w, h = size
    pts = list(where) if where is not None else [(x, y) for y in range(h) for x in range(w)]
    b = np.zeros((h, w), dtype=np.int8)
    moves = []
    order = rng.permutation(len(pts))
    for k in order:
        if len(moves) == count:
            break
        x, y = pts[k]
        b[y, x] = 1 + (len(moves) & 1)
        if has_five(b, x, y):
            b[y, x] = 0
            continue
        moves.append((int(x), int(y)))
    return moves


def golden_positions(seed=61):
    """About 30 (size, moves) pairs: 15x15 and 20x20, the empty board, a single stone,
    random middle games of several densities, edge- and corner-heavy positions, both sides
    to move, no line of five anywhere."""
    rng = np.random.default_rng(seed)
    out = []
    for n in (15, 20):
        size = (n, n)
        edge = [(x, y) for y in range(n) for x in range(n) if min(x, y, n - 1 - x, n - 1 - y) <= 1]
        rim = [(x, y) for y in range(n) for x in range(n) if min(x, y, n - 1 - x, n - 1 - y) == 0]
        corner = [(x, y) for y in range(n) for x in range(n)
                  if (x < 4 or x >= n - 4) and (y < 4 or y >= n - 4)]
        centre = [(x, y) for y in range(n) for x in range(n) if abs(x - n // 2) <= 3 and abs(y - n // 2) <= 3]
        out.append((size, []))
        out.append((size, [(n // 2, n // 2)]))
        out.append((size, [(0, 0), (n - 1, n - 1)]))
        for count in (3, 8, 13, 24):
            out.append((size, random_moves(rng, size, count, centre)))
        for count in (30, 61 if n == 15 else 110, 120 if n == 15 else 220):
            out.append((size, random_moves(rng, size, count)))
        for count in (9, 20, 35):
            out.append((size, random_moves(rng, size, count, edge)))
        out.append((size, random_moves(rng, size, 16, rim)))
        out.append((size, random_moves(rng, size, 21, corner)))
    return out


def write_golden(path, q, rule, items):
    """`W H rule x1,y1 ... ; v` per position, v the quantized reference's logit (%.6f)."""
    lines = []
    values = []
    for (w, h), moves in items:
        b = play((w, h), moves)
        v = quantized_value(q, b, 1 + (len(moves) & 1))
        values.append(v)
        mv = "".join(f" {x},{y}" for x, y in moves)
        lines.append(f"{w} {h} {rule}{mv} ; {v:.6f}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return values


def read_golden(path):
    """[(size, moves, rule, v), ...] of a golden file."""
    out = []
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        line = line.strip()
        if not line:
            continue
        head, v = line.split(";")
        f = head.split()
        moves = [tuple(int(t) for t in m.split(",")) for m in f[3:]]
        out.append(((int(f[0]), int(f[1])), moves, f[2], float(v)))
    return out


# ---------------------------------------------------------------------------------------
# The float model (PyTorch)


def _torch():
    import torch
    return torch


_BOARD_SUM = None


def board_sum():
    """board_sum(T, B, idx, n) = sum over each board's points of clamp(B + sum over the 4
    directions of T[code], 0, 1): [n, C] for codes idx [n * points, 4]. One autograd node:
    the forward is an EmbeddingBag sum, the backward keeps only the clamp's mask and, on
    the CPU, turns the table's gradient into one sparse (CSR) product with the codes
    radix-sorted by numpy (they fit in 16 bits): about 2x faster than PyTorch's own ops."""
    global _BOARD_SUM
    if _BOARD_SUM is not None:
        return _BOARD_SUM
    torch = _torch()
    F = torch.nn.functional

    class BoardSum(torch.autograd.Function):
        @staticmethod
        def forward(ctx, weight, bias, idx, n):
            f = F.embedding_bag(idx, weight, mode="sum") + bias
            mask = (f > 0) & (f < 1)
            ctx.save_for_backward(idx, mask)
            ctx.rows = weight.shape[0]
            return f.clamp_(0.0, 1.0).view(n, -1, f.shape[1]).sum(1)

        @staticmethod
        def backward(ctx, g):
            idx, mask = ctx.saved_tensors
            n, c = g.shape
            gf = (mask.view(n, -1, c) * g[:, None, :]).view(-1, c)
            gb = gf.sum(0)
            if idx.device.type != "cpu":
                gw = torch.zeros(ctx.rows, c, dtype=g.dtype, device=g.device)
                gw.index_add_(0, idx.reshape(-1), gf.repeat_interleave(idx.shape[1], 0))
                return gw, gb, None, None
            flat = idx.reshape(-1).numpy()
            order = np.argsort(flat.astype(np.uint16), kind="stable")
            crow = np.zeros(ctx.rows + 1, dtype=np.int64)
            np.cumsum(np.bincount(flat, minlength=ctx.rows), out=crow[1:])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Sparse CSR tensor support is in beta state"
                m = torch.sparse_csr_tensor(
                    torch.from_numpy(crow), torch.from_numpy(order // idx.shape[1]),
                    torch.ones(len(order), dtype=g.dtype), size=(ctx.rows, idx.shape[0]),
                    check_invariants=False)
                return m @ gf, gb, None, None

    _BOARD_SUM = BoardSum.apply
    return _BOARD_SUM


def make_model(c=32, h=32, residual=False):
    torch = _torch()
    nn = torch.nn
    bsum = board_sum()

    class EvalNet(nn.Module):
        """T (an EmbeddingBag's table: the 4 directions' rows are summed) + B, clamp(0, 1),
        the sum over the board / 32 for each side, then the 2C -> H -> H -> 1 head."""

        def __init__(self):
            super().__init__()
            self.cfg = dict(channels=c, hidden=h)
            if residual:
                self.cfg["residual"] = True
            self.table = nn.EmbeddingBag(NCODES, c, mode="sum")
            self.bias = nn.Parameter(torch.empty(c))
            self.fc1 = nn.Linear(2 * c, h)
            self.fc2 = nn.Linear(h, h)
            self.out = nn.Linear(h, 1)
            with torch.no_grad():
                # A small table: at first every point's F is about B, inside (0, 1), so
                # every channel passes gradient.
                self.table.weight.normal_(0.0, 0.02)
                self.bias.uniform_(0.25, 0.75)
                if residual:
                    # A correction starts at none: the pattern evaluation alone.
                    self.out.weight.zero_()
                    self.out.bias.zero_()

        def side(self, cd):
            """x [N, C] of codes [N, 4, H, W]."""
            idx = cd.permute(0, 2, 3, 1).reshape(-1, 4)
            return bsum(self.table.weight, self.bias, idx, cd.shape[0]) / 32.0

        def forward(self, cd_me, cd_opp):
            n = cd_me.shape[0]
            x = self.side(torch.cat([cd_me, cd_opp]))
            z = torch.cat([x[:n], x[n:]], 1)
            z = torch.relu(self.fc1(z))
            z = torch.relu(self.fc2(z))
            return self.out(z).squeeze(1)

        def clamp_(self):
            with torch.no_grad():
                self.table.weight.clamp_(-CLAMP, CLAMP)
                self.bias.clamp_(-CLAMP, CLAMP)

        def params(self):
            """The float parameters under the names of `quantize`."""
            g = lambda t: t.detach().cpu().numpy().astype(np.float32)
            return {"T": g(self.table.weight), "B": g(self.bias), "W1": g(self.fc1.weight),
                    "b1": g(self.fc1.bias), "W2": g(self.fc2.weight), "b2": g(self.fc2.bias),
                    "w3": g(self.out.weight)[0], "b3": g(self.out.bias)[0]}

    return EvalNet()


def float_values(model, boards, stm):
    """The float model's logits for a batch of boards of one size."""
    torch = _torch()
    me, opp = both_codes(boards, stm)
    with torch.no_grad():
        return model(torch.from_numpy(me), torch.from_numpy(opp)).numpy().astype(np.float64)


def load_checkpoint(path):
    torch = _torch()
    st = torch.load(path, map_location="cpu", weights_only=False)
    m = make_model(st["cfg"]["channels"], st["cfg"]["hidden"], st["cfg"].get("residual", False))
    m.load_state_dict(st["model"])
    m.eval()
    return m, st


def export(model, rule, out_bin, golden=None, items=None):
    """Quantizes `model` into `out_bin`; writes the golden file from the numpy integer
    reference on the written file. Returns the max |float - quantized| logit difference
    over the golden positions (None without a golden file)."""
    write_weights(out_bin, quantize(model.params()), rule, model.cfg.get("residual", False))
    if golden is None:
        return None
    rule2, q = read_weights(out_bin)
    items = golden_positions() if items is None else items
    qv = write_golden(golden, q, rule2, items)
    diff = 0.0
    for ((w, h), moves), v in zip(items, qv):
        fv = float_values(model, play((w, h), moves)[None], [1 + (len(moves) & 1)])[0]
        diff = max(diff, abs(fv - v))
    return diff


# ---------------------------------------------------------------------------------------
# Training


class Data:
    """Positions of one board size, split into training and held-out games."""

    def __init__(self, boards, stm, target, offset, train_mask):
        self.tr = (boards[train_mask], stm[train_mask], target[train_mask], offset[train_mask])
        self.ho = (boards[~train_mask], stm[~train_mask], target[~train_mask], offset[~train_mask])


def bce(p, t):
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return float(np.mean(-(t * np.log(p) + (1 - t) * np.log(1 - p))))


def subset(sets, cap, seed=0):
    """At most `cap` positions of `sets` [(boards, stm, target, offset)], a fixed random
    choice spread over the sets in proportion (the loss measurements' positions)."""
    size = sum(len(s[2]) for s in sets)
    if size <= cap:
        return sets
    rng = np.random.default_rng(seed)
    out = []
    for b, s, t, o in sets:
        k = int(round(len(t) * cap / size))
        i = np.sort(rng.choice(len(t), k, replace=False))
        out.append((b[i], s[i], t[i], o[i]))
    return out


def mean_loss(model, sets, chunk=512):
    """Mean BCE (with logits; the offset added) over the positions of `sets`
    [(boards, stm, target, offset)], no augmentation."""
    torch = _torch()
    tot = n = 0.0
    for b, s, t, o in sets:
        for i in range(0, len(t), chunk):
            j = min(len(t), i + chunk)
            v = torch.from_numpy(float_values(model, b[i:j], s[i:j]) + o[i:j].astype(np.float64))
            tt = torch.from_numpy(t[i:j].astype(np.float64))
            tot += float(torch.nn.functional.binary_cross_entropy_with_logits(v, tt, reduction="sum"))
            n += j - i
    return tot / n if n else float("nan")


def train(a):
    """Trains on the record files `a.data` into `a.out`; returns (the exported model: the
    best held-out state, rule, stats)."""
    torch = _torch()
    F = torch.nn.functional
    torch.set_num_threads(max(1, a.threads))
    rule, games = read_games(a.data, a.rule)
    pos = positions(games, a.lam, a.residual)
    if not pos:
        raise SystemExit("no scored positions in the records")
    ho_game = np.array([held_out(g, k) for k, g in enumerate(games)], dtype=bool)
    sets = {}
    for size, (b, s, t, gi, off) in sorted(pos.items()):
        sets[size] = Data(b, s, t, off, ~ho_game[gi])
    n_tr = sum(len(d.tr[2]) for d in sets.values())
    n_ho = sum(len(d.ho[2]) for d in sets.values())
    if n_tr == 0:
        raise SystemExit("no training positions (all games held out)")
    sizes = list(sets)
    w = np.array([len(sets[s].tr[2]) for s in sizes], dtype=np.float64)
    w /= w.sum()
    print(f"rule {rule}: {len(games)} games ({int(ho_game.sum())} held out), "
          f"{n_tr} training and {n_ho} held-out positions, sizes "
          + ", ".join(f"{s[0]}x{s[1]}: {len(sets[s].tr[2]) + len(sets[s].ho[2])}" for s in sizes),
          flush=True)
    tr_sets = subset([d.tr for d in sets.values()], a.eval_cap, 1)
    ho_sets = subset([d.ho for d in sets.values() if len(d.ho[2])], a.eval_cap, 2)
    mean_t = float(np.concatenate([d.tr[2] for d in sets.values()]).mean())
    ho_t = np.concatenate([x[2] for x in ho_sets]) if n_ho else np.zeros(0)
    const = bce(np.full_like(ho_t, mean_t), ho_t) if n_ho else float("nan")
    if a.residual and n_ho:
        ho_o = np.concatenate([x[3] for x in ho_sets]).astype(np.float64)
        print(f"held-out: the pattern evaluation alone {bce(1 / (1 + np.exp(-ho_o)), ho_t):.4f}",
              flush=True)
    floor = bce(ho_t, ho_t) if n_ho else float("nan")
    print(f"held-out: constant baseline {const:.4f} (the training targets' mean {mean_t:.4f}), "
          f"floor {floor:.4f} (the targets' own entropy)", flush=True)

    os.makedirs(a.out, exist_ok=True)
    ckpt = os.path.join(a.out, "checkpoint.pt")
    torch.manual_seed(a.seed)
    model = make_model(a.channels, a.hidden, a.residual)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    step = 0
    rng = np.random.default_rng(a.seed)
    if a.resume and os.path.exists(ckpt):
        st = torch.load(ckpt, map_location="cpu", weights_only=False)
        if st["cfg"] != model.cfg:
            raise SystemExit(f"{ckpt}: a network {st['cfg']}, not {model.cfg}")
        if st.get("rule", rule) != rule:
            raise SystemExit(f"{ckpt}: trained on rule {st['rule']}, the records are {rule}")
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        for g in opt.param_groups:
            g["lr"] = a.lr
        step = st["step"]
        rng = np.random.default_rng([a.seed, step])
        print(f"resumed {ckpt} at step {step}", flush=True)
    elif os.path.exists(ckpt):
        print(f"NOTICE: {ckpt} exists and is replaced (--resume continues it)", flush=True)
    log_path = os.path.join(a.out, "train_log.csv")
    new_log = not (a.resume and os.path.exists(log_path))
    logf = open(log_path, "a" if not new_log else "w", newline="")
    log = csv.writer(logf)
    if new_log:
        log.writerow(["step", "train_loss", "heldout_loss", "constant_baseline", "positions_per_s"])
    stats = {"train_start": mean_loss(model, tr_sets),
             "heldout_start": mean_loss(model, ho_sets) if n_ho else float("nan"),
             "constant": const, "floor": floor, "train_positions": n_tr, "heldout_positions": n_ho}
    print(f"step {step}: train {stats['train_start']:.4f} held-out {stats['heldout_start']:.4f}",
          flush=True)
    # The export is the state with the lowest held-out loss among the measurements
    # (every --log-every steps): OUT/best.pt, remeasured on this run's held-out set when
    # resuming.
    best_path = os.path.join(a.out, "best.pt")
    best = {"heldout": float("inf"), "step": None}
    if a.resume and os.path.exists(best_path) and n_ho:
        bm, bst = load_checkpoint(best_path)
        if bm.cfg == model.cfg:
            best = {"heldout": mean_loss(bm, ho_sets), "step": bst["step"]}
            print(f"best so far: step {best['step']}, held-out {best['heldout']:.4f}", flush=True)

    def save(path, extra=None):
        st = {"model": model.state_dict(), "step": step, "cfg": model.cfg, "rule": rule,
              "lambda": a.lam, "data": [os.path.abspath(p) for p in a.data]}
        st.update(extra or {})
        torch.save(st, path + ".tmp")
        os.replace(path + ".tmp", path)

    t0 = time.time()
    acc, k, done = 0.0, 0, 0
    model.train()
    for i in range(a.steps):
        sz = sizes[rng.choice(len(sizes), p=w)]
        b, s, t, o = sets[sz].tr
        idx = rng.integers(0, len(t), a.batch)
        bb = b[idx]
        if not a.no_augment:
            bb = augment(bb, rng)
        me, opp = both_codes(bb, s[idx])
        v = model(torch.from_numpy(me), torch.from_numpy(opp)) + torch.from_numpy(o[idx])
        loss = F.binary_cross_entropy_with_logits(v, torch.from_numpy(t[idx]))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        model.clamp_()
        step += 1
        done += 1
        acc += float(loss.detach())
        k += 1
        out_of_time = a.seconds > 0 and time.time() - t0 >= a.seconds
        last = i == a.steps - 1 or out_of_time
        if step % a.log_every == 0 or last:
            ho = mean_loss(model.eval(), ho_sets) if n_ho else float("nan")
            model.train()
            pps = done * a.batch / max(time.time() - t0, 1e-9)
            log.writerow([step, f"{acc / k:.5f}", f"{ho:.5f}", f"{const:.5f}", f"{pps:.0f}"])
            logf.flush()
            mark = ""
            if n_ho and ho < best["heldout"]:
                best = {"heldout": ho, "step": step}
                save(best_path, {"heldout": ho})
                mark = " (best)"
            print(f"step {step}: train {acc / k:.4f} (running) held-out {ho:.4f}{mark} "
                  f"constant {const:.4f} {pps:.0f} positions/s", flush=True)
            acc, k = 0.0, 0
        if out_of_time:
            break
    logf.close()
    model.eval()
    save(ckpt, {"opt": opt.state_dict()})
    if not n_ho:
        save(best_path)  # nothing to choose by: the last state
        best = {"heldout": float("nan"), "step": step}
    stats["train_end"] = mean_loss(model, tr_sets)
    stats["heldout_end"] = mean_loss(model, ho_sets) if n_ho else float("nan")
    stats["step"] = step
    print(f"step {step}: train {stats['train_end']:.4f} held-out {stats['heldout_end']:.4f} "
          f"constant {const:.4f} floor {floor:.4f}", flush=True)
    out_model = model
    if best["step"] is not None and best["step"] != step:
        out_model, _ = load_checkpoint(best_path)
    stats["best_step"] = best["step"]
    stats["train_best"] = mean_loss(out_model, tr_sets)
    stats["heldout_best"] = mean_loss(out_model, ho_sets) if n_ho else float("nan")
    print(f"best (exported): step {best['step']}: train {stats['train_best']:.4f} "
          f"held-out {stats['heldout_best']:.4f}", flush=True)
    if not a.no_export:
        diff = export(out_model, rule, os.path.join(a.out, "eval.bin"),
                      os.path.join(a.out, "eval.golden.txt"))
        stats["max_quant_diff"] = diff
        print(f"exported {os.path.join(a.out, 'eval.bin')} and eval.golden.txt (from best.pt); "
              f"max |float - quantized| {diff:.5f}", flush=True)
    with open(os.path.join(a.out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1)
    return out_model, rule, stats


def parser():
    p = argparse.ArgumentParser(prog="python -m pcn_train.evalnet")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train on self-play game records (JSON lines)")
    t.add_argument("--data", nargs="+", required=True, help="game record files (.jsonl)")
    t.add_argument("--out", required=True, help="run directory: checkpoint.pt (the last state), "
                   "best.pt (the lowest held-out loss), train_log.csv, stats.json, and the "
                   "export of best.pt: eval.bin, eval.golden.txt")
    t.add_argument("--steps", type=int, default=3000)
    t.add_argument("--seconds", type=float, default=0.0,
                   help="stop after this many seconds of training (0: run all --steps)")
    t.add_argument("--batch", type=int, default=256)
    t.add_argument("--lambda", dest="lam", type=float, default=0.5,
                   help="target = L * sigmoid(score / 1000) + (1 - L) * result")
    t.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate")
    t.add_argument("--channels", type=int, default=32, help="C (a multiple of 16)")
    t.add_argument("--hidden", type=int, default=32, help="H")
    t.add_argument("--rule", help="train on the games of this rule (default: the records' "
                   "only rule)")
    t.add_argument("--residual", action="store_true",
                   help="learn a correction to the pattern evaluation (the records' `classic` "
                   "values as a fixed offset; exported as PCNEVAL2)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--log-every", type=int, default=250)
    t.add_argument("--eval-cap", type=int, default=20000,
                   help="positions at most in a loss measurement")
    t.add_argument("--no-augment", action="store_true")
    t.add_argument("--no-export", action="store_true")
    t.add_argument("--resume", action="store_true", help="continue OUT/checkpoint.pt")
    e = sub.add_parser("export", help="weight file + golden file from a checkpoint")
    e.add_argument("ckpt")
    e.add_argument("--out", required=True, help="weight file (.bin)")
    e.add_argument("--golden", help="golden file (.txt)")
    e.add_argument("--rule", help="rule name in the file (default: the checkpoint's)")
    return p


def main(argv=None):
    a = parser().parse_args(argv)
    if a.cmd == "train":
        if a.channels % 16 or not 16 <= a.channels <= 256 or not 1 <= a.hidden <= 256:
            raise SystemExit("--channels: a multiple of 16 in 16..256; --hidden: 1..256")
        train(a)
        return 0
    model, st = load_checkpoint(a.ckpt)
    rule = a.rule or st.get("rule", "freestyle")
    try:
        diff = export(model, rule, a.out, a.golden)
    except ValueError as err:
        raise SystemExit(f"export: {err}")
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes, rule {rule}, C {model.cfg['channels']}, "
          f"H {model.cfg['hidden']}, step {st['step']})")
    if a.golden:
        print(f"wrote {a.golden}; max |float - quantized| over its positions {diff:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
