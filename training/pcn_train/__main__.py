"""python -m pcn_train train|random|count: see docs/training.md."""

import argparse
import os
import sys

import numpy as np
import torch

from . import export as ex
from . import train as tr
from .model import Net


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m pcn_train")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train on record files, then export")
    t.add_argument("--records", nargs="+", required=True, help="self-play record files")
    t.add_argument("--dir", required=True, help="run directory: checkpoint, log, plot")
    t.add_argument("--export", help="model directory to write after training")
    t.add_argument("--name", default="pcn-own")
    t.add_argument("--steps", type=int, default=1000)
    t.add_argument("--seconds", type=float, default=0.0,
                   help="stop after this many seconds of training (0: run all --steps)")
    t.add_argument("--batch", type=int, default=256)
    t.add_argument("--lr", type=float, default=0.02)
    t.add_argument("--blocks", type=int, default=5)
    t.add_argument("--filters", type=int, default=64)
    t.add_argument("--kind", choices=["pcn", "alphazero"], default="pcn")
    t.add_argument("--label", choices=["max", "heur"], default="max",
                   help="b_max or b_heur cost labels")
    t.add_argument("--window", type=int, default=500000, help="replay buffer positions")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where to train: auto takes a CUDA GPU when PyTorch sees one")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--log-every", type=int, default=50)
    t.add_argument("--no-augment", action="store_true")
    t.add_argument("--fresh", action="store_true", help="ignore an existing checkpoint")
    t.add_argument("--init", help="start from this exported model directory (same blocks, "
                   "filters and bins) when the run directory has no checkpoint")
    r = sub.add_parser("random", help="export an untrained network (tests)")
    r.add_argument("--out", required=True)
    r.add_argument("--game", choices=["killallgo", "gomoku"], default="killallgo")
    r.add_argument("--blocks", type=int, default=1)
    r.add_argument("--filters", type=int, default=8)
    r.add_argument("--bins", type=int, default=32)
    r.add_argument("--kind", choices=["pcn", "alphazero"], default="pcn")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--records", help="take golden inputs from this record file")
    c = sub.add_parser("count", help="print the positions and games of record files")
    c.add_argument("records", nargs="*")
    a = p.parse_args(argv)
    if a.cmd == "count":
        # Unreadable or missing files count as empty: the device scripts count files that
        # a cut-off self-play may not have written.
        from . import data
        n = g = 0
        for path in a.records:
            try:
                _, r = data.read_records(path)
            except Exception:
                continue
            n += len(r)
            g += len(set(r["game"].tolist()))
        print(n, g)
        return 0
    if a.cmd == "train":
        net, buf, step = tr.train(a)
        if a.export:
            x = golden_inputs(buf.r, buf.h)
            ex.export(net, a.export, a.name, notes={
                "steps": step, "batch": a.batch, "lr": a.lr, "label": a.label,
                "positions_in_buffer": len(buf), "records": [os.path.relpath(r) for r in a.records]}, golden_inputs=x)
            print(f"exported {a.export}")
        return 0
    torch.manual_seed(a.seed)
    n, planes, actions = (9, 18, 82) if a.game == "killallgo" else (15, 4, 225)
    net = Net(a.game, n, planes, actions, a.blocks, a.filters, a.kind, a.bins)
    # Non-trivial BatchNorm statistics, so that the Rust loader's BN folding is exercised.
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    net.eval()
    if a.records:
        from . import data
        h, recs = data.read_records(a.records)
        x = golden_inputs(recs, h)
    else:
        g = np.random.default_rng(a.seed)
        x = (g.random((8, planes, n, n)) < 0.3).astype(np.float32)
    ex.export(net, a.out, f"random-{a.game}", golden_inputs=x)
    print(f"exported {a.out}")
    return 0


def golden_inputs(recs, h, count=8):
    """Eight positions spread over the records."""
    from . import data
    idx = np.linspace(0, len(recs) - 1, num=min(count, len(recs))).astype(int)
    return data.unpack_planes(recs[idx]["bits"], h)


if __name__ == "__main__":
    sys.exit(main())
