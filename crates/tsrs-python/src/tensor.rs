//! `tsrs.Tensor`: a tensor handle whose operators, methods and indexing dispatch to the
//! operator library (and so are recorded while tracing), and `tsrs.dtype`.

use pyo3::exceptions::{PyAttributeError, PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyDict, PyEllipsis, PyList, PySlice, PyTuple};
use ts_core::IValue;
use ts_runtime::dispatch::Arg;
use ts_tensor::{DType, Tensor};

use crate::convert::{to_arg, to_py};
use crate::errors::from_tensor;

/// An element type (`tsrs.float32`, ...).
#[pyclass(module = "tsrs", name = "dtype", frozen, eq, hash, from_py_object)]
#[derive(PartialEq, Eq, Hash, Clone, Copy)]
pub struct PyDType {
    pub dtype: DType,
}

#[pymethods]
impl PyDType {
    /// The name without the module (`float32`).
    #[getter]
    fn name(&self) -> &'static str {
        self.dtype.name()
    }

    #[getter]
    fn is_floating_point(&self) -> bool {
        self.dtype.is_floating_point()
    }

    #[getter]
    fn itemsize(&self) -> usize {
        self.dtype.size()
    }

    fn __repr__(&self) -> String {
        format!("tsrs.{}", self.dtype.name())
    }
}

/// A tensor. Operators, methods (`x.view(2, 3)`, `x.sum(1)`) and indexing run the operators
/// TorchScript programs use.
#[pyclass(module = "tsrs", name = "Tensor", subclass)]
pub struct PyTensor {
    pub t: Tensor,
}

/// Calls `aten::name` (or a qualified operator) and converts the result.
pub fn call_op(
    py: Python<'_>,
    name: &str,
    args: Vec<Arg>,
    kwargs: Vec<(String, Arg)>,
) -> PyResult<Py<PyAny>> {
    let v = ts_runtime::dispatch::call_op_single(name, args, kwargs).map_err(from_tensor)?;
    to_py(py, v)
}

fn call_tensor(name: &str, args: Vec<Arg>) -> PyResult<Tensor> {
    match ts_runtime::dispatch::call_op_single(name, args, vec![]).map_err(from_tensor)? {
        IValue::Tensor(t) => Ok(t),
        other => Err(PyTypeError::new_err(format!(
            "{name} returned {} instead of a Tensor",
            other.tag_name()
        ))),
    }
}

fn qualified(name: &str) -> String {
    if name.contains("::") {
        name.to_string()
    } else {
        format!("aten::{name}")
    }
}

/// True when some operator is registered under `aten::name`.
pub fn has_operator(name: &str) -> bool {
    ts_core::Symbol::lookup(&qualified(name))
        .is_some_and(|s| !ts_ops::registry().lookup(s).is_empty())
}

/// Positional and keyword operator arguments.
pub type OpArgs = (Vec<Arg>, Vec<(String, Arg)>);

/// Python positional and keyword arguments as operator arguments.
pub fn op_args(
    first: Option<Arg>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<OpArgs> {
    let mut a: Vec<Arg> = first.into_iter().collect();
    for x in args.iter() {
        a.push(to_arg(&x)?);
    }
    let mut k = Vec::new();
    if let Some(kw) = kwargs {
        for (key, v) in kw.iter() {
            k.push((key.extract::<String>()?, to_arg(&v)?));
        }
    }
    Ok((a, k))
}

fn t_arg(t: &Tensor) -> Arg {
    Arg::Value(IValue::Tensor(t.clone()))
}

/// Method names of PyTorch tensors that are conversions rather than operators.
fn dtype_alias(name: &str) -> Option<DType> {
    Some(match name {
        "float" => DType::Float32,
        "double" => DType::Float64,
        "half" => DType::Float16,
        "bfloat16" => DType::BFloat16,
        "long" => DType::Int64,
        "int" => DType::Int32,
        "short" => DType::Int16,
        "char" => DType::Int8,
        "byte" => DType::UInt8,
        "bool" => DType::Bool,
        _ => return None,
    })
}

/// A tensor method (`x.relu`) waiting for its arguments.
#[pyclass(module = "tsrs", name = "_TensorMethod")]
pub struct BoundOp {
    name: String,
    this: Tensor,
}

#[pymethods]
impl BoundOp {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        if let Some(d) = dtype_alias(&self.name) {
            let t = call_tensor("aten::to.dtype", vec![t_arg(&self.this), Arg::DType(d)])?;
            return Ok(Py::new(py, PyTensor { t })?.into_any());
        }
        let (a, k) = op_args(Some(t_arg(&self.this)), args, kwargs)?;
        call_op(py, &qualified(&self.name), a, k)
    }

    fn __repr__(&self) -> String {
        format!("<tensor method '{}'>", self.name)
    }
}

