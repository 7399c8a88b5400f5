//! Writing values in the `torch.save` format, laid out as PyTorch 2.x writes it, so that real
//! `torch.load` (including `weights_only=True`) and the conformance suite's `torchsave.py` read
//! the files.
//!
//! The pickle follows Python's protocol-2 pickler (memoized strings, globals, tuples, lists and
//! dicts; lists and dicts filled in batches of 1000). A tensor is
//! `_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())` with the
//! storage as a persistent id; each storage is written once, as a whole, however many tensors
//! view it, and tensors keep their offsets and strides.
//!
//! Checked against real PyTorch 2.15: `examples/write_torch_save_samples.rs` writes scalars,
//! containers, every dtype, views, shared storages and `requires_grad` tensors, and
//! `tests/fixtures/check_samples_with_torch.py` loads them with
//! `torch.load(weights_only=True)` and with the conformance suite's `torchsave.py`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use ts_core::IValue;
use ts_tensor::{DType, Storage, Tensor};

use crate::archive_writer::ArchiveWriter;
use crate::error::{Result, SerializeError};
use crate::opcodes as op;
use crate::pickler::{Pickler, BATCH_SIZE};
use crate::storage_kind::{swap_unit, typed_class_name};
use crate::value_loader::MAX_NESTING;

/// The `version` record of torch.save archives.
const FORMAT_VERSION_RECORD: &[u8] = b"3\n";

/// Saves `value` to `path` with the `torch.save` layout; the archive folder is the file stem,
/// as PyTorch names it.
pub fn save_torch_save(value: &IValue, path: &Path) -> Result<()> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "archive".to_owned());
    let bytes = save_torch_save_bytes(value, &stem)?;
    crate::file_replace::replace_file(path, &bytes)
}

/// The bytes of a `torch.save` file holding `value`, with records under `archive_name/`
/// (PyTorch uses `archive` for in-memory buffers).
pub fn save_torch_save_bytes(value: &IValue, archive_name: &str) -> Result<Vec<u8>> {
    let mut w = ValueWriter {
        p: Pickler::new(),
        memo: HashMap::new(),
        storages: Vec::new(),
        storage_index: HashMap::new(),
        depth: 0,
        allow_objects: false,
    };
    w.value(value)?;
    let ValueWriter { p, storages, .. } = w;
    let data_pkl = p.finish();

    let mut archive = ArchiveWriter::new(archive_name)?;
    archive.write_record("data.pkl", &data_pkl)?;
    archive.write_record(".format_version", b"1")?;
    archive.write_record(
        ".storage_alignment",
        crate::archive_writer::RECORD_ALIGNMENT
            .to_string()
            .as_bytes(),
    )?;
    archive.write_record("byteorder", b"little")?;
    write_storages(&mut archive, "data", &storages)?;
    archive.write_record("version", FORMAT_VERSION_RECORD)?;
    archive.finish()
}

/// Writes each storage's little-endian bytes as `<folder>/<key>`.
fn write_storages(
    archive: &mut ArchiveWriter,
    folder: &str,
    storages: &[SavedStorage],
) -> Result<()> {
    for (key, s) in storages.iter().enumerate() {
        let mut bytes = s.storage.to_bytes();
        bytes.truncate(s.numel * s.dtype.size());
        if cfg!(target_endian = "big") && swap_unit(s.dtype) > 1 {
            for chunk in bytes.chunks_exact_mut(swap_unit(s.dtype)) {
                chunk.reverse();
            }
        }
        archive.write_record(&format!("{folder}/{key}"), &bytes)?;
    }
    Ok(())
}

/// Pickles `value` as a TorchScript archive's `<folder>.pkl` (objects allowed) and writes it
/// with its storages under `<folder>/`.
pub(crate) fn write_script_pickle(
    archive: &mut ArchiveWriter,
    folder: &str,
    value: &IValue,
) -> Result<()> {
    let mut w = ValueWriter {
        p: Pickler::new(),
        memo: HashMap::new(),
        storages: Vec::new(),
        storage_index: HashMap::new(),
        depth: 0,
        allow_objects: true,
    };
    w.value(value)?;
    let ValueWriter { p, storages, .. } = w;
    archive.write_record(&format!("{folder}.pkl"), &p.finish())?;
    write_storages(archive, folder, &storages)
}

/// A storage to be written as `data/<index>`.
struct SavedStorage {
    storage: Storage,
    dtype: DType,
    numel: usize,
    /// The memo slot holding the loaded storage, for tensors that view it again.
    memo: u32,
}

