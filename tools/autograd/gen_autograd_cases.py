"""Generates tests/autograd: TorchScript programs exercising autograd where the OpInfo gradient
corpus cannot reach (Tensor.backward and .grad, retain_graph, create_graph double backward,
in-place ops on non-leaves, views, method-only ops, retain_grad, detach_, no_grad, and the
errors PyTorch raises), each with its inputs and torch 2.15's result (or error). Needs torch:

    /work/torch-venv/bin/python tools/autograd/gen_autograd_cases.py
"""
import json
import os
import shutil

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "autograd")

CASES = {}


def case(name, src, inputs, error=False):
    CASES[name] = (src, inputs, error)


g = torch.Generator().manual_seed(17)


def rnd(*shape):
    return torch.randn(*shape, generator=g, dtype=torch.float64)


case("backward_accumulates_grad", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = (x * x).sum()
    y.backward()
    return x.grad
""", (rnd(3, 4),))

case("backward_retain_graph_twice", """
def f(x, w):
    x = x.detach().requires_grad_(True)
    y = (x.sin() * w).sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad
""", (rnd(5), rnd(5)))

case("backward_with_gradient", """
def f(x, go):
    x = x.detach().requires_grad_(True)
    y = x * x.exp()
    y.backward(go)
    return x.grad
""", (rnd(2, 3), rnd(2, 3)))

case("create_graph_double_backward", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = (x ** 3 * x.tanh()).sum()
    g = torch.autograd.grad([y], [x], create_graph=True)[0]
    assert g is not None
    gg = torch.autograd.grad([(g * g).sum()], [x])[0]
    return g.detach(), gg
""", (rnd(4),))

case("create_graph_backward_into_grad", """
def f(x, w):
    x = x.detach().requires_grad_(True)
    y = (torch.matmul(w, x).sigmoid()).sum()
    g = torch.autograd.grad([y], [x], create_graph=True)[0]
    assert g is not None
    g.pow(2).sum().backward()
    return x.grad
""", (rnd(3, 2), rnd(4, 3)))

case("in_place_on_non_leaf", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = x * 2
    y.add_(1)
    y.mul_(x)
    y.div_(3.0)
    y.relu_()
    z = y.sin().sum()
    return torch.autograd.grad([z], [x])
""", (rnd(3, 3),))

case("in_place_clamp_and_sigmoid", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = x + 0
    y.clamp_(-0.5, 0.5)
    y.mul_(x)
    y.sigmoid_()
    return torch.autograd.grad([y.sum()], [x])
""", (rnd(6),))

case("views_and_method_only_ops", """
def f(x, w, m):
    x = x.detach().requires_grad_(True)
    a = x.t()[1]
    b = x.view(-1).narrow(0, 2, 3)
    c = x.expand_as(w) * w
    d = c.masked_fill(m, 0.5).view_as(w)
    e = x.unsqueeze(0).transpose(1, 2).squeeze(0).diagonal()
    z = (a * b).sum() + d.sum() + e.prod() + x.type_as(w).norm()
    return torch.autograd.grad([z], [x])
""", (rnd(3, 3), rnd(2, 3, 3), torch.rand(2, 3, 3, generator=g) > 0.5))

case("retain_grad_on_non_leaf", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = x * 3
    y.retain_grad()
    z = (y * y).sum()
    z.backward()
    return x.grad, y.grad, y.is_leaf, x.is_leaf
""", (rnd(4),))

case("detach_and_requires_grad", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = x * 2
    r1 = y.requires_grad
    y.detach_()
    w = x.detach()
    return r1, y.requires_grad, y.is_leaf, w.requires_grad, (x * 2).requires_grad
""", (rnd(2),))

case("no_grad_records_nothing", """
def f(x):
    x = x.detach().requires_grad_(True)
    with torch.no_grad():
        y = x * 2
        inner = torch.is_grad_enabled()
    z = x * 2
    return y.requires_grad, inner, z.requires_grad, torch.is_grad_enabled()
""", (rnd(2),))

case("grad_accumulates_across_calls", """
def f(x, w):
    x = x.detach().requires_grad_(True)
    for i in range(3):
        y = (x * w * float(i + 1)).sum()
        y.backward()
    return x.grad
""", (rnd(3), rnd(3)))

case("error_in_place_on_leaf", """
def f(x):
    x = x.detach().requires_grad_(True)
    x.add_(1)
    return x
""", (rnd(3),), error=True)

