//! Typed access to an aten operator's arguments, popped off the stack in schema order.

use ts_core::IValue;
use ts_tensor::{DType, Device, Error, Scalar, Tensor};

/// The arguments of one operator call, indexed by schema position.
pub struct Args(pub Vec<IValue>);

fn wrong(i: usize, expected: &str, got: &IValue) -> Error {
    Error::runtime(format!(
        "argument {i}: expected a value of type '{expected}' but got '{}'",
        got.tag_name()
    ))
}

/// The error for a nested tensor given to an operator that only takes strided tensors.
fn nested_refused(i: usize) -> Error {
    Error::runtime(format!(
        "argument {i}: nested tensors are supported only by the nn.TransformerEncoder fast-path operators in torchscript-rs (_transformer_encoder_layer_fwd, _native_multi_head_attention, to_padded_tensor)"
    ))
}

impl Args {
    /// The raw value at `i`.
    pub fn v(&self, i: usize) -> Result<&IValue, Error> {
        self.0
            .get(i)
            .ok_or_else(|| Error::runtime(format!("internal error: missing argument {i}")))
    }

    /// A tensor argument.
    /// Nested tensors are refused: only the operators that know them read them, through
    /// [`Args::t_nested`].
    pub fn t(&self, i: usize) -> Result<&Tensor, Error> {
        match self.v(i)? {
            IValue::Tensor(t) if t.is_nested() => Err(nested_refused(i)),
            IValue::Tensor(t) => Ok(t),
            v => Err(wrong(i, "Tensor", v)),
        }
    }

    /// A tensor argument that may be a nested tensor (for the operators that handle them).
    pub fn t_nested(&self, i: usize) -> Result<&Tensor, Error> {
        match self.v(i)? {
            IValue::Tensor(t) => Ok(t),
            v => Err(wrong(i, "Tensor", v)),
        }
    }

    /// An optional tensor argument.
    pub fn ot(&self, i: usize) -> Result<Option<&Tensor>, Error> {
        match self.v(i)? {
            IValue::None => Ok(None),
            IValue::Tensor(t) if t.is_nested() => Err(nested_refused(i)),
            IValue::Tensor(t) => Ok(Some(t)),
            v => Err(wrong(i, "Optional[Tensor]", v)),
        }
    }

    /// An int argument (bools count as 0/1).
    pub fn int(&self, i: usize) -> Result<i64, Error> {
        match self.v(i)? {
            IValue::Int(x) => Ok(*x),
            IValue::Bool(b) => Ok(*b as i64),
            v => Err(wrong(i, "int", v)),
        }
    }

    /// An optional int argument.
    pub fn oint(&self, i: usize) -> Result<Option<i64>, Error> {
        match self.v(i)? {
            IValue::None => Ok(None),
            _ => self.int(i).map(Some),
        }
    }

    /// A float argument (ints widen).
    pub fn f(&self, i: usize) -> Result<f64, Error> {
        match self.v(i)? {
            IValue::Double(x) => Ok(*x),
            IValue::Int(x) => Ok(*x as f64),
            IValue::Bool(b) => Ok(*b as i64 as f64),
            v => Err(wrong(i, "float", v)),
        }
    }

    /// An optional float argument.
    pub fn of(&self, i: usize) -> Result<Option<f64>, Error> {
        match self.v(i)? {
            IValue::None => Ok(None),
            _ => self.f(i).map(Some),
        }
    }

    /// A bool argument.
    pub fn b(&self, i: usize) -> Result<bool, Error> {
        match self.v(i)? {
            IValue::Bool(b) => Ok(*b),
            IValue::Int(x) => Ok(*x != 0),
            v => Err(wrong(i, "bool", v)),
        }
    }

    /// An optional bool argument.
    pub fn ob(&self, i: usize) -> Result<Option<bool>, Error> {
        match self.v(i)? {
            IValue::None => Ok(None),
            _ => self.b(i).map(Some),
        }
    }

    /// A Scalar (Python number) argument.
    pub fn s(&self, i: usize) -> Result<Scalar, Error> {
        let v = self.v(i)?;
        v.as_scalar().ok_or_else(|| wrong(i, "Scalar", v))
    }

    /// An optional Scalar argument.
    pub fn os(&self, i: usize) -> Result<Option<Scalar>, Error> {
        match self.v(i)? {
            IValue::None => Ok(None),
            _ => self.s(i).map(Some),
        }
    }

    /// A string argument.
    pub fn str(&self, i: usize) -> Result<&str, Error> {
        match self.v(i)? {
            IValue::String(s) => Ok(s.as_str()),
            v => Err(wrong(i, "str", v)),
        }
    }

    /// An optional string argument.
    pub fn ostr(&self, i: usize) -> Result<Option<&str>, Error> {
        match self.v(i)? {
            IValue::None => Ok(None),
            _ => self.str(i).map(Some),
        }
    }

