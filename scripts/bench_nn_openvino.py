#!/usr/bin/env python3
"""OpenVINO (CPU plugin) speed on a model.onnx beside `pcn nnbench`, alternating.

For every model and batch size: OpenVINO with its default inference precision (on a CPU with
AVX512_BF16 that is bf16), OpenVINO forced to f32, and `pcn nnbench` (f32, each of the
`--pcn` binaries given, e.g. the one before and after a change), one after the other for
`--rounds` rounds so that all see the same machine load; prints the median of the rounds
as a Markdown table with the ratios to OpenVINO. Inputs are random 0/1 planes (the speed
does not depend on the values). OpenVINO gets a static batch per size (its fastest mode),
`INFERENCE_NUM_THREADS` = `--threads`, one stream, the latency hint.

`--accuracy` prints instead how far OpenVINO's outputs (default precision and f32) are
from the model's golden outputs (golden.safetensors, the PyTorch reference), the measure
pcn's golden tests hold it to (1e-4 on logits).

OpenVINO is not a dependency of pcn or of its tests: install it into an ignored folder,
    python3 -m pip install --target .tools/openvino openvino==2026.4.0 numpy
    PYTHONPATH=.tools/openvino python3 scripts/bench_nn_openvino.py \
        --net ../shared/pcn/models/go_W-max --pcn target/release/pcn
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import openvino as ov


def compiled(core, path, batch, threads, precision):
    model = core.read_model(path)
    inp = model.inputs[0]
    shape = inp.get_partial_shape()
    shape[0] = batch
    model.reshape({inp.get_any_name(): shape})
    cfg = {
        "INFERENCE_NUM_THREADS": threads,
        "NUM_STREAMS": 1,
        "PERFORMANCE_HINT": "LATENCY",
    }
    if precision:
        cfg["INFERENCE_PRECISION_HINT"] = precision
    cm = core.compile_model(model, "CPU", cfg)
    prec = str(cm.get_property("INFERENCE_PRECISION_HINT"))
    return cm, re.sub(r"<Type: '(\w+)'>", r"\1", prec)


def measure(cm, batch, seconds, reps, rng):
    """Median positions/s over `reps` timed repetitions of about `seconds` each."""
    req = cm.create_infer_request()
    shape = [int(d) for d in cm.inputs[0].get_shape()]
    x = (rng.random(shape) < 0.3).astype(np.float32)
    t0 = time.perf_counter()
    iters = 0
    while time.perf_counter() - t0 < 0.3 or iters < 3:  # warm-up, and timing of one run
        req.infer({0: x})
        iters += 1
    k = max(1, int(seconds / ((time.perf_counter() - t0) / iters)))
    rates = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(k):
            req.infer({0: x})
        rates.append(k * batch / (time.perf_counter() - t0))
    return statistics.median(rates)


def golden(path):
    """The tensors of a golden.safetensors file (float32 only), by name."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        head = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in head.items():
        if name != "__metadata__" and t["dtype"] == "F32":
            a, b = t["data_offsets"]
            out[name] = np.frombuffer(data[a:b], dtype=np.float32).reshape(t["shape"])
    return out


def accuracy(core, net, threads):
    """Largest |difference| of OpenVINO's raw outputs from the model's golden outputs (the
    PyTorch reference), per precision: the yardstick the golden tests hold pcn to (1e-4)."""
    g = golden(net.rstrip("/") + "/golden.safetensors")
    x = g["input"]
    res = {}
    for prec in ["", "f32"]:
        cm, name = compiled(core, net.rstrip("/") + "/model.onnx", x.shape[0], threads, prec)
        out = cm.create_infer_request().infer({0: x})
        worst = 0.0
        for port, val in out.items():
            key = port.get_any_name()
            if key in g and g[key].size == val.size:
                worst = max(worst, float(np.abs(val.reshape(g[key].shape) - g[key]).max()))
        res[name] = worst
    return res


def pcn_rates(binary, net, threads, batches, seconds, reps, algo):
    cmd = [binary, "nnbench", "--net", net, "--threads", str(threads),
           "--batch", ",".join(map(str, batches)), "--seconds", str(seconds), "--reps", str(reps)]
    if algo:
        cmd += ["--algo", algo]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {int(m.group(1)): float(m.group(2))
            for m in re.finditer(r"batch (\d+): (\d+) positions/s", out)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--net", required=True, action="append", help="model directory (repeatable)")
    ap.add_argument("--pcn", action="append", default=[],
                    help="pcn binary, optionally LABEL=PATH or LABEL=PATH:ALGO (repeatable)")
    ap.add_argument("--batch", default="8,64", help="comma-separated batch sizes")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=0.5, help="time per repetition")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per round (median)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (median)")
    ap.add_argument("--accuracy", action="store_true",
                    help="print OpenVINO's largest difference from golden.safetensors instead")
    a = ap.parse_args()
    if a.accuracy:
        core = ov.Core()
        for net in a.net:
            for prec, d in accuracy(core, net, a.threads).items():
                print(f"{net.rstrip('/').split('/')[-1]}: OpenVINO {prec}: max |diff| on raw "
                      f"outputs vs golden {d:.2e}")
        return
    batches = [int(x) for x in a.batch.split(",") if x]
    pcns = []
    for spec in a.pcn or ["pcn=target/release/pcn"]:
        label, _, rest = spec.rpartition("=") if "=" in spec else ("pcn", "", spec)
        path, _, algo = rest.partition(":")
        pcns.append((label or "pcn", path, algo))
    core = ov.Core()
    rng = np.random.default_rng(0)
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[:3]
    rows = []
    for net in a.net:
        path = net.rstrip("/") + "/model.onnx"
        name = net.rstrip("/").split("/")[-1]
        nets = {}
        for b in batches:
            for prec in ["", "f32"]:
                nets[(b, prec)] = compiled(core, path, b, a.threads, prec)
        res = {}
        for _ in range(a.rounds):
            for b in batches:
                for prec in ["", "f32"]:
                    res.setdefault(("ov", prec, b), []).append(
                        measure(nets[(b, prec)][0], b, a.seconds, a.reps, rng))
            for label, binary, algo in pcns:
                got = pcn_rates(binary, net, a.threads, batches, a.seconds, a.reps, algo)
                for b in batches:
                    res.setdefault(("pcn", label, b), []).append(got.get(b, float("nan")))
        for b in batches:
            med = {k: statistics.median(v) for k, v in res.items() if k[2] == b}
            ov_def, ov_f32 = med[("ov", "", b)], med[("ov", "f32", b)]
            row = [name, b, f"{ov_def:.0f} ({nets[(b, '')][1]})", f"{ov_f32:.0f}"]
            for label, _, _ in pcns:
                p = med[("pcn", label, b)]
                row += [f"{p:.0f}", f"{p / ov_def:.2f}x", f"{p / ov_f32:.2f}x"]
            rows.append(row)
            print("  " + " ".join(map(str, row)), file=sys.stderr)
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[:3]
    print(f"openvino {ov.__version__}; {a.threads} threads; medians of {a.rounds} alternating "
          f"rounds, each the median of {a.reps} runs of ~{a.seconds} s; "
          f"load average before {' '.join(load0)}, after {' '.join(load1)}")
    print()
    head = ["model", "batch", "OpenVINO default", "OpenVINO f32"]
    for label, _, _ in pcns:
        head += [f"{label} pos/s", f"{label}/OV default", f"{label}/OV f32"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(map(str, row)) + " |")


if __name__ == "__main__":
    main()
