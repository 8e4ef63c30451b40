"""pcn-ray against a real local Ray cluster of two nodes on loopback (issue 58).

    python3 cluster/test_cluster.py [PCN]     (PYTHONPATH must reach ray; make test does it)

One cluster for all checks (a head and a second node, one CPU each, started with
ray.cluster_utils.Cluster, token authentication, no dashboard, a small object store):

1. `pcn-ray solve` on five problems: every problem reported once, the same answers and
   node counts as plain `pcn solve` (node limits make them exact), proof files that `pcn
   verify` accepts, back in the caller's --proof-dir.
2. `pcn-ray prove` with two worker actors (one per node): the same answer, node count, jobs
   and proof file, byte for byte, as `pcn solve --workers 2` with threads.
3. Faults: `pcn-ray solve` while one task's `pcn` is killed (SIGKILL) and the second node is
   removed; `pcn-ray prove` while one worker's `pcn` is killed and then the node of the other
   worker is removed. Every problem is reported once with the same answer and proof.
4. Every socket that listens while the cluster runs is on loopback; afterwards no `pcn`,
   raylet or GCS process is left.

Prints `ok` per check; exits 1 on a failure. Takes about two minutes on two cores.
"""

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PCN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target", "release", "pcn"))
PROBLEMS = os.path.join(REPO, "docs", "data", "solve", "killallgo-own-hard")
# Five positions the focused DFPN without a network proves in 3 800-8 700 nodes, and (for
# the faults) two it proves in about 65 000 (a few seconds each).
QUICK = ["1", "12", "15", "43", "59"]
SLOW = ["18", "35"]
NODES = "150000"

os.environ["RAY_AUTH_MODE"] = "token"
# Every process of this test (the cluster's daemons, its workers, their pcn) inherits this
# marker: the checks look at those processes only, not at other work on the machine.
MARK = "PCN_CLUSTER_TEST=" + secrets.token_hex(8)
os.environ["PCN_CLUSTER_TEST"] = MARK.split("=", 1)[1]
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)

try:
    import ray  # noqa: E402  (after the token settings, which Ray reads at import)
    from ray.cluster_utils import Cluster  # noqa: E402
except ImportError:
    print("NOTICE: ray is not importable (make cluster-tools): cluster tests skipped")
    sys.exit(0)

failures = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else f": {detail}"), flush=True)
    if not cond:
        failures.append(name)


def marked(pid):
    try:
        return MARK.encode() in open(f"/proc/{pid}/environ", "rb").read()
    except OSError:
        return False


def marked_sockets():
    """Socket inodes held by this test's processes."""
    inodes = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or not marked(pid):
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    t = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if t.startswith("socket:["):
                    inodes.add(t[8:-1])
        except OSError:
            continue
    return inodes


def listening_ours():
    """(address, port) of the listening sockets of this test's processes."""
    mine = marked_sockets()
    return {(ip, port) for ip, port, inode in listening() if inode in mine}


def listening():
    """(address, port, inode) of every listening TCP socket on the machine."""
    out = set()
    for f, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            lines = open(f).read().splitlines()[1:]
        except OSError:
            continue
        for l in lines:
            parts = l.split()
            if parts[3] != "0A":
                continue
            addr, port = parts[1].split(":")
            if v6:
                loop = addr in ("00000000000000000000000001000000",) or addr.endswith("0100007F")
                ip = "::1" if loop else ("::" if set(addr) == {"0"} else addr)
            else:
                b = bytes.fromhex(addr)[::-1]
                ip = ".".join(str(x) for x in b)
            out.add((ip, int(port, 16), parts[9]))
    return out


def our_processes():
    """Processes a run may leave behind: pcn solves/workers of pcn-ray, Ray's daemons."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if marked(pid) and (PCN in cmd or "gcs_server" in cmd or "/raylet" in cmd
                            or "default_worker.py" in cmd):
            found.append((int(pid), cmd))
    return found


def pcn_solve(args):
    """Plain `pcn solve`: the JSON lines by file name."""
    out = subprocess.run([PCN] + args, capture_output=True, text=True, check=True).stdout
    return {os.path.basename(r["file"]): r for r in map(json.loads, out.splitlines())}


def pcn_ray(args, during=None, timeout=900):
    """Runs cluster/pcn-ray; `during(proc, lines)` runs on a thread meanwhile, `lines` a list
    that grows with pcn-ray's stderr lines. Returns (records by file name, all records,
    stderr, exit code)."""
    p = subprocess.Popen([os.path.join(HERE, "pcn-ray")] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    err_lines = []

    def read_err():
        for l in p.stderr:
            err_lines.append(l)

    reader = threading.Thread(target=read_err, daemon=True)
    reader.start()
    t = None
    if during:
        t = threading.Thread(target=during, args=(p, err_lines), daemon=True)
        t.start()
    out_lines = []

    def read_out():
        for l in p.stdout:
            out_lines.append(l)

    out_reader = threading.Thread(target=read_out, daemon=True)
    out_reader.start()
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        err_lines.append("\n(timed out)")
    reader.join(timeout=10)
    out_reader.join(timeout=10)
    out = "".join(out_lines)
    err = "".join(err_lines)
    if t:
        t.join(timeout=60)
    recs = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    return {os.path.basename(r["file"]): r for r in recs}, recs, err, p.returncode


def same(a, b, fields=("result", "move", "nodes", "prover")):
    return all(a.get(f) == b.get(f) for f in fields)


def verify(paths):
    r = subprocess.run([PCN, "verify"] + paths, capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


def find_pids(marker, timeout=120):
    """Pids of pcn processes whose command line holds `marker`, waiting until one runs."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        pids = [p for p, cmd in our_processes() if marker in cmd and cmd.startswith(PCN)]
        if pids:
            return pids
        time.sleep(0.05)
    return []


