"""Regenerates expected.json for crates/tsrs/tests/breadth_ops.rs (needs PyTorch; CI does not).

Each case is a TorchScript program defining `f() -> List[float]`; PyTorch scripts and runs the
same source once and the result, or the error message, is recorded. Cases in EAGER also run
as plain Python, and must agree. (Programs must not repeat a `torch.tensor(...)` literal that
an in-place operator then writes: TorchScript's CSE merges the two, in PyTorch as here.)

    /work/torch-venv/bin/python crates/tsrs/tests/data/breadth/gen_expected.py
"""

import json
import os
from typing import List

import torch

HEADER = """
def L(t: Tensor) -> List[float]:
    r: List[float] = t.flatten().double().tolist()
    return r
"""

CASES = {
    # --- out= derived from functional overloads
    "out_resizes_and_returns_out": """
def f() -> List[float]:
    o = torch.empty(0, dtype=torch.long)
    r = torch.gcd(torch.tensor([12, 18, 7]), torch.tensor([8, 12, 0]), out=o)
    o2 = torch.empty(5)
    torch.nextafter(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 0.0]), out=o2)
    return L((r.float() + o.float())) + [float(o2.numel())] + L((o2 - torch.tensor([1.0, 2.0])).mul(1e7).round())
""",
    "out_factory_takes_out_dtype": """
def f() -> List[float]:
    z = torch.empty(0, dtype=torch.long)
    torch.zeros([2, 2], out=z)
    l = torch.empty(3, dtype=torch.float64)
    torch.linspace(0.0, 1.0, 4, out=l)
    w = torch.empty(0, dtype=torch.float64)
    torch.hann_window(4, out=w)
    return [float(z.dtype == torch.long), float(z.sum())] + L(l) + L(w)
""",
    "out_multi_output": """
def f() -> List[float]:
    x = torch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    v = torch.empty(0)
    i = torch.empty(0, dtype=torch.long)
    torch.max(x, 1, max=v, max_values=i)
    sv = torch.empty(0)
    si = torch.empty(0, dtype=torch.long)
    torch.sort(x, 1, True, values=sv, indices=si)
    return L(v) + L(i.float()) + L(sv.flatten()) + L(si.flatten().float())
""",
    "out_cast_error": """
def f() -> List[float]:
    o = torch.empty(2, dtype=torch.long)
    torch.nextafter(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 0.0]), out=o)
    return L(o.float())
""",
    "out_multi_output_dtype_error": """
def f() -> List[float]:
    x = torch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    v = torch.empty(0)
    i = torch.empty(0)
    torch.max(x, 1, max=v, max_values=i)
    return L(v) + L(i)
""",
    "out_refuses_grad": """
def f() -> List[float]:
    x = torch.ones(2).requires_grad_()
    o = torch.empty(2)
    torch.nextafter(x, torch.zeros(2), out=o)
    return L(o.detach())
""",
    # --- in-place derived from functional overloads
    "in_place_derived": """
def f() -> List[float]:
    a = torch.tensor([4, 6, 9])
    a.lcm_(torch.tensor([6, 4, 3]))
    b = torch.tensor([12, 5])
    b.__iand__(torch.tensor([10, 4]))
    c = torch.tensor([0.5, 1.0])
    c.polygamma_(1)
    return L(a.float()) + L(b.float()) + L(c)
""",
    "in_place_cast_error": """
def f() -> List[float]:
    a = torch.tensor([1, 2])
    a.polygamma_(1)
    return L(a.float())
""",
    "float_power_in_place_needs_double": """
def f() -> List[float]:
    a = torch.tensor([1.0, 2.0])
    a.float_power_(2)
    return L(a)
""",
    # --- _foreach_ and fused optimizers
    "foreach_ops": """
def f() -> List[float]:
    xs = [torch.tensor([1.0, 2.0]), torch.tensor([3.0])]
    ys = [torch.tensor([0.5, 0.5]), torch.tensor([2.0])]
    a = torch._foreach_add(xs, ys, alpha=2.0)
    b = torch._foreach_mul(xs, ys) + torch._foreach_mul(xs, 3.0)
    c = torch._foreach_norm(xs)
    d = torch._foreach_lerp(xs, ys, 0.25)
    e = torch._foreach_maximum(xs, 1.5)
    g = torch._foreach_addcdiv(xs, ys, ys, torch.tensor([1.0, 2.0]))
    torch._foreach_sqrt_(xs)
    r: List[float] = []
    for t in a + b + c + d + e + g + xs:
        r += L(t.flatten())
    return r
""",
    "fused_adam": """
def f() -> List[float]:
    p = [torch.tensor([1.0, -2.0, 3.0])]
    g = [torch.tensor([0.5, 0.25, -1.0])]
    m = [torch.tensor([0.1, 0.0, -0.2])]
    v = [torch.tensor([0.01, 0.02, 0.03])]
    mx = [torch.tensor([0.05, 0.0, 0.01])]
    step = [torch.tensor(3.0)]
    torch._fused_adam_(p, g, m, v, mx, step, lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.01, eps=1e-8, amsgrad=True, maximize=False)
    return L(p[0]) + L(m[0]) + L(v[0]) + L(mx[0])
""",
    "fused_adamw": """
def f() -> List[float]:
    p = [torch.tensor([1.5, -2.5, 3.5])]
    g = [torch.tensor([0.4, 0.2, -0.8])]
    m = [torch.tensor([0.2, -0.1, 0.05])]
    v = [torch.tensor([0.04, 0.05, 0.06])]
    mx: List[Tensor] = []
    step = [torch.tensor(2.0)]
    torch._fused_adamw_(p, g, m, v, mx, step, lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=False, maximize=True)
    return L(p[0]) + L(m[0]) + L(v[0])
""",
    "fused_sgd": """
def f() -> List[float]:
    p = [torch.tensor([1.0, 2.0])]
    g = [torch.tensor([0.1, 0.2])]
    buf = [torch.tensor([0.5, -0.5])]
    torch._fused_sgd_(p, g, buf, weight_decay=0.1, momentum=0.9, lr=0.5, dampening=0.1, nesterov=True, maximize=False, is_first_step=False)
    return L(p[0]) + L(buf[0])
""",
    # --- windows, einsum, number theory, index factories
    "windows": """
def f() -> List[float]:
    r = L(torch.hann_window(5)) + L(torch.hamming_window(4, False))
    r += L(torch.blackman_window(6, dtype=torch.float64)) + L(torch.bartlett_window(5))
    r += L(torch.kaiser_window(6, False, 3.0, dtype=torch.float64))
    return r
""",
    "einsum": """
def f() -> List[float]:
    a = torch.arange(24.).reshape(2, 3, 4)
    b = torch.arange(40.).reshape(2, 4, 5)
    m = torch.arange(9.).reshape(3, 3)
    r = L(torch.einsum('bij,bjk->bik', [a, b]).flatten())
    r += L(torch.einsum('ii->i', [m])) + L(torch.einsum('ii', [m]).reshape(-1))
    r += L(torch.einsum('...ij->...ji', [a]).flatten())
    r += L(torch.einsum('bij,bij->b', [a, a]))
    r += L(torch.einsum('i,j->ij', [torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0])]).flatten())
    return r
""",
    "number_theory_and_factories": """
def f() -> List[float]:
    r = L(torch.gcd(torch.tensor([12, -18, 0]), torch.tensor([8, 12, 5])).float())
    r += L(torch.lcm(torch.tensor([4, 6]), torch.tensor([6, 4])).float())
    r += L(torch.isin(torch.tensor([1, 2, 3, 4]), torch.tensor([2, 4])).float())
    r += L(torch.float_power(torch.tensor([2, 3]), 2))
    r += L(torch.bincount(torch.tensor([0, 1, 1, 3]), minlength=5).float())
    r += L(torch.triu_indices(3, 3, 1).flatten().float()) + L(torch.tril_indices(3, 2).flatten().float())
    r += L(torch.bitwise_and(6, torch.tensor([3, 5])).float())
    r += [float(torch.result_type(torch.tensor([1]), 1.5) == torch.float32), float(torch.can_cast(torch.float32, torch.int32))]
    r += [float(torch.promote_types(torch.int32, torch.float16) == torch.float16)]
    return r
""",
    "gradient_packing_legacy_interpolate": """
def f() -> List[float]:
    x = torch.tensor([[1.0, 2.0, 4.0, 8.0], [1.0, 3.0, 9.0, 27.0]])
    r: List[float] = []
    for g in torch.gradient(x):
        r += L(g)
    for g in torch.gradient(x, spacing=[torch.tensor([0.0, 1.0, 3.0, 4.0])], dim=[1], edge_order=2):
        r += L(g)
    for g in torch.gradient(x, spacing=2.0, dim=1):
        r += L(g)
    data, sizes = torch._pack_padded_sequence(torch.tensor([[1.0, 4.0], [2.0, 5.0], [3.0, 0.0]]), torch.tensor([3, 2]), False)
    padded, lengths = torch._pad_packed_sequence(data, sizes, True, -1.0, 4)
    r += L(data) + L(sizes.float()) + L(padded) + L(lengths.float())
    r += L(torch.ops.aten.pad_sequence([torch.tensor([1.0, 2.0]), torch.tensor([3.0])], True, 0.5, "left"))
    g = torch.arange(16.).reshape(1, 1, 4, 4)
    r += L(torch.ops.aten.__interpolate(g, 6, None, "bilinear", False, None, False))
    r += L(torch.ops.aten.__interpolate(g, None, 0.5, "nearest", None, None, False))
    r += L(torch.ops.aten.__upsample_bilinear(g, None, 2))
    return r
""",
    # --- issue #12's last operators
    "airy_ai": """
def f() -> List[float]:
    return L(torch.special.airy_ai(torch.tensor([-12.5, -5.0, -1.0, 0.0, 0.5, 2.0, 5.0, 9.0], dtype=torch.float64)))
""",
    "lanczos_aa_upsample": """
def f() -> List[float]:
    x = torch.arange(30.0).reshape(1, 1, 5, 6)
    a = torch.ops.aten._upsample_lanczos2d_aa(x, [3, 4], False)
    b = torch.ops.aten._upsample_lanczos2d_aa(x, [7, 9], True)
    return L(a) + L(b)
""",
    "histogramdd_pieces": """
def f() -> List[float]:
    x = torch.tensor([[0.0, 1.0], [0.5, 0.2], [1.0, 3.0], [0.7, 2.5]])
    h = torch.ops.aten._histogramdd_from_bin_cts(x, [2, 3])
    e = torch.ops.aten._histogramdd_bin_edges(x, [2, 3])
    t = torch.ops.aten._histogramdd_from_bin_tensors(x, [torch.tensor([0.0, 0.5, 1.0]), torch.tensor([0.0, 2.0, 4.0])])
    return L(h) + L(e[0]) + L(e[1]) + L(t)
""",
    "einsum_sublist": """
def f() -> List[float]:
    a = torch.arange(6.0).reshape(2, 3)
    b = torch.arange(12.0).reshape(3, 4)
    return L(torch.einsum(a, [0, 1], b, [1, 2], [0, 2])) + L(torch.einsum(a, [30, 2]))
""",
    "hash_generic": """
def f() -> List[float]:
    t = (3, "ab")
    return [float(hash("ab") % 1000003), float(hash(t) % 1000003), float(hash(1.5) % 1000003), float(hash(-7))]
""",
    "slice_inverse_views_base": """
def f() -> List[float]:
    x = torch.arange(20.0).reshape(5, 4)
    v = x[1:4]
    r = torch.ops.aten.slice_inverse(v, x, 0, 1, 4, 1)
    return L(r) + [float(r.size(0))]
""",
    "philox_keys_and_draws": """
def f() -> List[float]:
    key = torch.tensor([42, 0], dtype=torch.uint64)
    ks = torch.ops.aten._philox_key_split(key, 2)
    kf = torch.ops.aten._philox_key_fold_in(key, 5)
    u = torch.ops.aten._philox_uniform(torch.empty(6), key, -1.0, 2.0)
    n = torch.ops.aten._philox_normal(torch.empty(5, dtype=torch.float64), ks[1], 0.5, 2.0)
    i = torch.ops.aten._philox_randint(torch.empty(7, dtype=torch.int32), kf, 0, 100)
    return L(ks.double()) + L(kf.double()) + L(u) + L(n) + L(i)
""",
    "generator_streams": """
def f() -> List[float]:
    g = torch.Generator(device="cpu", seed=5)
    s = float(g.initial_seed())
    a = torch.rand(3, generator=g)
    g.manual_seed(7)
    b = torch.randn(2, generator=g)
    c = torch.empty(3).uniform_(0.0, 1.0, generator=g)
    return [s] + L(a) + L(b) + L(c)
""",
    "test_ops_and_out_forms": """
def f() -> List[float]:
    x = torch.tensor([-1.0, 2.0, -3.0])
    s = torch.ops.aten._test_serialization_subcmul(x, torch.tensor([1.0, 1.0, 1.0]), 2)
    o = torch.empty(0)
    r = torch.ops.aten.rrelu_with_noise(x, torch.zeros(3), 0.1, 0.3, False, None, out=o)
    return L(s) + L(o) + L(r)
""",
}


EAGER = {"fused_adam", "fused_adamw", "fused_sgd"}


def run(name, src):
    # Each program runs once: constant propagation turns tensor literals into constants that
    # in-place operators would change for a second call.
    f = torch.jit.CompilationUnit(HEADER + src).f
    try:
        values = [float(x) for x in f()]
    except Exception as e:  # noqa: BLE001 - the message is the expected value
        lines = [l for l in str(e).splitlines() if l.strip()]
        return {"error": lines[-1].split("RuntimeError: ")[-1].strip()}
    if name in EAGER:
        scope = {"torch": torch, "Tensor": torch.Tensor, "List": List}
        exec(HEADER + src, scope)  # noqa: S102 - our own test programs
        eager = scope["f"]()
        assert all(abs(a - b) <= 1e-6 * (1 + abs(a)) for a, b in zip(eager, values)), name
    return {"values": values}


def main():
    out = {name: dict(source=src, **run(name, src)) for name, src in CASES.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
