//! Reference-counted, untyped tensor memory shared by every view of it.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::device::Device;
use crate::error::{Error, Result};

/// Alignment of every buffer: enough for any element type and for SIMD loads.
const ALIGN: usize = 64;

struct StorageImpl {
    /// The bytes, allocated zeroed with `layout` (dangling when `layout.size() == 0`). Mutated
    /// through raw pointers by kernels (see the SAFETY notes in `Storage`).
    ptr: NonNull<u8>,
    layout: Layout,
    nbytes: usize,
    device: Device,
    /// For memory borrowed from elsewhere (a NumPy array, a DLPack producer): what keeps it
    /// alive. Dropped with the storage instead of deallocating `ptr`.
    owner: Option<Box<dyn std::any::Any + Send + Sync>>,
    /// Autograd's version counter, shared by every view: bumped by each in-place write so that
    /// a backward pass can tell a saved tensor was modified.
    version: std::sync::atomic::AtomicU64,
}

impl Drop for StorageImpl {
    fn drop(&mut self) {
        if self.owner.is_none() && self.layout.size() != 0 {
            // SAFETY: `ptr` was returned by `buffer_cache::alloc(self.layout)` (possibly through
            // the cache) and is released only here.
            unsafe { crate::buffer_cache::give(self.ptr, self.layout) };
        }
    }
}

// SAFETY: the buffer is plain bytes with no thread affinity. Concurrent writes to one storage from
// several threads are the user's responsibility in PyTorch too (the spec's "Evaluation Semantics":
// users must avoid racing mutations across forked tasks); kernels that parallelise split their
// writes into disjoint ranges.
unsafe impl Send for StorageImpl {}
// SAFETY: see above; shared access hands out raw pointers only.
unsafe impl Sync for StorageImpl {}

/// Untyped memory shared by tensors that view it. Cloning aliases.
#[derive(Clone)]
pub struct Storage {
    inner: Arc<StorageImpl>,
}

impl Storage {
    /// Zero-filled storage of `nbytes` bytes on `device` (only the CPU allocates today).
    pub fn zeroed(nbytes: usize, device: Device) -> Result<Storage> {
        Storage::allocate(nbytes, device, true)
    }

    /// Storage of `nbytes` bytes whose contents are not initialized, for kernels that write
    /// every byte before anything reads it (a fresh elementwise output): skips `zeroed`'s serial
    /// memset of the whole buffer. Callers must not expose it before it is fully written.
    pub(crate) fn uninit(nbytes: usize, device: Device) -> Result<Storage> {
        Storage::allocate(nbytes, device, false)
    }

    fn allocate(nbytes: usize, device: Device, zero: bool) -> Result<Storage> {
        if device != Device::Cpu {
            return Err(Error::runtime(format!(
                "tensors on device '{device}' are not supported: this build has no CUDA backend"
            )));
        }
        let oom = || {
            Error::runtime(format!(
                "DefaultCPUAllocator: not enough memory: you tried to allocate {nbytes} bytes."
            ))
        };
        let mut layout =
            Layout::from_size_align(nbytes.div_ceil(ALIGN) * ALIGN, ALIGN).map_err(|_| oom())?;
        let ptr = if layout.size() == 0 {
            // A dangling, aligned pointer: never dereferenced because the size is 0.
            NonNull::new(ALIGN as *mut u8).ok_or_else(oom)?
        } else if let Some((p, block)) = crate::buffer_cache::take(layout) {
            if zero {
                // SAFETY: the cached block holds at least `layout.size()` bytes and is ours
                // alone.
                unsafe { std::ptr::write_bytes(p.as_ptr(), 0, layout.size()) };
            }
            // The block may be larger than asked for; it is freed with its own layout.
            layout = block;
            p
        } else {
            // The layout has a non-zero size. Zeroed allocation lets the system hand out fresh
            // zero pages without writing them; uninitialized memory is only handed to callers
            // that overwrite it (see `uninit`).
            crate::buffer_cache::alloc(layout, zero).ok_or_else(oom)?
        };
        Ok(Storage {
            inner: Arc::new(StorageImpl {
                ptr,
                layout,
                nbytes,
                device,
                owner: None,
                version: std::sync::atomic::AtomicU64::new(0),
            }),
        })
    }

