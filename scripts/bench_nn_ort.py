#!/usr/bin/env python3
"""ONNX Runtime (CPU execution provider) throughput on a model.onnx, for `make bench-nn`.

Prints one line per batch size, in the same format as `pcn nnbench`:
    batch B: N positions/s (median of R runs of I evaluations)
Inputs are random 0/1 planes (speed does not depend on the values).
"""
import argparse
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--net", required=True, help="model directory or model.onnx")
    ap.add_argument("--batch", default="1,8,64", help="comma-separated batch sizes")
    ap.add_argument("--threads", type=int, default=1, help="intra_op_num_threads")
    ap.add_argument("--seconds", type=float, default=0.5, help="time per repetition")
    ap.add_argument("--reps", type=int, default=7, help="timed repetitions (median reported)")
    a = ap.parse_args()
    path = a.net if a.net.endswith(".onnx") else a.net.rstrip("/") + "/model.onnx"
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    _, planes, n, _ = inp.shape
    rng = np.random.default_rng(0)
    print(f"onnxruntime {ort.__version__} {path} threads {a.threads}")
    for b in [int(x) for x in a.batch.split(",") if x]:
        x = (rng.random((b, planes, n, n)) < 0.3).astype(np.float32)
        feed = {inp.name: x}
        # Warm-up, and size one repetition to about --seconds.
        t0 = time.perf_counter()
        iters = 0
        while time.perf_counter() - t0 < 0.3 or iters < 3:
            sess.run(None, feed)
            iters += 1
        per = (time.perf_counter() - t0) / iters
        k = max(1, int(a.seconds / per))
        rates = []
        cpu_rates = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            c0 = time.process_time()
            for _ in range(k):
                sess.run(None, feed)
            rates.append(k * b / (time.perf_counter() - t0))
            cpu_rates.append(k * b / max(time.process_time() - c0, 1e-3))
        print(f"batch {b}: {statistics.median(rates):.0f} positions/s (median of {a.reps} runs of {k} evaluations"
              f", {statistics.median(cpu_rates):.0f} per CPU-second)")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
