"""pcn-ray: pcn's solvers on a Ray cluster (docs/cluster.md).

    pcn-ray solve [RAY OPTIONS] [PCN SOLVE OPTIONS] PATH...
    pcn-ray prove [RAY OPTIONS] [PCN SOLVE OPTIONS] --workers N FILE

`solve` runs every problem as one Ray task that calls the `pcn` binary (`pcn solve` on that
one file, with the cores the task was given) and prints the JSON lines and the summary of
`pcn solve` as the results come in. `prove` runs the job-level manager of `pcn solve
--workers N` in a `pcn` process here and its N workers as Ray actors, each holding one
long-lived `pcn solve --job-worker` process: this script only relays the manager's lines
(`@<worker> <message>`, see src/search/joblevel/wire.rs) to the actors and their answers back.
Ray is the transport; the search and the proof are pcn's, and every proof file is checked
by `pcn verify` like any other.

Ray options (everything else goes to pcn unchanged):
  --address ADDR     join this Ray cluster (default: start a local one on this machine)
  --pcn PATH         the pcn binary, an absolute path valid on every node
                     (default: target/release/pcn of this checkout)
  --cpus N           CPUs of the local cluster (default: this machine's)
  --object-store-mb  object store of the local cluster (default 100)
  --retries N        times a solve task whose worker or pcn died is run again (default 3)
  --replacements N   prove: times a lost worker actor is replaced (default 3 per worker)
  --no-progress      no progress bar on stderr
"""

import ctypes
import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_PCN = os.path.join(REPO, "target", "release", "pcn")

# pcn's options that take no value (every other option of pcn solve and the global ones
# takes one; see src/cli/mod.rs and src/cli/solve.rs).
PCN_BOOL_FLAGS = {"--job-worker", "--help", "-h", "--version", "-V"}
RAY_VALUE_OPTS = {"--address", "--pcn", "--cpus", "--object-store-mb", "--retries", "--replacements"}
RAY_BOOL_OPTS = {"--no-progress"}


class UsageError(Exception):
    """A bad command line."""


class PcnDied(Exception):
    """The pcn process of a task was killed (a signal): the task is run again."""


class PcnMissing(Exception):
    """The pcn binary or the network is not on a node."""


def split_args(argv):
    """Splits a command line into (ray options, pcn options as (flag, value) pairs, paths)."""
    ray_opts, pcn_opts, paths = {}, [], []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            paths.extend(argv[i + 1:])
            break
        if tok.startswith("--") and "=" in tok:
            flag, value = tok.split("=", 1)
            has_value = True
        else:
            flag, value, has_value = tok, None, False
        if flag in RAY_BOOL_OPTS:
            ray_opts[flag] = True
        elif flag in RAY_VALUE_OPTS:
            if not has_value:
                if i + 1 >= len(argv):
                    raise UsageError(f"{flag} needs a value")
                i += 1
                value = argv[i]
            ray_opts[flag] = value
        elif flag.startswith("-") and flag != "-":
            if flag in PCN_BOOL_FLAGS:
                pcn_opts.append((flag, None))
            else:
                if not has_value:
                    if i + 1 >= len(argv):
                        raise UsageError(f"{flag} needs a value")
                    i += 1
                    value = argv[i]
                pcn_opts.append((flag, value))
        else:
            paths.append(tok)
        i += 1
    return ray_opts, pcn_opts, paths


def opt(pcn_opts, flag, default=None):
    """The last value of a pcn option."""
    for f, v in pcn_opts:
        if f == flag:
            default = v
    return default


def flatten(pcn_opts, drop=()):
    out = []
    for f, v in pcn_opts:
        if f in drop:
            continue
        out.append(f)
        if v is not None:
            out.append(v)
    return out


