"""tsrs.Tensor: NumPy and DLPack interop, operators, indexing."""

import numpy as np
import pytest

import tsrs


def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tsrs.from_numpy(a)
    assert t.shape == (2, 3) and t.dtype == tsrs.float32
    a[0, 0] = 42.0
    assert t[0, 0].item() == 42.0
    back = t.numpy()
    back[1, 2] = -1.0
    assert a[1, 2] == -1.0


def test_non_contiguous_numpy_is_copied_correctly():
    a = np.arange(12, dtype=np.int64).reshape(3, 4).T
    np.testing.assert_array_equal(tsrs.from_numpy(a).numpy(), a)


def test_dlpack_round_trip_with_numpy():
    t = tsrs.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, [[1.0, 2.0], [3.0, 4.0]])
    u = tsrs.from_dlpack(np.arange(4, dtype=np.int32))
    assert u.tolist() == [0, 1, 2, 3]


def test_operators_and_methods():
    x = tsrs.tensor([[1.0, -2.0], [3.0, -4.0]])
    assert (x + 1).tolist() == [[2.0, -1.0], [4.0, -3.0]]
    assert (2 * x).relu().tolist() == [[2.0, 0.0], [6.0, 0.0]]
    assert x.sum().item() == -2.0
    assert x.view(4).tolist() == [1.0, -2.0, 3.0, -4.0]
    assert x[:, 1].tolist() == [-2.0, -4.0]
    assert (x > 0).tolist() == [[True, False], [True, False]]
    assert tsrs.zeros(2, 3).shape == (2, 3)
    assert tsrs.cat([x, x]).shape == (4, 2)
    assert x.long().dtype == tsrs.int64


def test_bad_operations_raise():
    x = tsrs.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError):
        x.view(3)
    with pytest.raises(AttributeError):
        x.not_an_operator_name
    with pytest.raises(ValueError):
        float(x)
