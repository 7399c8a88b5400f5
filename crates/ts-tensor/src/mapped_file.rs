//! A file mapped copy-on-write into memory, so that tensor storages can view the bytes of a
//! saved archive instead of copying them (`torch.jit.load` of a large model then costs no
//! anonymous page zeroing and no copy; pages come straight from the page cache).
//!
//! The mapping is private (`MAP_PRIVATE`) and writable: a kernel that writes into a mapped
//! storage (an in-place update of a loaded parameter) gets its own copy of the touched pages,
//! and the file never changes. The mapping lives as long as the last storage viewing it.
//!
//! One hazard stays, as with PyTorch's `torch.load(mmap=True)`: if another process truncates
//! the file while it is mapped, reading the vanished pages raises `SIGBUS`. Loaders that must
//! survive that can turn mapping off (`TSRS_LOAD_MMAP=0` in `ts-serialize`).

use std::fs::File;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::storage::Storage;

/// Alignment a mapped region must have to back a storage: what `Storage` guarantees for its
/// own buffers (every element type, SIMD loads).
pub const MAPPED_STORAGE_ALIGN: usize = 64;

/// A whole file mapped privately (copy-on-write) into memory.
pub struct MappedFile {
    ptr: NonNull<u8>,
    len: usize,
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("len", &self.len)
            .finish()
    }
}

// SAFETY: the mapping is plain memory with no thread affinity; storages carved from it follow
// the same rules as heap storages (disjoint writers, see `Storage`).
unsafe impl Send for MappedFile {}
// SAFETY: as above; shared access hands out raw pointers only.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// Maps all of `file`. `Ok(None)` when the platform has no mapping support or the file is
    /// empty (callers copy instead).
    pub fn map(file: &File) -> Result<Option<Arc<MappedFile>>> {
        let len = file
            .metadata()
            .map_err(|e| Error::runtime(format!("cannot map the file: {e}")))?
            .len();
        let Ok(len) = usize::try_from(len) else {
            return Ok(None);
        };
        if len == 0 {
            return Ok(None);
        }
        map_impl(file, len)
    }

    /// Size of the mapping in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is mapped (never: empty files are not mapped).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A storage viewing `nbytes` bytes at `offset` of the mapping without copying them, or
    /// `None` when the range is outside the file or `offset` is not
    /// [`MAPPED_STORAGE_ALIGN`]-aligned (the caller then copies the bytes).
    pub fn storage(self: &Arc<Self>, offset: usize, nbytes: usize) -> Result<Option<Storage>> {
        let in_range = offset
            .checked_add(nbytes)
            .is_some_and(|end| end <= self.len);
        let addr = (self.ptr.as_ptr() as usize).wrapping_add(offset);
        if !in_range || !addr.is_multiple_of(MAPPED_STORAGE_ALIGN) {
            return Ok(None);
        }
        // SAFETY: `offset + nbytes <= len`, so the range lies inside the mapping, which is
        // readable and (privately) writable and stays mapped until the `Arc` handed over as
        // the owner is dropped with the storage. The start is 64-byte aligned (checked above),
        // enough for every element type. Storages carved from one mapping view disjoint
        // records; writes to one never reach another or the file (copy-on-write pages).
        let s = unsafe {
            Storage::from_external(
                self.ptr.as_ptr().add(offset),
                nbytes,
                Box::new(Arc::clone(self)),
            )?
        };
        Ok(Some(s))
    }
}

#[cfg(unix)]
fn map_impl(file: &File, len: usize) -> Result<Option<Arc<MappedFile>>> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: a fresh private mapping of a file descriptor we hold open for the duration of
    // the call; the kernel picks the address. `MAP_PRIVATE` with `PROT_WRITE` needs only read
    // access to the file, and writes stay in this process.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE,
            file.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        // Some file systems cannot map; the caller copies instead.
        return Ok(None);
    }
    let Some(ptr) = NonNull::new(p.cast::<u8>()) else {
        return Ok(None);
    };
    Ok(Some(Arc::new(MappedFile { ptr, len })))
}

#[cfg(not(unix))]
fn map_impl(_file: &File, _len: usize) -> Result<Option<Arc<MappedFile>>> {
    Ok(None)
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: `ptr`/`len` are exactly what `mmap` returned; every storage viewing the
        // mapping holds an `Arc` to it, so none is left when this runs.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_file(tag: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("ts-tensor-mapped-{tag}-{}.bin", std::process::id()));
        let mut f = File::create(&path).expect("create");
        f.write_all(bytes).expect("write");
        path
    }

    fn bytes_of(s: &Storage) -> Vec<u8> {
        s.to_bytes()
    }

    #[test]
    fn storage_views_the_file_and_writes_do_not_reach_it() {
        let data: Vec<u8> = (0..200u8).collect();
        let path = temp_file("cow", &data);
        let map = MappedFile::map(&File::open(&path).expect("open"))
            .expect("map")
            .expect("mapped");
        assert_eq!(map.len(), 200);
        let s = map.storage(64, 100).expect("ok").expect("aligned");
        assert!(s.is_external());
        assert_eq!(bytes_of(&s), data[64..164].to_vec());
        // SAFETY: the storage holds 100 bytes and nothing else uses it.
        unsafe { *s.as_mut_ptr() = 0xAA };
        assert_eq!(bytes_of(&s)[0], 0xAA);
        // The file keeps its bytes; a second mapping sees the originals.
        assert_eq!(std::fs::read(&path).expect("read"), data);
        let again = MappedFile::map(&File::open(&path).expect("open"))
            .expect("map")
            .expect("mapped");
        let t = again.storage(64, 100).expect("ok").expect("aligned");
        assert_eq!(bytes_of(&t)[0], 64);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn storage_outlives_the_file_and_the_map_handle() {
        let data = vec![7u8; 4096];
        let path = temp_file("life", &data);
        let s = {
            let map = MappedFile::map(&File::open(&path).expect("open"))
                .expect("map")
                .expect("mapped");
            map.storage(128, 256).expect("ok").expect("aligned")
        };
        // The file is gone and the mapping's handle dropped; the storage keeps it alive.
        std::fs::remove_file(&path).expect("remove");
        assert_eq!(bytes_of(&s), vec![7u8; 256]);
    }

    #[test]
    fn misaligned_or_out_of_range_regions_are_refused() {
        let path = temp_file("align", &[1u8; 300]);
        let map = MappedFile::map(&File::open(&path).expect("open"))
            .expect("map")
            .expect("mapped");
        assert!(map.storage(3, 10).expect("ok").is_none());
        assert!(map.storage(256, 100).expect("ok").is_none());
        assert!(map.storage(usize::MAX - 1, 10).expect("ok").is_none());
        assert!(map.storage(0, 300).expect("ok").is_some());
        assert!(map.storage(64, 0).expect("ok").is_some());
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn empty_files_are_not_mapped() {
        let path = temp_file("empty", &[]);
        assert!(MappedFile::map(&File::open(&path).expect("open"))
            .expect("map")
            .is_none());
        let _ = std::fs::remove_file(&path);
    }
}