struct ValueWriter {
    p: Pickler,
    /// Memo slots of values with identity (lists, dicts, tuples, tensors), by address.
    memo: HashMap<usize, u32>,
    storages: Vec<SavedStorage>,
    /// Index into `storages`, by storage identity.
    storage_index: HashMap<usize, usize>,
    depth: usize,
    /// TorchScript archives may hold class objects; torch.save files may not.
    allow_objects: bool,
}

fn unsupported(what: impl std::fmt::Display) -> SerializeError {
    SerializeError::unsupported("data.pkl", what)
}

impl ValueWriter {
    fn value(&mut self, v: &IValue) -> Result<()> {
        if self.depth >= MAX_NESTING {
            return Err(unsupported(format!(
                "values nested more than {MAX_NESTING} levels deep"
            )));
        }
        self.depth += 1;
        let r = self.value_inner(v);
        self.depth -= 1;
        r
    }

    fn value_inner(&mut self, v: &IValue) -> Result<()> {
        match v {
            IValue::None => self.p.none(),
            IValue::Bool(b) => self.p.bool(*b),
            IValue::Int(i) => self.p.int(*i),
            IValue::Double(f) => self.p.float(*f),
            IValue::String(s) => self.p.str(s),
            IValue::Tuple(t) => {
                let id = Arc::as_ptr(t) as usize;
                if self.recall(id) {
                    return Ok(());
                }
                let n = t.elements.len();
                self.p.tuple_start(n);
                for e in &t.elements {
                    self.value(e)?;
                }
                self.p.tuple_end(n);
                if n > 0 {
                    let slot = self.p.memoize();
                    self.memo.insert(id, slot);
                }
            }
            IValue::List(l) => {
                let id = Arc::as_ptr(l) as usize;
                if self.recall(id) {
                    return Ok(());
                }
                self.p.opcode(op::EMPTY_LIST);
                let slot = self.p.memoize();
                self.memo.insert(id, slot);
                let items = l.items.read().clone();
                for batch in items.chunks(BATCH_SIZE) {
                    if let [single] = batch {
                        self.value(single)?;
                        self.p.opcode(op::APPEND);
                    } else {
                        self.p.mark();
                        for item in batch {
                            self.value(item)?;
                        }
                        self.p.opcode(op::APPENDS);
                    }
                }
            }
            IValue::Dict(d) => {
                let id = Arc::as_ptr(d) as usize;
                if self.recall(id) {
                    return Ok(());
                }
                self.p.opcode(op::EMPTY_DICT);
                let slot = self.p.memoize();
                self.memo.insert(id, slot);
                let entries: Vec<(IValue, IValue)> = d
                    .entries
                    .read()
                    .iter()
                    .map(|(k, v)| (k.0.clone(), v.clone()))
                    .collect();
                for batch in entries.chunks(BATCH_SIZE) {
                    if let [(k, v)] = batch {
                        self.value(k)?;
                        self.value(v)?;
                        self.p.opcode(op::SETITEM);
                    } else {
                        self.p.mark();
                        for (k, v) in batch {
                            self.value(k)?;
                            self.value(v)?;
                        }
                        self.p.opcode(op::SETITEMS);
                    }
                }
            }
            IValue::Tensor(t) => {
                if self.recall(t.id()) {
                    return Ok(());
                }
                self.tensor(t)?;
                let slot = self.p.memoize();
                self.memo.insert(t.id(), slot);
            }
            IValue::Complex(c) => {
                self.p.global("builtins", "complex");
                self.p.float(c.0);
                self.p.float(c.1);
                self.p.tuple_end(2);
                self.p.memoize();
                self.p.opcode(op::REDUCE);
                self.p.memoize();
            }
            IValue::Device(d) => {
                self.p.global("torch", "device");
                self.p.str(&d.to_string());
                self.p.tuple_end(1);
                self.p.memoize();
                self.p.opcode(op::REDUCE);
                self.p.memoize();
            }
            IValue::Object(o) if self.allow_objects => {
                let id = Arc::as_ptr(o) as usize;
                if self.recall(id) {
                    return Ok(());
                }
                // `__torch__.a.B` → GLOBAL '__torch__.a' 'B', then NEWOBJ and BUILD with the
                // attribute dict, as TorchScript's pickler writes objects.
                let (module, name) = o
                    .class
                    .name
                    .rsplit_once('.')
                    .unwrap_or(("__torch__", o.class.name.as_str()));
                self.p.global(module, name);
                self.p.opcode(op::EMPTY_TUPLE);
                self.p.opcode(op::NEWOBJ);
                let slot = self.p.memoize();
                self.memo.insert(id, slot);
                if o.class.find_method("__getstate__").is_some() {
                    return Err(unsupported(format!(
                        "saving an object of class {} that defines __getstate__",
                        o.class.name
                    )));
                }
                self.p.opcode(op::EMPTY_DICT);
                self.p.memoize();
                let attrs = o.class.attributes();
                let slots = o.slots.read().clone();
                if !attrs.is_empty() {
                    self.p.mark();
                    for (a, v) in attrs.iter().zip(&slots) {
                        self.p.str(&a.name);
                        self.value(v)?;
                    }
                    self.p.opcode(op::SETITEMS);
                }
                self.p.opcode(op::BUILD);
            }
            IValue::Object(o) => {
                return Err(unsupported(format!(
                    "saving an object of class {} with torch.save",
                    o.class.name
                )))
            }
            IValue::Enum(e) => {
                return Err(unsupported(format!(
                    "saving a value of enum {} with torch.save",
                    e.enum_type.name
                )))
            }
            IValue::Future(_) => return Err(unsupported("saving a Future with torch.save")),
            IValue::Capsule(_) => return Err(unsupported("saving a capsule with torch.save")),
            IValue::Uninitialized => {
                return Err(unsupported("saving an uninitialized value with torch.save"))
            }
        }
        Ok(())
    }

