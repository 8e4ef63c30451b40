"""Self-play record files (``pcn-selfplay-v1``, docs/training.md) and board symmetries."""

import json
import struct

import numpy as np

MAGIC = b"PCNSP01\n"
FLAG_FULL_SEARCH = 1
FLAG_LAST = 2
FLAG_NO_WINNER = 4
FLAG_NO_COST = 8  # records made from proofs (`pcn verify --records`): no proof-cost target


def read_header(path):
    """Returns (header dict, offset of the first record)."""
    with open(path, "rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:8] != MAGIC:
            raise ValueError(f"{path}: not a pcn self-play record file")
        (n,) = struct.unpack("<I", head[8:12])
        h = json.loads(f.read(n))
    if h.get("format") != "pcn-selfplay-v1":
        raise ValueError(f"{path}: format {h.get('format')!r}")
    return h, 12 + n


def record_dtype(h):
    """The NumPy structured dtype of one record."""
    n_in = h["planes"] * h["board_size"] ** 2
    dt = np.dtype([
        ("game", "<u4"), ("ply", "<u2"), ("to_move", "u1"), ("flags", "u1"),
        ("z", "<f4"), ("cost_max", "<f4", (2,)), ("cost_heur", "<f4", (2,)),
        ("root_cost", "<f4"), ("bits", "u1", ((n_in + 7) // 8,)),
        ("policy", "<f4", (h["actions"],)),
    ])
    assert dt.itemsize == h["record_bytes"], (dt.itemsize, h["record_bytes"])
    return dt


def read_records(path):
    """Returns (header, structured array of every complete record)."""
    h, off = read_header(path)
    dt = record_dtype(h)
    raw = np.fromfile(path, dtype=np.uint8, offset=off)
    whole = (raw.size // dt.itemsize) * dt.itemsize
    return h, raw[:whole].view(dt)


def unpack_planes(bits, h):
    """Bit-packed inputs [B, bytes] -> float32 [B, P, N, N] (bit i % 8 of byte i // 8)."""
    n = h["board_size"]
    p = h["planes"]
    x = np.unpackbits(bits, axis=1, bitorder="little")[:, : p * n * n]
    return x.reshape(-1, p, n, n).astype(np.float32)


# Symmetry table of ../shared/pcn/README.md §6 on centred coordinates (u, v).
_SYM = [
    lambda u, v: (u, v), lambda u, v: (v, -u), lambda u, v: (-u, -v), lambda u, v: (-v, u),
    lambda u, v: (-u, v), lambda u, v: (v, u), lambda u, v: (u, -v), lambda u, v: (-v, -u),
]


def symmetry_perms(n, actions):
    """perm[s][a] = T_s(a) for the 8 symmetries (a pass action, index n*n, maps to itself)."""
    c = n // 2
    perms = np.zeros((8, actions), dtype=np.int64)
    for s, f in enumerate(_SYM):
        for a in range(actions):
            if a >= n * n:
                perms[s, a] = a
                continue
            y, x = divmod(a, n)
            u, v = f(x - c, y - c)
            perms[s, a] = (v + c) * n + (u + c)
    return perms


def two_hot(v, bins):
    """Two-hot targets [B, bins] of scalars v (clamped to [0, bins-1])."""
    v = np.clip(np.nan_to_num(v, nan=bins - 1.0), 0.0, bins - 1.0)
    lo = np.floor(v).astype(np.int64)
    hi = np.minimum(lo + 1, bins - 1)
    frac = (v - lo).astype(np.float32)
    t = np.zeros((v.shape[0], bins), dtype=np.float32)
    rows = np.arange(v.shape[0])
    np.add.at(t, (rows, lo), 1.0 - frac)
    np.add.at(t, (rows, hi), frac)
    return t
