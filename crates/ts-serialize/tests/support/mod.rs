//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ts_core::IValue;
use ts_tensor::{DType, Tensor};

/// The conformance cases: `shared/conformance/cases` next to the checkout or one of its
/// ancestors (worktrees live one level deeper than the main checkout). `None` when absent.
pub fn cases_dir() -> Option<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/conformance/cases"))
        .find(|d| d.is_dir())
}

/// `file` of every case that has one, sorted by case.
pub fn case_files(file: &str) -> Vec<PathBuf> {
    let Some(dir) = cases_dir() else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("readable cases dir")
        .map(|e| e.expect("dir entry").path().join(file))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// A test fixture committed next to the tests.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100000001B3);
    }
}

/// FNV-1a of a tensor's elements in row-major order (little-endian bytes), read through its
/// sizes, strides and offset.
pub fn tensor_fnv(t: &Tensor) -> u64 {
    let m = t.meta();
    let size = m.dtype.size();
    let bytes = m.storage.to_bytes();
    let numel: i64 = m.sizes.iter().product();
    let mut h = 0xCBF29CE484222325u64;
    let mut idx = vec![0i64; m.sizes.len()];
    for _ in 0..numel {
        let mut off = m.offset as i64;
        for (i, s) in idx.iter().zip(&m.strides) {
            off += i * s;
        }
        let start = off as usize * size;
        fnv1a(&mut h, &bytes[start..start + size]);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < m.sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    h
}

/// The canonical digest of a loaded value; the grammar is documented in
/// `fixtures/digest_torch_save.py`, which computes the same digest with PyTorch's reader.
pub fn digest(v: &IValue) -> String {
    match v {
        IValue::None => "None".into(),
        IValue::Bool(true) => "True".into(),
        IValue::Bool(false) => "False".into(),
        IValue::Int(i) => format!("i:{i}"),
        IValue::Double(f) => format!("f:{:016x}", f.to_bits()),
        IValue::String(s) => {
            let hex: String = s.bytes().map(|b| format!("{b:02x}")).collect();
            format!("s:{hex}")
        }
        IValue::Tensor(t) => {
            let dtype = t.dtype();
            let name = if dtype == DType::BFloat16 {
                "bfloat16"
            } else {
                dtype.name()
            };
            let shape: Vec<String> = t.sizes().iter().map(|s| s.to_string()).collect();
            format!("T({name};{};{:016x})", shape.join(","), tensor_fnv(t))
        }
        IValue::List(l) => {
            let items: Vec<String> = l.items.read().iter().map(digest).collect();
            format!("[{}]", items.join(","))
        }
        IValue::Tuple(t) => {
            let items: Vec<String> = t.elements.iter().map(digest).collect();
            format!("({})", items.join(","))
        }
        IValue::Dict(d) => {
            let items: Vec<String> = d
                .entries
                .read()
                .iter()
                .map(|(k, v)| format!("{}:{}", digest(&k.0), digest(v)))
                .collect();
            format!("{{{}}}", items.join(","))
        }
        other => format!("<{other:?}>"),
    }
}
