#!/usr/bin/env python3
"""ONNX Runtime (CPU execution provider) speed on a model.onnx, and the side-by-side table
of `make bench-nn`.

Single mode (`--net`): prints one line per batch size, in the format of `pcn nnbench`:
    batch B: N positions/s (median of R runs of I evaluations, C per CPU-second)

Table mode (`--table --pcn BINARY --net DIR ...`): for every model and thread count,
alternates ONNX Runtime and `pcn nnbench` for several rounds (so both see the same machine
load), takes the median of the rounds and prints a Markdown table with the ratios.

Inputs are random 0/1 planes: the speed does not depend on the values.
"""
import argparse
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort


def session(net, threads):
    path = net if net.endswith(".onnx") else net.rstrip("/") + "/model.onnx"
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return path, ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def measure(sess, batch, seconds, reps, rng):
    """Median positions/s and positions per CPU-second over `reps` timed repetitions."""
    inp = sess.get_inputs()[0]
    _, planes, n, _ = inp.shape
    x = (rng.random((batch, planes, n, n)) < 0.3).astype(np.float32)
    feed = {inp.name: x}
    t0 = time.perf_counter()
    iters = 0
    while time.perf_counter() - t0 < 0.3 or iters < 3:  # warm-up, and timing of one run
        sess.run(None, feed)
        iters += 1
    k = max(1, int(seconds / ((time.perf_counter() - t0) / iters)))
    rates, cpu_rates = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(k):
            sess.run(None, feed)
        rates.append(k * batch / (time.perf_counter() - t0))
        cpu_rates.append(k * batch / max(time.process_time() - c0, 1e-3))
    return statistics.median(rates), statistics.median(cpu_rates), k


def pcn_rates(binary, net, threads, batches, seconds, reps):
    cmd = [binary, "nnbench", "--net", net, "--threads", str(threads),
           "--batch", ",".join(map(str, batches)), "--seconds", str(seconds), "--reps", str(reps)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    got = {}
    for m in re.finditer(r"batch (\d+): (\d+) positions/s", out):
        got[int(m.group(1))] = float(m.group(2))
    return got


def table(a):
    batches = [int(x) for x in a.batch.split(",") if x]
    threads = [int(x) for x in a.threads_list.split(",") if x]
    rng = np.random.default_rng(0)
    rows = []
    for net in a.net:
        for t in threads:
            _, sess = session(net, t)
            ort_r = {b: [] for b in batches}
            pcn_r = {b: [] for b in batches}
            for _ in range(a.rounds):
                for b in batches:
                    ort_r[b].append(measure(sess, b, a.seconds, a.reps, rng)[0])
                got = pcn_rates(a.pcn, net, t, batches, a.seconds, a.reps)
                for b in batches:
                    pcn_r[b].append(got.get(b, float("nan")))
            for b in batches:
                o, p = statistics.median(ort_r[b]), statistics.median(pcn_r[b])
                rows.append((net.rstrip("/").split("/")[-1], t, b, o, p))
                print(f"  {rows[-1][0]} threads {t} batch {b}: ort {o:.0f} pcn {p:.0f}", file=sys.stderr)
    print(f"onnxruntime {ort.__version__}; medians of {a.rounds} alternating rounds, "
          f"each the median of {a.reps} runs of ~{a.seconds} s")
    print()
    print("| model | threads | batch | ONNX Runtime pos/s | pcn cpu pos/s | ratio |")
    print("|---|---|---|---|---|---|")
    for name, t, b, o, p in rows:
        print(f"| {name} | {t} | {b} | {o:.0f} | {p:.0f} | {p / o:.2f}x |")


def single(a):
    path, sess = session(a.net[0], a.threads)
    rng = np.random.default_rng(0)
    print(f"onnxruntime {ort.__version__} {path} threads {a.threads}")
    for b in [int(x) for x in a.batch.split(",") if x]:
        r, c, k = measure(sess, b, a.seconds, a.reps, rng)
        print(f"batch {b}: {r:.0f} positions/s (median of {a.reps} runs of {k} evaluations, "
              f"{c:.0f} per CPU-second)")
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--net", required=True, action="append", help="model directory or model.onnx (repeatable)")
    ap.add_argument("--batch", default="1,8,64", help="comma-separated batch sizes")
    ap.add_argument("--threads", type=int, default=1, help="intra_op_num_threads (single mode)")
    ap.add_argument("--seconds", type=float, default=0.5, help="time per repetition")
    ap.add_argument("--reps", type=int, default=7, help="timed repetitions (median reported)")
    ap.add_argument("--table", action="store_true", help="side-by-side table with pcn nnbench")
    ap.add_argument("--pcn", default="target/release/pcn", help="pcn binary (table mode)")
    ap.add_argument("--threads-list", default="1,2", help="thread counts (table mode)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (table mode)")
    a = ap.parse_args()
    if a.table:
        table(a)
    else:
        single(a)


if __name__ == "__main__":
    main()