def collect_inputs(paths):
    """(display name, stem, SGF text or None, error) per problem, as `pcn solve` lists them."""
    def numeric_key(p):
        stem = os.path.splitext(os.path.basename(p))[0]
        try:
            return (int(stem), stem)
        except ValueError:
            return (2 ** 64 - 1, stem)

    out = []
    for p in paths:
        if p == "-":
            raise UsageError("pcn-ray reads no problem from stdin: give files")
        if os.path.isdir(p):
            files = [os.path.join(p, f) for f in os.listdir(p)
                     if f.lower().endswith(".sgf") and os.path.isfile(os.path.join(p, f))]
            files.sort(key=numeric_key)
        else:
            files = [p]
        for f in files:
            try:
                with open(f, "rb") as fh:
                    text = fh.read().decode("utf-8", "replace")
                out.append((f, numeric_key(f)[1], text, None))
            except OSError as e:
                out.append((f, numeric_key(f)[1], None, str(e)))
    return out


def set_pdeathsig():
    """In the child before exec: die with the thread that started it (a Ray worker that
    crashes must not leave its pcn running)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def check_node(pcn, net):
    """What is missing on this node (None: nothing)."""
    if not os.path.isabs(pcn):
        return f"the pcn binary must be an absolute path, not {pcn}"
    if not (os.path.isfile(pcn) and os.access(pcn, os.X_OK)):
        return f"no executable pcn binary at {pcn}"
    if net and net.lower() not in ("auto", "none") and not os.path.exists(net):
        return f"no network at {net}"
    return None


def run_solve_task(pcn, argv, name, stem, text, want_proof):
    """One problem on this node: `pcn solve` on a copy of its SGF. Returns the JSON line,
    the proof text (or None), the summary's first line and where it ran."""
    missing = check_node(pcn, None)
    if missing:
        raise PcnMissing(missing)
    tmp = tempfile.mkdtemp(prefix="pcn-ray-")
    try:
        path = os.path.join(tmp, stem + ".sgf")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        cmd = [pcn] + argv
        proof_dir = os.path.join(tmp, "proofs")
        if want_proof:
            os.mkdir(proof_dir)
            cmd += ["--proof-dir", proof_dir]
        cmd.append(path)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, start_new_session=True,
                             preexec_fn=set_pdeathsig)
        try:
            out, err = p.communicate()
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        if p.returncode < 0:
            raise PcnDied(f"pcn ended by signal {-p.returncode} on {os.uname().nodename}")
        lines = [l for l in out.decode("utf-8", "replace").splitlines() if l.startswith("{")]
        if not lines:
            raise RuntimeError(f"pcn solve exited {p.returncode} without a result: "
                               + err.decode("utf-8", "replace")[-400:])
        rec = json.loads(lines[-1])
        proof = None
        if rec.get("proof"):
            with open(rec["proof"], encoding="utf-8") as fh:
                proof = fh.read()
        head = err.decode("utf-8", "replace").splitlines()
        head = next((l for l in head if l.startswith("pcn solve: ")), None)
        return {"record": rec, "proof": proof, "head": head, "pid": p.pid,
                "node": os.uname().nodename}
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)


# --- output as pcn solve writes it ------------------------------------------------------

def dumps(rec):
    """A JSON line as serde_json writes it (compact, fields in their order)."""
    return json.dumps(rec, separators=(",", ":"), ensure_ascii=False)


