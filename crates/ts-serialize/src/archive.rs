//! Reading the zip container that `torch.save` and `torch.jit.save` write (PyTorch's
//! `PyTorchStreamReader`).
//!
//! Every record sits under one top-level folder, the archive name; it is taken from the first
//! entry, and records are named relative to it (`data.pkl`, `data/0`, `code/__torch__.py`).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::Path;
use std::sync::Arc;

use ts_tensor::mapped_file::MappedFile;
use ts_tensor::storage::Storage;
use zip::{CompressionMethod, ZipArchive};

use crate::error::{Result, SerializeError};
use crate::pickle_value::PickleTree;
use crate::unpickler::unpickle;

/// Whether `Archive::open` maps the file (on unless `TSRS_LOAD_MMAP=0`): a process that
/// must not fault if someone truncates a loaded archive under it turns mapping off.
fn mapping_enabled() -> bool {
    !matches!(std::env::var("TSRS_LOAD_MMAP").as_deref(), Ok("0"))
}

/// Anything a zip can be read from.
trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// The first bytes of a legacy (pre-1.6, not zipped) `torch.save` file: a protocol-2 pickle.
const LEGACY_PICKLE_MAGIC: &[u8] = b"\x80\x02";
/// The first bytes of the preview-release archive format PyTorch no longer reads.
const PREVIEW_MAGIC: &[u8] = b"PYTORCH1";
/// Largest allocation made up front for a record; bigger records grow as they are read, so a
/// corrupt size field cannot reserve gigabytes.
const MAX_UPFRONT_ALLOCATION: u64 = 64 << 20;
/// The default inflation budget of one load is this many times the archive's size...
pub const DEFAULT_BUDGET_MULTIPLE: u64 = 20;
/// ...but never less than this (small archives of highly compressible data stay loadable).
pub const DEFAULT_BUDGET_FLOOR: u64 = 64 << 20;

/// A PyTorch zip archive opened for reading.
pub struct Archive {
    zip: ZipArchive<Box<dyn ReadSeek>>,
    /// The archive name plus `/`.
    prefix: String,
    /// Record names (without the prefix), in the order of the zip's central directory.
    records: Vec<String>,
    /// The same names, for lookups.
    index: HashSet<String>,
    /// The file path (or `<memory>`), for error messages.
    source: String,
    /// How many bytes the records read so far may inflate to in all (zip-bomb guard).
    budget: u64,
    /// Bytes of records read so far.
    inflated: u64,
    /// The file mapped copy-on-write, when the archive was opened from a path and mapping is
    /// on: stored (uncompressed) storage records are then viewed in place, not copied.
    mapping: Option<Arc<MappedFile>>,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("source", &self.source)
            .field("prefix", &self.prefix)
            .field("records", &self.records)
            .finish()
    }
}

impl Archive {
    /// Opens the archive at `path`; records are read from the file on demand.
    pub fn open(path: &Path) -> Result<Archive> {
        let source = path.display().to_string();
        let mut file = File::open(path).map_err(|e| SerializeError::io(&source, e))?;
        let mut head = [0u8; 8];
        let n = read_up_to(&mut file, &mut head).map_err(|e| SerializeError::io(&source, e))?;
        check_magic(&head[..n], &source)?;
        file.rewind().map_err(|e| SerializeError::io(&source, e))?;
        let len = file
            .metadata()
            .map_err(|e| SerializeError::io(&source, e))?
            .len();
        let mapping = if mapping_enabled() {
            // A file that cannot be mapped is read the ordinary way.
            MappedFile::map(&file).ok().flatten()
        } else {
            None
        };
        let mut archive = Archive::from_reader(Box::new(BufReader::new(file)), source, len)?;
        archive.mapping = mapping;
        Ok(archive)
    }