case("error_in_place_on_view_of_leaf", """
def f(x):
    x = x.detach().requires_grad_(True)
    v = x[0]
    v.mul_(2)
    return x
""", (rnd(2, 2),), error=True)

case("error_result_of_relu_modified", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = x * 2
    y.relu_()
    y.mul_(3.0)
    return torch.autograd.grad([y.sum()], [x])
""", (rnd(3, 3),), error=True)

case("error_backward_twice", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = (x.exp()).sum()
    y.backward()
    y.backward()
    return x.grad
""", (rnd(3),), error=True)

case("error_unused_input", """
def f(x, u):
    x = x.detach().requires_grad_(True)
    u = u.detach().requires_grad_(True)
    return torch.autograd.grad([(x * 2).sum()], [x, u])
""", (rnd(3), rnd(3)), error=True)


# In-place writes through views of non-leaves (CopySlices): the base's history is rewritten.
case("copy_slices_row_mul", """
def f(x, w):
    x = x.detach().requires_grad_(True)
    y = x * 2
    y[0].mul_(3)
    return torch.autograd.grad([(y * w).sum()], [x])
""", (rnd(3, 4), rnd(3, 4)))

case("copy_slices_setitem_column", """
def f(x, z, w):
    x = x.detach().requires_grad_(True)
    z = z.detach().requires_grad_(True)
    y = x.exp()
    y2 = y * 1.0
    y2[:, 1] = z
    return torch.autograd.grad([(y2 * w).sum()], [x, z])
""", (rnd(3, 4), rnd(3), rnd(3, 4)))

case("copy_slices_chain_index_put", """
def f(x, v, w):
    x = x.detach().requires_grad_(True)
    v = v.detach().requires_grad_(True)
    y = x * x
    r = y.t()[1]
    r.index_put_([torch.tensor([2, 0])], v * 2.0)
    r.masked_fill_(r > 0.5, 0.25)
    return torch.autograd.grad([(y * w).sum()], [x, v])
""", (rnd(3, 4), rnd(2), rnd(3, 4)))

case("copy_slices_into_buffer_without_grad", """
def f(z, w):
    z = z.detach().requires_grad_(True)
    a = torch.zeros(2, 3, dtype=torch.float64)
    a[1] = z * z
    a[0, 1:] = z[:2]
    return torch.autograd.grad([(a * w).sum()], [z])
""", (rnd(3), rnd(2, 3)))

case("error_result_of_exp_modified", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = (x * 2).exp()
    y.add_(1.0)
    return torch.autograd.grad([y.sum()], [x])
""", (rnd(3),), error=True)

case("error_result_of_sigmoid_modified_through_view", """
def f(x):
    x = x.detach().requires_grad_(True)
    y = torch.sigmoid(x * 2)
    y[0].zero_()
    return torch.autograd.grad([y.sum()], [x])
""", (rnd(2, 3),), error=True)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for name, (src, inputs, error) in CASES.items():
        src = src.lstrip("\n")
        d = os.path.join(OUT, "autograd__" + name)
        os.makedirs(d)
        with open(os.path.join(d, "program.py"), "w") as fh:
            fh.write(src)
        torch.save(inputs, os.path.join(d, "inputs.pt"))
        cu = torch.jit.CompilationUnit(src)
        meta = {
            "entry": "f",
            "category": "autograd",
            "origin": "written",
            "expect": "error" if error else "value",
            "rtol": 1e-7,
            "atol": 1e-9,
            "notes": "autograd semantics the OpInfo gradient corpus cannot express",
            "program": "program.py",
            "compiled_with": "torch.jit.CompilationUnit",
            "torch_version": torch.__version__.split("+")[0],
        }
        try:
            out = cu.f(*inputs)
        except Exception as e:  # noqa: BLE001 - the error is the expected result
            if not error:
                raise
            meta["error_stage"] = "runtime"
            first = str(e).strip().splitlines()
            msg = next((l for l in reversed(first) if l.strip() and not l.startswith(" ")), "")
            meta["torch_error"] = msg
        else:
            if error:
                raise SystemExit(f"{name}: expected an error, got {out}")
            torch.save(out, os.path.join(d, "expected.pt"))
        with open(os.path.join(d, "case.json"), "w") as fh:
            json.dump(meta, fh, indent=1)
            fh.write("\n")
        print(name, meta.get("torch_error", "ok"))


if __name__ == "__main__":
    main()
