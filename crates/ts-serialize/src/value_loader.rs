//! The second stage of unpickling: interpreting a [`PickleTree`] as TorchScript values
//! ([`IValue`]s), accepting only the globals of the allow-list ([`crate::globals`]).
//!
//! What the format around the pickle provides comes through [`LoadHooks`]: storage records,
//! and, for `.pt` archives, `__torch__` classes and the objects built from them. Every tree node
//! is loaded once (so shared lists stay shared, a tensor referenced twice is one tensor, and a
//! hostile DAG of shared tuples costs linear time), and storages are shared by key (views of one
//! tensor share one [`Storage`](ts_tensor::Storage)).
//!
//! Lists and dicts get their element types from a type tag when the pickle has one
//! (`restore_type_tag`, `build_intlist`, ...), otherwise from their contents: the common type of
//! the items, or `Any` when they are mixed or there are none.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use indexmap::IndexMap;
use parking_lot::RwLock;
use ts_core::ivalue::EnumValue;
use ts_core::types::ClassType;
use ts_core::{Dict, DictKey, IValue, List, Object, Tuple, Type, TypeRef};
use ts_tensor::storage::Storage;
use ts_tensor::{Device, Tensor};

use crate::error::{Result, SerializeError};
use crate::globals::{classify, KnownGlobal, SpecializedList};
use crate::pickle_value::{
    Construction, DictId, GlobalName, ListId, ObjectId, PickleObject, PickleTree, PickleValue,
    TupleId,
};
use crate::storage_kind::ElementKind;
use crate::type_table::{annotation_str, is_subtype, TypeTable};
use crate::type_tag::parse_type_tag;

mod qtensor;
mod tensors;

use tensors::LoadedStorage;

/// How deeply containers may nest. Deeper data is refused rather than risking the stack.
pub const MAX_NESTING: usize = 200;

/// What the loader needs from the file format around the pickle.
pub trait LoadHooks {
    /// The bytes of the storage with persistent-id key `key` (e.g. the record `data/<key>`),
    /// which the pickle says holds `nbytes` bytes: a record of another size may be refused
    /// without reading it (a compressed record is never inflated past what is needed).
    fn read_storage(&mut self, key: &str, nbytes: usize) -> Result<Vec<u8>>;

    /// Storage `key` viewed in place (a mapped archive's uncompressed record of exactly
    /// `nbytes` bytes), or `None` to read it with [`LoadHooks::read_storage`] instead.
    fn map_storage(&mut self, key: &str, nbytes: usize) -> Result<Option<Storage>> {
        let _ = (key, nbytes);
        Ok(None)
    }

    /// The record name of storage `key`, for error messages.
    fn storage_record(&self, key: &str) -> String {
        key.to_owned()
    }

    /// True when storage records hold big-endian elements (the archive's `byteorder` record).
    fn big_endian(&self) -> bool {
        false
    }

    /// The class, named tuple or enum type named `qualified_name` (`__torch__.foo.Bar`), or
    /// `None` when this format has no user types (torch.save files).
    fn resolve_type(&mut self, qualified_name: &str) -> Result<Option<TypeRef>> {
        let _ = qualified_name;
        Ok(None)
    }

    /// Builds an instance of `class` from the state BUILD gave it. The default fills the
    /// attribute slots from a `Dict[str, T]` state; classes with `__setstate__` need the runtime
    /// and must be handled by an override.
    fn build_object(&mut self, class: &Arc<ClassType>, state: IValue) -> Result<IValue> {
        build_object_from_dict(class, state).map_err(|m| SerializeError::invalid(&class.name, m))
    }

    /// The tensor with index `id` of a tensor table (`torch.jit._pickle.build_tensor_from_id`),
    /// or `None` when this format has no table.
    fn tensor_from_id(&mut self, id: i64) -> Result<Option<Tensor>> {
        let _ = id;
        Ok(None)
    }
}

/// Fills the attribute slots of a new `class` instance, in the class's attribute order, from a
/// state dict mapping attribute names to values (what `torch.jit.save` writes for objects
/// without `__getstate__`).
pub fn build_object_from_dict(
    class: &Arc<ClassType>,
    state: IValue,
) -> std::result::Result<IValue, String> {
    let IValue::Dict(dict) = state else {
        return Err(format!(
            "the state of a {} object is not a dict; restoring it needs its __setstate__ method",
            class.name
        ));
    };
    let entries = dict.entries.read();
    let members = class.members.read();
    let mut slots = Vec::with_capacity(members.attributes.len());
    for attr in &members.attributes {
        let key = DictKey(IValue::String(Arc::new(attr.name.clone())));
        let value = entries
            .get(&key)
            .ok_or_else(|| format!("the saved state has no value for attribute '{}'", attr.name))?;
        slots.push(value.clone());
    }
    for key in entries.keys() {
        let known = match &key.0 {
            IValue::String(s) => members.attributes.iter().any(|a| a.name == **s),
            _ => false,
        };
        if !known {
            return Err(format!(
                "the saved state has a value for {:?}, which is not an attribute of the class",
                key.0
            ));
        }
    }
    drop(members);
    Ok(IValue::Object(Arc::new(Object {
        class: class.clone(),
        slots: RwLock::new(slots),
    })))
}

