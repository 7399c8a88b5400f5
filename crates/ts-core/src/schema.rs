//! `FunctionSchema`: the signature of an operator or function, with alias annotations.

use crate::ivalue::IValue;
use crate::types::TypeRef;

/// Alias annotation of an argument or return (`Tensor(a)`, `Tensor(a!)`, `Tensor(a -> *)`,
/// `Tensor(*)`, `Tensor(a)[]`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AliasInfo {
    /// Alias sets before the `->` (`a` in `Tensor(a)`; `*` is the wildcard).
    pub before_sets: Vec<String>,
    /// Alias sets after the `->` (equal to `before_sets` when there is no arrow).
    pub after_sets: Vec<String>,
    /// True when written (`!`).
    pub is_write: bool,
    /// Annotations of contained types (`Tensor(a)[]` puts `a` on the element).
    pub contained: Vec<AliasInfo>,
}

/// One formal argument or return.
#[derive(Clone, Debug)]
pub struct Argument {
    pub name: String,
    pub ty: TypeRef,
    /// The type as the parser saw it before `SymInt`→`int`-style normalisation, if different.
    pub real_ty: Option<TypeRef>,
    /// Fixed list length (`int[2]`).
    pub n: Option<usize>,
    pub default: Option<IValue>,
    pub kwarg_only: bool,
    pub alias_info: Option<AliasInfo>,
}

/// A function or operator signature.
#[derive(Clone, Debug)]
pub struct FunctionSchema {
    /// Qualified name (`aten::add`) or plain function name.
    pub name: String,
    /// Overload name (`Tensor` in `aten::add.Tensor`), empty when none.
    pub overload_name: String,
    pub arguments: Vec<Argument>,
    pub returns: Vec<Argument>,
    /// `...` after the arguments.
    pub is_vararg: bool,
    /// `...` in the returns.
    pub is_varret: bool,
}
