//! The legacy TorchScript archive format (PyTorch 1.0 to 1.2, the spec's "Serialization"
//! chapter): `model.json` describes the module tree (a `torch.ModelDef` protobuf in JSON form),
//! `tensors/<n>` hold raw storages described by the JSON tensor table, `attributes.pkl` holds
//! every non-tensor attribute in one pickled list (tensors in it are `__main__.TensorID` table
//! indices, `List[int]`s are `__main__.IntList`s), and each module's methods are Python-printed
//! into the record its `torchscriptArena` names.
//!
//! Each module becomes a class of its own: its declaration (parameters, buffers, attributes,
//! submodules) is synthesized from `model.json` around the printed methods and compiled with
//! the same archive-mode frontend as modern archives, so `CONSTANTS.c<n>` (the tensor table)
//! and `ops.*` resolve the same way.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::RwLock;
use serde::Deserialize;
use ts_core::{IValue, Object, Source, Type};
use ts_tensor::{DType, Storage, Tensor};

use crate::archive::Archive;
use crate::error::{Result, SerializeError};
use crate::module_import::{compile_sources, LoadedModule};
use crate::value_loader::{load_pickle, LoadHooks};

/// The record that marks a legacy archive.
pub const MODEL_JSON: &str = "model.json";
/// How deeply modules may nest; deeper trees are refused rather than risking the stack.
const MAX_MODULE_DEPTH: usize = 100;

