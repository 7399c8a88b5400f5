//! Reference-counted, untyped tensor memory shared by every view of it.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::Arc;

use crate::device::Device;
use crate::error::{Error, Result};

/// Alignment of every allocation (cache line; enough for any element type and SIMD).
const ALIGN: usize = 64;

struct StorageImpl {
    /// Start of the zero-initialised allocation (dangling but aligned when `nbytes == 0`).
    ptr: *mut u8,
    nbytes: usize,
    device: Device,
}

// SAFETY: the buffer is plain bytes with no thread affinity. Concurrent writes to one storage from
// several threads are the user's responsibility in PyTorch too (the spec's "Evaluation Semantics":
// users must avoid racing mutations across forked tasks); kernels that parallelise split their
// writes into disjoint ranges.
unsafe impl Send for StorageImpl {}
// SAFETY: see above; shared access hands out raw pointers only.
unsafe impl Sync for StorageImpl {}

impl Drop for StorageImpl {
    fn drop(&mut self) {
        if self.nbytes > 0 {
            // SAFETY: `ptr` was returned by `alloc_zeroed` with exactly this layout.
            unsafe {
                dealloc(
                    self.ptr,
                    Layout::from_size_align_unchecked(self.nbytes, ALIGN),
                )
            }
        }
    }
}

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
        let ptr = if nbytes == 0 {
            ALIGN as *mut u8
        } else {
            let layout = Layout::from_size_align(nbytes, ALIGN).map_err(|_| oom())?;
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { alloc_zeroed(layout) };
            if p.is_null() {
                return Err(oom());
            }
            p
        };
        Ok(Storage {
            inner: Arc::new(StorageImpl {
                ptr,
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
        self.inner.ptr
    }

    /// Base pointer for writing. Writers must stay within `nbytes` and must not race with
    /// other writers of the same bytes.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.inner.ptr
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

    #[test]
    fn allocates_zeroed_and_aligned() {
        let s = Storage::zeroed(100, Device::Cpu).unwrap();
        assert_eq!(s.as_ptr() as usize % ALIGN, 0);
        assert!(s.to_bytes().iter().all(|&b| b == 0));
        let e = Storage::zeroed(0, Device::Cpu).unwrap();
        assert_eq!(e.to_bytes().len(), 0);
        assert!(Storage::zeroed(usize::MAX - 10, Device::Cpu).is_err());
        assert!(Storage::zeroed(4, Device::Cuda(None)).is_err());
        let c = Storage::from_bytes(&[1, 2, 3]).unwrap();
        assert_eq!(c.to_bytes(), vec![1, 2, 3]);
        assert!(Storage::ptr_eq(&c, &c.clone()));
    }
}
