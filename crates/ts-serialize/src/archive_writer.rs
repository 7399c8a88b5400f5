//! Writing the zip container PyTorch reads (`PyTorchStreamWriter`): every record under one
//! folder named after the archive, stored uncompressed, its data 64-byte aligned through an
//! `FB` extra field, and a `.data/serialization_id` record at the end.

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::error::{Result, SerializeError};

/// Alignment of every record's data, so that storages can be memory-mapped.
pub const RECORD_ALIGNMENT: u16 = 64;
/// The extra-field id PyTorch uses for its alignment padding.
const ALIGNMENT_FIELD_ID: u16 = u16::from_le_bytes(*b"FB");

/// A PyTorch zip archive being written in memory.
pub struct ArchiveWriter {
    zip: ZipWriter<Cursor<Vec<u8>>>,
    /// The archive name plus `/`.
    prefix: String,
    /// FNV-1a hashes feeding the serialization id: of the record names and of their data.
    name_hash: u64,
    data_hash: u64,
}

impl ArchiveWriter {
    /// An empty archive whose records live under `archive_name/`.
    pub fn new(archive_name: &str) -> Result<ArchiveWriter> {
        if archive_name.is_empty() || archive_name.contains('/') {
            return Err(SerializeError::invalid(
                archive_name,
                "an archive name must be non-empty and contain no '/'",
            ));
        }
        Ok(ArchiveWriter {
            zip: ZipWriter::new(Cursor::new(Vec::new())),
            prefix: format!("{archive_name}/"),
            name_hash: FNV_OFFSET,
            data_hash: FNV_OFFSET,
        })
    }

    /// Writes record `name` (relative to the archive folder).
    pub fn write_record(&mut self, name: &str, data: &[u8]) -> Result<()> {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .with_alignment_and_header_id(RECORD_ALIGNMENT, ALIGNMENT_FIELD_ID)
            .large_file(data.len() as u64 >= u32::MAX as u64);
        let full = format!("{}{}", self.prefix, name);
        let err = |e: &dyn std::fmt::Display| SerializeError::Zip {
            context: format!("writing record {name}"),
            message: e.to_string(),
        };
        self.zip.start_file(full, options).map_err(|e| err(&e))?;
        self.zip.write_all(data).map_err(|e| err(&e))?;
        fnv1a(&mut self.name_hash, name.as_bytes());
        fnv1a(&mut self.data_hash, data);
        Ok(())
    }

    /// Writes `.data/serialization_id` (an opaque id derived from the records, 40 digits as
    /// PyTorch writes it) and returns the archive's bytes.
    pub fn finish(mut self) -> Result<Vec<u8>> {
        let id = format!("{:020}{:020}", self.name_hash, self.data_hash);
        self.write_record(".data/serialization_id", id.as_bytes())?;
        let cursor = self.zip.finish().map_err(|e| SerializeError::Zip {
            context: "finishing the archive".into(),
            message: e.to_string(),
        })?;
        Ok(cursor.into_inner())
    }
}

const FNV_OFFSET: u64 = 0xCBF29CE484222325;

fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100000001B3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Archive;

    /// Offsets of the data of each local file entry, from the local headers.
    fn data_offsets(bytes: &[u8]) -> Vec<(String, usize, Vec<u8>)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while bytes[pos..].starts_with(b"PK\x03\x04") {
            let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
            let u32_at = |o: usize| {
                u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]) as usize
            };
            let name_len = u16_at(pos + 26);
            let extra_len = u16_at(pos + 28);
            let size = u32_at(pos + 18);
            let name = String::from_utf8(bytes[pos + 30..pos + 30 + name_len].to_vec()).unwrap();
            let extra = bytes[pos + 30 + name_len..pos + 30 + name_len + extra_len].to_vec();
            let data = pos + 30 + name_len + extra_len;
            out.push((name, data, extra));
            pos = data + size;
        }
        out
    }

    #[test]
    fn records_are_aligned_and_readable() {
        let mut w = ArchiveWriter::new("archive").unwrap();
        w.write_record("data.pkl", b"\x80\x02N.").unwrap();
        w.write_record("data/0", &[1u8; 10]).unwrap();
        w.write_record("version", b"3\n").unwrap();
        let bytes = w.finish().unwrap();
        let offsets = data_offsets(&bytes);
        assert_eq!(offsets.len(), 4);
        for (name, offset, extra) in &offsets {
            assert_eq!(offset % 64, 0, "{name} starts at {offset}");
            assert!(
                extra.is_empty() || extra.starts_with(b"FB"),
                "{name}: {extra:?}"
            );
        }
        let mut a = Archive::from_bytes(bytes).unwrap();
        assert_eq!(a.name(), "archive");
        assert_eq!(
            a.records(),
            ["data.pkl", "data/0", "version", ".data/serialization_id"]
        );
        assert_eq!(a.read_record("data/0").unwrap(), [1u8; 10]);
        assert_eq!(a.read_text(".data/serialization_id").unwrap().len(), 40);
    }

    #[test]
    fn bad_archive_names_are_refused() {
        assert!(ArchiveWriter::new("").is_err());
        assert!(ArchiveWriter::new("a/b").is_err());
    }
}
