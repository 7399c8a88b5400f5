//! The generic object model an unpickled stream turns into: a [`PickleTree`].
//!
//! Nothing here executes anything. A global is only a name, and "calling" it (REDUCE, NEWOBJ)
//! or setting its state (BUILD) is recorded as a [`PickleObject`] for a later stage to interpret
//! against an allow-list.
//!
//! Containers and objects live in arenas owned by the tree and are referred to by id, so two
//! references to one list (pickle's memo) stay one list, cycles cost nothing to drop, and
//! consumers can memoize their work per id instead of expanding a shared DAG into a tree.

use std::fmt;
use std::sync::Arc;

/// A reference to a tuple in [`PickleTree::tuples`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TupleId(pub u32);

/// A reference to a list in [`PickleTree::lists`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ListId(pub u32);

/// A reference to a dict in [`PickleTree::dicts`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DictId(pub u32);

/// A reference to an object in [`PickleTree::objects`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ObjectId(pub u32);

/// A reference to a persistent id in [`PickleTree::persistent_ids`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PersistentId(pub u32);

/// A global named by GLOBAL or STACK_GLOBAL: `module.name` (e.g. `torch._utils`,
/// `_rebuild_tensor_v2`). Only a name; resolving it is the caller's decision.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct GlobalName {
    pub module: String,
    pub name: String,
}

impl fmt::Display for GlobalName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.module, self.name)
    }
}

/// One value on the pickle machine's stack or inside a container.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum PickleValue {
    #[default]
    None,
    Bool(bool),
    Int(i64),
    /// An integer outside the `i64` range, as little-endian two's complement bytes (LONG1/LONG4).
    BigInt(Arc<Vec<u8>>),
    Float(f64),
    Str(Arc<String>),
    Bytes(Arc<Vec<u8>>),
    Tuple(TupleId),
    List(ListId),
    Dict(DictId),
    Global(Arc<GlobalName>),
    Object(ObjectId),
    /// The result of loading a persistent id (BINPERSID/PERSID): in PyTorch files, a storage.
    Persistent(PersistentId),
}

impl PickleValue {
    /// A short name of the value's kind, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            PickleValue::None => "None",
            PickleValue::Bool(_) => "bool",
            PickleValue::Int(_) | PickleValue::BigInt(_) => "int",
            PickleValue::Float(_) => "float",
            PickleValue::Str(_) => "str",
            PickleValue::Bytes(_) => "bytes",
            PickleValue::Tuple(_) => "tuple",
            PickleValue::List(_) => "list",
            PickleValue::Dict(_) => "dict",
            PickleValue::Global(_) => "global",
            PickleValue::Object(_) => "object",
            PickleValue::Persistent(_) => "persistent id",
        }
    }
}

/// How an object came to be: a callable applied to arguments (REDUCE) or a class instantiated
/// with `cls.__new__(cls, *args)` (NEWOBJ).
#[derive(Clone, Debug, PartialEq)]
pub enum Construction {
    /// `callable(*args)`; `args` is a tuple.
    Reduce {
        callable: PickleValue,
        args: PickleValue,
    },
    /// `class.__new__(class, *args)`; `args` is a tuple.
    NewObj {
        class: PickleValue,
        args: PickleValue,
    },
}

/// An object built by REDUCE or NEWOBJ, with whatever BUILD, APPEND(S) and SETITEM(S) did to it
/// afterwards (an `OrderedDict` gets its items through SETITEMS, a module its attributes through
/// BUILD).
#[derive(Clone, Debug, PartialEq)]
pub struct PickleObject {
    pub construction: Construction,
    /// The argument of BUILD (`__setstate__`'s argument or an attribute dict), if any.
    pub state: Option<PickleValue>,
    /// Items appended with APPEND/APPENDS.
    pub list_items: Vec<PickleValue>,
    /// Items set with SETITEM/SETITEMS, in order.
    pub dict_items: Vec<(PickleValue, PickleValue)>,
}

impl PickleObject {
    /// The callable (REDUCE) or class (NEWOBJ).
    pub fn callee(&self) -> &PickleValue {
        match &self.construction {
            Construction::Reduce { callable, .. } => callable,
            Construction::NewObj { class, .. } => class,
        }
    }

    /// The argument tuple.
    pub fn args(&self) -> &PickleValue {
        match &self.construction {
            Construction::Reduce { args, .. } | Construction::NewObj { args, .. } => args,
        }
    }
}