    /// Emits a BINGET when `id` was pickled before.
    fn recall(&mut self, id: usize) -> bool {
        match self.memo.get(&id) {
            Some(&slot) => {
                self.p.get(slot);
                true
            }
            None => false,
        }
    }

    /// `_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())`, or for
    /// dtypes without a typed storage class (uint16/32/64)
    /// `_rebuild_tensor_v3(..., OrderedDict(), torch.<dtype>)` over an `UntypedStorage`, as
    /// PyTorch writes them.
    fn tensor(&mut self, t: &Tensor) -> Result<()> {
        if t.is_quantized() {
            return Err(unsupported(
                "saving quantized tensors (torch._utils._rebuild_qtensor is not written yet)",
            ));
        }
        let m = t.meta_snapshot();
        let v3 = typed_class_name(m.dtype).is_none();
        let n = if v3 { 7 } else { 6 };
        self.p.global(
            "torch._utils",
            if v3 {
                "_rebuild_tensor_v3"
            } else {
                "_rebuild_tensor_v2"
            },
        );
        self.p.tuple_start(n);
        self.storage(&m.storage, m.dtype)?;
        self.p.int(m.offset as i64);
        self.int_tuple(&m.sizes);
        self.int_tuple(&m.strides);
        self.p.bool(m.requires_grad);
        self.p.global("collections", "OrderedDict");
        self.p.tuple_start(0);
        self.p.opcode(op::REDUCE);
        self.p.memoize();
        if v3 {
            self.p.global("torch", m.dtype.name());
        }
        self.p.tuple_end(n);
        self.p.memoize();
        self.p.opcode(op::REDUCE);
        Ok(())
    }

    fn int_tuple(&mut self, values: &[i64]) {
        self.p.tuple_start(values.len());
        for &v in values {
            self.p.int(v);
        }
        self.p.tuple_end(values.len());
        if !values.is_empty() {
            self.p.memoize();
        }
    }

    /// The persistent id of a storage, written once and recalled from the memo afterwards.
    fn storage(&mut self, storage: &Storage, dtype: DType) -> Result<()> {
        if let Some(&i) = self.storage_index.get(&storage.id()) {
            let saved = &self.storages[i];
            if saved.dtype != dtype {
                return Err(unsupported(format!(
                    "saving tensors that view one storage as both {} and {dtype}",
                    saved.dtype
                )));
            }
            let slot = saved.memo;
            self.p.get(slot);
            return Ok(());
        }
        let key = self.storages.len();
        let numel = storage.nbytes() / dtype.size();
        self.p.tuple_start(5);
        self.p.str("storage");
        match typed_class_name(dtype) {
            Some(class) => self.p.global("torch", class),
            None => self.p.global("torch.storage", "UntypedStorage"),
        }
        self.p.str(&key.to_string());
        self.p.str(&storage.device().to_string());
        // An untyped storage's size counts bytes.
        let size = if typed_class_name(dtype).is_some() {
            numel
        } else {
            numel * dtype.size()
        };
        self.p.int(size as i64);
        self.p.tuple_end(5);
        self.p.memoize();
        self.p.opcode(op::BINPERSID);
        let slot = self.p.memoize();
        self.storage_index.insert(storage.id(), key);
        self.storages.push(SavedStorage {
            storage: storage.clone(),
            dtype,
            numel,
            memo: slot,
        });
        Ok(())
    }
}
