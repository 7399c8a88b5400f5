//! Printing types the way PyTorch does: the IR form (`int[]`, `Tensor?`, `(int, str)`,
//! `Dict(str, int)`, `Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)`) through
//! `Display`, and the Python annotation form used in `code/` files (`List[int]`,
//! `Optional[Tensor]`, `Tuple[int, str]`) through [`Type::annotation_str`].

use std::fmt;
use std::sync::OnceLock;

use crate::types::{TensorType, Type};

/// How much of a tensor type is printed (`PYTORCH_JIT_TYPE_VERBOSITY`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum TypeVerbosity {
    None = 0,
    Type = 1,
    TypeAndStride = 2,
    Full = 3,
    Symbolic = 4,
}

/// The verbosity from `PYTORCH_JIT_TYPE_VERBOSITY` (an integer 0-4; default Full).
pub fn type_verbosity() -> TypeVerbosity {
    static V: OnceLock<TypeVerbosity> = OnceLock::new();
    *V.get_or_init(|| {
        match std::env::var("PYTORCH_JIT_TYPE_VERBOSITY")
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
        {
            Some(0) => TypeVerbosity::None,
            Some(1) => TypeVerbosity::Type,
            Some(2) => TypeVerbosity::TypeAndStride,
            Some(4) => TypeVerbosity::Symbolic,
            _ => TypeVerbosity::Full,
        }
    })
}

fn write_tensor(
    f: &mut fmt::Formatter<'_>,
    t: &TensorType,
    verbosity: TypeVerbosity,
) -> fmt::Result {
    match t.dtype {
        Some(d) => {
            f.write_str(d.scalar_type_name())?;
            if t.sizes.is_none() {
                f.write_str("Tensor")?;
            }
        }
        None => f.write_str("Tensor")?,
    }
    if let Some(sizes) = &t.sizes {
        let ndim = sizes.len();
        let strides_complete = ndim > 0
            && t.strides
                .as_ref()
                .is_some_and(|s| s.len() == ndim && s.iter().all(|x| x.is_some()));
        f.write_str("(")?;
        let mut i = 0;
        for (k, s) in sizes.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            match s {
                Some(s) => write!(f, "{s}")?,
                None if verbosity == TypeVerbosity::Symbolic => write!(f, "SS(-{})", k + 1)?,
                None => f.write_str("*")?,
            }
            i += 1;
        }
        if strides_complete && verbosity >= TypeVerbosity::TypeAndStride {
            f.write_str(", strides=[")?;
            for (k, s) in t.strides.iter().flatten().enumerate() {
                if k > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", s.unwrap_or(0))?;
            }
            f.write_str("]")?;
        }
        if verbosity >= TypeVerbosity::Full {
            if let Some(rg) = t.requires_grad {
                if i > 0 {
                    f.write_str(", ")?;
                }
                i += 1;
                write!(f, "requires_grad={}", rg as i32)?;
            }
            if let Some(d) = t.device {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "device={d}")?;
            }
        }
        f.write_str(")")?;
    } else if verbosity >= TypeVerbosity::Full {
        let mut i = 0;
        if let Some(rg) = t.requires_grad {
            write!(f, "(requires_grad={}", rg as i32)?;
            i += 1;
        }
        if let Some(d) = t.device {
            f.write_str(if i > 0 { ", " } else { "(" })?;
            write!(f, "device={d}")?;
            i += 1;
        }
        if i > 0 {
            f.write_str(")")?;
        }
    }
    if t.undefined == Some(true) {
        f.write_str("[Undefined]")?;
    }
    Ok(())
}

impl Type {
    /// PyTorch's `Type::str()` (used in schemas): like `Display` but tensors print as plain
    /// `Tensor` and futures as `Future(T)`.
    pub fn str(&self) -> String {
        TypeDisplay {
            ty: self,
            verbosity: TypeVerbosity::None,
        }
        .to_string()
    }