/// The result of unpickling a stream: its root value and the arenas its ids refer to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PickleTree {
    pub root: PickleValue,
    pub tuples: Vec<Vec<PickleValue>>,
    pub lists: Vec<Vec<PickleValue>>,
    /// Dict entries in insertion order (a repeated key appears twice; the later one wins).
    pub dicts: Vec<Vec<(PickleValue, PickleValue)>>,
    pub objects: Vec<PickleObject>,
    /// The value each BINPERSID/PERSID was given.
    pub persistent_ids: Vec<PickleValue>,
}

impl PickleTree {
    /// The elements of a tuple. Ids come from this tree, so lookups only fail for foreign ids,
    /// which yield an empty slice.
    pub fn tuple(&self, id: TupleId) -> &[PickleValue] {
        self.tuples.get(id.0 as usize).map_or(&[], Vec::as_slice)
    }

    /// The items of a list (empty for a foreign id).
    pub fn list(&self, id: ListId) -> &[PickleValue] {
        self.lists.get(id.0 as usize).map_or(&[], Vec::as_slice)
    }

    /// The entries of a dict (empty for a foreign id).
    pub fn dict(&self, id: DictId) -> &[(PickleValue, PickleValue)] {
        self.dicts.get(id.0 as usize).map_or(&[], Vec::as_slice)
    }

    /// An object, or `None` for a foreign id.
    pub fn object(&self, id: ObjectId) -> Option<&PickleObject> {
        self.objects.get(id.0 as usize)
    }

    /// The value a persistent id was given, or `None` for a foreign id.
    pub fn persistent_id(&self, id: PersistentId) -> Option<&PickleValue> {
        self.persistent_ids.get(id.0 as usize)
    }

    /// The elements of `value` when it is a tuple.
    pub fn as_tuple(&self, value: &PickleValue) -> Option<&[PickleValue]> {
        match value {
            PickleValue::Tuple(id) => Some(self.tuple(*id)),
            _ => None,
        }
    }

    /// A compact, depth-limited rendering of `value` for error messages and debugging.
    pub fn describe(&self, value: &PickleValue) -> String {
        let mut out = String::new();
        self.describe_into(value, 3, &mut out);
        out
    }

    fn describe_into(&self, value: &PickleValue, depth: usize, out: &mut String) {
        use std::fmt::Write;
        let seq = |out: &mut String, open: &str, close: &str, items: &[PickleValue]| {
            out.push_str(open);
            if depth == 0 {
                if !items.is_empty() {
                    out.push_str("...");
                }
            } else {
                for (i, v) in items.iter().take(8).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.describe_into(v, depth - 1, out);
                }
                if items.len() > 8 {
                    out.push_str(", ...");
                }
            }
            out.push_str(close);
        };
        match value {
            PickleValue::None => out.push_str("None"),
            PickleValue::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            PickleValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            PickleValue::BigInt(b) => {
                let _ = write!(out, "<{}-byte int>", b.len());
            }
            PickleValue::Float(f) => {
                let _ = write!(out, "{f:?}");
            }
            PickleValue::Str(s) => {
                let shown: String = s.chars().take(40).collect();
                let _ = write!(out, "{shown:?}");
            }
            PickleValue::Bytes(b) => {
                let _ = write!(out, "<{} bytes>", b.len());
            }
            PickleValue::Tuple(id) => seq(out, "(", ")", self.tuple(*id)),
            PickleValue::List(id) => seq(out, "[", "]", self.list(*id)),
            PickleValue::Dict(id) => {
                let _ = write!(out, "{{<{} entries>}}", self.dict(*id).len());
            }
            PickleValue::Global(g) => {
                let _ = write!(out, "{g}");
            }
            PickleValue::Object(id) => match self.object(*id) {
                Some(obj) if depth > 0 => {
                    self.describe_into(obj.callee(), depth - 1, out);
                    self.describe_into(obj.args(), depth - 1, out);
                }
                _ => out.push_str("<object>"),
            },
            PickleValue::Persistent(id) => {
                out.push_str("persistent_load(");
                if let (Some(pid), true) = (self.persistent_id(*id), depth > 0) {
                    self.describe_into(pid, depth - 1, out);
                }
                out.push(')');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_small() {
        assert_eq!(std::mem::size_of::<PickleValue>(), 16);
    }

    #[test]
    fn describe_is_depth_limited() {
        let mut tree = PickleTree::default();
        tree.lists.push(vec![]);
        tree.lists[0].push(PickleValue::List(ListId(0)));
        tree.root = PickleValue::List(ListId(0));
        assert_eq!(tree.describe(&tree.root), "[[[[...]]]]");
        assert!(tree.list(ListId(9)).is_empty());
    }
}
