//! Rebuilding tensors: `_rebuild_tensor*` arguments, persistent-id storages loaded once per key,
//! record sizes checked against what the pickle claims, big-endian records swapped.

use ts_core::IValue;
use ts_tensor::{DType, Storage, Tensor};

use super::{Loaded, ValueLoader};
use crate::error::{Result, SerializeError};
use crate::globals::KnownGlobal;
use crate::pickle_value::{PersistentId, PickleValue};
use crate::storage_kind::{dtype_global, storage_class, swap_unit, ElementKind, StorageClass};

/// A storage loaded from its record, shared by every tensor that names its key.
pub(super) struct LoadedStorage {
    storage: Storage,
    /// The element type, fixed by a typed storage class or by the first tensor that views an
    /// untyped storage.
    dtype: Option<DType>,
}

impl<'t> ValueLoader<'t, '_> {
    pub(super) fn tensor(&self, t: Tensor) -> Loaded {
        Loaded {
            value: IValue::Tensor(t),
            ty: self.types.tensor.clone(),
        }
    }

    pub(super) fn rebuild_tensor(
        &mut self,
        version: &KnownGlobal,
        args: &'t [PickleValue],
    ) -> Result<Tensor> {
        let name = match version {
            KnownGlobal::RebuildTensor => "_rebuild_tensor",
            KnownGlobal::RebuildTensorV2 => "_rebuild_tensor_v2",
            _ => "_rebuild_tensor_v3",
        };
        let (min, max) = match version {
            KnownGlobal::RebuildTensor => (4, 4),
            KnownGlobal::RebuildTensorV2 => (4, 7),
            _ => (7, 8),
        };
        if args.len() < min || args.len() > max {
            return Err(self.invalid(format!(
                "{name} takes {min} to {max} arguments, got {}",
                args.len()
            )));
        }
        let offset = match &args[1] {
            PickleValue::Int(o) if *o >= 0 => *o as usize,
            other => {
                return Err(self.invalid(format!(
                    "{name}: bad storage offset {}",
                    self.tree.describe(other)
                )))
            }
        };
        let sizes = self.int_sequence(&args[2], "tensor size")?;
        let strides = self.int_sequence(&args[3], "tensor stride")?;
        let requires_grad = match args.get(4) {
            Some(v) => self.expect_bool_named(v, name)?,
            None => false,
        };
        let wanted = match (version, args.get(6)) {
            (KnownGlobal::RebuildTensorV3, Some(PickleValue::Global(d))) => {
                match dtype_global(&d.module, &d.name) {
                    Some(ElementKind::Supported(d)) => Some(d),
                    Some(ElementKind::Unsupported(n)) => {
                        return Err(self.unsupported(format!("tensors of dtype torch.{n}")))
                    }
                    None => return Err(self.invalid(format!("{name}: {d} is not a dtype"))),
                }
            }
            (KnownGlobal::RebuildTensorV3, _) => {
                return Err(self.invalid(format!("{name}: the dtype argument is not a dtype")))
            }
            _ => None,
        };
        let PickleValue::Persistent(pid) = &args[0] else {
            return Err(self.invalid(format!(
                "{name}: the storage argument is a {}, not a persistent id",
                args[0].kind_name()
            )));
        };
        let (storage, dtype, key) = self.storage(*pid, wanted)?;
        let t = Tensor::from_parts(storage, &sizes, &strides, offset, dtype).map_err(|e| {
            self.invalid(format!(
                "tensor on storage {}: {}",
                self.hooks.storage_record(&key),
                e.message
            ))
        })?;
        t.set_requires_grad(requires_grad);
        Ok(t)
    }

    /// The storage a persistent id names, loaded once per key. `wanted` is the dtype a v3
    /// tensor asks for.
    fn storage(
        &mut self,
        pid: PersistentId,
        wanted: Option<DType>,
    ) -> Result<(Storage, DType, String)> {
        let tree = self.tree;
        let pid_value = tree
            .persistent_id(pid)
            .ok_or_else(|| self.invalid("reference to a missing persistent id"))?;
        let fields = tree.as_tuple(pid_value).unwrap_or(&[]);
        let [PickleValue::Str(tag), PickleValue::Global(class), key, _location, PickleValue::Int(numel), ..] =
            fields
        else {
            return Err(self.invalid(format!(
                "unsupported persistent id {}",
                tree.describe(pid_value)
            )));
        };
        if tag.as_str() != "storage" {
            return Err(self.invalid(format!(
                "unsupported persistent id {}",
                tree.describe(pid_value)
            )));
        }
        let key = match key {
            PickleValue::Str(s) => s.as_str().to_owned(),
            // PyTorch's loader looks storage keys up as strings; an int key is refused there.
            other => {
                return Err(self.invalid(format!(
                    "storage key {} is not a string",
                    tree.describe(other)
                )))
            }
        };
        let record = self.hooks.storage_record(&key);
        let class = storage_class(&class.module, &class.name).ok_or_else(|| {
            SerializeError::UnknownGlobal {
                record: self.record.clone(),
                module: class.module.clone(),
                name: class.name.clone(),
            }
        })?;
        let typed = match class {
            StorageClass::Typed(ElementKind::Supported(d)) => Some(d),
            StorageClass::Typed(ElementKind::Unsupported(n)) => {
                return Err(self.unsupported(format!("tensors of dtype torch.{n} ({record})")))
            }
            StorageClass::Untyped => None,
        };
        let numel = usize::try_from(*numel)
            .map_err(|_| self.invalid(format!("storage {record} has negative size {numel}")))?;
        if !self.storages.contains_key(&key) {
            let elem_size = typed.map_or(1, DType::size);
            let expected_len = numel.checked_mul(elem_size).ok_or_else(|| {
                self.invalid(format!("storage {record} claims an impossible size"))
            })?;
            // Big-endian records need their bytes swapped, so only native ones are mapped.
            let mapped = if self.hooks.big_endian() {
                None
            } else {
                self.hooks.map_storage(&key, expected_len)?
            };
            let storage = match mapped {
                Some(storage) => storage,
                None => {
                    let bytes = self.hooks.read_storage(&key, expected_len)?;
                    if bytes.len() != expected_len {
                        return Err(SerializeError::invalid(
                            &record,
                            format!(
                                "the record holds {} bytes but the pickle describes {numel} \
                                 elements of {elem_size} bytes ({expected_len} bytes)",
                                bytes.len()
                            ),
                        ));
                    }
                    self.make_storage(bytes, typed, &record)?
                }
            };
            self.storages.insert(
                key.clone(),
                LoadedStorage {
                    storage,
                    dtype: typed,
                },
            );
        }
        let big_endian = self.hooks.big_endian();
        let entry = self
            .storages
            .get_mut(&key)
            .ok_or_else(|| SerializeError::invalid(&record, "storage vanished"))?;
        let dtype = match (entry.dtype, typed, wanted) {
            (Some(have), _, Some(w)) if have != w => {
                return Err(SerializeError::invalid(
                    &record,
                    format!("the storage is viewed both as {have} and as {w}"),
                ))
            }
            (Some(have), _, _) => have,
            (None, _, Some(w)) => {
                if big_endian && swap_unit(w) > 1 {
                    let mut bytes = entry.storage.to_bytes();
                    swap_elements(&mut bytes, swap_unit(w));
                    entry.storage = Storage::from_bytes(&bytes)
                        .map_err(|e| SerializeError::invalid(&record, e.message))?;
                }
                entry.dtype = Some(w);
                w
            }
            (None, _, None) => {
                return Err(SerializeError::invalid(
                    &record,
                    "an untyped storage is used without a dtype (_rebuild_tensor_v2 needs a \
                     typed storage)",
                ))
            }
        };
        Ok((entry.storage.clone(), dtype, key))
    }

    fn make_storage(
        &self,
        mut bytes: Vec<u8>,
        typed: Option<DType>,
        record: &str,
    ) -> Result<Storage> {
        if let Some(d) = typed {
            if self.hooks.big_endian() && swap_unit(d) > 1 {
                swap_elements(&mut bytes, swap_unit(d));
            }
        }
        Storage::from_bytes(&bytes).map_err(|e| SerializeError::invalid(record, e.message))
    }
}

/// Reverses the byte order of every `size`-byte element (big-endian records).
fn swap_elements(bytes: &mut [u8], size: usize) {
    for chunk in bytes.chunks_exact_mut(size) {
        chunk.reverse();
    }
}
