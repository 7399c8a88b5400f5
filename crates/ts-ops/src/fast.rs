//! Scalar operators the interpreter may run inline, without going through the stack.
//!
//! A [`ScalarOp`] names one exact overload (`aten::add.int`, `aten::lt.float`, ...). Its
//! `eval` functions compute the result for the operand tags the overload expects and return
//! `None` for anything else (other tags, a zero int divisor), in which case the interpreter
//! runs the registered operation instead; so results and error messages are always those of
//! the generic operator. The registry records which full names carry which `ScalarOp`, and
//! forgets the hint when an operator is registered again under that name.

use ts_core::IValue;

use crate::numbers::{floordiv_f, floordiv_i_nonzero, mod_f, mod_i_nonzero};

/// A fast operator's result: a plain value that owns nothing, so that the interpreter's
/// hottest path carries no drop code for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    Double(f64),
    Bool(bool),
}

impl From<Scalar> for IValue {
    fn from(s: Scalar) -> IValue {
        match s {
            Scalar::Int(x) => IValue::Int(x),
            Scalar::Double(x) => IValue::Double(x),
            Scalar::Bool(x) => IValue::Bool(x),
        }
    }
}

/// An int/float/bool operator with an inline fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarOp {
    AddInt,
    SubInt,
    MulInt,
    DivInt,
    FloorDivInt,
    RemInt,
    EqInt,
    NeInt,
    LtInt,
    LeInt,
    GtInt,
    GeInt,
    AddFloat,
    SubFloat,
    MulFloat,
    DivFloat,
    FloorDivFloat,
    RemFloat,
    EqFloat,
    NeFloat,
    LtFloat,
    LeFloat,
    GtFloat,
    GeFloat,
    EqBool,
    NeBool,
    NegInt,
    NegFloat,
    Not,
}

/// Every fast operator with the overload it implements.
pub const SCALAR_OPS: &[(&str, ScalarOp)] = &[
    ("aten::add.int", ScalarOp::AddInt),
    ("aten::sub.int", ScalarOp::SubInt),
    ("aten::mul.int", ScalarOp::MulInt),
    ("aten::div.int", ScalarOp::DivInt),
    ("aten::floordiv.int", ScalarOp::FloorDivInt),
    ("aten::remainder.int", ScalarOp::RemInt),
    ("aten::eq.int", ScalarOp::EqInt),
    ("aten::ne.int", ScalarOp::NeInt),
    ("aten::lt.int", ScalarOp::LtInt),
    ("aten::le.int", ScalarOp::LeInt),
    ("aten::gt.int", ScalarOp::GtInt),
    ("aten::ge.int", ScalarOp::GeInt),
    ("aten::add.float", ScalarOp::AddFloat),
    ("aten::sub.float", ScalarOp::SubFloat),
    ("aten::mul.float", ScalarOp::MulFloat),
    ("aten::div.float", ScalarOp::DivFloat),
    ("aten::floordiv.float", ScalarOp::FloorDivFloat),
    ("aten::remainder.float", ScalarOp::RemFloat),
    ("aten::eq.float", ScalarOp::EqFloat),
    ("aten::ne.float", ScalarOp::NeFloat),
    ("aten::lt.float", ScalarOp::LtFloat),
    ("aten::le.float", ScalarOp::LeFloat),
    ("aten::gt.float", ScalarOp::GtFloat),
    ("aten::ge.float", ScalarOp::GeFloat),
    ("aten::eq.bool", ScalarOp::EqBool),
    ("aten::ne.bool", ScalarOp::NeBool),
    ("aten::neg.int", ScalarOp::NegInt),
    ("aten::neg.float", ScalarOp::NegFloat),
    ("aten::__not__", ScalarOp::Not),
];

impl ScalarOp {
    /// Number of operands (1 or 2).
    pub fn arity(self) -> usize {
        match self {
            ScalarOp::NegInt | ScalarOp::NegFloat | ScalarOp::Not => 1,
            _ => 2,
        }
    }

