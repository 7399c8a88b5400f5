#!/usr/bin/env python3
"""Side-by-side benchmark suite: every case of cases.json, and every real model of the breadth
generator (tests/models, written by tools/models/gen_models.py), run with `tsrs bench` and, when
real PyTorch is importable, the same program or model in PyTorch with the same thread count,
alternating tsrs and PyTorch round by round (which goes first alternates too) and waiting for an
idle machine before each measurement (other processes distort PyTorch's OpenMP timings far more
than tsrs's). Prints the CPU model and SIMD flags, then a table with the ratio tsrs/PyTorch
(below 1 means tsrs is faster; GEMM cases show both GFLOP/s and their share of the FMA peak that
`tsrs peak` measures right before each of their rounds), then process start + load + one forward
of ResNet-18 (wall time and peak RSS) for both.

    python3 bench/run_bench.py [--cli target/release/tsrs] [--iters N] [--rounds N]
                               [--threads N] [--filter S] [--no-models] [--models DIR]
                               [--idle-wait SECS] [--no-startup] [--scaling] [--json OUT]
                               [--extra-rounds N] [--close F]

`--threads` defaults to the machine's core count (`--threads 1` for single-thread numbers).
A case whose ratio (either column) lands within `--close` (0.05) of 1 or above it gets up to
`--extra-rounds` (3) more rounds of every side, one at a time until it no longer does: the
best of three medians still moves by about 5% on a noisy host, which decides exactly those
cases. Every side gets the same rounds, so the extra rounds sharpen both sides' minima alike.
`--scaling` also times tsrs at one thread in the same rounds (a third side of the alternation)
and adds the column `Nt/1t`: two separate runs land in different phases of a noisy host, which
once read 1.70 for a model that runs 0.99 when the two are interleaved.
A case is a TorchScript source program (`program` + `entry` + `inputs`, a Python expression
evaluated with torch) or a model (`model`: built by models.py, scripted or traced and saved to
bench/models/<model>.pt with torch.jit.save). Inputs are saved with torch.save to
bench/inputs/<case>.pt. Without torch, the files left by an earlier run are reused and only the
tsrs column is filled.
"""
import argparse
import json
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..")


def core_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


ap = argparse.ArgumentParser()
ap.add_argument("--cli", default=os.path.join(root, "target", "release", "tsrs"))
ap.add_argument("--iters", type=int, default=30)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--threads", type=int, default=core_count())
ap.add_argument("--filter", default="")
ap.add_argument("--models", default=os.path.join(root, "tests", "models"),
                help="folder of real-model cases (model.pt, inputs.pt, case.json)")
ap.add_argument("--no-models", action="store_true", help="skip the real-model cases")
ap.add_argument("--idle-wait", type=float, default=60.0,
                help="longest wait (s) for an idle machine before each measurement")
ap.add_argument("--idle-busy", type=float, default=0.10,
                help="CPU busy fraction (all cores) under which the machine counts as idle")
ap.add_argument("--no-startup", action="store_true", help="skip the start-up measurement")
ap.add_argument("--extra-rounds", type=int, default=3,
                help="more rounds for a case whose ratio lies within --close of 1 (or above it)")
ap.add_argument("--close", type=float, default=0.05)
ap.add_argument("--scaling", action="store_true",
                help="also time tsrs at 1 thread in the same rounds (column Nt/1t)")
ap.add_argument("--json", default=None)
a = ap.parse_args()
os.environ["TSRS_NUM_THREADS"] = str(a.threads)
os.environ["OMP_NUM_THREADS"] = str(a.threads)
try:
    import torch
    torch.set_num_threads(a.threads)
    sys.path.insert(0, here)
    import models
    # Real detection models call torchvision's operators (torchvision::nms, roi_align); they are
    # registered with PyTorch only once torchvision is imported.
    try:
        import torchvision  # noqa: F401
    except ImportError:
        pass
except ImportError:
    torch = None

cases = [c for c in json.load(open(os.path.join(here, "cases.json"))) if a.filter in c["name"]]
if not a.no_models and os.path.isdir(a.models):
    for d in sorted(os.listdir(a.models)):
        folder = os.path.join(a.models, d)
        meta = os.path.join(folder, "case.json")
        if not os.path.exists(meta) or a.filter not in d:
            continue
        entry = json.load(open(meta)).get("entry", "forward")
        cases.append({"name": d.replace("models_", "", 1), "real": folder, "entry": entry,
                      "per": 1, "unit": "call", "iters": 10})
for d in ("inputs", "models"):
    os.makedirs(os.path.join(here, d), exist_ok=True)


def cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]  # total, idle + iowait


idle_timeouts = 0