def main():
    if not os.access(PCN, os.X_OK):
        print(f"NOTICE: no pcn binary at {PCN}: cluster tests skipped")
        return 0
    tmp = tempfile.mkdtemp(prefix="pcn-cluster-test-")
    quick = os.path.join(tmp, "quick")
    slow = os.path.join(tmp, "mixed")
    os.mkdir(quick)
    os.mkdir(slow)
    for n in QUICK:
        for d in (quick, slow):
            os.symlink(os.path.join(PROBLEMS, n + ".sgf"), os.path.join(d, n + ".sgf"))
    for n in QUICK + SLOW:
        assert os.path.isfile(os.path.join(PROBLEMS, n + ".sgf")), n
    for n in SLOW:
        os.symlink(os.path.join(PROBLEMS, n + ".sgf"), os.path.join(slow, n + ".sgf"))
    common = ["--net", "none", "--nodes", NODES, "--time", "600"]
    t0 = time.time()
    # The references: plain pcn solve, one process.
    ref_dir = os.path.join(tmp, "ref")
    ref = pcn_solve(["solve"] + common + ["--proof-dir", ref_dir, slow])
    prove_file = os.path.join(PROBLEMS, "12.sgf")
    prove_opts = ["--net", "none", "--nodes", "300000", "--time", "600", "--job-nodes", "1000"]
    ref_prove_dir = os.path.join(tmp, "ref-prove")
    ref_prove = pcn_solve(["solve", "--workers", "2"] + prove_opts + ["--proof-dir", ref_prove_dir, prove_file])["12.sgf"]
    print(f"references: {time.time() - t0:.1f} s", flush=True)

    cluster = None
    try:
        t0 = time.time()
        node_args = dict(num_cpus=1, include_dashboard=False, node_ip_address="127.0.0.1",
                         object_store_memory=80 << 20)
        cluster = Cluster(initialize_head=True, head_node_args=node_args)
        second = cluster.add_node(**node_args)
        addr = cluster.address
        print(f"cluster of two nodes at {addr}: {time.time() - t0:.1f} s", flush=True)
        check("the cluster listens on loopback only",
              bool(ours := listening_ours()) and all(ip in ("127.0.0.1", "::1") for ip, _ in ours),
              sorted(listening_ours()))
        ray_args = ["--address", addr, "--no-progress"]

        # 1. solve on a small set.
        t0 = time.time()
        proofs = os.path.join(tmp, "proofs-solve")
        by, recs, err, code = pcn_ray(["solve"] + ray_args + common + ["--proof-dir", proofs, quick])
        print(f"pcn-ray solve, {len(QUICK)} problems: {time.time() - t0:.1f} s", flush=True)
        check("solve exits 0", code == 0, err[-2000:])
        check("solve reports every problem once", sorted(r["file"] for r in recs) ==
              sorted(os.path.join(quick, n + ".sgf") for n in QUICK), [r["file"] for r in recs])
        check("solve answers as pcn solve", all(same(by.get(n + ".sgf", {}), ref[n + ".sgf"]) for n in QUICK),
              [(by.get(n + ".sgf"), ref[n + ".sgf"]) for n in QUICK])
        files = [r["proof"] for r in recs if r.get("proof")]
        ok, text = verify(files)
        check("solve's proofs come back and verify", len(files) == len(QUICK) and
              all(f.startswith(proofs) for f in files) and ok, text[-1000:])
        check("solve prints the summary", "pcn solve: 5 problem(s)" in err and "\nwin " in err, err[-1000:])
        check("the cluster still listens on loopback only",
              bool(ours := listening_ours()) and all(ip in ("127.0.0.1", "::1") for ip, _ in ours),
              sorted(listening_ours()))

        # 2. prove with two worker actors.
        t0 = time.time()
        pdir = os.path.join(tmp, "proofs-prove")
        by, recs, err, code = pcn_ray(["prove"] + ray_args + prove_opts + ["--workers", "2", "--proof-dir", pdir, prove_file])
        print(f"pcn-ray prove, 2 workers: {time.time() - t0:.1f} s", flush=True)
        r = by.get("12.sgf", {})
        check("prove exits 0 with one line", code == 0 and len(recs) == 1, err[-2000:])
        check("prove answers as the threads do",
              same(r, ref_prove) and r.get("jobs", {}).get("sent") == ref_prove["jobs"]["sent"]
              and r.get("jobs", {}).get("sent", 0) > 10, (r, ref_prove))
        same_proof = bool(r.get("proof")) and open(r["proof"]).read() == open(ref_prove["proof"]).read()
        ok, text = verify([r["proof"]] if r.get("proof") else [])
        check("prove's proof is the threads' proof and verifies", same_proof and ok, text[-500:])

        # 3a. solve with a killed pcn and a removed node.
        t0 = time.time()
        fproofs = os.path.join(tmp, "proofs-fault")
        events = []

        def chaos(p, _err):
            # A task on a slow problem (18.sgf takes seconds): killed while it runs.
            pids = find_pids("/18.sgf")
            if pids:
                time.sleep(0.3)
                try:
                    os.kill(pids[0], signal.SIGKILL)
                    events.append("killed pcn")
                except ProcessLookupError:
                    pass
            time.sleep(1.0)
            cluster.remove_node(second)
            events.append("removed node")

        by, recs, err, code = pcn_ray(["solve"] + ray_args + common + ["--proof-dir", fproofs, slow], during=chaos)
        print(f"pcn-ray solve with faults ({', '.join(events)}): {time.time() - t0:.1f} s", flush=True)
        names = sorted(os.listdir(slow))
        check("faults: solve reports every problem once", code == 0 and sorted(os.path.basename(r["file"]) for r in recs) == names,
              (code, [r["file"] for r in recs], err[-2000:]))
        check("faults: the same answers", all(same(by.get(n, {}), ref[n]) for n in names),
              [(by.get(n), ref[n]) for n in names])
        files = [r["proof"] for r in recs if r.get("proof")]
        ok, text = verify(files)
        check("faults: the same proofs", ok and len(files) == sum(1 for n in names if ref[n].get("proof")) and all(
            open(by[n]["proof"]).read() == open(ref[n]["proof"]).read() for n in names if ref[n].get("proof")), text[-500:])
        check("faults: the kill and the removal happened", events == ["killed pcn", "removed node"], events)

        # 3b. prove with a killed worker process and a removed node.
        second = cluster.add_node(**node_args)
        t0 = time.time()
        events = []

        def chaos_prove(p, err):
            # Mid-run by the manager's own log: after 10 answers, and after 20.
            def answers():
                return sum(1 for l in list(err) if "job-level" not in l and " answer " in l)

            t0 = time.time()
            while answers() < 10 and p.poll() is None and time.time() - t0 < 600:
                time.sleep(0.05)
            pids = find_pids("job-worker", timeout=5)
            if pids:
                try:
                    os.kill(pids[0], signal.SIGKILL)
                    events.append("killed worker")
                except ProcessLookupError:
                    pass
            while answers() < 20 and p.poll() is None and time.time() - t0 < 600:
                time.sleep(0.05)
            cluster.remove_node(second)
            events.append("removed node")

        pdir = os.path.join(tmp, "proofs-prove-fault")
        by, recs, err, code = pcn_ray(["prove"] + ray_args + prove_opts + ["--log-level", "debug", "--workers", "2",
                                                                           "--proof-dir", pdir, prove_file],
                                      during=chaos_prove)
        print(f"pcn-ray prove with faults ({', '.join(events)}): {time.time() - t0:.1f} s", flush=True)
        r = by.get("12.sgf", {})
        check("faults: prove reports once", code == 0 and len(recs) == 1, (code, err[-2000:]))
        check("faults: prove answers as the threads do", same(r, ref_prove), (r, ref_prove))
        same_proof = bool(r.get("proof")) and open(r["proof"]).read() == open(ref_prove["proof"]).read()
        check("faults: prove's proof unchanged", same_proof, r)
        check("faults: the workers were lost and the jobs sent again",
              r.get("jobs", {}).get("lost_workers", 0) >= 1 and r.get("jobs", {}).get("resent", 0) >= 1, r.get("jobs"))
        check("faults: the kill and the removal happened", events == ["killed worker", "removed node"], events)
    finally:
        if cluster is not None:
            cluster.shutdown()
    time.sleep(1.0)
    left = our_processes()
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    check("nothing is left running", not left, [(p, c[:120]) for p, c in left])
    if failures:
        print(f"cluster tests: {len(failures)} FAILED: {failures}")
        return 1
    print("cluster tests: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
