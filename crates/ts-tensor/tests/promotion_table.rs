//! Type promotion checked exhaustively against a table produced by real torch 2.15
//! (`fixtures/promotion.txt`), generated with:
//!
//! ```python
//! for a in dts:
//!     for b in dts:
//!         promote_types(a, b); result_type(zeros(2, dtype=a), zeros((), dtype=b)); can_cast(a, b)
//!     for s in (True, 2, 2.5):
//!         result_type(zeros(2, dtype=a), s); result_type(zeros((), dtype=a), s)
//! ```

use ts_tensor::promote::{can_cast, promote_types, result_type, Operand};
use ts_tensor::{DType, Scalar, Tensor};

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
            "promote" => assert_eq!(promote_types(dt(a), dt(b)), dt(want), "{line}"),
            "can_cast" => assert_eq!(can_cast(dt(a), dt(b)), want == "True", "{line}"),
            "dim_zero" => {
                let t = Tensor::zeros(&[2], dt(a)).unwrap();
                let z = Tensor::zeros(&[], dt(b)).unwrap();
                assert_eq!(
                    result_type(&[Operand::Tensor(&t), Operand::Tensor(&z)]),
                    dt(want),
                    "{line}"
                );
            }
            "scalar" | "zero_scalar" => {
                let shape: &[i64] = if kind == "scalar" { &[2] } else { &[] };
                let t = Tensor::zeros(shape, dt(a)).unwrap();
                assert_eq!(
                    result_type(&[Operand::Tensor(&t), Operand::Scalar(scalar(b))]),
                    dt(want),
                    "{line}"
                );
                // The same promotion through a real op.
                let r = t.add_scalar(scalar(b), Scalar::Int(1));
                if let Ok(r) = r {
                    assert_eq!(r.dtype(), dt(want), "add: {line}");
                }
            }
            other => panic!("unknown row kind {other}"),
        }
        checked += 1;
    }
    assert_eq!(checked, 360);
}
