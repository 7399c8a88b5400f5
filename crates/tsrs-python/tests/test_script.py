"""`tsrs.script` of Python functions against `torch.jit.script`'s stored results."""

import json
import pathlib

import numpy as np
import pytest

import scripted_fns
import tsrs

EXPECTED = json.loads((pathlib.Path(__file__).parent / "data" / "script_expected.json").read_text())


def dec(v):
    if isinstance(v, dict) and "tensor" in v:
        return tsrs.from_numpy(np.array(v["tensor"], dtype=v["dtype"]))
    if isinstance(v, dict) and "list" in v:
        return [dec(x) for x in v["list"]]
    if isinstance(v, dict) and "tuple" in v:
        return tuple(dec(x) for x in v["tuple"])
    return v


def check(actual, expected):
    if isinstance(expected, dict) and "tensor" in expected:
        assert isinstance(actual, tsrs.Tensor)
        assert actual.dtype.name == expected["dtype"]
        np.testing.assert_allclose(
            actual.numpy(), np.array(expected["tensor"], dtype=expected["dtype"]), rtol=1e-5, atol=1e-6
        )
    elif isinstance(expected, dict):
        items = expected.get("list", expected.get("tuple"))
        assert len(actual) == len(items)
        for a, e in zip(actual, items):
            check(a, e)
    else:
        assert actual == expected


@pytest.mark.parametrize("name", scripted_fns.CASES)
def test_script_matches_torch_jit_script(name):
    f = tsrs.script(getattr(scripted_fns, name))
    assert isinstance(f, tsrs.ScriptFunction)
    case = EXPECTED[name]
    check(f(*[dec(a) for a in case["inputs"]]), case["expected"])


def test_script_compiles_called_helpers():
    f = tsrs.script(scripted_fns.gelu_mlp)
    assert "_gelu_tanh" in f._source
    assert "graph(" in f.graph


def test_script_of_closure_helper():
    def double(x: int) -> int:
        return x * 2

    def f(x: int) -> int:
        return double(x) + 1

    assert tsrs.script(f)(20) == 41


def test_script_rejects_non_functions():
    with pytest.raises(TypeError):
        tsrs.script(42)


def test_scripted_function_saves_and_loads(tmp_path):
    f = tsrs.script(scripted_fns.scale_shift)
    p = tmp_path / "f.pt"
    tsrs.save(f, str(p))
    m = tsrs.load(str(p))
    x = tsrs.from_numpy(np.ones((2, 2), dtype=np.float32))
    np.testing.assert_allclose(m(x, 2.0, 1.0).numpy(), np.full((2, 2), 3.0, dtype=np.float32))