    /// Opens an archive held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Archive> {
        let source = "<memory>".to_owned();
        check_magic(&bytes[..bytes.len().min(8)], &source)?;
        let len = bytes.len() as u64;
        Archive::from_reader(Box::new(Cursor::new(bytes)), source, len)
    }

    fn from_reader(reader: Box<dyn ReadSeek>, source: String, len: u64) -> Result<Archive> {
        // PyTorch's archives start at offset 0. The zip crate's offset detection can be misled
        // when the zip64 end records happen to be as long as the first central directory
        // entry (a top-level folder name of 21 bytes), so the offset is given, not guessed.
        let config = zip::read::Config {
            archive_offset: zip::read::ArchiveOffset::Known(0),
        };
        let zip = ZipArchive::with_config(config, reader).map_err(|e| SerializeError::Zip {
            context: source.clone(),
            message: e.to_string(),
        })?;
        let zip_error = |message: String| SerializeError::Zip {
            context: source.clone(),
            message,
        };
        let first = match zip.name_for_index(0) {
            Some(Ok(name)) => name.into_owned(),
            Some(Err(e)) => return Err(zip_error(e.to_string())),
            None => return Err(zip_error("the archive contains no records".into())),
        };
        let Some(slash) = first.find('/') else {
            return Err(zip_error(format!(
                "the record '{first}' is not inside a top-level folder"
            )));
        };
        let prefix = first[..=slash].to_owned();
        let mut records = Vec::with_capacity(zip.len());
        for i in 0..zip.len() {
            let name: Cow<'_, str> = match zip.name_for_index(i) {
                Some(Ok(name)) => name,
                Some(Err(e)) => return Err(zip_error(e.to_string())),
                None => continue,
            };
            if let Some(rest) = name.strip_prefix(prefix.as_str()) {
                if !rest.is_empty() && !rest.ends_with('/') {
                    records.push(rest.to_owned());
                }
            }
        }
        let index = records.iter().cloned().collect();
        Ok(Archive {
            zip,
            prefix,
            records,
            index,
            source,
            budget: len
                .saturating_mul(DEFAULT_BUDGET_MULTIPLE)
                .max(DEFAULT_BUDGET_FLOOR),
            inflated: 0,
            mapping: None,
        })
    }

    /// True when storage records may be viewed in a mapping of the file (see
    /// [`Archive::map_record`]).
    pub fn is_mapped(&self) -> bool {
        self.mapping.is_some()
    }

    /// Record `name` as a storage viewing the mapped file in place, when the archive was
    /// opened from a path, the record is stored uncompressed, holds exactly `expected` bytes
    /// and starts 64-byte aligned (as `torch.save` and `torch.jit.save` align `data/`
    /// records). `Ok(None)` means "read it instead" ([`Archive::read_record_exact`]), which
    /// also reports every malformed case. A write to the storage copies the touched pages;
    /// the file never changes. Unlike reading, the record's CRC is not checked (as with
    /// PyTorch's `mmap=True`): that would touch every page up front.
    pub fn map_record(&mut self, name: &str, expected: u64) -> Result<Option<Storage>> {
        let Some(mapping) = self.mapping.clone() else {
            return Ok(None);
        };
        if !self.has_record(name) {
            return Ok(None);
        }
        let full = format!("{}{}", self.prefix, name);
        let Ok(file) = self.zip.by_name(&full) else {
            return Ok(None);
        };
        if file.compression() != CompressionMethod::Stored
            || file.size() != expected
            || file.compressed_size() != expected
            || file.encrypted()
        {
            return Ok(None);
        }
        let Some(start) = file.data_start() else {
            return Ok(None);
        };
        let (Ok(start), Ok(len)) = (usize::try_from(start), usize::try_from(expected)) else {
            return Ok(None);
        };
        mapping
            .storage(start, len)
            .map_err(|e| SerializeError::invalid(name, e.message))
    }

    /// Sets how many bytes all records read from now on may inflate to together (the default
    /// is [`DEFAULT_BUDGET_MULTIPLE`] times the archive's size, at least
    /// [`DEFAULT_BUDGET_FLOOR`]). A record that would exceed it is refused before it is
    /// decompressed, so a zip bomb costs no memory.
    pub fn set_inflate_budget(&mut self, bytes: u64) {
        self.budget = self.inflated.saturating_add(bytes);
    }

    /// The same as [`Archive::set_inflate_budget`], by value.
    pub fn with_inflate_budget(mut self, bytes: u64) -> Archive {
        self.set_inflate_budget(bytes);
        self
    }

    /// Bytes of records decompressed so far.
    pub fn inflated_bytes(&self) -> u64 {
        self.inflated
    }

    /// The archive name: the top-level folder every record is in (`archive` for buffers saved
    /// by PyTorch, otherwise the file stem at save time).
    pub fn name(&self) -> &str {
        self.prefix.trim_end_matches('/')
    }

    /// Where the archive was read from (a path, or `<memory>`).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The record names, relative to the archive folder, in file order.
    pub fn records(&self) -> &[String] {
        &self.records
    }

    /// True when the archive holds record `name`.
    pub fn has_record(&self, name: &str) -> bool {
        self.index.contains(name)
    }

    /// The content of record `name` (relative to the archive folder).
    pub fn read_record(&mut self, name: &str) -> Result<Vec<u8>> {
        self.read_record_sized(name, None)
    }

    /// The content of record `name`, which must hold exactly `expected` bytes (a storage whose
    /// size the pickle declares). A record of another size is refused before it is inflated.
    pub fn read_record_exact(&mut self, name: &str, expected: u64) -> Result<Vec<u8>> {
        self.read_record_sized(name, Some(expected))
    }

    fn read_record_sized(&mut self, name: &str, expected: Option<u64>) -> Result<Vec<u8>> {
        if !self.has_record(name) {
            return Err(SerializeError::MissingRecord(name.to_owned()));
        }
        let full = format!("{}{}", self.prefix, name);
        let source = &self.source;
        let zip_error = |e: &dyn std::fmt::Display| SerializeError::Zip {
            context: format!("{source} (record {name})"),
            message: e.to_string(),
        };
        let file = self.zip.by_name(&full).map_err(|e| zip_error(&e))?;
        // The size the zip declares; the stream is cut one byte past it, so an entry that
        // inflates further is refused after reading at most that much.
        let size = file.size();
        if let Some(want) = expected {
            if size != want {
                return Err(SerializeError::invalid(
                    name,
                    format!("the record holds {size} bytes but the pickle describes {want} bytes"),
                ));
            }
        }
        let total = self.inflated.saturating_add(size);
        if total > self.budget {
            return Err(SerializeError::invalid(
                name,
                format!(
                    "the record inflates to {size} bytes, past this load's decompression \
                     budget of {} bytes ({} already read); a zip bomb, or raise the budget \
                     with Archive::set_inflate_budget",
                    self.budget, self.inflated
                ),
            ));
        }
        let mut out = Vec::new();
        out.try_reserve_exact(size.min(MAX_UPFRONT_ALLOCATION) as usize)
            .map_err(|e| zip_error(&e))?;
        let mut limited = file.take(size.saturating_add(1));
        limited.read_to_end(&mut out).map_err(|e| zip_error(&e))?;
        if out.len() as u64 > size {
            return Err(SerializeError::invalid(
                name,
                format!("the record inflates past the {size} bytes its zip entry declares"),
            ));
        }
        if out.len() as u64 != size {
            return Err(SerializeError::invalid(
                name,
                format!(
                    "the record should hold {size} bytes but {} could be read",
                    out.len()
                ),
            ));
        }
        self.inflated = total;
        Ok(out)
    }

    /// Record `name` as UTF-8 text.
    pub fn read_text(&mut self, name: &str) -> Result<String> {
        let bytes = self.read_record(name)?;
        String::from_utf8(bytes).map_err(|_| SerializeError::invalid(name, "not valid UTF-8 text"))
    }

    /// Unpickles record `name` into a generic tree.
    pub fn read_pickle(&mut self, name: &str) -> Result<PickleTree> {
        let bytes = self.read_record(name)?;
        unpickle(&bytes, name)
    }

    /// True when the storage records are big-endian (the `byteorder` record says `big`);
    /// archives without the record are little-endian.
    pub fn is_big_endian(&mut self) -> Result<bool> {
        if !self.has_record("byteorder") {
            return Ok(false);
        }
        let text = self.read_text("byteorder")?;
        match text.trim() {
            "little" => Ok(false),
            "big" => Ok(true),
            other => Err(SerializeError::invalid(
                "byteorder",
                format!("unknown byte order '{other}'"),
            )),
        }
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Refuses the two pre-zip formats with a message saying what they are.
fn check_magic(head: &[u8], source: &str) -> Result<()> {
    if head.starts_with(LEGACY_PICKLE_MAGIC) {
        return Err(SerializeError::unsupported(
            source,
            "the legacy (non-zip) torch.save format written before PyTorch 1.6; re-save the \
             file with a current torch.save",
        ));
    }
    if head.starts_with(PREVIEW_MAGIC) {
        return Err(SerializeError::unsupported(
            source,
            "the archive format of PyTorch's preview release",
        ));
    }
    Ok(())
}
