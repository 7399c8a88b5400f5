#!/usr/bin/env bash
# CI fragment: builds and runs the `torchscript` crate's examples on its test data (release,
# sharing the build of `cargo build --release -p tsrs`).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=crates/torchscript/tests/data

echo "== examples: run_model"
cargo run -q --release -p torchscript --example run_model -- "$DATA/tiny_cnn.pt" 1x3x32x32
echo "== examples: script_function"
cargo run -q --release -p torchscript --example script_function
echo "== examples: serve"
out=$(printf '{"id":1,"shape":[1,2],"data":[0.5,-1.0]}\n{"id":2,"shape":[1,2],"seed":3}\n' |
  cargo run -q --release -p torchscript --example serve -- "$DATA/add_relu.pt" 2)
echo "$out"
echo "$out" | grep -q '"id":1' && echo "$out" | grep -q '"id":2'
echo "== examples: train_mlp"
# Trains the scripted MLP with Adam from Rust; the example fails unless the loss decreases.
cargo run -q --release -p torchscript --example train_mlp -- "$DATA/mlp.pt" adam 100 "${TMPDIR:-/tmp}/tsrs-mlp-trained.pt"
