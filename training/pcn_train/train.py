"""Training: the paper's losses (eq. 4) with 8-fold symmetry augmentation, SGD with
momentum, checkpoints, a CSV log and a loss plot."""

import csv
import math
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

from . import data
from .export import read_safetensors
from .model import Net


class Buffer:
    """The replay buffer: the last `window` usable positions of the record files, kept as
    tensors on the training device, so that sampling, unpacking, symmetry augmentation and
    the two-hot targets run there and a GPU is not starved by the host."""

    def __init__(self, paths, window, label="max", device="cpu"):
        recs = []
        h0 = None
        for p in paths:
            if not os.path.exists(p):
                continue
            h, r = data.read_records(p)
            if h0 is not None and (h["board_size"], h["planes"], h["actions"], h["bins"]) != (
                    h0["board_size"], h0["planes"], h0["actions"], h0["bins"]):
                raise ValueError(f"{p}: other shapes than {paths[0]}")
            h0 = h0 or h
            recs.append(r[(r["flags"] & data.FLAG_NO_WINNER) == 0])
        if h0 is None:
            raise ValueError("no record files")
        r = np.concatenate(recs)
        r = r[-window:] if window > 0 else r
        self.h = h0
        self.r = r  # host copy: golden inputs are taken from it
        self.n = len(r)
        self.dev = torch.device(device)
        key = "cost_max" if label == "max" else "cost_heur"
        t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(self.dev)
        self.bits = t(r["bits"])
        self.policy = t(r["policy"])
        self.costs = t(r[key])
        self.full = t(((r["flags"] & data.FLAG_FULL_SEARCH) != 0).astype(np.float32))
        self.has_cost = t(((r["flags"] & data.FLAG_NO_COST) == 0).astype(np.float32))
        self.z = t(r["z"])
        n = h0["board_size"]
        self.perms = torch.as_tensor(data.symmetry_perms(n, h0["actions"])).to(self.dev)
        self.shifts = torch.arange(8, dtype=torch.uint8, device=self.dev)

    def __len__(self):
        return self.n

    def _two_hot(self, v):
        bins = self.h["bins"]
        v = torch.nan_to_num(v, nan=bins - 1.0).clamp(0.0, bins - 1.0)
        lo = v.floor().long()
        hi = (lo + 1).clamp(max=bins - 1)
        frac = v - lo.float()
        t = torch.zeros(v.shape[0], bins, device=v.device)
        t.scatter_add_(1, lo[:, None], (1.0 - frac)[:, None])
        t.scatter_add_(1, hi[:, None], frac[:, None])
        return t

    def batch(self, gen, size, augment=True):
        """One batch (x, policy, full, black two-hot, white two-hot, z, has_cost) on the
        buffer's device; `gen` is a torch.Generator on that device."""
        h = self.h
        n, p = h["board_size"], h["planes"]
        idx = torch.randint(0, self.n, (size,), device=self.dev, generator=gen)
        bits = self.bits[idx]
        # Bit i % 8 of byte i // 8 (little bit order), as data.unpack_planes.
        x = ((bits[:, :, None] >> self.shifts) & 1).reshape(size, -1)[:, : p * n * n].float()
        pol = self.policy[idx]
        if augment:
            s = torch.randint(0, 8, (size,), device=self.dev, generator=gen)
            perm = self.perms[s]  # [B, A]: T_s(a)
            board = perm[:, : n * n]
            flat = x.reshape(size, p, n * n)
            xs = torch.empty_like(flat)
            # x_s[T_s(a)] = x[a]; the policy target moves the same way, pass stays.
            xs.scatter_(2, board[:, None, :].expand_as(flat), flat)
            x = xs
            ps = torch.empty_like(pol)
            ps.scatter_(1, perm, pol)
            pol = ps
        x = x.reshape(size, p, n, n)
        costs = self.costs[idx]
        return (x, pol, self.full[idx], self._two_hot(costs[:, 0]), self._two_hot(costs[:, 1]),
                self.z[idx], self.has_cost[idx])


def load_weights(net, model_dir):
    """Starts `net` from an exported model (model.safetensors of the same shape), e.g. the
    network now in weights/, so a new training run continues it instead of starting cold."""
    path = model_dir if model_dir.endswith(".safetensors") else os.path.join(model_dir, "model.safetensors")
    try:
        tensors = read_safetensors(path)
    except ValueError as e:
        raise SystemExit(str(e))
    own = net.state_dict()
    state = {}
    for name, arr in tensors.items():
        if name not in own or tuple(own[name].shape) != tuple(arr.shape):
            raise SystemExit(f"{path}: tensor {name} {list(arr.shape)} does not fit this network "
                             f"(blocks/filters/bins must match)")
        state[name] = torch.from_numpy(arr.copy())
    missing = [k for k in own if k not in state and not k.endswith("num_batches_tracked")]
    if missing:
        raise SystemExit(f"{path}: missing tensors {missing[:3]}")
    net.load_state_dict(state, strict=False)


