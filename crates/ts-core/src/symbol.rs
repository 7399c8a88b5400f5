//! Interned `namespace::name` symbols: node kinds (`aten::add`, `prim::If`) and attribute names
//! (`attr::value`).
//!
//! A [`Symbol`] is a `u32` into a global, append-only table, so it is `Copy` and compares in one
//! instruction. The well-known symbols have fixed ids and `const` names in the [`prim`], [`aten`],
//! [`attr`] (and other) modules, so `node.kind() == prim::Constant` reads like PyTorch. The set of
//! namespaces and names is open: any `ns::name` can be interned.

use std::fmt;
use std::sync::OnceLock;

use parking_lot::RwLock;

/// An interned `namespace::name`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol(u32);

struct Interner {
    /// foldhash: every `Symbol::new` hashes a name (SipHash showed in start-up profiles).
    by_name: foldhash::HashMap<&'static str, u32>,
    /// (qualified, namespace length) per id.
    names: Vec<(&'static str, usize)>,
}

fn interner() -> &'static RwLock<Interner> {
    static INTERNER: OnceLock<RwLock<Interner>> = OnceLock::new();
    INTERNER.get_or_init(|| {
        let mut i = Interner {
            by_name: foldhash::HashMap::default(),
            names: Vec::new(),
        };
        for q in BUILTINS {
            i.insert(q);
        }
        RwLock::new(i)
    })
}

impl Interner {
    fn insert(&mut self, q: &'static str) -> u32 {
        let ns_len = q.find("::").unwrap_or(0);
        let id = self.names.len() as u32;
        self.names.push((q, ns_len));
        self.by_name.insert(q, id);
        id
    }
}

impl Symbol {
    /// Interns a qualified name `ns::name`. A name without `::` is interned in no namespace
    /// (its namespace is the empty string).
    pub fn new(qualified: &str) -> Symbol {
        if let Some(&id) = interner().read().by_name.get(qualified) {
            return Symbol(id);
        }
        let mut w = interner().write();
        if let Some(&id) = w.by_name.get(qualified) {
            return Symbol(id);
        }
        let leaked: &'static str = Box::leak(qualified.to_owned().into_boxed_str());
        Symbol(w.insert(leaked))
    }

    /// Interns `ns::name` from its parts.
    pub fn from_parts(ns: &str, name: &str) -> Symbol {
        // Joined on the stack: most lookups find an interned name and need no allocation.
        let mut buf = [0u8; 128];
        let len = ns.len() + 2 + name.len();
        if len > buf.len() {
            return Symbol::new(&format!("{ns}::{name}"));
        }
        buf[..ns.len()].copy_from_slice(ns.as_bytes());
        buf[ns.len()..ns.len() + 2].copy_from_slice(b"::");
        buf[ns.len() + 2..len].copy_from_slice(name.as_bytes());
        Symbol::new(std::str::from_utf8(&buf[..len]).expect("joined from two strings"))
    }

    /// `aten::<name>`.
    pub fn aten(name: &str) -> Symbol {
        Symbol::from_parts("aten", name)
    }

    /// `prim::<name>`.
    pub fn prim(name: &str) -> Symbol {
        Symbol::from_parts("prim", name)
    }

    /// `attr::<name>`.
    pub fn attr(name: &str) -> Symbol {
        Symbol::from_parts("attr", name)
    }

    /// Looks a qualified name up without interning it.
    pub fn lookup(qualified: &str) -> Option<Symbol> {
        interner().read().by_name.get(qualified).map(|&i| Symbol(i))
    }

    /// The full `ns::name`.
    pub fn qualified(self) -> &'static str {
        interner().read().names[self.0 as usize].0
    }

    /// The namespace (`aten`, `prim`, ...).
    pub fn ns(self) -> &'static str {
        let (q, n) = interner().read().names[self.0 as usize];
        &q[..n]
    }

    /// The unqualified name (`add` for `aten::add`).
    pub fn name(self) -> &'static str {
        let (q, n) = interner().read().names[self.0 as usize];
        if n == 0 && !q.starts_with("::") {
            q
        } else {
            &q[n + 2..]
        }
    }

    /// True when the namespace is `ns`.
    pub fn is_ns(self, ns: &str) -> bool {
        self.ns() == ns
    }

    /// The raw id (stable within a process only).
    pub fn id(self) -> u32 {
        self.0
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.qualified())
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.qualified())
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Id of a builtin symbol (its index in `BUILTINS`), evaluated at compile time.
const fn builtin_id(q: &str) -> u32 {
    let mut i = 0;
    while i < BUILTINS.len() {
        if str_eq(BUILTINS[i], q) {
            return i as u32;
        }
        i += 1;
    }
    panic!("not a builtin symbol")
}

