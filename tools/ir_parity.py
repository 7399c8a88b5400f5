#!/usr/bin/env python3
"""IR parity: compares `tsrs graph` with PyTorch's graphs in ../shared/corpus/ir under
ir_canon.py, for programs (<case>.<fn>.ir) and models (<case>.<path>.<method>.ir).

    python3 tools/ir_parity.py [--cli target/release/tsrs] [--filter S] [-v]
"""
import argparse
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
shared = os.path.join(here, "..", "..", "shared")
sys.path.insert(0, os.path.join(shared, "corpus"))
import ir_canon  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--cli", default=os.path.join(here, "..", "target", "release", "tsrs"))
ap.add_argument("--filter", default="")
ap.add_argument("-v", action="store_true")
ap.add_argument("--ignore-empty-locations", action="store_true",
                help="drop the `# :0:0` comments PyTorch prints for nodes without debug info")
a = ap.parse_args()
ir_dir = os.path.join(shared, "corpus", "ir")
cases = os.path.join(shared, "conformance", "cases")
stats = {}
for f in sorted(os.listdir(ir_dir)):
    if a.filter not in f:
        continue
    case, rest = f[:-3].split(".", 1)
    d = os.path.join(cases, case)
    if os.path.exists(os.path.join(d, "model.pt")):
        kind, prog = "model", os.path.join(d, "model.pt")
        path = rest.split(".")
        entry = ".".join(path[1:]) if path[0] == "root" else rest
    else:
        kind, prog, entry = "program", os.path.join(d, "program.py"), rest
    r = subprocess.run([a.cli, "graph", prog, "--entry", entry], capture_output=True, text=True)
    text = open(os.path.join(ir_dir, f)).read()
    if a.ignore_empty_locations:
        text = text.replace(" # :0:0", "")
    want = ir_canon.canon(text)
    ok = r.returncode == 0 and ir_canon.canon(r.stdout) == want
    s = stats.setdefault(kind, [0, 0])
    s[0] += ok
    s[1] += 1
    if a.v and not ok:
        print("DIFF", f, (r.stderr.strip().splitlines() or [""])[0][:150])
for k, (p, t) in sorted(stats.items()):
    print(f"{k:8} {p}/{t} ({100.0 * p / max(t, 1):.1f}%)")
