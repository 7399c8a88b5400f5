//! Reference-counted, untyped tensor memory shared by every view of it.

use std::alloc::{alloc_zeroed, dealloc, Layout};
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
}

impl Drop for StorageImpl {
    fn drop(&mut self) {
        if self.layout.size() != 0 {
            // SAFETY: `ptr` was returned by `alloc_zeroed(self.layout)` and is freed only here.
            unsafe { dealloc(self.ptr.as_ptr(), self.layout) };
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
        let layout =
            Layout::from_size_align(nbytes.div_ceil(ALIGN) * ALIGN, ALIGN).map_err(|_| oom())?;
        let ptr = if layout.size() == 0 {
            // A dangling, aligned pointer: never dereferenced because the size is 0.
            NonNull::new(ALIGN as *mut u8).ok_or_else(oom)?
        } else {
            // SAFETY: the layout has a non-zero size. Zeroed allocation lets the system hand out
            // fresh zero pages without writing them.
            NonNull::new(unsafe { alloc_zeroed(layout) }).ok_or_else(oom)?
        };
        Ok(Storage {
            inner: Arc::new(StorageImpl {
                ptr,
                layout,
                nbytes,
                device,
            }),
        })
    }

    /// Storage holding a copy of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Storage> {
        let s = Storage::zeroed(bytes.len(), Device::Cpu)?;
        // SAFETY: `s` is freshly allocated with exactly `bytes.len()` bytes and not yet shared.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), s.as_mut_ptr(), bytes.len()) };
        Ok(s)
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