def median(v):
    if not v:
        return None
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def summary(records, head, proof_dir):
    """The summary table of `pcn solve` (src/cli/solve.rs, summary_table)."""
    s = head + "\n" if head else f"pcn solve: {len(records)} problem(s)\n"
    s += f"{'result':<11} {'count':>6} {'median_s':>10} {'median_nodes':>14} {'median_nps':>12}\n"

    def no_proof(r):
        return proof_dir is not None and r["result"] == "win" and not r.get("proof")

    groups = [
        ("win", lambda r: r["result"] == "win" and not no_proof(r)),
        ("win-noproof", no_proof),
        ("loss", lambda r: r["result"] == "loss"),
        ("unknown", lambda r: r["result"] == "unknown"),
        ("error", lambda r: r["result"] == "error"),
        ("solved", lambda r: r["result"] in ("win", "loss")),
        ("all", lambda r: r["result"] != "error"),
    ]
    for name, f in groups:
        sel = [r for r in records if f(r)]

        def fmt(m, prec):
            return "-" if m is None else f"{m:.{prec}f}"

        if name == "error":
            s += f"{name:<11} {len(sel):>6}\n"
        else:
            s += (f"{name:<11} {len(sel):>6} {fmt(median([r['seconds'] for r in sel]), 2):>10} "
                  f"{fmt(median([float(r['nodes']) for r in sel]), 0):>14} "
                  f"{fmt(median([r['nodes_per_second'] for r in sel]), 0):>12}\n")
    return s


class Progress:
    """A progress bar on stderr (only when it is a terminal, like pcn solve's)."""

    def __init__(self, total, enabled):
        self.total, self.done, self.t0 = total, 0, time.time()
        self.on = enabled and sys.stderr.isatty()
        self.draw("")

    def draw(self, msg):
        if not self.on:
            return
        width = 30
        fill = width * self.done // max(self.total, 1)
        el = int(time.time() - self.t0)
        sys.stderr.write(f"\r{'#' * fill}{'-' * (width - fill)} {self.done}/{self.total} "
                         f"[{el // 3600:02}:{el % 3600 // 60:02}:{el % 60:02}] {msg[:40]:<40}")
        sys.stderr.flush()

    def step(self, msg):
        self.done += 1
        self.draw(msg)

    def clear(self):
        if self.on:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


# --- Ray --------------------------------------------------------------------------------

def import_ray():
    try:
        import ray  # noqa: F401
        return ray
    except ImportError:
        raise UsageError("Ray is not installed: `make cluster-tools` puts ray==2.60.0 under "
                         ".tools/ray (and cluster/pcn-ray finds it there)")


def loopback(address):
    host = address.rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


def start_ray(ray, ray_opts):
    """Joins --address or starts a local cluster: loopback only, token authentication, no
    dashboard, a small object store."""
    address = ray_opts.get("--address")
    if address:
        if loopback(address):
            ray.init(address=address, logging_level="ERROR", log_to_driver=False,
                     _node_ip_address="127.0.0.1")
        else:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        return
    cpus = int(ray_opts.get("--cpus") or os.cpu_count() or 1)
    store = int(ray_opts.get("--object-store-mb") or 100) << 20
    # address="local": a new cluster, never one that `ray start` left on this machine.
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, object_store_memory=store,
             _node_ip_address="127.0.0.1", logging_level="ERROR", log_to_driver=False)