impl PyTensor {
    fn binary(&self, py: Python<'_>, op: &str, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        call_op(py, op, vec![t_arg(&self.t), to_arg(other)?], vec![])
    }

    fn scalar_value(&self, what: &str) -> PyResult<IValue> {
        if self.t.numel() != 1 {
            return Err(PyValueError::new_err(format!(
                "only one element tensors can be converted to Python {what}s (this one has {})",
                self.t.numel()
            )));
        }
        ts_runtime::tracer::warn_data_dependent(&self.t, what);
        let s = self.t.item().map_err(from_tensor)?;
        Ok(IValue::from_scalar(s))
    }
}

/// `x[idx]`: ints select, slices slice, `None` inserts a dimension, `...` skips dimensions, a
/// tensor (or list) indexes with `aten::index`.
fn index(t: &Tensor, idx: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let items: Vec<Bound<'_, PyAny>> = match idx.cast::<PyTuple>() {
        Ok(tup) => tup.iter().collect(),
        Err(_) => vec![idx.clone()],
    };
    let consuming = items
        .iter()
        .filter(|i| !i.is_none() && !i.is_instance_of::<PyEllipsis>())
        .count() as i64;
    let mut cur = t.clone();
    let mut dim: i64 = 0;
    for item in &items {
        if item.is_none() {
            cur = call_tensor(
                "aten::unsqueeze",
                vec![t_arg(&cur), Arg::Value(IValue::Int(dim))],
            )?;
            dim += 1;
        } else if item.is_instance_of::<PyEllipsis>() {
            dim += t.dim() as i64 - consuming;
        } else if let Ok(s) = item.cast::<PySlice>() {
            let get = |n: &str| -> PyResult<Option<i64>> {
                let v = s.getattr(n)?;
                if v.is_none() {
                    Ok(None)
                } else {
                    Ok(Some(v.extract::<i64>()?))
                }
            };
            let step = get("step")?.unwrap_or(1);
            if step <= 0 {
                return Err(PyValueError::new_err("step must be greater than zero"));
            }
            let start = get("start")?.unwrap_or(0);
            let end = get("stop")?.unwrap_or(i64::MAX);
            cur = call_tensor(
                "aten::slice.Tensor",
                vec![
                    t_arg(&cur),
                    Arg::Value(IValue::Int(dim)),
                    Arg::Value(IValue::Int(start)),
                    Arg::Value(IValue::Int(end)),
                    Arg::Value(IValue::Int(step)),
                ],
            )?;
            dim += 1;
        } else if let Ok(i) = item.extract::<i64>() {
            if !item.is_instance_of::<pyo3::types::PyBool>() {
                cur = call_tensor(
                    "aten::select.int",
                    vec![
                        t_arg(&cur),
                        Arg::Value(IValue::Int(dim)),
                        Arg::Value(IValue::Int(i)),
                    ],
                )?;
                continue;
            }
            return Err(PyIndexError::new_err(
                "indexing with a bool is not supported",
            ));
        } else {
            let ix = match item.cast::<PyTensor>() {
                Ok(p) => p.borrow().t.clone(),
                Err(_) if item.is_instance_of::<PyList>() => {
                    crate::creation::tensor_from_data(item, None)?
                }
                Err(_) => {
                    return Err(PyIndexError::new_err(format!(
                        "only integers, slices, None, ..., and integer or boolean tensors are \
                         valid indices (got {})",
                        item.get_type().name()?
                    )))
                }
            };
            if items.len() != 1 {
                return Err(PyIndexError::new_err(
                    "tensor indices combined with other indices are not supported",
                ));
            }
            let list = IValue::list(
                ts_core::Type::optional(ts_core::Type::tensor()),
                vec![IValue::Tensor(ix)],
            );
            cur = call_tensor("aten::index.Tensor", vec![t_arg(&cur), Arg::Value(list)])?;
            dim += 1;
        }
    }
    Ok(cur)
}