    /// The Python annotation spelling used in `code/` files and error messages
    /// (`List[int]`, `Optional[Tensor]`, `Tuple[int, str]`, `Dict[str, int]`).
    pub fn annotation_str(&self) -> String {
        use Type::*;
        match self {
            List(e) => format!("List[{}]", e.annotation_str()),
            Optional(e) => format!("Optional[{}]", e.annotation_str()),
            Future(e) => format!("Future[{}]", e.annotation_str()),
            RRef(e) => format!("RRef[{}]", e.annotation_str()),
            Await(e) => format!("Await[{}]", e.annotation_str()),
            Dict(k, v) => format!("Dict[{}, {}]", k.annotation_str(), v.annotation_str()),
            Union(ms) => format!(
                "Union[{}]",
                ms.iter()
                    .map(|m| m.annotation_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Tuple(t) => match &t.names {
                Some(n) => n.qualified_name.clone(),
                None if t.elements.is_empty() => "Tuple[()]".to_string(),
                None => format!(
                    "Tuple[{}]",
                    t.elements
                        .iter()
                        .map(|m| m.annotation_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            Tensor(_) => "Tensor".to_string(),
            Number => "number".to_string(),
            Enum(e) => e.name.clone(),
            AnyList => "list".to_string(),
            AnyTuple => "tuple".to_string(),
            Function(fun) => fun.name.clone(),
            _ => self.to_string(),
        }
    }
}

struct TypeDisplay<'a> {
    ty: &'a Type,
    verbosity: TypeVerbosity,
}

impl fmt::Display for TypeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_type(f, self.ty, self.verbosity)
    }
}

fn sub(ty: &Type, verbosity: TypeVerbosity) -> TypeDisplay<'_> {
    TypeDisplay { ty, verbosity }
}

fn write_type(f: &mut fmt::Formatter<'_>, ty: &Type, v: TypeVerbosity) -> fmt::Result {
    use Type::*;
    match ty {
        Any => f.write_str("Any"),
        Tensor(t) => {
            if v == TypeVerbosity::None {
                f.write_str("Tensor")
            } else {
                write_tensor(f, t, v)
            }
        }
        Int => f.write_str("int"),
        SymInt => f.write_str("SymInt"),
        Float => f.write_str("float"),
        SymFloat => f.write_str("SymFloat"),
        SymBool => f.write_str("SymBool"),
        Complex => f.write_str("complex"),
        Bool => f.write_str("bool"),
        Str => f.write_str("str"),
        NoneType => f.write_str("NoneType"),
        Device => f.write_str("Device"),
        Number => f.write_str("Scalar"),
        ScalarType => f.write_str("ScalarType"),
        Layout => f.write_str("Layout"),
        MemoryFormat => f.write_str("MemoryFormat"),
        QScheme => f.write_str("QScheme"),
        Dimname => f.write_str("Dimname"),
        Generator => f.write_str("Generator"),
        Storage => f.write_str("Storage"),
        Stream => f.write_str("Stream"),
        Capsule => f.write_str("Capsule"),
        AnyList => f.write_str("list"),
        AnyTuple => f.write_str("tuple"),
        AnyClass => f.write_str("AnyClassType"),
        AnyEnum => f.write_str("AnyEnumType"),
        List(e) => write!(f, "{}[]", sub(e, v)),
        Optional(e) => write!(f, "{}?", sub(e, v)),
        Future(e) if v == TypeVerbosity::None => write!(f, "Future({})", sub(e, v)),
        RRef(e) if v == TypeVerbosity::None => write!(f, "RRef({})", sub(e, v)),
        Await(e) if v == TypeVerbosity::None => write!(f, "Await({})", sub(e, v)),
        Future(e) => write!(f, "Future[{}]", sub(e, v)),
        RRef(e) => write!(f, "RRef[{}]", sub(e, v)),
        Await(e) => write!(f, "Await[{}]", sub(e, v)),
        Dict(k, val) => write!(f, "Dict({}, {})", sub(k, v), sub(val, v)),
        Union(ms) => {
            f.write_str("Union(")?;
            for (i, m) in ms.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", sub(m, v))?;
            }
            f.write_str(")")
        }
        Tuple(t) => {
            if t.names.is_some() {
                f.write_str("NamedTuple")?;
            }
            f.write_str("(")?;
            for (i, e) in t.elements.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                if let Some(n) = &t.names {
                    write!(
                        f,
                        "{} : ",
                        n.fields.get(i).map(String::as_str).unwrap_or("_")
                    )?;
                    write!(f, "{}", sub(e, v))?;
                    if let Some(Some(d)) = n.defaults.get(i) {
                        write!(f, " = {d}")?;
                    }
                } else {
                    write!(f, "{}", sub(e, v))?;
                }
            }
            f.write_str(")")
        }
        Class(c) => f.write_str(&c.name),
        Interface(i) => f.write_str(&i.name),
        Enum(e) => write!(f, "Enum<{}>", e.name),
        Function(_) => f.write_str("Function"),
        Var(n) => f.write_str(n),
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_type(f, self, type_verbosity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TensorType;
    use std::sync::Arc;
    use ts_tensor::{DType, Device};

    #[test]
    fn prints_like_pytorch() {
        // Expected strings are the forms seen in /work/shared/corpus/ir (printed by PyTorch 2.15).
        assert_eq!(Type::int_list().to_string(), "int[]");
        assert_eq!(Type::optional(Type::tensor()).to_string(), "Tensor?");
        assert_eq!(
            Type::tuple(vec![Type::tensor(), Type::optional(Type::tensor())]).to_string(),
            "(Tensor, Tensor?)"
        );
        assert_eq!(
            Type::dict(Type::string(), Type::tensor()).to_string(),
            "Dict(str, Tensor)"
        );
        assert_eq!(
            Type::future(Type::tensor_list()).to_string(),
            "Future[Tensor[]]"
        );
        assert_eq!(
            Type::union(vec![Type::int(), Type::string()]).to_string(),
            "Union(int, str)"
        );
        let nt = Type::named_tuple(
            "__torch__.torch.return_types.max",
            vec!["values".into(), "indices".into()],
            vec![Type::tensor(), Type::tensor()],
        );
        assert_eq!(
            nt.to_string(),
            "NamedTuple(values : Tensor, indices : Tensor)"
        );
        assert_eq!(nt.annotation_str(), "__torch__.torch.return_types.max");
        let t = Arc::new(Type::Tensor(TensorType {
            dtype: Some(DType::Float32),
            device: Some(Device::Cpu),
            sizes: Some(vec![Some(2), Some(3)]),
            strides: Some(vec![Some(3), Some(1)]),
            requires_grad: Some(false),
            undefined: None,
        }));
        assert_eq!(
            t.to_string(),
            "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"
        );
        assert_eq!(t.str(), "Tensor");
        assert_eq!(Type::tensor_of(DType::Int64).to_string(), "LongTensor");
    }

    #[test]
    fn annotation_form() {
        assert_eq!(Type::int_list().annotation_str(), "List[int]");
        assert_eq!(
            Type::optional(Type::tuple(vec![Type::tensor(), Type::int()])).annotation_str(),
            "Optional[Tuple[Tensor, int]]"
        );
        assert_eq!(
            Type::dict(Type::string(), Type::float_list()).annotation_str(),
            "Dict[str, List[float]]"
        );
    }
}