    /// Storage over memory owned by someone else (a NumPy array, a DLPack tensor): no copy is
    /// made, and `owner` is dropped when the last tensor using the memory goes away.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads and writes of `nbytes` bytes, aligned for the element
    /// type of every tensor that will view it, and stay so until `owner` is dropped; nothing
    /// else may free or move the memory in the meantime.
    pub unsafe fn from_external(
        ptr: *mut u8,
        nbytes: usize,
        owner: Box<dyn std::any::Any + Send + Sync>,
    ) -> Result<Storage> {
        let ptr = if nbytes == 0 {
            NonNull::new(ALIGN as *mut u8)
        } else {
            NonNull::new(ptr)
        }
        .ok_or_else(|| Error::runtime("cannot wrap a null data pointer as tensor storage"))?;
        // A zero-size layout: `Drop` never deallocates borrowed memory.
        let layout = Layout::from_size_align(0, 1).map_err(|e| Error::runtime(e.to_string()))?;
        Ok(Storage {
            inner: Arc::new(StorageImpl {
                ptr,
                layout,
                nbytes,
                device: Device::Cpu,
                owner: Some(owner),
                version: std::sync::atomic::AtomicU64::new(0),
            }),
        })
    }

    /// True when the memory is borrowed from another owner (see [`Storage::from_external`]).
    pub fn is_external(&self) -> bool {
        self.inner.owner.is_some()
    }

    /// Storage holding a copy of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Storage> {
        // Every byte is written below, so the zero fill would be wasted work.
        let s = Storage::uninit(bytes.len(), Device::Cpu)?;
        // SAFETY: `s` is freshly allocated with exactly `bytes.len()` bytes and not yet shared;
        // the copy initializes all of them before the storage is returned.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), s.as_mut_ptr(), bytes.len()) };
        Ok(s)
    }

    /// The autograd version counter (`Tensor._version`), shared by the views of this storage.
    pub fn version(&self) -> u64 {
        self.inner
            .version
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records one in-place write (see [`Storage::version`]).
    pub fn bump_version(&self) {
        self.inner
            .version
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Number of bytes.
    pub fn nbytes(&self) -> usize {
        self.inner.nbytes
    }

    /// Device the memory lives on.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// Base pointer for reading.
    pub fn as_ptr(&self) -> *const u8 {
        self.as_mut_ptr() as *const u8
    }

    /// Base pointer for writing. Writers must stay within `nbytes` and must not race with
    /// other writers of the same bytes.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.inner.ptr.as_ptr()
    }

    /// A copy of the bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.nbytes()];
        // SAFETY: the storage holds `nbytes` initialised bytes.
        unsafe { std::ptr::copy_nonoverlapping(self.as_ptr(), out.as_mut_ptr(), out.len()) };
        out
    }

    /// True when both handles refer to the same memory.
    pub fn ptr_eq(a: &Storage, b: &Storage) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }

    /// A stable identity for the storage (for serialization memo tables).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Storage({} bytes on {})", self.nbytes(), self.device())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    struct Owner {
        data: Vec<f32>,
        dropped: Arc<AtomicBool>,
    }

    impl Drop for Owner {
        fn drop(&mut self) {
            self.dropped.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn external_memory_is_viewed_in_place_and_released_with_the_last_tensor() {
        let dropped = Arc::new(AtomicBool::new(false));
        let mut owner = Box::new(Owner {
            data: vec![1.0, 2.0, 3.0, 4.0],
            dropped: dropped.clone(),
        });
        let ptr = owner.data.as_mut_ptr() as *mut u8;
        // SAFETY: the Vec's buffer lives inside `owner`, which the storage keeps until it drops.
        let s = unsafe { Storage::from_external(ptr, 16, owner) }.unwrap();
        assert!(s.is_external());
        assert_eq!(s.as_ptr(), ptr as *const u8);
        let t = crate::Tensor::from_parts(s, &[2, 2], &[1, 2], 0, crate::DType::Float32).unwrap();
        assert_eq!(t.to_vec::<f32>(), vec![1.0, 3.0, 2.0, 4.0]);
        assert!(!dropped.load(Ordering::SeqCst));
        drop(t);
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[test]
    fn null_external_memory_is_an_error() {
        // SAFETY: a null pointer is refused before it is stored.
        let r = unsafe { Storage::from_external(std::ptr::null_mut(), 4, Box::new(())) };
        assert!(r.is_err());
    }
}
