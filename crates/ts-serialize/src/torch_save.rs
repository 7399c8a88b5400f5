//! Files written by `torch.save` (the zip format of PyTorch ≥ 1.6): reading them into
//! [`IValue`]s and writing values back in a form real `torch.load` reads.
//!
//! Layout: `<name>/data.pkl` (pickle protocol 2 of the value), `<name>/data/<key>` (raw
//! little-endian storage bytes, one record per storage, 64-byte aligned), and the small records
//! `byteorder`, `version`, `.format_version`, `.storage_alignment`, `.data/serialization_id`.

use std::path::Path;

use ts_core::IValue;

use ts_tensor::storage::Storage;

use crate::archive::Archive;
use crate::error::{Result, SerializeError};
use crate::value_loader::{load_pickle, LoadHooks};

/// Loads the value saved with `torch.save` in the file at `path`.
pub fn load_torch_save(path: &Path) -> Result<IValue> {
    let mut archive = Archive::open(path)?;
    load_from_archive(&mut archive)
}

/// Loads the value of a `torch.save` file held in memory.
pub fn load_torch_save_bytes(bytes: &[u8]) -> Result<IValue> {
    let mut archive = Archive::from_bytes(bytes.to_vec())?;
    load_from_archive(&mut archive)
}

/// Loads the value of an opened `torch.save` archive.
pub fn load_from_archive(archive: &mut Archive) -> Result<IValue> {
    let tree = archive.read_pickle("data.pkl")?;
    let big_endian = archive.is_big_endian()?;
    let mut hooks = RecordStorages {
        archive,
        folder: "data",
        big_endian,
    };
    load_pickle(&tree, "data.pkl", &mut hooks)
}

/// Storage records in one folder of an archive (`data/<key>` for `data.pkl`,
/// `constants/<key>` for `constants.pkl`).
pub(crate) struct RecordStorages<'a> {
    pub archive: &'a mut Archive,
    pub folder: &'a str,
    pub big_endian: bool,
}

impl LoadHooks for RecordStorages<'_> {
    fn read_storage(&mut self, key: &str, nbytes: usize) -> Result<Vec<u8>> {
        let record = self.storage_record(key);
        match self.archive.read_record_exact(&record, nbytes as u64) {
            Err(SerializeError::MissingRecord(_)) => Err(SerializeError::invalid(
                &record,
                "the pickle refers to this storage record but the archive lacks it",
            )),
            other => other,
        }
    }

    fn map_storage(&mut self, key: &str, nbytes: usize) -> Result<Option<Storage>> {
        let record = self.storage_record(key);
        self.archive.map_record(&record, nbytes as u64)
    }

    fn storage_record(&self, key: &str) -> String {
        format!("{}/{key}", self.folder)
    }

    fn big_endian(&self) -> bool {
        self.big_endian
    }
}
