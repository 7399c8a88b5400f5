"""Shared fixtures: where the conformance suite is, and its pure-Python torch.save reader."""

import importlib.util
import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent
# The suite lives in ../shared next to the repository (as .ci/run expects); TSRS_CONFORMANCE
# overrides.
CONFORMANCE = pathlib.Path(
    os.environ.get("TSRS_CONFORMANCE", HERE.parents[3] / "shared" / "conformance")
)


@pytest.fixture(scope="session")
def conformance():
    """(cases directory, torchsave module)."""
    reader = CONFORMANCE / "torchsave.py"
    if not reader.exists():
        pytest.fail(f"conformance suite not found at {CONFORMANCE} (set TSRS_CONFORMANCE)")
    spec = importlib.util.spec_from_file_location("torchsave", reader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return CONFORMANCE / "cases", module
