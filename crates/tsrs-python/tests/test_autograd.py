"""Gradients from Python: backward and .grad, torch.autograd.grad, grad-mode guards, and a
training loop over a loaded scripted MLP whose loss must go down."""

import pathlib

import numpy as np
import pytest

import tsrs

MLP = pathlib.Path(__file__).resolve().parents[2] / "torchscript" / "tests" / "data" / "mlp.pt"


def test_backward_accumulates_into_leaf_grad():
    x = tsrs.tensor([1.0, -2.0, 3.0])
    x.requires_grad = True
    assert x.is_leaf and x.grad is None
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0, 6.0])
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, -1.0, 9.0])
    x.grad = None
    assert x.grad is None


def test_autograd_grad_and_create_graph():
    x = tsrs.tensor([0.5, 2.0])
    x.requires_grad = True
    y = (x * x * x).sum()
    (g,) = tsrs.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [0.75, 12.0])
    (gg,) = tsrs.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [3.0, 12.0])


def test_no_grad_guard_and_decorator():
    x = tsrs.tensor([1.0])
    x.requires_grad = True
    assert tsrs.is_grad_enabled()
    with tsrs.no_grad():
        assert not tsrs.is_grad_enabled()
        assert not (x * 2.0).requires_grad
        with tsrs.enable_grad():
            assert (x * 2.0).requires_grad
    assert tsrs.is_grad_enabled() and (x * 2.0).requires_grad

    @tsrs.no_grad()
    def f(t):
        return t * 2.0

    assert not f(x).requires_grad


def test_requires_grad_only_on_float_leaves():
    with pytest.raises(RuntimeError, match="floating point"):
        tsrs.tensor([1, 2]).requires_grad = True
    x = tsrs.tensor([1.0])
    x.requires_grad = True
    with pytest.raises(RuntimeError, match="leaf"):
        (x * 2.0).requires_grad = False


def test_training_a_scripted_mlp_lowers_the_loss(tmp_path):
    m = tsrs.load(str(MLP))
    tsrs.manual_seed(0)
    x = tsrs.randn(64, 8)
    y = (x.sum(1, keepdim=True) * 0.5).sin()
    params = m.parameters()
    for p in params:
        p.requires_grad = True

    def loss():
        return tsrs.mse_loss(m(x), y)

    first = loss().item()
    for _ in range(60):
        for p in params:
            p.grad = None
        loss().backward()
        with tsrs.no_grad():
            for p in params:
                p -= 0.1 * p.grad
    last = loss().item()
    assert last < 0.5 * first, (first, last)
    out = tmp_path / "trained.pt"
    m.save(str(out))
    reloaded = tsrs.load(str(out))
    with tsrs.no_grad():
        np.testing.assert_allclose(reloaded(x).numpy(), m(x).numpy(), rtol=1e-6)
