//! PyTorch's own test operators (`aten::_test_*`, `aten::_foobar`): CPU kernels in every
//! PyTorch build that its test suite calls through `torch.ops.aten`, so scripted code can
//! call them too. Each behaves as ATen's: argument checks with ATen's messages, results
//! fresh tensors unless ATen returns its input.

use ts_core::IValue;
use ts_tensor::{DType, Error, Scalar, Tensor};

use super::{def, def_many, Args};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

/// `_test_optional_*list(values, addends)`: `values[i] + addends[i]` over a 1-D tensor of
/// `dtype` (int32 for the int lists, float32 for the float one), or `values` without addends.
fn optional_list(a: &Args, dtype: DType) -> R<Tensor> {
    let values = a.t(0)?;
    if matches!(a.v(1)?, IValue::None) {
        return values.clone_tensor();
    }
    let addends = a.floats(1)?;
    if values.dtype() != dtype {
        return Err(Error::runtime(format!(
            "expected scalar type {} but found {}",
            dtype.scalar_type_name(),
            values.dtype().scalar_type_name()
        )));
    }
    if values.dim() != 1 {
        return Err(Error::runtime(
            "Expected values.dim() == 1 to be true, but got false.",
        ));
    }
    let n = values.numel();
    if addends.len() < n {
        return Err(Error::runtime(format!(
            "ArrayRef: invalid index Index = {}; Length = {}",
            addends.len(),
            addends.len()
        )));
    }
    let add = Tensor::from_vec(addends[..n].to_vec(), &[n as i64])?.to_dtype(dtype, false)?;
    values.add(&add, Scalar::Int(1))
}

fn expect(cond: bool, what: &str) -> R<()> {
    if cond {
        Ok(())
    } else {
        Err(Error::runtime(format!(
            "Expected {what} to be true, but got false."
        )))
    }
}

/// Registers the test operators.
pub fn register(r: &Registry) {
    def(r, "aten::_test_serialization_subcmul", |a| {
        // self - alpha * other
        a.t(0)?.sub(a.t(1)?, a.s(2)?)
    });
    def_many(
        r,
        &[
            "aten::_test_optional_intlist",
            "aten::_test_optional_filled_intlist",
        ],
        |a| optional_list(a, DType::Int32),
    );
    def(r, "aten::_test_optional_floatlist", |a| {
        optional_list(a, DType::Float32)
    });
    def(r, "aten::_test_ambiguous_defaults.a", |a| {
        expect(a.int(1)? == 1, "a == 1")?;
        expect(a.int(2)? == 1, "b == 1")?;
        Tensor::from_vec(vec![1i64], &[])
    });
    def(r, "aten::_test_ambiguous_defaults.b", |a| {
        expect(a.int(1)? == 2, "a == 2")?;
        expect(a.str(2)? == "2", "b == \"2\"")?;
        Tensor::from_vec(vec![2i64], &[])
    });
    def(r, "aten::_test_string_default", |a| {
        const DEFAULT: &str = "\"'\\";
        if a.str(1)? != DEFAULT {
            return Err(Error::runtime("Default A failed"));
        }
        if a.str(2)? != DEFAULT {
            return Err(Error::runtime("Default B failed"));
        }
        Ok(a.t(0)?.clone())
    });
    def_many(
        r,
        &[
            "aten::_test_warn_in_autograd",
            "aten::_test_autograd_multiple_dispatch.fullcoverage",
            "aten::_test_autograd_multiple_dispatch.ntonly",
            "aten::_test_functorch_fallback",
        ],
        |a| a.t(0)?.clone_tensor(),
    );
    def(r, "aten::_test_autograd_multiple_dispatch_view", |a| {
        a.t(0)?.view(&[-1])
    });
    def(r, "aten::_test_autograd_multiple_dispatch_view_copy", |a| {
        a.t(0)?.reshape(&[-1])?.clone_tensor()
    });
    def_many(
        r,
        &["aten::_test_parallel_materialize", "aten::_foobar"],
        |a| Ok(a.t(0)?.clone()),
    );
    def(r, "aten::_test_check_tensor", |a| {
        let t = a.t(0)?;
        if t.dtype() != DType::Bool {
            return Err(Error::runtime(
                "self.scalar_type() == at::kBool INTERNAL ASSERT FAILED",
            ));
        }
        if t.to_vec::<bool>().iter().any(|&b| !b) {
            return Err(Error::runtime("Test message for TORCH_CHECK_TENSOR_ALL"));
        }
        t.clone_tensor()
    });
}

#[cfg(test)]
mod tests {
    use crate::registry::registry;
    use ts_core::IValue;
    use ts_tensor::Tensor;

    fn call(name: &str, args: Vec<IValue>) -> Result<Vec<IValue>, ts_tensor::Error> {
        crate::autograd::ops::call(name, args)
    }

    fn t(v: &[f64]) -> IValue {
        IValue::Tensor(Tensor::from_vec(v.to_vec(), &[v.len() as i64]).unwrap())
    }

    #[test]
    fn test_operators_match_torch() {
        let _ = registry();
        let r = call(
            "aten::_test_serialization_subcmul",
            vec![t(&[1., 2., 3.]), t(&[10., 20., 30.]), IValue::Int(2)],
        )
        .unwrap();
        assert_eq!(
            r[0].as_tensor().unwrap().to_vec::<f64>(),
            vec![-19., -38., -57.]
        );
        let ints = IValue::Tensor(Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap());
        let r = call(
            "aten::_test_optional_intlist",
            vec![ints.clone(), IValue::int_list([5, 6, 7])],
        )
        .unwrap();
        assert_eq!(r[0].as_tensor().unwrap().to_vec::<i64>(), vec![6, 8, 10]);
        assert!(call(
            "aten::_test_optional_intlist",
            vec![t(&[1.]), IValue::int_list([5])]
        )
        .is_err());
        let r = call(
            "aten::_test_ambiguous_defaults.a",
            vec![t(&[1.]), IValue::Int(1), IValue::Int(1)],
        )
        .unwrap();
        assert_eq!(r[0].as_tensor().unwrap().to_vec::<i64>(), vec![1]);
        let no = IValue::Tensor(Tensor::from_vec(vec![true, false], &[2]).unwrap());
        let err = call("aten::_test_check_tensor", vec![no]).unwrap_err();
        assert_eq!(err.message, "Test message for TORCH_CHECK_TENSOR_ALL");
    }
}