def preflight(ray, pcn, net):
    """Checks on every alive node that the binary and the network are there."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    check = ray.remote(num_cpus=0)(check_node)
    refs = []
    for n in ray.nodes():
        if n.get("Alive"):
            s = NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False)
            refs.append((n.get("NodeManagerAddress"), check.options(scheduling_strategy=s).remote(pcn, net)))
    problems = []
    for addr, r in refs:
        why = ray.get(r, timeout=120)
        if why:
            problems.append(f"node {addr}: {why}")
    if problems:
        raise UsageError("; ".join(problems))


def resources(pcn_opts):
    threads = int(opt(pcn_opts, "--threads", "1") or 1)
    backend = (opt(pcn_opts, "--backend", "auto") or "auto").lower()
    gpus = 1 if backend.startswith("cuda") else 0
    return threads, gpus


def absolute_net(pcn_opts):
    """--net as an absolute path (the nodes do not share our working directory)."""
    out = []
    for f, v in pcn_opts:
        if f == "--net" and v and v.lower() not in ("auto", "none"):
            v = os.path.abspath(v)
        out.append((f, v))
    return out


def unique_proof_path(proof_dir, stem, written):
    p = os.path.join(proof_dir, f"{stem}.proof.sgf")
    k = 2
    while p in written:
        p = os.path.join(proof_dir, f"{stem}_{k}.proof.sgf")
        k += 1
    written.add(p)
    return p


def cmd_solve(ray, ray_opts, pcn_opts, paths, pcn):
    if not paths:
        raise UsageError("pcn-ray solve: give problem files or directories")
    pcn_opts = absolute_net(pcn_opts)
    proof_dir = opt(pcn_opts, "--proof-dir")
    if proof_dir:
        os.makedirs(proof_dir, exist_ok=True)
    threads, gpus = resources(pcn_opts)
    workers = opt(pcn_opts, "--workers")
    cpus = threads * (int(workers) if workers and workers.isdigit() else 1)
    argv = ["solve"] + flatten(pcn_opts, drop=("--proof-dir",))
    inputs = collect_inputs(paths)
    start_ray(ray, ray_opts)
    try:
        preflight(ray, pcn, opt(pcn_opts, "--net"))
        retries = int(ray_opts.get("--retries", 3))
        task = ray.remote(run_solve_task).options(
            num_cpus=cpus, num_gpus=gpus, max_retries=retries,
            retry_exceptions=[PcnDied])
        refs = {}
        records = [None] * len(inputs)
        for i, (name, stem, text, err) in enumerate(inputs):
            if err is not None:
                records[i] = {"file": name, "result": "error", "prover": None, "move": None,
                              "nodes": 0, "seconds": 0.0, "nodes_per_second": 0.0,
                              "solver": (opt(pcn_opts, "--solver", "auto") or "auto").lower(),
                              "game": None, "rule": None, "to_move": None,
                              "knowledge_nodes": 0, "proof": None, "proof_nodes": None,
                              "error": f"cannot read: {err}"}
                continue
            refs[task.remote(pcn, argv, name, stem, text, proof_dir is not None)] = i
        bar = Progress(len(inputs), "--no-progress" not in ray_opts)
        for i, r in enumerate(records):
            if r is not None:
                print(dumps(r), flush=True)
                bar.step(inputs[i][0])
        written, head = set(), None
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=1.0)
            for ref in ready:
                i = refs.pop(ref)
                name = inputs[i][0]
                try:
                    res = ray.get(ref)
                    rec = res["record"]
                    rec["file"] = name
                    head = head or res["head"]
                    if res["proof"] is not None and proof_dir:
                        p = unique_proof_path(proof_dir, inputs[i][1], written)
                        with open(p, "w", encoding="utf-8") as fh:
                            fh.write(res["proof"])
                        rec["proof"] = p
                except Exception as e:  # the task failed for good: reported, not lost
                    why = str(e).strip().splitlines()
                    rec = {"file": name, "result": "error", "prover": None, "move": None,
                           "nodes": 0, "seconds": 0.0, "nodes_per_second": 0.0,
                           "solver": (opt(pcn_opts, "--solver", "auto") or "auto").lower(),
                           "game": None, "rule": None, "to_move": None, "knowledge_nodes": 0,
                           "proof": None, "proof_nodes": None,
                           "error": "ray: " + (why[-1] if why else type(e).__name__)}
                records[i] = rec
                bar.clear()
                print(dumps(rec), flush=True)
                bar.step(name)
            if not ready:
                bar.draw("")
        bar.clear()
        if head:
            # The first line of a task's summary, counting all the problems.
            head = "pcn solve: " + f"{len(records)} problem(s)," + head.split("problem(s),", 1)[-1]
        sys.stderr.write(summary(records, head, proof_dir))
        bad = any(r["result"] == "error" or (r.get("proof_error") or "").startswith("write")
                  for r in records)
        return 1 if bad else 0
    finally:
        ray.shutdown()


# --- prove: the job-level manager here, its workers as actors ----------------------------

def worker_class(ray):
    @ray.remote(concurrency_groups={"send": 1, "recv": 1, "ctl": 1})
    class PcnWorker:
        """One long-lived `pcn solve --job-worker` process; lines in with `send`, out with
        `recv`. When the process dies it says `lost` and starts a new one (at most
        `restarts` times), whose `ready` follows."""

        def __init__(self, pcn, argv, restarts):
            missing = check_node(pcn, None)
            if missing:
                raise PcnMissing(missing)
            self.pcn, self.argv, self.restarts = pcn, argv, restarts
            self.out = queue.Queue()
            self.lock = threading.Lock()
            self.stopping = False
            self.proc = None
            self.spawn()

        def spawn(self):
            p = subprocess.Popen([self.pcn] + self.argv, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
            self.proc = p
            threading.Thread(target=self.pump, args=(p,), daemon=True).start()

        def pump(self, p):
            for raw in p.stdout:
                self.out.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
            code = p.wait()
            with self.lock:
                if self.stopping or p is not self.proc:
                    return
                why = f"pcn exited with {code} on {os.uname().nodename}"
                self.out.put("lost why=" + why.encode().hex())
                if self.restarts > 0:
                    self.restarts -= 1
                    self.spawn()

        @ray.method(concurrency_group="send")
        def send(self, lines):
            with self.lock:
                p = self.proc
            try:
                p.stdin.write("".join(l + "\n" for l in lines).encode())
                p.stdin.flush()
            except (OSError, ValueError):
                pass  # the pump says lost
            return True

        @ray.method(concurrency_group="recv")
        def recv(self, timeout):
            lines = []
            try:
                lines.append(self.out.get(timeout=timeout))
                while len(lines) < 1000:
                    lines.append(self.out.get_nowait())
            except queue.Empty:
                pass
            return lines

        @ray.method(concurrency_group="ctl")
        def pid(self):
            return self.proc.pid, os.uname().nodename

        @ray.method(concurrency_group="ctl")
        def stop(self):
            with self.lock:
                self.stopping = True
                p = self.proc
            try:
                p.stdin.write(b"quit\n")
                p.stdin.close()
            except (OSError, ValueError):
                pass
            try:
                p.wait(timeout=3)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            return True

    return PcnWorker


def cmd_prove(ray, ray_opts, pcn_opts, paths, pcn):
    if len(paths) != 1:
        raise UsageError("pcn-ray prove: give exactly one problem file")
    if not os.path.isfile(paths[0]):
        raise UsageError(f"pcn-ray prove: no file {paths[0]}")
    pcn_opts = absolute_net(pcn_opts)
    n = int(opt(pcn_opts, "--workers", "2") or 2)
    if n < 1:
        raise UsageError("--workers must be at least 1")
    threads, gpus = resources(pcn_opts)
    # The workers: the user's options but the manager's own and the paths.
    worker_argv = ["solve", "--job-worker"] + flatten(
        pcn_opts, drop=("--workers", "--proof-dir", "--job-nodes", "--job-top", "--job-growth",
                        "--job-split", "--nodes"))
    manager_argv = [pcn, "solve"] + flatten(pcn_opts, drop=("--workers",)) + [
        "--workers", str(n), "--job-link", "stdio", paths[0]]
    if opt(pcn_opts, "--proof-dir"):
        os.makedirs(opt(pcn_opts, "--proof-dir"), exist_ok=True)
    start_ray(ray, ray_opts)
    manager = None
    actors = [None] * n
    try:
        preflight(ray, pcn, opt(pcn_opts, "--net"))
        # SPREAD: workers on different nodes where the resources allow, so that losing a
        # node loses few of them.
        Worker = worker_class(ray).options(num_cpus=threads, num_gpus=gpus, max_restarts=0,
                                           scheduling_strategy="SPREAD")
        budget = [int(ray_opts.get("--replacements", 3))] * n
        restarts = 3
        for k in range(n):
            actors[k] = Worker.remote(pcn, worker_argv, restarts)
        manager = subprocess.Popen(manager_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   start_new_session=True)
        to_workers = queue.Queue()

        def read_manager():
            for raw in manager.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("@"):
                    k, _, msg = line[1:].partition(" ")
                    to_workers.put((int(k) if k.isdigit() else -1, msg))
                else:
                    print(line, flush=True)
            to_workers.put(None)

        reader = threading.Thread(target=read_manager, daemon=True)
        reader.start()
        recv = {actors[k].recv.remote(0.2): k for k in range(n)}
        sending = [None] * n
        outbox = [[] for _ in range(n)]
        done = False

        def to_manager(k, line):
            try:
                manager.stdin.write(f"@{k} {line}\n".encode())
                manager.stdin.flush()
            except (OSError, ValueError):
                pass

        def replace(k, why):
            to_manager(k, "lost why=" + why.encode().hex())
            try:
                ray.kill(actors[k])
            except Exception:
                pass
            sending[k] = None
            outbox[k] = []
            if budget[k] > 0:
                budget[k] -= 1
                actors[k] = Worker.remote(pcn, worker_argv, restarts)
                recv[actors[k].recv.remote(0.2)] = k
            else:
                actors[k] = None

        while not done:
            while True:
                try:
                    item = to_workers.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    done = True
                    break
                k, msg = item
                if 0 <= k < n and actors[k] is not None:
                    outbox[k].append(msg)
            if done:
                break
            for k in range(n):
                if sending[k] is not None:
                    r, _ = ray.wait([sending[k]], timeout=0)
                    if r:
                        sending[k] = None
                if sending[k] is None and outbox[k] and actors[k] is not None:
                    sending[k] = actors[k].send.remote(outbox[k])
                    outbox[k] = []
            ready, _ = ray.wait(list(recv), num_returns=1, timeout=0.01)
            for ref in ready:
                k = recv.pop(ref)
                try:
                    for line in ray.get(ref):
                        to_manager(k, line)
                    recv[actors[k].recv.remote(0.2)] = k
                except ray.exceptions.RayError as e:
                    lines = str(e).strip().splitlines()
                    replace(k, "ray: " + (lines[0] if lines else type(e).__name__)[:200])
        code = manager.wait()
        return code
    finally:
        if manager is not None and manager.poll() is None:
            try:
                manager.stdin.close()
            except OSError:
                pass
            try:
                manager.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(manager.pid, signal.SIGKILL)
                manager.wait()
        stops = [a.stop.remote() for a in actors if a is not None]
        try:
            ray.get(stops, timeout=10)
        except Exception:
            pass
        for a in actors:
            if a is not None:
                try:
                    ray.kill(a)
                except Exception:
                    pass
        ray.shutdown()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    try:
        ray_opts, pcn_opts, paths = split_args(rest)
        pcn = os.path.abspath(ray_opts.get("--pcn") or DEFAULT_PCN)
        missing = check_node(pcn, None)
        if missing:
            raise UsageError(missing)
        if cmd not in ("solve", "prove"):
            raise UsageError(f"unknown command {cmd} (solve or prove)")
        if not ray_opts.get("--address") or loopback(ray_opts["--address"]):
            # A cluster on this machine only (our own local one, or one on loopback): Ray
            # would otherwise replace 127.0.0.1 by the machine's outside address, and a
            # cluster it starts would listen on every interface. This setting (Ray's
            # single-machine mode, as on macOS and Windows) keeps everything on loopback.
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        # Ray reads its authentication settings when it is imported.
        os.environ.setdefault("RAY_AUTH_MODE", "token")
        if (not ray_opts.get("--address") and os.environ["RAY_AUTH_MODE"] == "token"
                and not (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"))):
            # A token for this run's own cluster only (nothing is written under ~/.ray).
            os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
        ray = import_ray()
        if cmd == "solve":
            return cmd_solve(ray, ray_opts, pcn_opts, paths, pcn)
        return cmd_prove(ray, ray_opts, pcn_opts, paths, pcn)
    except UsageError as e:
        sys.stderr.write(f"pcn-ray: {e}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