/// `int64` fields: protobuf's JSON mapping writes them as strings, older writers as numbers.
#[derive(Deserialize, Clone, Copy, Debug)]
#[serde(untagged)]
enum JsonInt {
    Number(i64),
    Text(#[serde(deserialize_with = "int_from_str")] i64),
}

fn int_from_str<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<i64, D::Error> {
    let s = String::deserialize(d)?;
    s.trim().parse().map_err(serde::de::Error::custom)
}

impl JsonInt {
    fn get(self) -> i64 {
        match self {
            JsonInt::Number(n) | JsonInt::Text(n) => n,
        }
    }
}

/// `caffe2.TensorProto.DataType`, by name or number.
#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
enum DataType {
    Name(String),
    Code(i64),
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct RecordRef {
    key: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct TensorDef {
    #[serde(default)]
    dims: Vec<JsonInt>,
    offset: Option<JsonInt>,
    #[serde(default)]
    strides: Vec<JsonInt>,
    #[serde(default)]
    requires_grad: bool,
    data_type: Option<DataType>,
    data: RecordRef,
    device: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct ParameterDef {
    #[serde(default)]
    is_buffer: bool,
    tensor_id: JsonInt,
    name: String,
}

#[derive(Deserialize, Debug)]
struct AttributeDef {
    #[serde(rename = "type")]
    ty: String,
    name: String,
    id: JsonInt,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct ModuleDef {
    #[serde(default)]
    submodules: Vec<ModuleDef>,
    torchscript_arena: Option<RecordRef>,
    #[serde(default)]
    parameters: Vec<ParameterDef>,
    name: Option<String>,
    #[serde(default)]
    attributes: Vec<AttributeDef>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct ModelDef {
    main_module: ModuleDef,
    #[serde(default)]
    tensors: Vec<TensorDef>,
}

/// True when `archive` is in the legacy `model.json` format.
pub fn is_legacy(archive: &Archive) -> bool {
    archive.has_record(MODEL_JSON)
}

/// Loads a legacy archive as a runnable module.
pub fn load_legacy(mut archive: Archive) -> Result<LoadedModule> {
    let text = archive.read_text(MODEL_JSON)?;
    let model: ModelDef = serde_json::from_str(&text).map_err(|e| {
        SerializeError::invalid(MODEL_JSON, format!("not a model description: {e}"))
    })?;
    let version = match archive.has_record("version") {
        true => {
            let v = archive.read_text("version")?;
            v.trim().parse().map_err(|_| {
                SerializeError::invalid(
                    "version",
                    format!("'{}' is not a version number", v.trim()),
                )
            })?
        }
        false => 1,
    };
    let tensors = load_tensor_table(&mut archive, &model.tensors)?;
    let attributes = load_attributes(&mut archive, &tensors)?;

    let mut classes = Vec::new();
    let root_name = class_name_part(model.main_module.name.as_deref().unwrap_or("Module"));
    declare_classes(
        &mut archive,
        &model.main_module,
        &format!("__torch__.{root_name}"),
        0,
        &mut classes,
    )?;
    let files: Vec<(String, Arc<Source>)> = classes
        .into_iter()
        .map(|(record, text)| ("__torch__".to_string(), Source::new(text, Some(record), 1)))
        .collect();
    let cu = compile_sources(&files, tensors.clone())?;
    crate::op_upgrade::upgrade_operators(&cu, version);
    let module = build_module(
        &cu,
        &model.main_module,
        &format!("__torch__.{root_name}"),
        &tensors,
        &attributes,
    )?;
    Ok(LoadedModule {
        module,
        cu,
        version,
    })
}

/// The element type of a tensor table entry.
fn dtype_of(d: &Option<DataType>) -> Result<DType> {
    let bad = |what: String| SerializeError::unsupported(MODEL_JSON, what);
    Ok(match d {
        None => DType::Float32,
        Some(DataType::Name(n)) => match n.as_str() {
            "FLOAT" => DType::Float32,
            "DOUBLE" => DType::Float64,
            "FLOAT16" => DType::Float16,
            "BFLOAT16" => DType::BFloat16,
            "INT64" => DType::Int64,
            "INT32" => DType::Int32,
            "INT16" => DType::Int16,
            "INT8" => DType::Int8,
            "UINT8" | "BYTE" => DType::UInt8,
            "BOOL" => DType::Bool,
            other => return Err(bad(format!("tensors of data type {other}"))),
        },
        Some(DataType::Code(c)) => match c {
            1 => DType::Float32,
            2 => DType::Int32,
            3 | 6 => DType::UInt8,
            5 => DType::Bool,
            7 => DType::Int8,
            9 => DType::Int16,
            10 => DType::Int64,
            12 => DType::Float16,
            13 => DType::Float64,
            other => return Err(bad(format!("tensors of data type number {other}"))),
        },
    })
}

/// Reads every tensor of the table; tensors naming the same record share its storage.
fn load_tensor_table(archive: &mut Archive, defs: &[TensorDef]) -> Result<Vec<IValue>> {
    let mut storages: HashMap<String, (Storage, DType)> = HashMap::new();
    let mut out = Vec::with_capacity(defs.len());
    for (i, def) in defs.iter().enumerate() {
        let at = format!("{MODEL_JSON} tensor {i}");
        if let Some(device) = &def.device {
            if device != "cpu" {
                return Err(SerializeError::unsupported(
                    &at,
                    format!("tensors on device '{device}' (only cpu tensors load here)"),
                ));
            }
        }
        let dtype = dtype_of(&def.data_type)?;
        let sizes: Vec<i64> = def.dims.iter().map(|d| d.get()).collect();
        let strides: Vec<i64> = def.strides.iter().map(|d| d.get()).collect();
        if sizes.iter().any(|&s| s < 0) {
            return Err(SerializeError::invalid(
                &at,
                format!("negative size {sizes:?}"),
            ));
        }
        let offset = def.offset.map_or(0, JsonInt::get);
        let offset = usize::try_from(offset)
            .map_err(|_| SerializeError::invalid(&at, format!("negative offset {offset}")))?;
        let key = def.data.key.clone();
        let storage = match storages.get(&key) {
            Some((s, d)) if *d == dtype => s.clone(),
            Some((_, d)) => {
                return Err(SerializeError::invalid(
                    &key,
                    format!("the storage is described both as {d} and as {dtype}"),
                ))
            }
            None => {
                let bytes = archive.read_record(&key)?;
                if bytes.len() % dtype.size() != 0 {
                    return Err(SerializeError::invalid(
                        &key,
                        format!(
                            "the record holds {} bytes, not a whole number of {dtype} elements",
                            bytes.len()
                        ),
                    ));
                }
                let s = Storage::from_bytes(&bytes)
                    .map_err(|e| SerializeError::invalid(&key, e.message))?;
                storages.insert(key.clone(), (s.clone(), dtype));
                s
            }
        };
        // `from_parts` checks every reachable element against the record's real size.
        let t = Tensor::from_parts(storage, &sizes, &strides, offset, dtype)
            .map_err(|e| SerializeError::invalid(&at, format!("{} (record {key})", e.message)))?;
        t.set_requires_grad(def.requires_grad);
        out.push(IValue::Tensor(t));
    }
    Ok(out)
}

/// `attributes.pkl` resolves `TensorID`s against the tensor table.
struct TableHooks<'a> {
    tensors: &'a [IValue],
}

impl LoadHooks for TableHooks<'_> {
    fn read_storage(&mut self, key: &str, _nbytes: usize) -> Result<Vec<u8>> {
        Err(SerializeError::invalid(
            "attributes.pkl",
            format!(
                "unexpected tensor storage '{key}' (legacy attributes name tensors by TensorID)"
            ),
        ))
    }

    fn tensor_from_id(&mut self, id: i64) -> Result<Option<Tensor>> {
        let t = usize::try_from(id).ok().and_then(|i| self.tensors.get(i));
        match t {
            Some(IValue::Tensor(t)) => Ok(Some(t.clone())),
            _ => Err(SerializeError::invalid(
                "attributes.pkl",
                format!(
                    "TensorID {id} is not in the tensor table ({} tensors)",
                    self.tensors.len()
                ),
            )),
        }
    }
}

/// The list of attribute values (empty when the archive has no `attributes.pkl`).
fn load_attributes(archive: &mut Archive, tensors: &[IValue]) -> Result<Vec<IValue>> {
    if !archive.has_record("attributes.pkl") {
        return Ok(Vec::new());
    }
    let tree = archive.read_pickle("attributes.pkl")?;
    let value = load_pickle(&tree, "attributes.pkl", &mut TableHooks { tensors })?;
    match value {
        IValue::List(l) => Ok(l.items.read().clone()),
        other => Err(SerializeError::invalid(
            "attributes.pkl",
            format!(
                "expected a list of attributes, found a {}",
                other.tag_name()
            ),
        )),
    }
}

/// A module name as part of a class name: anything but `[A-Za-z0-9_]` becomes `_`.
fn class_name_part(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("m_{s}")
    } else {
        s
    }
}

/// Names come from the file: they must be plain attribute names to be declared.
fn check_member_name(name: &str, at: &str) -> Result<()> {
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(SerializeError::invalid(
            at,
            format!("'{name}' is not a valid attribute name"),
        ))
    }
}

/// A declaration line for member `name` of type `ty` (the `__annotations__` form for names that
/// are not identifiers, such as the `0` of a Sequential).
fn member_line(name: &str, ty: &str) -> String {
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("  __annotations__[\"{name}\"] = {ty}\n")
    } else {
        format!("  {name} : {ty}\n")
    }
}

/// Writes the class source of `def` (named `qualified`) and of its submodules into `out` as
/// (record, text) pairs. Method lines keep their line numbers in the arena record: the class
/// header replaces the `op_version_set` line and the declarations follow the methods.
fn declare_classes(
    archive: &mut Archive,
    def: &ModuleDef,
    qualified: &str,
    depth: usize,
    out: &mut Vec<(String, String)>,
) -> Result<()> {
    if depth > MAX_MODULE_DEPTH {
        return Err(SerializeError::invalid(
            MODEL_JSON,
            "modules nest too deeply",
        ));
    }
    let short = qualified.rsplit('.').next().unwrap_or(qualified);
    let header = format!("class {short}(Module):\n");
    let mut text = String::new();
    let record = match &def.torchscript_arena {
        Some(r) => {
            let code = archive.read_text(&r.key)?;
            for (i, line) in code.lines().enumerate() {
                // `op_version_set = N` heads each arena; it is not a class member. The class
                // header takes its place so that method lines keep their numbers.
                let skip =
                    line.trim_start().starts_with("op_version_set") || line.trim().is_empty();
                if i == 0 && skip {
                    text.push_str(&header);
                } else if skip {
                    text.push('\n');
                } else {
                    if i == 0 {
                        text.push_str(&header);
                    }
                    text.push_str("  ");
                    text.push_str(line);
                    text.push('\n');
                }
            }
            r.key.clone()
        }
        None => MODEL_JSON.to_string(),
    };
    if text.is_empty() {
        text.push_str(&header);
    }
    let quoted = |names: Vec<&str>| -> String {
        names
            .iter()
            .map(|n| format!("\"{n}\", "))
            .collect::<String>()
    };
    let params: Vec<&str> = def
        .parameters
        .iter()
        .filter(|p| !p.is_buffer)
        .map(|p| p.name.as_str())
        .collect();
    let buffers: Vec<&str> = def
        .parameters
        .iter()
        .filter(|p| p.is_buffer)
        .map(|p| p.name.as_str())
        .collect();
    text.push_str(&format!("  __parameters__ = [{}]\n", quoted(params)));
    text.push_str(&format!("  __buffers__ = [{}]\n", quoted(buffers)));
    let mut seen = HashSet::new();
    for p in &def.parameters {
        check_member_name(&p.name, MODEL_JSON)?;
        if !seen.insert(p.name.clone()) {
            return Err(SerializeError::invalid(
                MODEL_JSON,
                format!("'{}' is declared twice", p.name),
            ));
        }
        text.push_str(&member_line(&p.name, "Tensor"));
    }
    for a in &def.attributes {
        check_member_name(&a.name, MODEL_JSON)?;
        if !seen.insert(a.name.clone()) {
            return Err(SerializeError::invalid(
                MODEL_JSON,
                format!("'{}' is declared twice", a.name),
            ));
        }
        // The type is source text: it must parse as a type annotation and nothing more.
        ts_core::type_parser::parse_annotation(&a.ty, None).map_err(|e| {
            SerializeError::invalid(
                MODEL_JSON,
                format!("attribute '{}': bad type '{}': {e}", a.name, a.ty),
            )
        })?;
        text.push_str(&member_line(&a.name, &a.ty));
    }
    for sub in &def.submodules {
        let name = sub.name.as_deref().unwrap_or_default();
        check_member_name(name, MODEL_JSON)?;
        if !seen.insert(name.to_string()) {
            return Err(SerializeError::invalid(
                MODEL_JSON,
                format!("'{name}' is declared twice"),
            ));
        }
        let sub_class = format!("{qualified}_{}", class_name_part(name));
        text.push_str(&member_line(name, &sub_class));
        declare_classes(archive, sub, &sub_class, depth + 1, out)?;
    }
    out.push((record, text));
    Ok(())
}

/// Builds the module object of `def` (class `qualified`) and its submodules.
fn build_module(
    cu: &ts_ir::CompilationUnit,
    def: &ModuleDef,
    qualified: &str,
    tensors: &[IValue],
    attributes: &[IValue],
) -> Result<Arc<Object>> {
    let ty = cu.find_type(qualified).ok_or_else(|| {
        SerializeError::invalid(
            MODEL_JSON,
            format!("the module class {qualified} was not compiled"),
        )
    })?;
    let Type::Class(class) = &*ty else {
        return Err(SerializeError::invalid(
            MODEL_JSON,
            format!("{qualified} is not a class"),
        ));
    };
    let mut slots = vec![IValue::None; class.num_attributes()];
    let mut set = |name: &str, v: IValue| -> Result<()> {
        let i = class.attribute_index(name).ok_or_else(|| {
            SerializeError::invalid(MODEL_JSON, format!("{qualified} has no attribute '{name}'"))
        })?;
        slots[i] = v;
        Ok(())
    };
    for p in &def.parameters {
        let id = p.tensor_id.get();
        let t = usize::try_from(id)
            .ok()
            .and_then(|i| tensors.get(i))
            .ok_or_else(|| {
                SerializeError::invalid(
                    MODEL_JSON,
                    format!(
                        "parameter '{}' names tensor {id}, but the table has {}",
                        p.name,
                        tensors.len()
                    ),
                )
            })?;
        set(&p.name, t.clone())?;
    }
    for a in &def.attributes {
        let id = a.id.get();
        let v = usize::try_from(id)
            .ok()
            .and_then(|i| attributes.get(i))
            .ok_or_else(|| {
                SerializeError::invalid(
                    MODEL_JSON,
                    format!(
                        "attribute '{}' is number {id} of attributes.pkl, which holds {}",
                        a.name,
                        attributes.len()
                    ),
                )
            })?;
        let declared = class
            .attributes()
            .into_iter()
            .find(|c| c.name == a.name)
            .map(|c| c.ty);
        let v = match declared {
            Some(ty) => ts_runtime::coerce(v.clone(), &ty).ok_or_else(|| {
                SerializeError::invalid(
                    "attributes.pkl",
                    format!("attribute '{}' does not hold a {}", a.name, a.ty),
                )
            })?,
            None => v.clone(),
        };
        set(&a.name, v)?;
    }
    for sub in &def.submodules {
        let name = sub.name.as_deref().unwrap_or_default();
        let sub_class = format!("{qualified}_{}", class_name_part(name));
        let obj = build_module(cu, sub, &sub_class, tensors, attributes)?;
        set(name, IValue::Object(obj))?;
    }
    Ok(Arc::new(Object {
        class: class.clone(),
        slots: RwLock::new(slots),
    }))
}
