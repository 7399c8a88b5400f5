#!/usr/bin/env bash
# CI fragment for the Python package: builds the abi3 wheel with maturin (from pip, in a build
# venv), installs it into a fresh venv with only numpy and pytest (no PyTorch), and runs the
# pytest suite against the conformance files. Needs python3 with venv and pip.
# Usage: .ci/python.sh   (from anywhere; TSRS_CONFORMANCE overrides ../shared/conformance)
set -euo pipefail
cd "$(dirname "$0")/.."

WORK="${TMPDIR:-/tmp}/tsrs-ci-python"
rm -rf "$WORK/wheels" "$WORK/test-venv"
mkdir -p "$WORK"

mkvenv() {
  python3 -m venv "$1" 2>/dev/null || { python3 -m pip install --user --quiet virtualenv && python3 -m virtualenv "$1"; }
}

echo "== python: build the wheel"
if [ ! -x "$WORK/build-venv/bin/maturin" ]; then
  mkvenv "$WORK/build-venv"
  "$WORK/build-venv/bin/python" -m pip install --quiet "maturin>=1.7,<2"
fi
"$WORK/build-venv/bin/maturin" build --release -m crates/tsrs-python/Cargo.toml -o "$WORK/wheels"

echo "== python: install it into a fresh venv"
mkvenv "$WORK/test-venv"
"$WORK/test-venv/bin/python" -m pip install --quiet "$WORK"/wheels/tsrs-*.whl numpy pytest

echo "== python: pytest"
export TSRS_CONFORMANCE="${TSRS_CONFORMANCE:-$(cd .. && pwd)/shared/conformance}"
# Run from outside the source tree so that `import tsrs` is the installed wheel.
(cd "$WORK" && "$WORK/test-venv/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/crates/tsrs-python/tests")