/// Loads the root of `tree` (read from record `record`) as an [`IValue`].
pub fn load_pickle(tree: &PickleTree, record: &str, hooks: &mut dyn LoadHooks) -> Result<IValue> {
    ValueLoader::new(tree, record, hooks).load_root()
}

/// A loaded value with its (interned) type.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub value: IValue,
    pub ty: TypeRef,
}

/// A tree node with identity.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Node {
    Tuple(TupleId),
    List(ListId),
    Dict(DictId),
    Object(ObjectId),
}

/// Interprets the values of one [`PickleTree`], memoizing per node.
pub struct ValueLoader<'t, 'h> {
    tree: &'t PickleTree,
    record: String,
    hooks: &'h mut dyn LoadHooks,
    types: TypeTable,
    memo: HashMap<Node, Loaded>,
    in_progress: HashSet<Node>,
    storages: HashMap<String, LoadedStorage>,
    depth: usize,
}

impl<'t, 'h> ValueLoader<'t, 'h> {
    /// A loader for `tree`, the content of record `record`.
    pub fn new(tree: &'t PickleTree, record: &str, hooks: &'h mut dyn LoadHooks) -> Self {
        ValueLoader {
            tree,
            record: record.to_owned(),
            hooks,
            types: TypeTable::new(),
            memo: HashMap::new(),
            in_progress: HashSet::new(),
            storages: HashMap::new(),
            depth: 0,
        }
    }

    /// Loads the tree's root value.
    pub fn load_root(&mut self) -> Result<IValue> {
        let root = self.tree.root.clone();
        self.load(&root)
    }

    /// Loads any value of the tree.
    pub fn load(&mut self, value: &PickleValue) -> Result<IValue> {
        Ok(self.load_typed(value, None)?.value)
    }

    /// Loads a value, checking it against `expected` when given, and returns it with its type.
    pub fn load_typed(
        &mut self,
        value: &PickleValue,
        expected: Option<&TypeRef>,
    ) -> Result<Loaded> {
        let t = &self.types;
        let loaded = match value {
            PickleValue::None => Loaded {
                value: IValue::None,
                ty: t.none.clone(),
            },
            PickleValue::Bool(b) => Loaded {
                value: IValue::Bool(*b),
                ty: t.bool_.clone(),
            },
            PickleValue::Int(i) => Loaded {
                value: IValue::Int(*i),
                ty: t.int.clone(),
            },
            PickleValue::Float(f) => Loaded {
                value: IValue::Double(*f),
                ty: t.float.clone(),
            },
            PickleValue::Str(s) => Loaded {
                value: IValue::String(s.clone()),
                ty: t.str_.clone(),
            },
            PickleValue::BigInt(b) => {
                return Err(self.invalid(format!(
                    "an integer of {} bytes does not fit in TorchScript's 64-bit int",
                    b.len()
                )))
            }
            PickleValue::Bytes(_) => return Err(self.unsupported("bytes values")),
            PickleValue::Global(g) => self.load_bare_global(g)?,
            PickleValue::Persistent(_) => {
                return Err(self.unsupported("a storage outside of a tensor"))
            }
            PickleValue::Tuple(id) => self.load_node(Node::Tuple(*id), expected)?,
            PickleValue::List(id) => self.load_node(Node::List(*id), expected)?,
            PickleValue::Dict(id) => self.load_node(Node::Dict(*id), expected)?,
            PickleValue::Object(id) => self.load_node(Node::Object(*id), expected)?,
        };
        if let Some(expected) = expected {
            self.check_type(&loaded.ty, expected)?;
        }
        Ok(loaded)
    }

    // ----- errors -----

    fn invalid(&self, message: impl std::fmt::Display) -> SerializeError {
        SerializeError::invalid(&self.record, message)
    }

    fn unsupported(&self, what: impl std::fmt::Display) -> SerializeError {
        SerializeError::unsupported(&self.record, what)
    }

    fn check_type(&self, actual: &TypeRef, expected: &TypeRef) -> Result<()> {
        if is_subtype(actual, expected) {
            Ok(())
        } else {
            Err(self.invalid(format!(
                "a value of type {} is tagged as {}",
                annotation_str(actual),
                annotation_str(expected)
            )))
        }
    }

    // ----- nodes with identity -----

    fn load_node(&mut self, node: Node, expected: Option<&TypeRef>) -> Result<Loaded> {
        if let Some(done) = self.memo.get(&node) {
            return Ok(done.clone());
        }
        if self.depth >= MAX_NESTING {
            return Err(
                self.unsupported(format!("values nested more than {MAX_NESTING} levels deep"))
            );
        }
        if !self.in_progress.insert(node) {
            return Err(self.unsupported(
                "a recursive structure (a container or object that contains itself)",
            ));
        }
        self.depth += 1;
        let result = match node {
            Node::Tuple(id) => self.load_tuple(id, expected),
            Node::List(id) => {
                let items = self.tree.list(id);
                self.make_list(items, expected)
            }
            Node::Dict(id) => {
                let entries = self.tree.dict(id);
                self.make_dict(entries.iter().map(|(k, v)| (k, v)), expected)
            }
            Node::Object(id) => self.load_object(id, expected),
        };
        self.depth -= 1;
        self.in_progress.remove(&node);
        let loaded = result?;
        self.memo.insert(node, loaded.clone());
        Ok(loaded)
    }

