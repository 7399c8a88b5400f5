"""Tracing a small MLP written against tsrs.Tensor and saving it."""

import numpy as np
import pytest

import tsrs
import tsrs.nn as nn
import tsrs.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=-1)


def reference(mlp, x):
    h = np.maximum(x @ mlp.fc1.weight.numpy().T + mlp.fc1.bias.numpy(), 0)
    z = h @ mlp.fc2.weight.numpy().T + mlp.fc2.bias.numpy()
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_trace_mlp_and_save(tmp_path):
    tsrs.manual_seed(0)
    mlp = MLP()
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    traced = tsrs.trace(mlp, (tsrs.from_numpy(x),))
    g = traced.graph
    assert g.count("aten::linear") == 2 and "aten::relu" in g and "aten::softmax" in g
    assert 'prim::GetAttr[name="fc1"]' in g
    assert sorted(n for n, _ in traced.named_parameters()) == [
        "fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"
    ]
    # The traced module runs on new inputs (other batch sizes too).
    x2 = np.random.default_rng(1).standard_normal((7, 4)).astype(np.float32)
    np.testing.assert_allclose(traced(tsrs.from_numpy(x2)).numpy(), reference(mlp, x2), rtol=1e-5, atol=1e-6)
    # Save, load back, same output.
    p = tmp_path / "mlp.pt"
    tsrs.save(traced, str(p))
    again = tsrs.load(str(p))
    np.testing.assert_array_equal(again(tsrs.from_numpy(x2)).numpy(), traced(tsrs.from_numpy(x2)).numpy())


def test_trace_function_with_operators_and_methods():
    def f(x, y):
        return (x @ y.t()).relu().sum(1) * 2 + 1

    a = tsrs.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = tsrs.from_numpy(np.ones((4, 3), dtype=np.float32))
    m = tsrs.trace(f, (a, b))
    assert "aten::matmul" in m.graph
    np.testing.assert_allclose(m(a, b).numpy(), f(a, b).numpy())


def test_trace_warns_on_data_dependent_values():
    def f(x):
        if x.sum().item() > 0:
            return x * 2
        return x

    with pytest.warns(tsrs.TracerWarning):
        tsrs.trace(f, (tsrs.from_numpy(np.ones(3, dtype=np.float32)),))


def test_trace_dynamic_sizes_records_aten_size():
    def f(x):
        return x.view(x.size(0), -1)

    x = tsrs.from_numpy(np.ones((2, 3, 4), dtype=np.float32))
    assert "aten::size" not in tsrs.trace(f, (x,)).graph
    m = tsrs.trace(f, (x,), dynamic_sizes=True)
    assert "aten::size" in m.graph
    y = m(tsrs.from_numpy(np.ones((5, 3, 4), dtype=np.float32)))
    assert y.shape == (5, 12)


def test_trace_errors_propagate():
    def f(x):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        tsrs.trace(f, (tsrs.from_numpy(np.ones(1, dtype=np.float32)),))
    assert not tsrs.is_tracing()


def test_trace_sequential_children_named_by_index(tmp_path):
    tsrs.manual_seed(1)
    net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    x = tsrs.from_numpy(np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32))
    traced = tsrs.trace(net, (x,))
    assert 'prim::GetAttr[name="0"]' in traced.graph
    assert sorted(n for n, _ in traced.named_parameters()) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    p = tmp_path / "seq.pt"
    tsrs.save(traced, str(p))
    np.testing.assert_array_equal(tsrs.load(str(p))(x).numpy(), net(x).numpy())
