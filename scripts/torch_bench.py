#!/usr/bin/env python3
"""PyTorch reference for `pcn nnbench --backend cuda`: the same network, the same batches.

Builds the network of a pcn model directory (model.safetensors + model.json, the layout of
docs/model-format.md) as a torch module, checks it against the directory's golden outputs
(fp32, when golden.safetensors is there), then times it in fp16 with CUDA graphs (cuDNN
autotuned, channels-last) per batch size. Each timed call copies the batch from pinned host
memory, replays the graph and copies the outputs back, then waits, as `pcn nnbench` does;
the graph replay alone is printed beside it.

    python3 scripts/torch_bench.py --net DIR [--batch 1,8,64] [--seconds 0.3] [--reps 3]
    python3 scripts/torch_bench.py --net DIR --dry-run   # shapes only, no torch needed

Output lines: `torch-fp16 batch B: X positions/s (graph+copies), Y (graph only)`.
"""
import argparse
import json
import os
import struct
import sys
import time


def header(path):
    """The safetensors header (tensor shapes and metadata), read without any library."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))


def describe(net_dir):
    """Shapes of the network: planes, filters, blocks, board, actions, kind, bins, hidden."""
    h = header(os.path.join(net_dir, "model.safetensors"))
    meta = h.get("__metadata__", {})
    shapes = {k: v["shape"] for k, v in h.items() if k != "__metadata__"}
    js = {}
    jp = os.path.join(net_dir, "model.json")
    if os.path.exists(jp):
        with open(jp) as f:
            js = json.load(f)
    blocks = 0
    while "res%d.conv1.weight" % (blocks + 1) in shapes:
        blocks += 1
    d = {
        "name": js.get("name", meta.get("model", os.path.basename(net_dir.rstrip("/")))),
        "planes": shapes["conv.weight"][1],
        "filters": shapes["conv.weight"][0],
        "blocks": blocks,
        "n": int(meta["board_size"]),
        "actions": shapes["policy.fc.weight"][0],
        "alphazero": "value.fc1.weight" in shapes,
        "bins": shapes["blackV.fc.weight"][0] if "blackV.fc.weight" in shapes else 0,
        "hidden": shapes["value.fc1.weight"][0] if "value.fc1.weight" in shapes else 0,
        "eps": float(js.get("trunk", {}).get("bn_eps", 1e-5)),
    }
    return d


def build(d):
    import torch
    from torch import nn

    class Res(nn.Module):
        def __init__(self, f, eps):
            super().__init__()
            self.conv1 = nn.Conv2d(f, f, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(f, eps=eps)
            self.conv2 = nn.Conv2d(f, f, 3, padding=1)
            self.bn2 = nn.BatchNorm2d(f, eps=eps)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(y)) + x)

    class Head(nn.Module):
        def __init__(self, f, ch, outs, eps):
            super().__init__()
            self.conv = nn.Conv2d(f, ch, 1)
            self.bn = nn.BatchNorm2d(ch, eps=eps)
            for name, (n_in, n_out) in outs.items():
                setattr(self, name, nn.Linear(n_in, n_out))

        def feat(self, x):
            return torch.relu(self.bn(self.conv(x))).flatten(1)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            f, eps, area = d["filters"], d["eps"], d["n"] * d["n"]
            self.conv = nn.Conv2d(d["planes"], f, 3, padding=1)
            self.bn = nn.BatchNorm2d(f, eps=eps)
            for r in range(1, d["blocks"] + 1):
                setattr(self, "res%d" % r, Res(f, eps))
            self.policy = Head(f, 2, {"fc": (2 * area, d["actions"])}, eps)
            if d["alphazero"]:
                self.value = Head(f, 1, {"fc1": (area, d["hidden"]), "fc2": (d["hidden"], 1)}, eps)
            else:
                self.blackV = Head(f, 2, {"fc": (2 * area, d["bins"])}, eps)
                self.whiteV = Head(f, 2, {"fc": (2 * area, d["bins"])}, eps)

        def forward(self, x):
            x = torch.relu(self.bn(self.conv(x)))
            for r in range(1, d["blocks"] + 1):
                x = getattr(self, "res%d" % r)(x)
            p = self.policy.fc(self.policy.feat(x))
            if d["alphazero"]:
                v = torch.tanh(self.value.fc2(torch.relu(self.value.fc1(self.value.feat(x)))))
                return p, v
            return p, self.blackV.fc(self.blackV.feat(x)), self.whiteV.fc(self.whiteV.feat(x))

    return Net()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--net", required=True)
    ap.add_argument("--batch", default="1,8,64")
    ap.add_argument("--seconds", type=float, default=0.3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dry-run", action="store_true", help="print the shapes, import no torch")
    a = ap.parse_args()
    batches = [int(b) for b in a.batch.split(",") if b]
    d = describe(a.net)
    print("torch net %s: %s" % (d["name"], json.dumps(d, sort_keys=True)), flush=True)
    if a.dry_run:
        for b in batches:
            print("torch-fp16 batch %d: dry run (no timing)" % b)
        return 0
    import torch
    from safetensors.torch import load_file

    if not torch.cuda.is_available():
        print("torch: no CUDA device", file=sys.stderr)
        return 2
    net = build(d)
    missing, unexpected = net.load_state_dict(load_file(os.path.join(a.net, "model.safetensors")), strict=False)
    missing = [m for m in missing if not m.endswith("num_batches_tracked")]
    if missing or unexpected:
        print("torch: state dict mismatch: missing %s unexpected %s" % (missing, unexpected), file=sys.stderr)
        return 3
    net = net.cuda().eval()
    gold = os.path.join(a.net, "golden.safetensors")
    if os.path.exists(gold):
        g = load_file(gold)
        with torch.no_grad():
            out = net(g["input"].cuda())
        dp = (out[0].float().cpu() - g["policy_logits"]).abs().max().item()
        print("torch-fp32 golden %s: policy logits max |diff| %.2e" % (d["name"], dp), flush=True)
    torch.backends.cudnn.benchmark = True
    net = net.half().to(memory_format=torch.channels_last)
    torch.manual_seed(0)
    for b in batches:
        host_in = (torch.rand(b, d["planes"], d["n"], d["n"]) < 0.3).half().pin_memory()
        static_in = host_in.cuda().contiguous(memory_format=torch.channels_last)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.no_grad(), torch.cuda.stream(s):
            for _ in range(3):
                net(static_in)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(graph):
            static_out = net(static_in)
        host_out = [torch.empty(o.shape, dtype=o.dtype).pin_memory() for o in static_out]

        def call():
            static_in.copy_(host_in, non_blocking=True)
            graph.replay()
            for h, o in zip(host_out, static_out):
                h.copy_(o, non_blocking=True)
            torch.cuda.synchronize()

        def rate(fn, sync_each):
            t0, k = time.perf_counter(), 0
            while time.perf_counter() - t0 < 0.2 or k < 3:
                fn()
                k += 1
            torch.cuda.synchronize()
            per = (time.perf_counter() - t0) / k
            n = max(1, int(a.seconds / per))
            rates = []
            for _ in range(a.reps):
                t = time.perf_counter()
                for _ in range(n):
                    fn()
                if not sync_each:
                    torch.cuda.synchronize()
                rates.append(n * b / (time.perf_counter() - t))
            rates.sort()
            return rates[len(rates) // 2]

        full = rate(call, True)
        only = rate(graph.replay, False)
        print("torch-fp16 batch %d: %.0f positions/s (graph+copies), %.0f (graph only)" % (b, full, only), flush=True)
        del graph
    return 0


if __name__ == "__main__":
    sys.exit(main())
