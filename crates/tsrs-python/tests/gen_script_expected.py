"""Writes data/script_expected.json: inputs and `torch.jit.script` results for
scripted_fns.py. Needs real PyTorch; run by hand (`/path/to/torch/python gen_script_expected.py`)."""

import json
import pathlib

import numpy as np
import torch

import scripted_fns as fns

HERE = pathlib.Path(__file__).resolve().parent


def enc(v):
    if isinstance(v, torch.Tensor):
        return {"tensor": v.detach().numpy().tolist(), "dtype": str(v.dtype).replace("torch.", "")}
    if isinstance(v, (list, tuple)):
        return {"tuple" if isinstance(v, tuple) else "list": [enc(x) for x in v]}
    return v


def main():
    rng = np.random.default_rng(15)
    t = lambda *s: torch.from_numpy(rng.standard_normal(s).astype(np.float32))  # noqa: E731
    inputs = {
        "scale_shift": [t(2, 3), 1.5, -0.25],
        "clamp_norm": [t(4) * 3.0, 1.0],
        "fib": [20],
        "softplus_sum": [[t(3, 2), t(3, 2), t(3, 2)]],
        "gelu_mlp": [t(2, 4), t(4, 5)],
    }
    out = {}
    for name in fns.CASES:
        f = torch.jit.script(getattr(fns, name))
        args = inputs[name]
        out[name] = {"inputs": [enc(a) for a in args], "expected": enc(f(*args))}
    (HERE / "data" / "script_expected.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