    fn load_tuple(&mut self, id: TupleId, expected: Option<&TypeRef>) -> Result<Loaded> {
        let items = self.tree.tuple(id);
        let expected_tuple = expected.and_then(|e| narrow(e, |t| matches!(t, Type::Tuple(_))));
        let element_hints: Option<Vec<TypeRef>> = match expected_tuple.as_deref() {
            Some(Type::Tuple(tt)) if tt.elements.len() == items.len() => Some(tt.elements.clone()),
            _ => None,
        };
        let mut values = Vec::with_capacity(items.len());
        let mut types = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let hint = element_hints.as_ref().and_then(|h| h.get(i));
            let l = self.load_typed(item, hint)?;
            values.push(l.value);
            types.push(l.ty);
        }
        let named =
            expected_tuple.filter(|t| matches!(&**t, Type::Tuple(tt) if tt.names.is_some()));
        let ty = match &named {
            Some(n) => n.clone(),
            None => self.types.tuple(types),
        };
        Ok(Loaded {
            value: IValue::Tuple(Arc::new(Tuple {
                elements: values,
                named_type: named,
            })),
            ty,
        })
    }

    fn make_list(&mut self, items: &[PickleValue], expected: Option<&TypeRef>) -> Result<Loaded> {
        let elem_hint = expected
            .and_then(|e| narrow(e, |t| matches!(t, Type::List(_))))
            .and_then(|t| match &*t {
                Type::List(e) => Some(e.clone()),
                _ => None,
            });
        let mut values = Vec::with_capacity(items.len());
        let mut types = Vec::with_capacity(items.len());
        for item in items {
            let l = self.load_typed(item, elem_hint.as_ref())?;
            values.push(l.value);
            types.push(l.ty);
        }
        let elem_type = match elem_hint {
            Some(e) => e,
            None => self.types.common_type(types.iter()),
        };
        let ty = self.types.list(&elem_type);
        Ok(Loaded {
            value: IValue::List(Arc::new(List {
                elem_type,
                items: RwLock::new(values),
            })),
            ty,
        })
    }

    fn make_dict<'p>(
        &mut self,
        entries: impl Iterator<Item = (&'p PickleValue, &'p PickleValue)>,
        expected: Option<&TypeRef>,
    ) -> Result<Loaded> {
        let hints = expected
            .and_then(|e| narrow(e, |t| matches!(t, Type::Dict(..))))
            .and_then(|t| match &*t {
                Type::Dict(k, v) => Some((k.clone(), v.clone())),
                _ => None,
            });
        let mut map = IndexMap::new();
        let mut key_types = Vec::new();
        let mut value_types = Vec::new();
        for (k, v) in entries {
            let key = self.load_typed(k, hints.as_ref().map(|h| &h.0))?;
            if !matches!(
                key.value,
                IValue::String(_)
                    | IValue::Int(_)
                    | IValue::Double(_)
                    | IValue::Bool(_)
                    | IValue::Tensor(_)
                    | IValue::Complex(_)
                    | IValue::Device(_)
                    | IValue::Enum(_)
            ) {
                return Err(
                    self.unsupported(format!("a dict key of type {}", annotation_str(&key.ty)))
                );
            }
            let value = self.load_typed(v, hints.as_ref().map(|h| &h.1))?;
            key_types.push(key.ty);
            value_types.push(value.ty);
            map.insert(DictKey(key.value), value.value);
        }
        let (key_type, value_type) = match hints {
            Some(h) => h,
            None => (
                self.types.common_type(key_types.iter()),
                self.types.common_type(value_types.iter()),
            ),
        };
        let ty = self.types.dict(&key_type, &value_type);
        Ok(Loaded {
            value: IValue::Dict(Arc::new(Dict {
                key_type,
                value_type,
                entries: RwLock::new(map),
            })),
            ty,
        })
    }

    // ----- globals -----

    fn known(&self, g: &GlobalName) -> Result<KnownGlobal> {
        classify(g).ok_or_else(|| SerializeError::UnknownGlobal {
            record: self.record.clone(),
            module: g.module.clone(),
            name: g.name.clone(),
        })
    }

    /// A global used as a plain value: only dtypes and quantization schemes have one (their
    /// ScalarType/QScheme number, which is how TorchScript represents them).
    fn load_bare_global(&mut self, g: &GlobalName) -> Result<Loaded> {
        match self.known(g)? {
            KnownGlobal::Dtype(ElementKind::Supported(d)) => Ok(Loaded {
                value: IValue::Int(d.scalar_type_index()),
                ty: self.types.int.clone(),
            }),
            KnownGlobal::Dtype(ElementKind::Unsupported(name)) => {
                Err(self.unsupported(format!("dtype torch.{name}")))
            }
            KnownGlobal::QScheme(q) => Ok(Loaded {
                value: IValue::Int(q),
                ty: self.types.int.clone(),
            }),
            _ => Err(self.invalid(format!("the global {g} cannot be used as a value"))),
        }
    }

    fn load_object(&mut self, id: ObjectId, expected: Option<&TypeRef>) -> Result<Loaded> {
        let tree = self.tree;
        let obj = tree
            .object(id)
            .ok_or_else(|| self.invalid("reference to a missing object"))?;
        let PickleValue::Global(g) = obj.callee() else {
            return Err(self.invalid(format!(
                "REDUCE/NEWOBJ applied to a {} instead of a global",
                obj.callee().kind_name()
            )));
        };
        let known = self.known(g)?;
        if let KnownGlobal::UserType(name) = known {
            return self.load_user_object(&name, obj);
        }
        if matches!(
            known,
            KnownGlobal::LegacyTensorId | KnownGlobal::LegacyIntList
        ) {
            return self.load_legacy_object(g, &known, obj);
        }
        let args = self.args_of(obj)?;
        let is_newobj = matches!(obj.construction, Construction::NewObj { .. });
        match known {
            // A BUILD state on an OrderedDict sets Python attributes (`state_dict()` carries
            // `_metadata` this way); TorchScript dicts have none, so it is not loaded.
            KnownGlobal::OrderedDict if !is_newobj => {
                return self.load_ordered_dict(obj, args, expected)
            }
            _ => {}
        }
        if !obj.list_items.is_empty() || !obj.dict_items.is_empty() || obj.state.is_some() {
            return Err(self.invalid(format!(
                "unexpected BUILD/APPENDS/SETITEMS applied to the result of {g}"
            )));
        }
        if is_newobj {
            return Err(self.invalid(format!("NEWOBJ of {g}, which is not a class")));
        }
        self.apply(g, known, args)
    }

    /// The marker objects of the legacy `attributes.pkl`: `TensorID` (BUILD with a tensor table
    /// index) and `IntList` (BUILD with a list of ints), both made by NEWOBJ with no arguments.
    fn load_legacy_object(
        &mut self,
        g: &GlobalName,
        known: &KnownGlobal,
        obj: &'t PickleObject,
    ) -> Result<Loaded> {
        let no_args = self.args_of(obj)?.is_empty();
        if !matches!(obj.construction, Construction::NewObj { .. }) || !no_args {
            return Err(self.invalid(format!("{g} must be built by NEWOBJ with no arguments")));
        }
        if !obj.list_items.is_empty() || !obj.dict_items.is_empty() {
            return Err(self.invalid(format!("APPENDS/SETITEMS applied to a {g} object")));
        }
        let Some(state) = &obj.state else {
            return Err(self.invalid(format!("the {g} object has no state (no BUILD)")));
        };
        match known {
            KnownGlobal::LegacyTensorId => {
                let PickleValue::Int(id) = state else {
                    return Err(self.invalid(format!("{g}: the state is not a tensor index")));
                };
                match self.hooks.tensor_from_id(*id)? {
                    Some(t) => Ok(self.tensor(t)),
                    None => Err(self.unsupported(format!(
                        "{g} (tensors by id need a tensor table, which this file has none of)"
                    ))),
                }
            }
            _ => {
                if !matches!(state, PickleValue::List(_)) {
                    return Err(self.invalid(format!("{g}: the state is not a list")));
                }
                let ty = self.types.list(&self.types.int.clone());
                self.load_typed(state, Some(&ty))
            }
        }
    }

    /// The argument tuple of a REDUCE or NEWOBJ.
    fn args_of(&self, obj: &'t PickleObject) -> Result<&'t [PickleValue]> {
        self.tree.as_tuple(obj.args()).ok_or_else(|| {
            self.invalid(format!(
                "the arguments of {} are a {}, not a tuple",
                self.tree.describe(obj.callee()),
                obj.args().kind_name()
            ))
        })
    }

    /// Applies an allow-listed function to its arguments.
    fn apply(
        &mut self,
        g: &GlobalName,
        known: KnownGlobal,
        args: &'t [PickleValue],
    ) -> Result<Loaded> {
        use KnownGlobal as K;
        match known {
            K::RebuildTensor | K::RebuildTensorV2 | K::RebuildTensorV3 => {
                let t = self.rebuild_tensor(&known, args)?;
                Ok(self.tensor(t))
            }
            K::RebuildQTensor => {
                let t = self.rebuild_qtensor(args)?;
                Ok(self.tensor(t))
            }
            K::RebuildParameter | K::RebuildParameterWithState => {
                let [data, requires_grad, ..] = args else {
                    return Err(self.arity(g, "at least 2", args.len()));
                };
                let tensor = self.expect_tensor(data, g)?;
                let requires_grad = self.expect_bool(requires_grad, g)?;
                // A parameter is a new tensor object sharing the data's storage.
                let m = tensor.meta_snapshot();
                let param = Tensor::from_parts(m.storage, &m.sizes, &m.strides, m.offset, m.dtype)
                    .map_err(|e| self.invalid(format!("{g}: {}", e.message)))?;
                param.set_requires_grad(requires_grad);
                Ok(self.tensor(param))
            }
            K::RebuildFromTypeV2 => {
                let [func, new_type, inner_args, state] = args else {
                    return Err(self.arity(g, "4", args.len()));
                };
                match new_type {
                    PickleValue::Global(t) if self.known(t)? == K::TensorClass => {}
                    other => {
                        return Err(self
                            .unsupported(format!("tensor subclass {}", self.tree.describe(other))))
                    }
                }
                let state_is_empty = match state {
                    PickleValue::None => true,
                    PickleValue::Dict(d) => self.tree.dict(*d).is_empty(),
                    _ => false,
                };
                if !state_is_empty {
                    return Err(self.unsupported("tensors with Python attributes"));
                }
                let PickleValue::Global(f) = func else {
                    return Err(self.invalid(format!("{g}: the function is not a global")));
                };
                let f_known = self.known(f)?;
                if !matches!(
                    f_known,
                    K::RebuildTensor
                        | K::RebuildTensorV2
                        | K::RebuildTensorV3
                        | K::RebuildParameter
                        | K::RebuildParameterWithState
                        | K::RebuildQTensor
                        | K::UnsupportedTensor(_)
                ) {
                    return Err(self.invalid(format!("{g}: {f} is not a tensor rebuild function")));
                }
                let inner = self
                    .tree
                    .as_tuple(inner_args)
                    .ok_or_else(|| self.invalid(format!("{g}: the arguments are not a tuple")))?;
                self.apply(f, f_known, inner)
            }
            K::UnsupportedTensor(what) => Err(self.unsupported(what)),
            K::UnsupportedValue(what) => Err(self.unsupported(what)),
            // OrderedDict REDUCEs are routed to `load_ordered_dict` before `apply`.
            K::OrderedDict => Err(self.invalid("collections.OrderedDict used with NEWOBJ")),
            K::Complex => {
                let [re, im] = args else {
                    return Err(self.arity(g, "2", args.len()));
                };
                let re = self.expect_number(re, g)?;
                let im = self.expect_number(im, g)?;
                Ok(Loaded {
                    value: IValue::Complex(Arc::new((re, im))),
                    ty: self.types.complex.clone(),
                })
            }
            K::Device => {
                let device = match args {
                    [PickleValue::Str(s)] => Device::parse(s),
                    [PickleValue::Str(s), PickleValue::Int(i)] if s.as_str() == "cuda" => {
                        u8::try_from(*i).ok().map(|i| Device::Cuda(Some(i)))
                    }
                    [PickleValue::Str(s), PickleValue::None] => Device::parse(s),
                    _ => return Err(self.invalid(format!("{g}: malformed arguments"))),
                };
                let device = device.ok_or_else(|| {
                    self.unsupported(format!("the device {}", self.tree.describe(&args[0])))
                })?;
                Ok(Loaded {
                    value: IValue::Device(device),
                    ty: self.types.device.clone(),
                })
            }
            K::Size => {
                let [dims] = args else {
                    return Err(self.arity(g, "1", args.len()));
                };
                let dims = self.int_sequence(dims, "torch.Size")?;
                let int = self.types.int.clone();
                let ty = self.types.tuple(vec![int; dims.len()]);
                Ok(Loaded {
                    value: IValue::Tuple(Arc::new(Tuple {
                        elements: dims.into_iter().map(IValue::Int).collect(),
                        named_type: None,
                    })),
                    ty,
                })
            }
            K::RestoreTypeTag => {
                let [container, PickleValue::Str(tag)] = args else {
                    return Err(
                        self.invalid(format!("{g}: expected (container, type string) arguments"))
                    );
                };
                let ty = self.parse_tag(tag)?;
                self.load_typed(container, Some(&ty))
            }
            K::BuildList(kind) => {
                let [list] = args else {
                    return Err(self.arity(g, "1", args.len()));
                };
                if !matches!(list, PickleValue::List(_)) {
                    return Err(self.invalid(format!("{g}: the argument is not a list")));
                }
                let elem = match kind {
                    SpecializedList::Int => self.types.int.clone(),
                    SpecializedList::Double => self.types.float.clone(),
                    SpecializedList::Bool => self.types.bool_.clone(),
                    SpecializedList::Tensor => self.types.tensor.clone(),
                };
                let ty = self.types.list(&elem);
                self.load_typed(list, Some(&ty))
            }
            K::BuildTensorFromId => {
                let [PickleValue::Int(id)] = args else {
                    return Err(self.invalid(format!("{g}: expected one int argument")));
                };
                match self.hooks.tensor_from_id(*id)? {
                    Some(t) => Ok(self.tensor(t)),
                    None => Err(self.unsupported(format!(
                        "{g} (tensors by id need a tensor table, which this file has none of)"
                    ))),
                }
            }
            K::UserType(_)
            | K::LegacyTensorId
            | K::LegacyIntList
            | K::TensorClass
            | K::Storage(_)
            | K::Dtype(_)
            | K::QScheme(_) => Err(self.invalid(format!("the global {g} cannot be called"))),
        }
    }

    fn load_ordered_dict(
        &mut self,
        obj: &'t PickleObject,
        args: &'t [PickleValue],
        expected: Option<&TypeRef>,
    ) -> Result<Loaded> {
        if !obj.list_items.is_empty() {
            return Err(self.invalid("APPENDS applied to an OrderedDict"));
        }
        let mut entries: Vec<(&PickleValue, &PickleValue)> = Vec::new();
        match args {
            [] => {}
            [PickleValue::List(l)] => {
                for pair in self.tree.list(*l) {
                    match self.tree.as_tuple(pair) {
                        Some([k, v]) => entries.push((k, v)),
                        _ => {
                            return Err(
                                self.invalid("OrderedDict items must be (key, value) tuples")
                            )
                        }
                    }
                }
            }
            _ => return Err(self.invalid("malformed arguments of collections.OrderedDict")),
        }
        entries.extend(obj.dict_items.iter().map(|(k, v)| (k, v)));
        self.make_dict(entries.into_iter(), expected)
    }

    // ----- user types (archives) -----

    fn resolve(&mut self, name: &str) -> Result<TypeRef> {
        match self.hooks.resolve_type(name)? {
            Some(t) => Ok(self.types.nominal(t)),
            None => Err(self.unsupported(format!(
                "the TorchScript type {name} (user types only load from torch.jit.save archives)"
            ))),
        }
    }

    fn parse_tag(&mut self, tag: &str) -> Result<TypeRef> {
        let mut types = std::mem::take(&mut self.types);
        let hooks = &mut *self.hooks;
        let mut failure: Option<SerializeError> = None;
        let mut resolve =
            |name: &str, table: &mut TypeTable| -> std::result::Result<TypeRef, String> {
                match hooks.resolve_type(name) {
                    Ok(Some(t)) => Ok(table.nominal(t)),
                    Ok(None) => Err(format!("unknown type {name}")),
                    Err(e) => {
                        let msg = e.to_string();
                        failure = Some(e);
                        Err(msg)
                    }
                }
            };
        let parsed = parse_type_tag(tag, &mut types, &mut resolve);
        self.types = types;
        if let Some(e) = failure {
            return Err(e);
        }
        parsed.map_err(|m| self.invalid(format!("bad type tag '{tag}': {m}")))
    }

    fn load_user_object(&mut self, name: &str, obj: &'t PickleObject) -> Result<Loaded> {
        let ty = self.resolve(name)?;
        if !obj.list_items.is_empty() || !obj.dict_items.is_empty() {
            return Err(self.invalid(format!("APPENDS/SETITEMS applied to a {name} object")));
        }
        match (&obj.construction, &*ty) {
            (Construction::NewObj { .. }, Type::Class(class)) => {
                let Some(state) = &obj.state else {
                    return Err(self.invalid(format!("the {name} object has no state (no BUILD)")));
                };
                let state = self.load(state)?;
                let class = class.clone();
                let value = self.hooks.build_object(&class, state)?;
                Ok(Loaded { value, ty })
            }
            (Construction::Reduce { args, .. }, Type::Enum(enum_type)) => {
                // TorchScript's pickler applies the enum class to the bare value; Python would
                // pass a one-element tuple. Both are accepted.
                let raw = match self.tree.as_tuple(args) {
                    Some([raw]) => raw,
                    Some(other) => return Err(self.arity_named(name, "1", other.len())),
                    None => args,
                };
                if obj.state.is_some() {
                    return Err(self.invalid(format!("BUILD applied to a {name} enum value")));
                }
                let raw = self.load(raw)?;
                let member = enum_type
                    .members
                    .iter()
                    .find(|(_, v)| same_scalar(v, &raw))
                    .ok_or_else(|| {
                        self.invalid(format!("{raw:?} is not a value of the enum {name}"))
                    })?;
                let value = IValue::Enum(Arc::new(EnumValue {
                    enum_type: enum_type.clone(),
                    name: member.0.clone(),
                    value: member.1.clone(),
                }));
                Ok(Loaded { value, ty })
            }
            _ => Err(self.unsupported(format!(
                "constructing the type {name} ({}) this way",
                annotation_str(&ty)
            ))),
        }
    }

    // ----- argument helpers -----

    fn arity(&self, g: &GlobalName, wanted: &str, got: usize) -> SerializeError {
        self.arity_named(&g.to_string(), wanted, got)
    }

    fn arity_named(&self, name: &str, wanted: &str, got: usize) -> SerializeError {
        self.invalid(format!("{name} takes {wanted} argument(s), got {got}"))
    }

    fn expect_tensor(&mut self, v: &PickleValue, g: &GlobalName) -> Result<Tensor> {
        match self.load(v)? {
            IValue::Tensor(t) => Ok(t),
            other => Err(self.invalid(format!("{g}: expected a tensor, got {other:?}"))),
        }
    }

    fn expect_bool(&self, v: &PickleValue, g: &GlobalName) -> Result<bool> {
        self.expect_bool_named(v, &g.to_string())
    }

    fn expect_bool_named(&self, v: &PickleValue, name: &str) -> Result<bool> {
        match v {
            PickleValue::Bool(b) => Ok(*b),
            PickleValue::Int(i) => Ok(*i != 0),
            other => Err(self.invalid(format!(
                "{name}: expected a bool, got {}",
                self.tree.describe(other)
            ))),
        }
    }

    fn expect_number(&self, v: &PickleValue, g: &GlobalName) -> Result<f64> {
        match v {
            PickleValue::Float(f) => Ok(*f),
            PickleValue::Int(i) => Ok(*i as f64),
            other => Err(self.invalid(format!(
                "{g}: expected a number, got {}",
                self.tree.describe(other)
            ))),
        }
    }

    /// A tuple or list of ints (tensor sizes and strides), or a `torch.Size` of one.
    fn int_sequence(&self, v: &PickleValue, what: &str) -> Result<Vec<i64>> {
        let items: &[PickleValue] = match v {
            PickleValue::Tuple(id) => self.tree.tuple(*id),
            PickleValue::List(id) => self.tree.list(*id),
            PickleValue::Object(id) => {
                let obj = self
                    .tree
                    .object(*id)
                    .ok_or_else(|| self.invalid("reference to a missing object"))?;
                let is_size = matches!(obj.callee(), PickleValue::Global(g)
                    if classify(g) == Some(KnownGlobal::Size));
                match (is_size, self.tree.as_tuple(obj.args())) {
                    (true, Some([inner])) => return self.int_sequence(inner, what),
                    _ => {
                        return Err(self.invalid(format!(
                            "{what} is {}, not a tuple of ints",
                            self.tree.describe(v)
                        )))
                    }
                }
            }
            other => {
                return Err(self.invalid(format!(
                    "{what} is {}, not a tuple of ints",
                    self.tree.describe(other)
                )))
            }
        };
        items
            .iter()
            .map(|x| match x {
                PickleValue::Int(i) => Ok(*i),
                other => Err(self.invalid(format!(
                    "{what} contains {}, not an int",
                    self.tree.describe(other)
                ))),
            })
            .collect()
    }
}