def wait_idle():
    """Waits (up to --idle-wait seconds) until the whole machine is nearly idle."""
    global idle_timeouts
    if a.idle_wait <= 0 or not os.path.exists("/proc/stat"):
        return
    deadline = time.time() + a.idle_wait
    while True:
        t0, i0 = cpu_times()
        time.sleep(0.5)
        t1, i1 = cpu_times()
        busy = 1.0 - (i1 - i0) / max(t1 - t0, 1)
        if busy <= a.idle_busy:
            return
        if time.time() > deadline:
            idle_timeouts += 1
            return


def cpu_description():
    model, flags = "unknown CPU", []
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = line.split(":", 1)[1].split()
    except OSError:
        pass
    simd = [f for f in flags if f.startswith(("sse4", "avx", "fma", "amx"))]
    return model, simd


def prepare(c):
    """(path tsrs runs, inputs path, PyTorch callable and its args or None)."""
    if "real" in c:
        path, inp = os.path.join(c["real"], "model.pt"), os.path.join(c["real"], "inputs.pt")
        if torch is None:
            return path, inp, None
        args = torch.load(inp)
        loaded = torch.jit.load(path).eval()
        return path, inp, (getattr(loaded, c["entry"]), tuple(args))
    inp = os.path.join(here, "inputs", c["name"] + ".pt")
    if "model" in c:
        path = os.path.join(here, "models", c["model"] + ".pt")
        if torch is None:
            return path, inp, None
        module, args, how = models.build(c["model"])
        with torch.no_grad():
            sm = torch.jit.script(module) if how == "script" else torch.jit.trace(module, args)
        torch.jit.save(sm, path)
        torch.save(args, inp)
        loaded = torch.jit.load(path).eval()
        return path, inp, (getattr(loaded, c["entry"]), args)
    path = os.path.join(here, c["program"])
    if torch is None:
        return path, inp, None
    torch.manual_seed(0)
    args = eval(c["inputs"][3:], {"torch": torch})
    torch.save(args, inp)
    cu = torch.jit.CompilationUnit(open(path).read())
    return path, inp, (getattr(cu, c["entry"]), args)


def run_tsrs(c, path, inp, iters, threads=None):
    if not (os.path.exists(path) and os.path.exists(inp)):
        return None, "no model/inputs (run once with torch installed)"
    env = dict(os.environ, TSRS_NUM_THREADS=str(threads)) if threads else None
    r = subprocess.run([a.cli, "bench", path, "--entry", c["entry"], "--inputs", inp,
                        "--iters", str(iters), "--warmup", "3", "--json", "--no-grad"],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["failed"])[-1][:120]
    return json.loads(r.stdout)["median_ns"], None


fma_peak = None


def measure_peak():
    """Updates `fma_peak` with a fresh `tsrs peak` (the best seen counts: the host's speed phases
    change what a GEMM reaches, not the FMA units)."""
    global fma_peak
    r = subprocess.run([a.cli, "peak", "--json"], capture_output=True, text=True)
    if r.returncode == 0:
        p = json.loads(r.stdout)
        if fma_peak is None or p["gflops"] > fma_peak["gflops"]:
            fma_peak = p


def first_line(e):
    """The first non-empty line of an exception's text (TorchScript errors start with a newline)."""
    return next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)[:100]


