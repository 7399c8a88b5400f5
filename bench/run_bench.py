#!/usr/bin/env python3
"""Side-by-side benchmark: each case in cases.json run with `tsrs bench` and, when real
PyTorch is importable, the same TorchScript in PyTorch (torch.jit CompilationUnit, same thread
count), alternating in one run. Prints a table with the ratio tsrs/PyTorch.

    python3 bench/run_bench.py [--cli target/release/tsrs] [--iters N] [--threads N]

Inputs are generated here with torch (seeded) and saved with torch.save next to the cases
(bench/inputs/<name>.pt); without torch, existing input files are reused.
"""
import argparse
import json
import os
import subprocess
import time

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--cli", default=os.path.join(here, "..", "target", "release", "tsrs"))
ap.add_argument("--iters", type=int, default=50)
ap.add_argument("--threads", type=int, default=1)
a = ap.parse_args()
os.environ["TSRS_NUM_THREADS"] = str(a.threads)
try:
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
except ImportError:
    torch = None

cases = json.load(open(os.path.join(here, "cases.json")))
os.makedirs(os.path.join(here, "inputs"), exist_ok=True)
rows = []
for c in cases:
    inp = os.path.join(here, "inputs", c["name"] + ".pt")
    src = open(os.path.join(here, c["program"])).read()
    args = None
    if torch is not None:
        args = eval(c["inputs"][3:], {"torch": torch})
        torch.save(args, inp)
    r = subprocess.run([a.cli, "bench", os.path.join(here, c["program"]), "--entry", c["entry"],
                        "--inputs", inp, "--iters", str(a.iters), "--warmup", "5", "--json"],
                       capture_output=True, text=True)
    ours = json.loads(r.stdout)["median_ns"] if r.returncode == 0 else None
    theirs = None
    if torch is not None:
        cu = torch.jit.CompilationUnit(src)
        fn = getattr(cu, c["entry"])
        with torch.no_grad():
            for _ in range(5):
                fn(*args)
            ts = []
            for _ in range(a.iters):
                t = time.perf_counter_ns()
                fn(*args)
                ts.append(time.perf_counter_ns() - t)
        ts.sort()
        theirs = ts[len(ts) // 2]
    rows.append((c, ours, theirs, r.stderr.strip().splitlines()[:1]))

print(f"{'case':20} {'tsrs':>12} {'pytorch':>12} {'ratio':>7}  per {'unit':>16}")
for c, ours, theirs, err in rows:
    per = c["per"]
    o = f"{ours / per:.1f} ns" if ours else "error"
    t = f"{theirs / per:.1f} ns" if theirs else "-"
    ratio = f"{ours / theirs:.2f}" if ours and theirs else "-"
    print(f"{c['name']:20} {o:>12} {t:>12} {ratio:>7}  per {c['unit']:>16}" + (f"  ({err[0]})" if not ours and err else ""))
