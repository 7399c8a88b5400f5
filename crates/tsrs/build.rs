//! Release links of the CLI place the functions a typical run executes together at the start of
//! `.text` (`symbol-order.txt`, written by `bench/symbol_order.py`).
//!
//! The kernel maps a binary's code in fault-around windows of what the page cache holds, so hot
//! code spread over 25 MB of text kept ~16 MB resident for one ResNet-18 forward; grouped, the
//! same run keeps about 9 MB (peak RSS of start + load + forward 72 -> 65 MB). Only the order
//! changes: names missing from the file (stale hashes, new functions) are linked as before.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=symbol-order.txt");
    println!("cargo:rerun-if-env-changed=TSRS_NO_SYMBOL_ORDER");
    for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let var = |k: &str| env::var(k).unwrap_or_default();
    // `--symbol-ordering-file` is an LLD option. Rust links x86_64 Linux (GNU) with its bundled
    // LLD by default; any other target, or a linker chosen by the user, keeps the plain link.
    let default_lld = var("TARGET") == "x86_64-unknown-linux-gnu"
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("linker")
        && env::var_os("RUSTC_LINKER").is_none();
    if var("PROFILE") != "release" || !default_lld || env::var_os("TSRS_NO_SYMBOL_ORDER").is_some()
    {
        return;
    }
    let order = format!("{}/symbol-order.txt", var("CARGO_MANIFEST_DIR"));
    println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={order}");
    println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
}
