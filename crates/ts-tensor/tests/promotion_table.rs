//! Type promotion checked exhaustively against a table produced by real torch 2.15
//! (`fixtures/promotion.txt`), generated with:
//!
//! ```python
//! dts = [bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
//!        complex64, complex128, uint16, uint32, uint64]
//! for a in dts:
//!     for b in dts:
//!         promote_types(a, b); can_cast(a, b); result_type(zeros(2, dtype=a), zeros((), dtype=b))
//!     for s in (True, 2, 2.5):
//!         result_type(zeros(2, dtype=a), s); result_type(zeros((), dtype=a), s)
//! ```
//!
//! (a RuntimeError is recorded as `ERR`). torch gives complex32/bcomplex32 for a half-precision
//! tensor with a 0-dim complex one; this library has no complex32, so it answers complex64.

use ts_tensor::promote::{can_cast, try_promote_types, try_result_type, Operand};
use ts_tensor::{DType, Scalar, Tensor};

/// The expected dtype, or `None` for `ERR`.
fn want_dtype(s: &str) -> Option<DType> {
    match s {
        "ERR" => None,
        "complex32" | "bcomplex32" => Some(DType::Complex64),
        _ => Some(DType::from_name(s).unwrap_or_else(|| panic!("unknown dtype {s}"))),
    }
}

fn dt(s: &str) -> DType {
    DType::from_name(s).unwrap_or_else(|| panic!("unknown dtype {s}"))
}

fn scalar(s: &str) -> Scalar {
    match s {
        "bool" => Scalar::Bool(true),
        "int" => Scalar::Int(2),
        _ => Scalar::Float(2.5),
    }
}

#[test]
fn matches_torch_table() {
    let table = include_str!("fixtures/promotion.txt");
    let mut checked = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (kind, a, b, want) = (f[0], f[1], f[2], f[3]);
        match kind {
            "promote" => assert_eq!(
                try_promote_types(dt(a), dt(b)).ok(),
                want_dtype(want),
                "{line}"
            ),
            "can_cast" => assert_eq!(can_cast(dt(a), dt(b)), want == "True", "{line}"),
            "dim_zero" => {
                let t = Tensor::zeros(&[2], dt(a)).unwrap();
                let z = Tensor::zeros(&[], dt(b)).unwrap();
                assert_eq!(
                    try_result_type(&[Operand::Tensor(&t), Operand::Tensor(&z)]).ok(),
                    want_dtype(want),
                    "{line}"
                );
            }
            "scalar" | "zero_scalar" => {
                let shape: &[i64] = if kind == "scalar" { &[2] } else { &[] };
                let t = Tensor::zeros(shape, dt(a)).unwrap();
                assert_eq!(
                    try_result_type(&[Operand::Tensor(&t), Operand::Scalar(scalar(b))]).ok(),
                    want_dtype(want),
                    "{line}"
                );
                // The same promotion through a real op.
                let r = t.add_scalar(scalar(b), Scalar::Int(1));
                if let Ok(r) = r {
                    assert_eq!(Some(r.dtype()), want_dtype(want), "add: {line}");
                }
            }
            other => panic!("unknown row kind {other}"),
        }
        checked += 1;
    }
    // 15 dtypes: 3 rows per pair, 6 per dtype with the Python numbers.
    assert_eq!(checked, 15 * 15 * 3 + 15 * 6);
}
