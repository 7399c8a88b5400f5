#!/usr/bin/env python3
"""Side-by-side benchmark suite: every case of cases.json run with `tsrs bench` and, when real
PyTorch is importable, the same program or model in PyTorch (same thread count), alternating
tsrs and PyTorch round by round in one run. Prints a table with the ratio tsrs/PyTorch
(below 1 means tsrs is faster; for GEMM cases the GFLOP/s of both are shown too).

    python3 bench/run_bench.py [--cli target/release/tsrs] [--iters N] [--rounds N]
                               [--threads N] [--filter S] [--json OUT]

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
ap = argparse.ArgumentParser()
ap.add_argument("--cli", default=os.path.join(here, "..", "target", "release", "tsrs"))
ap.add_argument("--iters", type=int, default=30)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--filter", default="")
ap.add_argument("--json", default=None)
a = ap.parse_args()
os.environ["TSRS_NUM_THREADS"] = str(a.threads)
try:
    import torch
    torch.set_num_threads(a.threads)
    sys.path.insert(0, here)
    import models
except ImportError:
    torch = None

cases = [c for c in json.load(open(os.path.join(here, "cases.json"))) if a.filter in c["name"]]
for d in ("inputs", "models"):
    os.makedirs(os.path.join(here, d), exist_ok=True)


def prepare(c):
    """(path tsrs runs, inputs path, PyTorch callable and its args or None)."""
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


def run_tsrs(c, path, inp, iters):
    if not (os.path.exists(path) and os.path.exists(inp)):
        return None, "no model/inputs (run once with torch installed)"
    r = subprocess.run([a.cli, "bench", path, "--entry", c["entry"], "--inputs", inp,
                        "--iters", str(iters), "--warmup", "3", "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["failed"])[-1][:120]
    return json.loads(r.stdout)["median_ns"], None


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
        rows.append((c, None, None, f"pytorch: {str(e).splitlines()[0][:100]}"))
        continue
    ours, theirs, err = [], [], None
    for _ in range(a.rounds):
        o, err = run_tsrs(c, path, inp, iters)
        if o is not None:
            ours.append(o)
        if theirs_fn is not None:
            theirs.append(run_torch(theirs_fn[0], theirs_fn[1], iters))
    # The best round's median of each, so that a noisy round does not decide the ratio.
    rows.append((c, min(ours) if ours else None, min(theirs) if theirs else None, err))


def fmt_time(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.1f} ns"


print(f"threads={a.threads}  iters={a.iters}  rounds={a.rounds}  torch={torch.__version__ if torch else 'absent'}")
print(f"{'case':28} {'tsrs':>11} {'pytorch':>11} {'ratio':>6}  per")
report = []
for c, ours, theirs, err in rows:
    per = c["per"]
    o = ours / per if ours else None
    t = theirs / per if theirs else None
    ratio = f"{ours / theirs:.2f}" if ours and theirs else "-"
    extra = ""
    if "flops" in c and ours:
        extra = f"  tsrs {c['flops'] / ours:.1f} GFLOP/s"
        if theirs:
            extra += f", pytorch {c['flops'] / theirs:.1f} GFLOP/s"
    if err and not ours:
        extra += f"  ({err})"
    print(f"{c['name']:28} {fmt_time(o):>11} {fmt_time(t):>11} {ratio:>6}  {c['unit']}{extra}")
    report.append({"case": c["name"], "tsrs_ns": o, "pytorch_ns": t, "unit": c["unit"],
                   "ratio": ours / theirs if ours and theirs else None, "error": err})
if a.json:
    json.dump({"threads": a.threads, "rows": report}, open(a.json, "w"), indent=1)