def pick_device(name):
    """`auto`: the first CUDA GPU when PyTorch sees one, else the CPU."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: PyTorch sees no CUDA GPU")
    return torch.device(name)


def losses(net, batch):
    """(total, policy, black, white or value) for one batch."""
    x, pol, full, tb, tw, z, has_cost = batch
    out = net(x)
    logp = F.log_softmax(out[0], 1)
    lp = -(pol * logp).sum(1)
    lp = (lp * full).sum() / full.sum().clamp(min=1.0)
    if net.cfg["kind"] == "pcn":
        # Records from proofs carry no cost target: their heads' losses are left out.
        n_cost = has_cost.sum().clamp(min=1.0)
        lb = (-(tb * F.log_softmax(out[1], 1)).sum(1) * has_cost).sum() / n_cost
        lw = (-(tw * F.log_softmax(out[2], 1)).sum(1) * has_cost).sum() / n_cost
        return lp + lb + lw, lp, lb, lw
    lv = F.mse_loss(out[1].squeeze(1), z)
    return lp + lv, lp, lv, torch.zeros((), device=lv.device)


def plot(csv_path, out_path):
    """Loss curves: PNG through matplotlib when it is installed, else a small SVG."""
    rows = list(csv.DictReader(open(csv_path)))
    if not rows:
        return None
    keys = ["loss", "policy", "black", "white"]
    steps = [float(r["step"]) for r in rows]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for k in keys:
            ax.plot(steps, [float(r[k]) for r in rows], label=k)
        ax.set_xlabel("step")
        ax.legend()
        out = os.path.splitext(out_path)[0] + ".png"
        fig.savefig(out, dpi=80)
        return out
    except ImportError:
        pass
    w, hgt, pad = 600, 300, 40
    vals = [float(r[k]) for r in rows for k in keys]
    lo, hi = min(vals), max(vals)
    x0, x1 = min(steps), max(steps)
    sx = lambda s: pad + (s - x0) / max(x1 - x0, 1e-9) * (w - 2 * pad)
    sy = lambda v: hgt - pad - (v - lo) / max(hi - lo, 1e-9) * (hgt - 2 * pad)
    colours = ["#000", "#c33", "#36c", "#393"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{hgt}">',
             f'<rect width="{w}" height="{hgt}" fill="white"/>',
             f'<text x="{pad}" y="15" font-size="11">loss {lo:.3f}..{hi:.3f} over steps '
             f'{x0:.0f}..{x1:.0f}</text>']
    for i, k in enumerate(keys):
        pts = " ".join(f"{sx(s):.1f},{sy(float(r[k])):.1f}" for s, r in zip(steps, rows))
        parts.append(f'<polyline fill="none" stroke="{colours[i]}" points="{pts}"/>')
        parts.append(f'<text x="{w - pad - 60}" y="{30 + 14 * i}" font-size="11" '
                     f'fill="{colours[i]}">{k}</text>')
    parts.append("</svg>")
    with open(out_path, "w") as f:
        f.write("\n".join(parts))
    return out_path


def train(args):
    """Trains (or continues from the checkpoint) for args.steps steps; returns the net."""
    torch.set_num_threads(max(1, args.threads))
    torch.manual_seed(args.seed)
    dev = pick_device(getattr(args, "device", "cpu"))
    buf = Buffer(args.records, args.window, args.label, dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    h = buf.h
    if len(buf) == 0:
        raise SystemExit("no usable positions in the records")
    os.makedirs(args.dir, exist_ok=True)
    ckpt = os.path.join(args.dir, "checkpoint.pt")
    net = Net(h["game"], h["board_size"], h["planes"], h["actions"], args.blocks,
              args.filters, args.kind, h["bins"]).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    step = 0
    if os.path.exists(ckpt) and not args.fresh:
        st = torch.load(ckpt, weights_only=False, map_location=dev)
        if st["cfg"] != net.cfg:
            raise SystemExit(f"{ckpt}: checkpoint of another network {st['cfg']}; use --fresh")
        net.load_state_dict(st["net"])
        opt.load_state_dict(st["opt"])
        for g in opt.param_groups:
            g["lr"] = args.lr
        step = st["step"]
    elif getattr(args, "init", None):
        load_weights(net, args.init)
    log_path = os.path.join(args.dir, "train_log.csv")
    new_log = not os.path.exists(log_path)
    logf = open(log_path, "a", newline="")
    log = csv.writer(logf)
    if new_log:
        log.writerow(["step", "loss", "policy", "black", "white", "samples_per_s", "buffer"])
    net.train()
    seconds = getattr(args, "seconds", 0.0) or 0.0
    t0 = time.time()
    # The losses add up on the device; reading them only at log time keeps the GPU busy.
    acc = torch.zeros(4, device=dev)
    k = 0
    for i in range(args.steps):
        b = buf.batch(gen, args.batch, augment=not args.no_augment)
        tot, lp, lb, lw = losses(net, b)
        opt.zero_grad(set_to_none=True)
        tot.backward()
        opt.step()
        step += 1
        acc += torch.stack([tot.detach(), lp.detach(), lb.detach(), lw.detach()])
        k += 1
        out_of_time = seconds > 0 and time.time() - t0 >= seconds
        if step % args.log_every == 0 or i == args.steps - 1 or out_of_time:
            sps = (i + 1) * args.batch / max(time.time() - t0, 1e-9)
            m = (acc / k).tolist()
            log.writerow([step] + [f"{v:.5f}" for v in m] + [f"{sps:.0f}", len(buf)])
            logf.flush()
            print(f"step {step} loss {m[0]:.4f} (policy {m[1]:.4f} black {m[2]:.4f} "
                  f"white {m[3]:.4f}) {sps:.0f} samples/s buffer {len(buf)}", flush=True)
            acc.zero_()
            k = 0
        if out_of_time:
            break
    logf.close()
    torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "step": step,
                "cfg": net.cfg}, ckpt + ".tmp")
    os.replace(ckpt + ".tmp", ckpt)
    plot(log_path, os.path.join(args.dir, "loss.svg"))
    # Export and golden vectors are written from the CPU copy.
    net = net.cpu()
    net.eval()
    return net, buf, step
