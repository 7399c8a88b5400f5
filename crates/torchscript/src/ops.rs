//! Tensor operators: [`call`] runs any registered operator by name (`aten::add`), and
//! [`Tensor`] has methods for the common ones. Every call goes through the operator library
//! that TorchScript programs use, and is recorded when a trace is running.

use ts_runtime::dispatch::Arg;

use crate::error::{Error, Result};
use crate::ivalue::{IValue, IntoArgs};
use crate::tensor::{DType, Tensor};

/// Calls operator `name` (`aten::add`, or one overload: `aten::add.Tensor`); the overload is
/// chosen from the argument values as PyTorch's Python bindings choose it.
///
/// ```
/// use torchscript::{ops, IValue, Tensor};
///
/// let x = Tensor::from_data(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let s = ops::call("aten::sum", (x, 1i64))?;
/// assert_eq!(s.as_tensor().unwrap().to_vec::<f32>(), vec![3.0, 7.0]);
/// # Ok::<(), torchscript::Error>(())
/// ```
pub fn call(name: &str, args: impl IntoArgs) -> Result<IValue> {
    call_with_kwargs(name, args, &[])
}

/// Every operator schema with a kernel, as PyTorch prints schemas (`tsrs ops`).
pub fn implemented_schemas() -> Vec<String> {
    crate::libraries::ensure_registered();
    ts_ops::implemented_schemas()
}

/// The reason category of a PyTorch schema that is missing for no deeper reason than not being
/// written yet (see [`missing_schemas`]).
pub const NOT_YET_IMPLEMENTED: &str = ts_ops::coverage::NOT_YET_IMPLEMENTED;

/// Every schema of PyTorch 2.15 without a kernel here, each with its reason category
/// (`cuda-only`, `distributed`, [`NOT_YET_IMPLEMENTED`], ...).
pub fn missing_schemas() -> Vec<(&'static str, &'static str)> {
    crate::libraries::ensure_registered();
    ts_ops::coverage::missing_schemas()
}

/// How many operator schemas PyTorch 2.15 has.
pub fn total_schemas() -> usize {
    ts_ops::schema_table::total_schemas()
}

/// [`call`] with keyword arguments (`dim`, `keepdim`, ...).
pub fn call_with_kwargs(
    name: &str,
    args: impl IntoArgs,
    kwargs: &[(&str, IValue)],
) -> Result<IValue> {
    let args: Vec<Arg> = args
        .into_args()
        .into_iter()
        .map(|v| Arg::Value(v.into_core()))
        .collect();
    let kwargs: Vec<(String, Arg)> = kwargs
        .iter()
        .map(|(k, v)| (k.to_string(), Arg::Value(v.clone().into_core())))
        .collect();
    raw(name, args, kwargs)
}

fn raw(name: &str, args: Vec<Arg>, kwargs: Vec<(String, Arg)>) -> Result<IValue> {
    let v = ts_runtime::dispatch::call_op_single(name, args, kwargs).map_err(|e| {
        if e.kind == ts_tensor::ErrorKind::TypeError {
            Error::argument(e)
        } else {
            Error::from(e)
        }
    })?;
    Ok(IValue::from_core(v))
}

fn tensor_of(v: IValue, op: &str) -> Result<Tensor> {
    match v {
        IValue::Tensor(t) => Ok(t),
        other => Err(Error::conversion(format!(
            "{op} returned a {} where a Tensor was expected",
            other.type_name()
        ))),
    }
}

fn a(t: &Tensor) -> Arg {
    Arg::Value(ts_core::IValue::Tensor(t.0.clone()))
}

fn int(i: i64) -> Arg {
    Arg::Value(ts_core::IValue::Int(i))
}

fn float(x: f64) -> Arg {
    Arg::Value(ts_core::IValue::Double(x))
}

fn ints(v: &[i64]) -> Arg {
    Arg::Value(ts_core::IValue::int_list(v.iter().copied()))
}

fn opt(t: Option<&Tensor>) -> Arg {
    t.map_or(Arg::Value(ts_core::IValue::None), a)
}