def run_torch(fn, args, iters):
    with torch.no_grad():
        for _ in range(3):
            fn(*args)
        ts = []
        for _ in range(iters):
            t = time.perf_counter_ns()
            fn(*args)
            ts.append(time.perf_counter_ns() - t)
    ts.sort()
    return ts[len(ts) // 2]


rows = []
for c in cases:
    iters = c.get("iters", a.iters)
    try:
        path, inp, theirs_fn = prepare(c)
    except Exception as e:  # a case PyTorch itself cannot build: report it, keep going
        rows.append((c, None, None, None, f"pytorch: {first_line(e)}"))
        continue
    ours, theirs, one, err = [], [], [], None
    sides = (0, 1, 2) if a.scaling and a.threads > 1 else (0, 1)

    def close_call():
        """Whether a ratio this run reports (tsrs/PyTorch, Nt/1t) lies within `--close` of 1."""
        mins = [min(v) if v else None for v in (ours, theirs, one)]
        pairs = ((mins[0], mins[1]), (mins[0], mins[2]))
        return any(x and y and x / y >= 1.0 - a.close for x, y in pairs)

    r = 0
    while r < a.rounds or (r < a.rounds + a.extra_rounds and close_call()):
        for side in (sides if r % 2 == 0 else sides[::-1]):
            wait_idle()
            if side == 0:
                if "flops" in c:
                    measure_peak()
                o, err = run_tsrs(c, path, inp, iters)
                if o is not None:
                    ours.append(o)
            elif side == 2:
                o, _ = run_tsrs(c, path, inp, iters, threads=1)
                if o is not None:
                    one.append(o)
            elif theirs_fn is not None:
                try:
                    theirs.append(run_torch(theirs_fn[0], theirs_fn[1], iters))
                except Exception as e:  # noqa: BLE001 - report and keep going
                    err = err or f"pytorch: {first_line(e)}"
                    theirs_fn = None
            sys.stderr.write(".")
            sys.stderr.flush()
        r += 1
    # The best round's median of each, so that a noisy round does not decide the ratio.
    rows.append((c, min(ours) if ours else None, min(theirs) if theirs else None,
                 min(one) if one else None, err))


def fmt_time(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.1f} ns"


def startup():
    """Process start + load + one forward of ResNet-18 (the scripted bench model), both sides:
    (wall seconds, peak RSS MiB) for tsrs and for PyTorch, each the best of three."""
    model = os.path.join(here, "models", "resnet18_scripted.pt")
    inp = os.path.join(here, "inputs", "resnet18_scripted.pt")
    if not (os.path.exists(model) and os.path.exists(inp)):
        return None
    out = os.path.join(here, "inputs", "startup_out.pt")

    # Linux keeps a process's peak RSS across execve, so a child forked straight from this
    # (torch-sized) Python would report Python's peak; GNU time forks the command from a small
    # process and reports the command's own peak.
    gnu_time = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None

    def measure(cmd):
        best = None
        for _ in range(3):
            wait_idle()
            full = [gnu_time, "-f", "TSRS_MAXRSS_KB %M"] + cmd if gnu_time else cmd
            t = time.perf_counter()
            p = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, err = p.communicate()
            wall = time.perf_counter() - t
            if p.returncode != 0:
                return None
            kb = [l.split()[1] for l in err.decode(errors="replace").splitlines()
                  if l.startswith("TSRS_MAXRSS_KB ")]
            if not kb:
                return None
            r = (wall, int(kb[-1]) / 1024.0)
            best = r if best is None or r[0] < best[0] else best
        return best

    ours = measure([a.cli, "run", model, "--entry", "forward", "--inputs", inp, "--output", out,
                    "--no-grad"])
    theirs = None
    if torch is not None:
        code = ("import torch; m = torch.jit.load(%r); a = torch.load(%r)\n"
                "with torch.no_grad(): m(*a)" % (model, inp))
        theirs = measure([sys.executable, "-c", code])
    return ours, theirs


start = None if a.no_startup else startup()
model_name, simd = cpu_description()
print(f"cpu: {model_name}, {core_count()} cores; simd: {' '.join(simd) or 'none'}")
print(f"threads={a.threads}  iters={a.iters}  rounds={a.rounds}  torch={torch.__version__ if torch else 'absent'}"
      f"  idle-wait timeouts={idle_timeouts}")
if fma_peak:
    print(f"f32 FMA peak (tsrs peak): {fma_peak['gflops']:.1f} GFLOP/s on {fma_peak['threads']} "
          f"thread(s), {fma_peak['isa']}")
scaling = a.scaling and a.threads > 1
print(f"{'case':40} {'tsrs':>11} {'pytorch':>11} {'ratio':>6}"
      + (f" {str(a.threads) + 't/1t':>6}" if scaling else "") + "  per")
report = []
for c, ours, theirs, one, err in rows:
    per = c["per"]
    o = ours / per if ours else None
    t = theirs / per if theirs else None
    ratio = f"{ours / theirs:.2f}" if ours and theirs else "-"
    extra = ""
    if "flops" in c and ours:
        share = lambda ns: f" ({100 * c['flops'] / ns / fma_peak['gflops']:.0f}% of peak)" if fma_peak else ""
        extra = f"  tsrs {c['flops'] / ours:.1f} GFLOP/s{share(ours)}"
        if theirs:
            extra += f", pytorch {c['flops'] / theirs:.1f} GFLOP/s{share(theirs)}"
    if err and not ours:
        extra += f"  ({err})"
    col = ""
    if scaling:
        col = " " + (f"{ours / one:6.2f}" if ours and one else f"{'-':>6}")
    print(f"{c['name']:40} {fmt_time(o):>11} {fmt_time(t):>11} {ratio:>6}{col}  {c['unit']}{extra}")
    report.append({"case": c["name"], "tsrs_ns": o, "pytorch_ns": t, "unit": c["unit"],
                   "ratio": ours / theirs if ours and theirs else None, "error": err,
                   "tsrs_1t_ns": one / per if one else None,
                   "scaling": ours / one if ours and one else None})
if start is not None:
    ours, theirs = start
    fmt = lambda r: f"{r[0] * 1e3:.0f} ms, {r[1]:.0f} MiB" if r else "-"
    print(f"{'start+load+forward resnet18':28} tsrs {fmt(ours)}; pytorch {fmt(theirs)}")
if a.json:
    json.dump({"threads": a.threads, "cpu": model_name, "simd": simd, "fma_peak": fma_peak,
               "rows": report, "startup": start}, open(a.json, "w"), indent=1)