    /// The overload's full name (`aten::add.int`).
    pub fn name(self) -> &'static str {
        SCALAR_OPS
            .iter()
            .find(|(_, op)| *op == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    /// The result on two operands, or `None` when the generic operator must run.
    // Always inlined: it is the interpreter's hottest path, and a call costs as much as the op.
    #[inline(always)]
    pub fn eval2(self, a: &IValue, b: &IValue) -> Option<Scalar> {
        use IValue::{Bool, Double, Int};
        use Scalar as S;
        use ScalarOp::*;
        Some(match (self, a, b) {
            (AddInt, Int(x), Int(y)) => S::Int(x.wrapping_add(*y)),
            (SubInt, Int(x), Int(y)) => S::Int(x.wrapping_sub(*y)),
            (MulInt, Int(x), Int(y)) => S::Int(x.wrapping_mul(*y)),
            (DivInt, Int(x), Int(y)) => S::Double(*x as f64 / *y as f64),
            (FloorDivInt, Int(x), Int(y)) => S::Int(floordiv_i_nonzero(*x, *y)?),
            (RemInt, Int(x), Int(y)) => S::Int(mod_i_nonzero(*x, *y)?),
            (EqInt, Int(x), Int(y)) => S::Bool(x == y),
            (NeInt, Int(x), Int(y)) => S::Bool(x != y),
            (LtInt, Int(x), Int(y)) => S::Bool(x < y),
            (LeInt, Int(x), Int(y)) => S::Bool(x <= y),
            (GtInt, Int(x), Int(y)) => S::Bool(x > y),
            (GeInt, Int(x), Int(y)) => S::Bool(x >= y),
            (AddFloat, Double(x), Double(y)) => S::Double(x + y),
            (SubFloat, Double(x), Double(y)) => S::Double(x - y),
            (MulFloat, Double(x), Double(y)) => S::Double(x * y),
            (DivFloat, Double(x), Double(y)) => S::Double(x / y),
            (FloorDivFloat, Double(x), Double(y)) => S::Double(floordiv_f(*x, *y)),
            (RemFloat, Double(x), Double(y)) => S::Double(mod_f(*x, *y)),
            (EqFloat, Double(x), Double(y)) => S::Bool(x == y),
            (NeFloat, Double(x), Double(y)) => S::Bool(x != y),
            (LtFloat, Double(x), Double(y)) => S::Bool(x < y),
            (LeFloat, Double(x), Double(y)) => S::Bool(x <= y),
            (GtFloat, Double(x), Double(y)) => S::Bool(x > y),
            (GeFloat, Double(x), Double(y)) => S::Bool(x >= y),
            (EqBool, Bool(x), Bool(y)) => S::Bool(x == y),
            (NeBool, Bool(x), Bool(y)) => S::Bool(x != y),
            _ => return None,
        })
    }

    /// The result on one operand, or `None` when the generic operator must run.
    #[inline(always)]
    pub fn eval1(self, a: &IValue) -> Option<Scalar> {
        use IValue::{Bool, Double, Int};
        use Scalar as S;
        Some(match (self, a) {
            (ScalarOp::NegInt, Int(x)) => S::Int(x.wrapping_neg()),
            (ScalarOp::NegFloat, Double(x)) => S::Double(-x),
            (ScalarOp::Not, Bool(b)) => S::Bool(!b),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    /// Runs the registered generic operation on the operands.
    fn generic(name: &str, args: &[IValue]) -> Result<IValue, String> {
        let op = registry().find(name).expect("registered");
        let f = match &op.kind {
            crate::OperatorKind::Op(f) => f.clone(),
            crate::OperatorKind::NodeOp(_) => panic!("not a plain operation"),
        };
        let mut s = args.to_vec();
        f(&mut s).map_err(|e| e.to_string())?;
        Ok(s.pop().expect("a result"))
    }

    fn same(a: &IValue, b: &IValue) -> bool {
        match (a, b) {
            (IValue::Double(x), IValue::Double(y)) => x.to_bits() == y.to_bits(),
            (IValue::Int(x), IValue::Int(y)) => x == y,
            (IValue::Bool(x), IValue::Bool(y)) => x == y,
            _ => false,
        }
    }

    #[test]
    fn every_fast_op_is_hinted_by_the_builtin_registry() {
        for (name, op) in SCALAR_OPS {
            assert_eq!(registry().scalar_op(name), Some(*op), "{name}");
            assert_eq!(op.name(), *name);
        }
    }

    #[test]
    fn fast_results_equal_the_generic_operators() {
        let ints = [0, 1, -1, 3, -3, 7, -7, i64::MAX, i64::MIN, i64::MIN + 1];
        let floats = [
            0.0,
            -0.0,
            1.5,
            -2.5,
            7.0,
            -3.0,
            f64::INFINITY,
            f64::NAN,
            1e300,
        ];
        for (name, op) in SCALAR_OPS {
            let mut cases: Vec<Vec<IValue>> = Vec::new();
            let pool: Vec<IValue> = if name.ends_with(".int") || *op == ScalarOp::NegInt {
                ints.iter().map(|&i| IValue::Int(i)).collect()
            } else if name.ends_with(".float") {
                floats.iter().map(|&f| IValue::Double(f)).collect()
            } else {
                vec![IValue::Bool(false), IValue::Bool(true)]
            };
            for a in &pool {
                if op.arity() == 1 {
                    cases.push(vec![a.clone()]);
                } else {
                    for b in &pool {
                        cases.push(vec![a.clone(), b.clone()]);
                    }
                }
            }
            for args in cases {
                let fast = if op.arity() == 1 {
                    op.eval1(&args[0])
                } else {
                    op.eval2(&args[0], &args[1])
                };
                let slow = generic(name, &args);
                match (fast, slow) {
                    (Some(f), Ok(s)) => {
                        assert!(same(&f.into(), &s), "{name}{args:?}: {f:?} vs {s:?}")
                    }
                    // The fast path declines exactly where the generic operator raises.
                    (None, Err(_)) => {}
                    (f, s) => panic!("{name}{args:?}: fast {f:?}, generic {s:?}"),
                }
            }
        }
    }

    #[test]
    fn unexpected_tags_fall_back() {
        assert!(ScalarOp::AddInt
            .eval2(&IValue::Double(1.0), &IValue::Int(1))
            .is_none());
        assert!(ScalarOp::AddFloat
            .eval2(&IValue::Int(1), &IValue::Double(1.0))
            .is_none());
        assert!(ScalarOp::Not.eval1(&IValue::Int(1)).is_none());
        assert!(ScalarOp::EqBool
            .eval2(&IValue::Int(1), &IValue::Bool(true))
            .is_none());
        assert!(ScalarOp::FloorDivInt
            .eval2(&IValue::Int(1), &IValue::Int(0))
            .is_none());
    }
}
