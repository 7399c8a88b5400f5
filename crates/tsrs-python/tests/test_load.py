"""Loading conformance models and programs and matching PyTorch's stored outputs."""

import json

import numpy as np
import pytest

import tsrs

MODELS = ["modules_scripted__mlp", "modules_traced__mlp", "modules_scripted__small_cnn_conv_bn_pool"]


def check(actual, expected, case):
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, tsrs.Tensor), f"expected a tensor, got {actual!r}"
        np.testing.assert_allclose(actual.numpy(), expected, rtol=case["rtol"], atol=case["atol"])
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            check(a, e, case)
    else:
        assert actual == expected


@pytest.mark.parametrize("name", MODELS)
def test_conformance_model_matches_pytorch(conformance, name):
    cases, torchsave = conformance
    d = cases / name
    case = json.loads((d / "case.json").read_text())
    inputs = torchsave.load(d / "inputs.pt")
    m = tsrs.load(str(d / "model.pt"))
    out = getattr(m, case["entry"])(*inputs)
    check(out, torchsave.load(d / "expected.pt"), case)
    # Calling the module is calling forward.
    check(m(*inputs), torchsave.load(d / "expected.pt"), case)


def test_load_from_bytes_and_introspect(conformance):
    cases, _ = conformance
    data = (cases / "modules_scripted__mlp" / "model.pt").read_bytes()
    m = tsrs.load(data)
    assert "aten::" in m.graph
    assert "def forward" in m.code
    names = [n for n, _ in m.named_parameters()]
    assert names and all(isinstance(p, tsrs.Tensor) for p in m.parameters())
    assert set(m.state_dict()) >= set(names)


def test_conformance_program_via_compile(conformance):
    cases, torchsave = conformance
    d = cases / "tensor_nn__mnist_style_functional_pipeline"
    case = json.loads((d / "case.json").read_text())
    cu = tsrs.compile((d / "program.py").read_text())
    out = getattr(cu, case["entry"])(*torchsave.load(d / "inputs.pt"))
    check(out, torchsave.load(d / "expected.pt"), case)


def test_corrupt_archive_is_an_error(tmp_path):
    p = tmp_path / "bad.pt"
    p.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(Exception) as e:
        tsrs.load(str(p))
    assert str(e.value)
    # torch.jit.load raises ValueError for a path that does not exist or is a directory.
    with pytest.raises(ValueError, match="missing.pt does not exist"):
        tsrs.load(str(tmp_path / "missing.pt"))
    with pytest.raises(ValueError, match="is a directory"):
        tsrs.load(str(tmp_path))


def test_freeze_folds_and_keeps_the_output(conformance):
    cases, torchsave = conformance
    d = cases / "modules_scripted__small_cnn_conv_bn_pool"
    case = json.loads((d / "case.json").read_text())
    inputs = torchsave.load(d / "inputs.pt")
    m = tsrs.load(str(d / "model.pt"))
    frozen = tsrs.freeze(m)
    # Parameters became constants: no attribute reads are left, batch norm folded away.
    assert "prim::GetAttr" not in frozen.graph
    assert "batch_norm" not in frozen.graph
    check(frozen(*inputs), torchsave.load(d / "expected.pt"), case)
    # The original is untouched, and freezing a frozen module is a no-op.
    assert "prim::GetAttr" in m.graph
    assert tsrs.freeze(frozen).graph == frozen.graph
    fast = tsrs.optimize_for_inference(m)
    check(fast(*inputs), torchsave.load(d / "expected.pt"), case)


def test_runtime_error_carries_torchscript_traceback():
    cu = tsrs.compile(
        "def g(x: int) -> int:\n"
        "    if x > 2:\n"
        "        raise ValueError('too big')\n"
        "    return x\n"
        "def f(x: int) -> int:\n"
        "    return g(x) + 1\n"
    )
    assert cu.f(1) == 2
    with pytest.raises(ValueError) as e:
        cu.f(5)
    text = str(e.value)
    assert "Traceback of TorchScript" in text and "in g" in text and "in f" in text
    assert text.rstrip().endswith("too big")


def test_compile_error_is_reported():
    with pytest.raises(Exception) as e:
        tsrs.compile("def f(x: int) -> int:\n    return y\n")
    assert "y" in str(e.value)


def test_wrong_argument_type_is_an_error(conformance):
    cases, _ = conformance
    m = tsrs.load(str(cases / "modules_scripted__mlp" / "model.pt"))
    with pytest.raises(Exception):
        m("not a tensor")