    /// An `int[]` argument (a single int stands for a one-element list, as schemas allow).
    pub fn ints(&self, i: usize) -> Result<Vec<i64>, Error> {
        match self.v(i)? {
            IValue::Int(x) => Ok(vec![*x]),
            IValue::List(l) => l
                .items
                .read()
                .iter()
                .map(|x| x.as_int().ok_or_else(|| wrong(i, "int", x)))
                .collect(),
            IValue::Tuple(t) => t
                .elements
                .iter()
                .map(|x| x.as_int().ok_or_else(|| wrong(i, "int", x)))
                .collect(),
            v => Err(wrong(i, "List[int]", v)),
        }
    }

    /// An optional `int[]` argument.
    pub fn oints(&self, i: usize) -> Result<Option<Vec<i64>>, Error> {
        match self.v(i)? {
            IValue::None => Ok(None),
            _ => self.ints(i).map(Some),
        }
    }

    /// A `float[]` argument.
    pub fn floats(&self, i: usize) -> Result<Vec<f64>, Error> {
        match self.v(i)? {
            IValue::List(l) => l
                .items
                .read()
                .iter()
                .map(|x| match x {
                    IValue::Double(d) => Ok(*d),
                    IValue::Int(n) => Ok(*n as f64),
                    other => Err(wrong(i, "float", other)),
                })
                .collect(),
            IValue::Double(d) => Ok(vec![*d]),
            v => Err(wrong(i, "List[float]", v)),
        }
    }

    /// A `Tensor[]` argument.
    pub fn tensors(&self, i: usize) -> Result<Vec<Tensor>, Error> {
        let items = match self.v(i)? {
            IValue::List(l) => l.items.read().clone(),
            IValue::Tuple(t) => t.elements.clone(),
            v => return Err(wrong(i, "List[Tensor]", v)),
        };
        items
            .iter()
            .map(|x| x.as_tensor().cloned().ok_or_else(|| wrong(i, "Tensor", x)))
            .collect()
    }

    /// A `Tensor?[]` argument.
    pub fn opt_tensors(&self, i: usize) -> Result<Vec<Option<Tensor>>, Error> {
        let items = match self.v(i)? {
            IValue::List(l) => l.items.read().clone(),
            IValue::Tuple(t) => t.elements.clone(),
            v => return Err(wrong(i, "List[Optional[Tensor]]", v)),
        };
        items
            .iter()
            .map(|x| match x {
                IValue::None => Ok(None),
                IValue::Tensor(t) => Ok(Some(t.clone())),
                other => Err(wrong(i, "Optional[Tensor]", other)),
            })
            .collect()
    }

    /// An optional `ScalarType` argument (dtypes travel as ints).
    pub fn dtype(&self, i: usize) -> Result<Option<DType>, Error> {
        match self.v(i)? {
            IValue::None => Ok(None),
            IValue::Int(x) => DType::from_scalar_type_index(*x)
                .map(Some)
                .ok_or_else(|| Error::runtime(format!("unsupported dtype code {x}"))),
            v => Err(wrong(i, "ScalarType", v)),
        }
    }

    /// An optional device argument; only the CPU is available.
    pub fn check_device(&self, i: usize) -> Result<(), Error> {
        match self.v(i)? {
            IValue::None => Ok(()),
            IValue::Device(Device::Cpu) => Ok(()),
            IValue::Device(d) => Err(Error::runtime(format!(
                "device '{}' is not available: torchscript-rs runs on the CPU",
                d.type_name()
            ))),
            IValue::String(s) if s.as_str() == "cpu" => Ok(()),
            v => Err(wrong(i, "Device", v)),
        }
    }
}

/// A result an operator pushes back onto the stack.
pub trait Outputs {
    /// Pushes the result's values.
    fn push_to(self, stack: &mut Vec<IValue>);
}

impl Outputs for IValue {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(self);
    }
}

impl Outputs for Tensor {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::Tensor(self));
    }
}

impl Outputs for (Tensor, Tensor) {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::Tensor(self.0));
        stack.push(IValue::Tensor(self.1));
    }
}

impl Outputs for (Tensor, Tensor, Tensor) {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::Tensor(self.0));
        stack.push(IValue::Tensor(self.1));
        stack.push(IValue::Tensor(self.2));
    }
}

impl Outputs for (Tensor, Vec<Tensor>) {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::Tensor(self.0));
        self.1.push_to(stack);
    }
}

impl Outputs for (Tensor, Tensor, Tensor, Tensor) {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.extend([self.0, self.1, self.2, self.3].map(IValue::Tensor));
    }
}

impl Outputs for Vec<Tensor> {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::list(
            ts_core::Type::tensor(),
            self.into_iter().map(IValue::Tensor).collect(),
        ));
    }
}

impl Outputs for i64 {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::Int(self));
    }
}

impl Outputs for f64 {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::Double(self));
    }
}

impl Outputs for bool {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::Bool(self));
    }
}

impl Outputs for Vec<i64> {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::list(
            ts_core::Type::int(),
            self.into_iter().map(IValue::Int).collect(),
        ));
    }
}

impl Outputs for () {
    fn push_to(self, _stack: &mut Vec<IValue>) {}
}