/// Narrows an expected type to the member of an `Optional`/`Union` that `kind` accepts.
fn narrow(expected: &TypeRef, kind: impl Fn(&Type) -> bool + Copy) -> Option<TypeRef> {
    match &**expected {
        t if kind(t) => Some(expected.clone()),
        Type::Optional(inner) => narrow(inner, kind),
        Type::Union(members) => members.iter().find_map(|m| narrow(m, kind)),
        _ => None,
    }
}

/// Equality of enum values (ints, floats, strings).
fn same_scalar(a: &IValue, b: &IValue) -> bool {
    match (a, b) {
        (IValue::Int(x), IValue::Int(y)) => x == y,
        (IValue::Double(x), IValue::Double(y)) => x == y,
        (IValue::String(x), IValue::String(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcodes as op;
    use crate::pickler::Pickler;
    use crate::unpickler::unpickle;
    use ts_core::types::{NamedTupleInfo, TupleType};
    use ts_tensor::DType;

    /// Storages are `key -> bytes`; user types come from a fixed table.
    #[derive(Default)]
    struct Hooks {
        storages: HashMap<String, Vec<u8>>,
        big_endian: bool,
        types: HashMap<String, TypeRef>,
        tensors: Vec<Tensor>,
    }

    impl LoadHooks for Hooks {
        fn read_storage(&mut self, key: &str, _nbytes: usize) -> Result<Vec<u8>> {
            self.storages
                .get(key)
                .cloned()
                .ok_or_else(|| SerializeError::MissingRecord(key.into()))
        }
        fn big_endian(&self) -> bool {
            self.big_endian
        }
        fn resolve_type(&mut self, name: &str) -> Result<Option<TypeRef>> {
            Ok(self.types.get(name).cloned())
        }
        fn tensor_from_id(&mut self, id: i64) -> Result<Option<Tensor>> {
            Ok(usize::try_from(id)
                .ok()
                .and_then(|i| self.tensors.get(i).cloned()))
        }
    }

    fn load(pickle: Vec<u8>, hooks: &mut Hooks) -> Result<IValue> {
        let tree = unpickle(&pickle, "test.pkl")?;
        load_pickle(&tree, "test.pkl", hooks)
    }

    /// `_rebuild_tensor_v3(UntypedStorage key '0' of `nbytes`, 0, (n,), (1,), False, {}, dtype)`.
    fn v3_pickle(p: &mut Pickler, nbytes: i64, n: i64, dtype: &str) {
        p.global("torch._utils", "_rebuild_tensor_v3");
        p.tuple_start(7);
        p.tuple_start(5);
        p.str("storage");
        p.global("torch.storage", "UntypedStorage");
        p.str("0");
        p.str("cpu");
        p.int(nbytes);
        p.tuple_end(5);
        p.opcode(op::BINPERSID);
        p.int(0);
        p.int(n);
        p.tuple_end(1);
        p.int(1);
        p.tuple_end(1);
        p.bool(false);
        p.opcode(op::EMPTY_DICT);
        p.global("torch", dtype);
        p.tuple_end(7);
        p.opcode(op::REDUCE);
    }

    #[test]
    fn untyped_storages_take_the_tensor_dtype() {
        let mut p = Pickler::new();
        v3_pickle(&mut p, 8, 2, "float32");
        let mut hooks = Hooks::default();
        let bytes: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        hooks.storages.insert("0".into(), bytes);
        let IValue::Tensor(t) = load(p.finish(), &mut hooks).unwrap() else {
            panic!()
        };
        assert_eq!(t.dtype(), DType::Float32);
        assert_eq!(t.to_vec::<f32>(), [1.5, -2.0]);

        // The same bytes stored big-endian.
        let mut p = Pickler::new();
        v3_pickle(&mut p, 8, 2, "float");
        let bytes: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|f| f.to_be_bytes())
            .collect();
        hooks.storages.insert("0".into(), bytes);
        hooks.big_endian = true;
        let IValue::Tensor(t) = load(p.finish(), &mut hooks).unwrap() else {
            panic!()
        };
        assert_eq!(t.to_vec::<f32>(), [1.5, -2.0]);
    }

    #[test]
    fn one_storage_viewed_as_two_dtypes_is_refused() {
        let mut p = Pickler::new();
        p.tuple_start(2);
        v3_pickle(&mut p, 8, 2, "float32");
        v3_pickle(&mut p, 8, 1, "int64");
        p.tuple_end(2);
        let mut hooks = Hooks::default();
        hooks.storages.insert("0".into(), vec![0; 8]);
        let err = load(p.finish(), &mut hooks).unwrap_err().to_string();
        assert!(
            err.contains("both as torch.float32 and as torch.int64"),
            "{err}"
        );
    }

    #[test]
    fn tensor_tables() {
        let mut p = Pickler::new();
        p.global("torch.jit._pickle", "build_tensor_from_id");
        p.int(0);
        p.tuple_end(1);
        p.opcode(op::REDUCE);
        let pickle = p.finish();
        let err = load(pickle.clone(), &mut Hooks::default()).unwrap_err();
        assert!(err.to_string().contains("tensor table"), "{err}");
        let mut hooks = Hooks::default();
        let t = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
        hooks.tensors.push(t.clone());
        let IValue::Tensor(got) = load(pickle, &mut hooks).unwrap() else {
            panic!()
        };
        assert!(Tensor::is_same(&got, &t));
    }

    #[test]
    fn type_tags_with_user_types_and_named_tuples() {
        let point = Arc::new(Type::Tuple(TupleType {
            elements: vec![Type::int(), Type::float()],
            names: Some(NamedTupleInfo {
                qualified_name: "__torch__.Point".into(),
                fields: vec!["x".into(), "y".into()],
                defaults: vec![],
            }),
        }));
        let mut hooks = Hooks::default();
        hooks.types.insert("__torch__.Point".into(), point.clone());
        let mut p = Pickler::new();
        p.global("torch.jit._pickle", "restore_type_tag");
        p.opcode(op::EMPTY_LIST);
        p.int(1);
        p.float(2.0);
        p.tuple_end(2);
        p.opcode(op::APPEND);
        p.str("List[__torch__.Point]");
        p.tuple_end(2);
        p.opcode(op::REDUCE);
        let IValue::List(l) = load(p.finish(), &mut hooks).unwrap() else {
            panic!()
        };
        assert!(Arc::ptr_eq(&l.elem_type, &point));
        let IValue::Tuple(t) = &l.items.read()[0] else {
            panic!()
        };
        assert!(t
            .named_type
            .as_ref()
            .is_some_and(|n| Arc::ptr_eq(n, &point)));

        // Unknown user types in tags are errors naming them.
        let mut p = Pickler::new();
        p.global("torch.jit._pickle", "restore_type_tag");
        p.opcode(op::EMPTY_LIST);
        p.str("List[__torch__.Missing]");
        p.tuple_end(2);
        p.opcode(op::REDUCE);
        let err = load(p.finish(), &mut Hooks::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("__torch__.Missing"), "{err}");
    }

    #[test]
    fn devices_dtypes_and_tensor_subclass_wrappers() {
        let mut p = Pickler::new();
        p.tuple_start(3);
        p.global("torch", "device");
        p.str("cuda");
        p.int(1);
        p.tuple_end(2);
        p.opcode(op::REDUCE);
        p.global("torch", "bfloat16");
        // _rebuild_from_type_v2(_rebuild_tensor_v3, torch.Tensor, (args...), {})
        p.global("torch._tensor", "_rebuild_from_type_v2");
        p.tuple_start(4);
        p.global("torch._utils", "_rebuild_tensor_v3");
        p.global("torch", "Tensor");
        p.tuple_start(7);
        p.tuple_start(5);
        p.str("storage");
        p.global("torch.storage", "UntypedStorage");
        p.str("0");
        p.str("cpu");
        p.int(2);
        p.tuple_end(5);
        p.opcode(op::BINPERSID);
        p.int(0);
        p.int(1);
        p.tuple_end(1);
        p.int(1);
        p.tuple_end(1);
        p.bool(true);
        p.opcode(op::EMPTY_DICT);
        p.global("torch", "int16");
        p.tuple_end(7);
        p.opcode(op::EMPTY_DICT);
        p.tuple_end(4);
        p.opcode(op::REDUCE);
        p.tuple_end(3);
        let mut hooks = Hooks::default();
        hooks
            .storages
            .insert("0".into(), 7i16.to_le_bytes().to_vec());
        let IValue::Tuple(t) = load(p.finish(), &mut hooks).unwrap() else {
            panic!()
        };
        assert!(matches!(
            t.elements[0],
            IValue::Device(Device::Cuda(Some(1)))
        ));
        assert!(matches!(t.elements[1], IValue::Int(15)));
        let IValue::Tensor(x) = &t.elements[2] else {
            panic!()
        };
        assert_eq!(x.dtype(), DType::Int16);
        assert_eq!(x.to_vec::<i64>(), [7]);
        assert!(x.requires_grad());
    }
}
