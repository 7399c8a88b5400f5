#!/usr/bin/env python3
"""The graph executor's optimizer on against off (`TSRS_JIT_OPTIMIZE=0`), with `tsrs bench` at the
machine's core count, alternating the two round by round: the conformance suite's models and
LSTM programs, and the bench suite's cases whose inputs `run_bench.py` has written. Prints each
case's best median and the ratio; run it on an idle machine.

    python3 bench/jit_optimizer.py [CLI] [--rounds N]
"""
import json, os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--rounds")]
cli = args[0] if args else os.path.join(here, "..", "target", "release", "tsrs")
rounds = 3
for a in sys.argv[1:]:
    if a.startswith("--rounds="):
        rounds = int(a.split("=", 1)[1])
threads = str(os.cpu_count() or 1)
conf = os.path.join(here, "..", "..", "shared", "conformance", "cases")
cases = []
for c in sorted(os.listdir(conf)):
    if c.startswith("modules_") or c.startswith("lstm_examples"):
        d = os.path.join(conf, c)
        cj = json.load(open(os.path.join(d, "case.json")))
        if cj.get("expect") != "value":
            continue
        prog = os.path.join(d, cj.get("program", "program.py"))
        cases.append((c, prog, cj["entry"], os.path.join(d, "inputs.pt")))
bench = here
for b in json.load(open(os.path.join(bench, "cases.json"))):
    if "program" in b and os.path.exists(os.path.join(bench, "inputs", b["name"] + ".pt")):
        cases.append((b["name"], os.path.join(bench, b["program"]), b["entry"], os.path.join(bench, "inputs", b["name"] + ".pt")))
    elif "model" in b and os.path.exists(os.path.join(bench, "models", b["model"] + ".pt")):
        cases.append((b["name"], os.path.join(bench, "models", b["model"] + ".pt"), b["entry"], os.path.join(bench, "inputs", b["name"] + ".pt")))
def run(prog, entry, inputs, env_extra):
    env = dict(os.environ, TSRS_NUM_THREADS=threads, **env_extra)
    args = [cli, "bench", prog, "--entry", entry, "--iters", "20", "--warmup", "3", "--json"]
    if os.path.exists(inputs):
        args += ["--inputs", inputs]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)["median_ns"]
rows = []
for name, prog, entry, inputs in cases:
    on, off = [], []
    for _ in range(rounds):
        a = run(prog, entry, inputs, {}); b = run(prog, entry, inputs, {"TSRS_JIT_OPTIMIZE": "0"})
        if a is None or b is None: break
        on.append(a); off.append(b)
    if not on:
        print(f"{name:55s} (failed)"); continue
    on, off = min(on), min(off)
    rows.append((name, on, off))
    print(f"{name:55s} optimized {on/1e3:10.1f} us  unoptimized {off/1e3:10.1f} us  ratio {on/off:5.2f}", flush=True)
worse = [r for r in rows if r[1] > r[2] * 1.10]
print(f"{len(rows)} cases; optimized slower by >10% in {len(worse)}: {[w[0] for w in worse]}")