fn tolist(py: Python<'_>, t: &Tensor) -> PyResult<Py<PyAny>> {
    let shape = t.sizes().to_vec();
    let d = t.dtype();
    let values: Vec<IValue> = if d.is_floating_point() {
        t.to_vec::<f64>().into_iter().map(IValue::Double).collect()
    } else if d == DType::Bool {
        t.to_vec::<bool>().into_iter().map(IValue::Bool).collect()
    } else {
        t.to_vec::<i64>().into_iter().map(IValue::Int).collect()
    };
    fn build(
        py: Python<'_>,
        shape: &[i64],
        vals: &mut std::slice::Iter<'_, IValue>,
    ) -> PyResult<Py<PyAny>> {
        match shape.split_first() {
            None => to_py(py, vals.next().cloned().unwrap_or(IValue::None)),
            Some((&n, rest)) => {
                let items = (0..n)
                    .map(|_| build(py, rest, vals))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(PyList::new(py, items)?.into_any().unbind())
            }
        }
    }
    build(py, &shape, &mut values.iter())
}

#[pymethods]
impl PyTensor {
    #[new]
    #[pyo3(signature = (data, dtype = None))]
    fn py_new(data: &Bound<'_, PyAny>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        Ok(PyTensor {
            t: crate::creation::tensor_from_data(data, dtype.map(|d| d.dtype))?,
        })
    }

    /// The sizes, as a tuple.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.t.sizes().to_vec())
    }

    /// The sizes, or the size of `dim`. While tracing with `dynamic_sizes=True`, a size is a
    /// 0-dim tensor recorded as `aten::size`.
    #[pyo3(signature = (dim = None))]
    fn size(&self, py: Python<'_>, dim: Option<i64>) -> PyResult<Py<PyAny>> {
        match dim {
            None => Ok(self.shape(py)?.into_any().unbind()),
            Some(d) => to_py(
                py,
                ts_runtime::tracer::size(&self.t, d).map_err(from_tensor)?,
            ),
        }
    }

    #[pyo3(signature = (dim = None))]
    fn stride(&self, py: Python<'_>, dim: Option<i64>) -> PyResult<Py<PyAny>> {
        let s = self.t.strides().to_vec();
        match dim {
            None => Ok(PyTuple::new(py, s)?.into_any().unbind()),
            Some(d) => {
                let n = s.len() as i64;
                let i = if d < 0 { d + n } else { d };
                let v = *s
                    .get(usize::try_from(i).unwrap_or(usize::MAX))
                    .ok_or_else(|| PyIndexError::new_err("dimension out of range"))?;
                Ok(v.into_pyobject(py)?.into_any().unbind())
            }
        }
    }

    fn dim(&self) -> usize {
        self.t.dim()
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.t.dim()
    }

    fn numel(&self) -> usize {
        self.t.numel()
    }

    #[getter]
    fn dtype(&self) -> PyDType {
        PyDType {
            dtype: self.t.dtype(),
        }
    }

    #[getter]
    fn device(&self) -> String {
        self.t.device().to_string()
    }

    fn is_contiguous(&self) -> bool {
        self.t.is_contiguous()
    }

    /// Whether operations on this tensor record autograd history.
    #[getter]
    fn requires_grad(&self) -> bool {
        self.t.requires_grad()
    }

    /// `t.requires_grad = flag`: only leaves of floating or complex dtype, as in PyTorch.
    #[setter]
    fn set_requires_grad(&self, flag: bool) -> PyResult<()> {
        let t = torchscript::Tensor::from_inner(self.t.clone());
        t.set_requires_grad(flag).map_err(crate::errors::to_py)
    }

    /// The gradient accumulated by `backward()`, or None.
    #[getter]
    fn grad(&self) -> Option<PyTensor> {
        self.t.grad().map(|t| PyTensor { t })
    }

    /// `t.grad = g` (or `None`, as `zero_grad(set_to_none=True)` does).
    #[setter]
    fn set_grad(&self, grad: Option<PyRef<'_, PyTensor>>) -> PyResult<()> {
        if let Some(g) = &grad {
            if g.t.sizes() != self.t.sizes() {
                return Err(PyValueError::new_err(
                    "assigned grad has data of a different size",
                ));
            }
        }
        self.t.set_grad(grad.map(|g| g.t.clone()));
        Ok(())
    }

    /// Whether this tensor was made by the user rather than by a recorded operation.
    #[getter]
    fn is_leaf(&self) -> bool {
        self.t.is_leaf()
    }

    /// The value of a one-element tensor as a Python number.
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.scalar_value("number")?)
    }

    /// The elements as nested Python lists.
    fn tolist(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        ts_runtime::tracer::warn_data_dependent(&self.t, "list");
        tolist(py, &self.t)
    }

    /// A NumPy array sharing this tensor's memory.
    fn numpy(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::numpy_interop::to_numpy(py, &self.t)
    }

    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__(
        &self,
        py: Python<'_>,
        dtype: Option<&Bound<'_, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let mut a = crate::numpy_interop::to_numpy(py, &self.t)?.into_bound(py);
        if let Some(d) = dtype {
            a = a.call_method1("astype", (d,))?;
        } else if copy == Some(true) {
            a = a.call_method0("copy")?;
        }
        Ok(a.unbind())
    }

    /// A DLPack capsule sharing this tensor's memory.
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<&Bound<'_, PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (stream, max_version);
        if let Some((dev, _)) = dl_device {
            if dev != 1 {
                return Err(pyo3::exceptions::PyBufferError::new_err(
                    "tsrs tensors can only be exported to the CPU",
                ));
            }
        }
        let t = if copy == Some(true) {
            self.t.clone_tensor().map_err(from_tensor)?
        } else {
            self.t.clone()
        };
        crate::dlpack::to_capsule(py, &t)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }

    fn __repr__(&self) -> String {
        IValue::Tensor(self.t.clone()).to_display_string()
    }

    fn __str__(&self) -> String {
        self.__repr__()
    }

    fn __len__(&self) -> PyResult<usize> {
        self.t
            .sizes()
            .first()
            .map(|&n| n as usize)
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d tensor"))
    }

    fn __bool__(&self) -> PyResult<bool> {
        if self.t.numel() != 1 {
            return Err(PyValueError::new_err(format!(
                "Boolean value of Tensor with {} values is ambiguous",
                self.t.numel()
            )));
        }
        Ok(match self.scalar_value("boolean")? {
            IValue::Double(d) => d != 0.0,
            IValue::Int(i) => i != 0,
            IValue::Bool(b) => b,
            _ => false,
        })
    }

    fn __int__(&self) -> PyResult<i64> {
        Ok(match self.scalar_value("integer")? {
            IValue::Double(d) => d as i64,
            IValue::Int(i) => i,
            IValue::Bool(b) => b as i64,
            _ => 0,
        })
    }

    fn __index__(&self) -> PyResult<i64> {
        if self.t.dtype().is_floating_point() {
            return Err(PyTypeError::new_err(
                "only integer tensors of a single element can be converted to an index",
            ));
        }
        self.__int__()
    }

    fn __float__(&self) -> PyResult<f64> {
        Ok(match self.scalar_value("float")? {
            IValue::Double(d) => d,
            IValue::Int(i) => i as f64,
            IValue::Bool(b) => b as i64 as f64,
            _ => 0.0,
        })
    }

    fn __hash__(&self) -> usize {
        self.t.id()
    }

    fn __getitem__(&self, py: Python<'_>, idx: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Ok(Py::new(
            py,
            PyTensor {
                t: index(&self.t, idx)?,
            },
        )?
        .into_any())
    }

    fn __setitem__(&self, idx: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let view = index(&self.t, idx)?;
        let v = to_arg(value)?;
        let op = if matches!(v, Arg::Value(IValue::Tensor(_))) {
            "aten::copy_"
        } else {
            "aten::fill_"
        };
        ts_runtime::dispatch::call_op(op, vec![t_arg(&view), v], vec![]).map_err(from_tensor)?;
        Ok(())
    }

    fn __add__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::add", o)
    }
    fn __radd__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::add", o)
    }
    fn __iadd__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.binary(py, "aten::add_", o).map(drop)
    }
    fn __sub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::sub", o)
    }
    fn __rsub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::rsub", o)
    }
    fn __isub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.binary(py, "aten::sub_", o).map(drop)
    }
    fn __mul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::mul", o)
    }
    fn __rmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::mul", o)
    }
    fn __imul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.binary(py, "aten::mul_", o).map(drop)
    }
    fn __truediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::div", o)
    }
    fn __rtruediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let r = call_tensor("aten::reciprocal", vec![t_arg(&self.t)])?;
        call_op(py, "aten::mul", vec![t_arg(&r), to_arg(o)?], vec![])
    }
    fn __itruediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.binary(py, "aten::div_", o).map(drop)
    }
    fn __floordiv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::floor_divide", o)
    }
    fn __mod__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::remainder", o)
    }
    fn __pow__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = modulo;
        self.binary(py, "aten::pow", o)
    }
    fn __rpow__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = modulo;
        call_op(py, "aten::pow", vec![to_arg(o)?, t_arg(&self.t)], vec![])
    }
    fn __matmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::matmul", o)
    }
    fn __rmatmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        call_op(py, "aten::matmul", vec![to_arg(o)?, t_arg(&self.t)], vec![])
    }
    fn __and__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::bitwise_and", o)
    }
    fn __or__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::bitwise_or", o)
    }
    fn __xor__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binary(py, "aten::bitwise_xor", o)
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        call_op(py, "aten::neg", vec![t_arg(&self.t)], vec![])
    }
    fn __pos__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }
    fn __abs__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        call_op(py, "aten::abs", vec![t_arg(&self.t)], vec![])
    }
    fn __invert__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        call_op(py, "aten::bitwise_not", vec![t_arg(&self.t)], vec![])
    }

    fn __richcmp__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        if o.is_none() {
            let r = matches!(op, CompareOp::Ne);
            return Ok(pyo3::types::PyBool::new(py, r)
                .to_owned()
                .into_any()
                .unbind());
        }
        let name = match op {
            CompareOp::Lt => "aten::lt",
            CompareOp::Le => "aten::le",
            CompareOp::Eq => "aten::eq",
            CompareOp::Ne => "aten::ne",
            CompareOp::Gt => "aten::gt",
            CompareOp::Ge => "aten::ge",
        };
        self.binary(py, name, o)
    }

    /// Tensor methods not defined above: `x.relu()`, `x.view(2, 3)`, `x.sum(1)`, `x.float()`:
    /// the operator `aten::<name>` with the tensor as `self`.
    fn __getattr__(&self, name: &str) -> PyResult<BoundOp> {
        if dtype_alias(name).is_some() || (!name.starts_with("__") && has_operator(name)) {
            return Ok(BoundOp {
                name: name.to_string(),
                this: self.t.clone(),
            });
        }
        Err(PyAttributeError::new_err(format!(
            "'Tensor' object has no attribute '{name}' (no operator aten::{name})"
        )))
    }
}