macro_rules! unary {
    ($($(#[$doc:meta])* $name:ident => $op:literal;)*) => {$(
        $(#[$doc])*
        pub fn $name(&self) -> Result<Tensor> {
            tensor_of(raw($op, vec![a(self)], vec![])?, $op)
        }
    )*};
}

macro_rules! binary {
    ($($(#[$doc:meta])* $name:ident => $op:literal;)*) => {$(
        $(#[$doc])*
        pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
            tensor_of(raw($op, vec![a(self), a(other)], vec![])?, $op)
        }
    )*};
}

macro_rules! with_scalar {
    ($($(#[$doc:meta])* $name:ident => $op:literal;)*) => {$(
        $(#[$doc])*
        pub fn $name(&self, other: f64) -> Result<Tensor> {
            tensor_of(raw($op, vec![a(self), float(other)], vec![])?, $op)
        }
    )*};
}

impl Tensor {
    unary! {
        /// `max(x, 0)` elementwise.
        relu => "aten::relu";
        /// The logistic function elementwise.
        sigmoid => "aten::sigmoid";
        /// Hyperbolic tangent elementwise.
        tanh => "aten::tanh";
        /// `e^x` elementwise.
        exp => "aten::exp";
        /// Natural logarithm elementwise.
        log => "aten::log";
        /// `-x` elementwise.
        neg => "aten::neg";
        /// `|x|` elementwise.
        abs => "aten::abs";
        /// Square root elementwise.
        sqrt => "aten::sqrt";
        /// The GELU activation (exact form).
        gelu => "aten::gelu";
        /// The transpose of a matrix (at most 2-D).
        t => "aten::t";
        /// A copy with its own memory.
        deep_clone => "aten::clone";
        /// A contiguous tensor with the same values (itself when already contiguous).
        contiguous => "aten::contiguous";
        /// The sum of all elements.
        sum => "aten::sum";
        /// The mean of all elements.
        mean => "aten::mean";
    }

    binary! {
        /// Elementwise sum, with broadcasting.
        add => "aten::add.Tensor";
        /// Elementwise difference, with broadcasting.
        sub => "aten::sub.Tensor";
        /// Elementwise product, with broadcasting.
        mul => "aten::mul.Tensor";
        /// Elementwise true division, with broadcasting.
        div => "aten::div.Tensor";
        /// Matrix product with NumPy's `matmul` broadcasting rules.
        matmul => "aten::matmul";
        /// Elementwise maximum.
        maximum => "aten::maximum";
        /// Elementwise minimum.
        minimum => "aten::minimum";
    }

    with_scalar! {
        /// Adds a number to every element.
        add_scalar => "aten::add.Scalar";
        /// Subtracts a number from every element.
        sub_scalar => "aten::sub.Scalar";
        /// Multiplies every element by a number.
        mul_scalar => "aten::mul.Scalar";
        /// Divides every element by a number.
        div_scalar => "aten::div.Scalar";
        /// Raises every element to a power.
        pow_scalar => "aten::pow.Tensor_Scalar";
    }

    /// Softmax along `dim`.
    pub fn softmax(&self, dim: i64) -> Result<Tensor> {
        tensor_of(
            raw("aten::softmax.int", vec![a(self), int(dim)], vec![])?,
            "softmax",
        )
    }

    /// Log-softmax along `dim`.
    pub fn log_softmax(&self, dim: i64) -> Result<Tensor> {
        tensor_of(
            raw("aten::log_softmax.int", vec![a(self), int(dim)], vec![])?,
            "log_softmax",
        )
    }

    /// Sums over `dims`.
    pub fn sum_dims(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        let k = Arg::Value(ts_core::IValue::Bool(keepdim));
        tensor_of(
            raw(
                "aten::sum.dim_IntList",
                vec![a(self), ints(dims), k],
                vec![],
            )?,
            "sum",
        )
    }

    /// Means over `dims`.
    pub fn mean_dims(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        let k = Arg::Value(ts_core::IValue::Bool(keepdim));
        tensor_of(
            raw("aten::mean.dim", vec![a(self), ints(dims), k], vec![])?,
            "mean",
        )
    }

    /// Index of the maximum along `dim`.
    pub fn argmax(&self, dim: i64, keepdim: bool) -> Result<Tensor> {
        let k = Arg::Value(ts_core::IValue::Bool(keepdim));
        tensor_of(
            raw("aten::argmax", vec![a(self), int(dim), k], vec![])?,
            "argmax",
        )
    }

    /// The `k` largest elements along the last dimension and their indices, largest first.
    pub fn topk(&self, k: i64) -> Result<(Tensor, Tensor)> {
        let v = raw("aten::topk", vec![a(self), int(k)], vec![])?;
        <(Tensor, Tensor)>::try_from(v)
    }

    /// The same elements with another shape (a view when possible); `-1` infers one size.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        tensor_of(
            raw("aten::reshape", vec![a(self), ints(shape)], vec![])?,
            "reshape",
        )
    }

    /// Like [`Tensor::reshape`] with sizes that may be traced values ([`Tensor::size_traced`]).
    pub fn reshape_dyn(&self, shape: &[IValue]) -> Result<Tensor> {
        let list = ts_core::IValue::list(
            ts_core::Type::any(),
            shape.iter().cloned().map(IValue::into_core).collect(),
        );
        tensor_of(
            raw("aten::reshape", vec![a(self), Arg::Value(list)], vec![])?,
            "reshape",
        )
    }

    /// A view with another shape (the layout must allow it).
    pub fn view(&self, shape: &[i64]) -> Result<Tensor> {
        tensor_of(
            raw("aten::view", vec![a(self), ints(shape)], vec![])?,
            "view",
        )
    }

    /// Flattens dimensions `start..=end` into one.
    pub fn flatten(&self, start: i64, end: i64) -> Result<Tensor> {
        tensor_of(
            raw(
                "aten::flatten.using_ints",
                vec![a(self), int(start), int(end)],
                vec![],
            )?,
            "flatten",
        )
    }

    /// Swaps two dimensions (a view).
    pub fn transpose(&self, d0: i64, d1: i64) -> Result<Tensor> {
        tensor_of(
            raw(
                "aten::transpose.int",
                vec![a(self), int(d0), int(d1)],
                vec![],
            )?,
            "transpose",
        )
    }

    /// Reorders the dimensions (a view).
    pub fn permute(&self, dims: &[i64]) -> Result<Tensor> {
        tensor_of(
            raw("aten::permute", vec![a(self), ints(dims)], vec![])?,
            "permute",
        )
    }

    /// Inserts a dimension of size 1 at `dim`.
    pub fn unsqueeze(&self, dim: i64) -> Result<Tensor> {
        tensor_of(
            raw("aten::unsqueeze", vec![a(self), int(dim)], vec![])?,
            "unsqueeze",
        )
    }

    /// Removes dimension `dim` if its size is 1.
    pub fn squeeze_dim(&self, dim: i64) -> Result<Tensor> {
        tensor_of(
            raw("aten::squeeze.dim", vec![a(self), int(dim)], vec![])?,
            "squeeze",
        )
    }

    /// The slice `index` of dimension `dim` (which is removed).
    pub fn select(&self, dim: i64, index: i64) -> Result<Tensor> {
        tensor_of(
            raw(
                "aten::select.int",
                vec![a(self), int(dim), int(index)],
                vec![],
            )?,
            "select",
        )
    }

    /// `length` elements of dimension `dim` from `start` (a view).
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        tensor_of(
            raw(
                "aten::narrow",
                vec![a(self), int(dim), int(start), int(length)],
                vec![],
            )?,
            "narrow",
        )
    }

    /// Converts the elements to `dtype`.
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        tensor_of(
            raw("aten::to.dtype", vec![a(self), Arg::DType(dtype)], vec![])?,
            "to",
        )
    }

    /// Concatenates tensors along `dim`.
    pub fn cat(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
        let list = ts_core::IValue::tensor_list(tensors.iter().map(|t| t.0.clone()));
        tensor_of(
            raw("aten::cat", vec![Arg::Value(list), int(dim)], vec![])?,
            "cat",
        )
    }

    /// Stacks tensors of one shape along a new dimension `dim`.
    pub fn stack(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
        let list = ts_core::IValue::tensor_list(tensors.iter().map(|t| t.0.clone()));
        tensor_of(
            raw("aten::stack", vec![Arg::Value(list), int(dim)], vec![])?,
            "stack",
        )
    }

    /// `x @ weight.T + bias` (`torch.nn.functional.linear`).
    pub fn linear(&self, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        tensor_of(
            raw("aten::linear", vec![a(self), a(weight), opt(bias)], vec![])?,
            "linear",
        )
    }

    /// 2-D convolution (`torch.nn.functional.conv2d`) with the given stride and padding.
    pub fn conv2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: [i64; 2],
        padding: [i64; 2],
    ) -> Result<Tensor> {
        tensor_of(
            raw(
                "aten::conv2d",
                vec![a(self), a(weight), opt(bias), ints(&stride), ints(&padding)],
                vec![],
            )?,
            "conv2d",
        )
    }

    /// 2-D max pooling with a square window (stride = window when `stride` is 0).
    pub fn max_pool2d(&self, kernel: i64, stride: i64) -> Result<Tensor> {
        let stride = if stride == 0 {
            vec![]
        } else {
            vec![stride, stride]
        };
        tensor_of(
            raw(
                "aten::max_pool2d",
                vec![a(self), ints(&[kernel, kernel]), ints(&stride)],
                vec![],
            )?,
            "max_pool2d",
        )
    }

    /// Adaptive average pooling to an `h x w` output.
    pub fn adaptive_avg_pool2d(&self, h: i64, w: i64) -> Result<Tensor> {
        tensor_of(
            raw(
                "aten::adaptive_avg_pool2d",
                vec![a(self), ints(&[h, w])],
                vec![],
            )?,
            "adaptive_avg_pool2d",
        )
    }

    /// Layer normalization over the trailing `shape` dimensions.
    pub fn layer_norm(
        &self,
        shape: &[i64],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        tensor_of(
            raw(
                "aten::layer_norm",
                vec![a(self), ints(shape), opt(weight), opt(bias), float(eps)],
                vec![],
            )?,
            "layer_norm",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(v: &[f32], s: &[i64]) -> Tensor {
        Tensor::from_data(v, s).unwrap()
    }

    #[test]
    fn every_method_names_a_registered_operator() {
        let x = m(&[1.0, -2.0, 3.0, -4.0, 5.0, -6.0], &[2, 3]);
        let sq = m(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
        for (i, r) in [
            x.relu(),
            x.sigmoid(),
            x.tanh(),
            x.exp(),
            x.abs().and_then(|y| y.log()),
            x.neg(),
            x.abs().and_then(|y| y.sqrt()),
            x.gelu(),
            x.t(),
            x.deep_clone(),
            x.contiguous(),
            x.sum(),
            x.mean(),
            x.add(&x),
            x.sub(&x),
            x.mul(&x),
            x.div(&x),
            sq.matmul(&sq),
            x.maximum(&x),
            x.minimum(&x),
            x.add_scalar(1.0),
            x.sub_scalar(1.0),
            x.mul_scalar(2.0),
            x.div_scalar(2.0),
            x.pow_scalar(2.0),
            x.softmax(1),
            x.log_softmax(1),
            x.sum_dims(&[1], false),
            x.mean_dims(&[0], true),
            x.argmax(1, false),
            x.reshape(&[3, 2]),
            x.view(&[6]),
            x.flatten(0, -1),
            x.transpose(0, 1),
            x.permute(&[1, 0]),
            x.unsqueeze(0),
            x.unsqueeze(0).and_then(|y| y.squeeze_dim(0)),
            x.select(0, 1),
            x.narrow(1, 0, 2),
            x.to_dtype(DType::Float64),
            Tensor::cat(&[x.clone(), x.clone()], 0),
            Tensor::stack(&[x.clone(), x.clone()], 0),
            x.linear(
                &m(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0], &[2, 3]),
                Some(&m(&[0.5, 0.5], &[2])),
            ),
            x.reshape(&[1, 1, 2, 3])
                .and_then(|y| y.conv2d(&m(&[1.0], &[1, 1, 1, 1]), None, [1, 1], [0, 0])),
            x.reshape(&[1, 1, 2, 3]).and_then(|y| y.max_pool2d(2, 0)),
            x.reshape(&[1, 1, 2, 3])
                .and_then(|y| y.adaptive_avg_pool2d(1, 1)),
            x.layer_norm(&[3], None, None, 1e-5),
        ]
        .into_iter()
        .enumerate()
        {
            if let Err(e) = r {
                panic!("method #{i}: {e}");
            }
        }
        let (v, i) = m(&[1.0, 3.0, 2.0], &[3]).topk(2).unwrap();
        assert_eq!(v.to_vec::<f32>(), vec![3.0, 2.0]);
        assert_eq!(i.to_vec::<i64>(), vec![1, 2]);
    }

    #[test]
    fn shape_errors_are_runtime_errors() {
        let e = m(&[1.0, 2.0], &[2])
            .matmul(&m(&[1.0, 2.0, 3.0], &[3]))
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Runtime);
        let e = call("aten::add", (1i64, "x")).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Argument);
    }
}