macro_rules! builtin_symbols {
    ($($ns:ident { $($name:ident),* $(,)? })*) => {
        const BUILTINS: &[&str] = &[$($(concat!(stringify!($ns), "::", stringify!($name)),)*)*];
        $(
            #[allow(non_upper_case_globals)]
            #[doc = concat!("Well-known `", stringify!($ns), "::` symbols.")]
            pub mod $ns {
                use super::{builtin_id, Symbol};
                $(
                    #[doc = concat!("The interned `", stringify!($ns), "::", stringify!($name), "` symbol.")]
                    pub const $name: Symbol =
                        Symbol(builtin_id(concat!(stringify!($ns), "::", stringify!($name))));
                )*
            }
        )*
    };
}

builtin_symbols! {
    prim {
        Param, Return, Constant, If, Loop, With, Enter, Exit, Store, Load, Uninitialized,
        TupleConstruct, TupleUnpack, TupleIndex, TupleSlice, ListConstruct, ListUnpack,
        DictConstruct, DictIndex, GetAttr, SetAttr, CallFunction, CallMethod, RaiseException,
        unchecked_cast, isinstance, Print, NumToTensor, ImplicitTensorToNum, device, dtype,
        layout, is_cuda, requires_grad, data, shape, BailOut, BailoutTemplate, Guard, TypeCheck,
        RequiresGradCheck, FusionGroup, DifferentiableGraph, ConstantChunk, FusedConcat,
        MMTreeReduce, MMBatchSide, AutogradZero, AutogradAdd, AutogradAnyNonZero, Closure,
        CreateObject, fork, EnumName, EnumValue, ReturnStmt, BreakStmt, ContinueStmt,
        LoopContinuation, ComprehensionScope, AddStatValue, TimePoint, CudaFusionGroup,
        profile, profile_ivalue, Drop, rpc_async, ListSlice, dict, min, max, abs, range,
        StringIndex, NumToTensorExt, TupleIndexWithDefault, Guard2, awaitable, awaitable_wait,
        unchecked_unwrap_optional, AutogradAllZero, AutogradAllNonZero, ConstantMKLDNNTensor,
        Starred, EmptyListLiteral, MakeDict, id, ModuleContainerIndex, IgnoredPythonOp,
        PythonOp, Stack, Assert, tolist, warn, shapes, VarConcat, VarStack, IfThenElse, GradOf,
        BroadcastingChunk, BroadcastSizes, ChunkSizes, TensorExprGroup, StaticSubgraph,
        FallbackGraph, FunctionalGraph, MKLDNNGroup, BailoutGuard
    }
    aten {
        add, add_, sub, mul, div, floordiv, remainder, pow, neg, eq, ne, lt, le, gt, ge, format,
        append, len, size, dim, __getitem__, __is__, __isnot__, __not__, __and__, __or__,
        __xor__, __contains__, Bool, Int, Float, str, list, dict, mm, matmul, t, chunk, cat,
        stack, view, reshape, select, slice, index, index_put_, copy_, warn, wait, __interpolate,
        __range_length, __derive_index, sigmoid, tanh, relu, zeros, ones, tensor, to, detach,
        contiguous, clone, item, IntImplicit, FloatImplicit, ScalarImplicit, ComplexImplicit,
        _set_item, keys, values, items, __round_to_zero_floordiv, Delete, dropout, _grad_sum_to_size,
        batch_norm, instance_norm, layer_norm, conv1d, conv2d, conv3d, _convolution, linear,
        addmm, expand, type_as, is_floating_point, is_complex, _unwrap_optional, ceil, zeros_like,
        full_like, fill_, zero_, feature_dropout, alpha_dropout, feature_alpha_dropout,
        dropout_, relu_, hardtanh, permute, unsqueeze, squeeze, transpose, floor_divide, bmm,
        baddbmm, __lshift__, __rshift__, Complex, device
    }
    attr {
        value, name, Subgraph, profiled_type, seen_none, num_outputs, types, ReturnStmt, chunks,
        dim, beg, end, fallback, training, side
    }
    onnx {
        Placeholder
    }
    cuda {
        _set_device, set_stream, _current_device
    }
    upgraders {
        div_0_3, full_0_4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_constants_match_interned_names() {
        assert_eq!(prim::Constant.qualified(), "prim::Constant");
        assert_eq!(Symbol::new("prim::Constant"), prim::Constant);
        assert_eq!(aten::add.ns(), "aten");
        assert_eq!(aten::add.name(), "add");
        assert_eq!(attr::value.qualified(), "attr::value");
        assert_eq!(Symbol::aten("__getitem__"), aten::__getitem__);
    }

    #[test]
    fn open_namespaces_intern() {
        let s = Symbol::new("my_ns::my_op");
        assert_eq!(s.ns(), "my_ns");
        assert_eq!(s.name(), "my_op");
        assert_eq!(s, Symbol::from_parts("my_ns", "my_op"));
        assert_ne!(s, Symbol::new("my_ns::other"));
        assert_eq!(Symbol::lookup("my_ns::never_made"), None);
    }
}
