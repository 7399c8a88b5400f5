//! A bounded cache of freed large tensor buffers, reused by the next allocation of the same
//! size. Without it, a large buffer freed to the C allocator goes back to the system (glibc
//! serves big blocks with `mmap` and returns them with `munmap`, or trims the heap), so the next
//! same-sized tensor (an elementwise output, a convolution's result, every iteration of a model)
//! pays a page fault and a kernel zero-fill per page before the kernel writes it: for a 16 MB
//! GELU output that was about as costly as the GELU itself. Only blocks of at least
//! [`MIN_BYTES`] are cached, exact-size matches only, at most [`MAX_TOTAL_BYTES`] in all (the
//! oldest are released first); `TSRS_BUFFER_CACHE=0` turns the cache off.

use std::alloc::{dealloc, Layout};
use std::ptr::NonNull;
use std::sync::OnceLock;

use parking_lot::Mutex;

/// Smallest block worth caching: glibc's default `mmap` threshold (smaller ones come from the
/// allocator's own free lists). At 1 MiB, a batch-8 small CNN's 128-512 KiB activations were
/// page-faulted afresh on every call (a third of its time).
pub(crate) const MIN_BYTES: usize = 128 << 10;
/// The most bytes kept in the cache.
pub(crate) const MAX_TOTAL_BYTES: usize = 256 << 20;

/// A freed block: its pointer and the layout it was allocated with.
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a cached block is plain memory owned by the cache alone (no other reference to it
// exists until `take` hands it out again), so it may move between threads.
unsafe impl Send for Block {}

/// The cached blocks, oldest first, and their total size.
#[derive(Default)]
struct Cache {
    blocks: Vec<Block>,
    total: usize,
}

fn cache() -> Option<&'static Mutex<Cache>> {
    static CACHE: OnceLock<Option<Mutex<Cache>>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let off = std::env::var("TSRS_BUFFER_CACHE").is_ok_and(|v| v.trim() == "0");
            (!off).then(|| Mutex::new(Cache::default()))
        })
        .as_ref()
}

/// A cached block allocated with exactly `layout`, if there is one (its contents are
/// whatever the previous tensor left).
pub(crate) fn take(layout: Layout) -> Option<NonNull<u8>> {
    if layout.size() < MIN_BYTES {
        return None;
    }
    let mut c = cache()?.lock();
    let i = c.blocks.iter().rposition(|b| b.layout == layout)?;
    let b = c.blocks.remove(i);
    c.total -= layout.size();
    Some(b.ptr)
}

/// Returns a block to the cache, or frees it when it is small, the cache is off, or it does not
/// fit (older blocks are freed to make room).
///
/// # Safety
/// `ptr` must have been allocated by the global allocator with `layout`, and nothing may use it
/// afterwards.
pub(crate) unsafe fn give(ptr: NonNull<u8>, layout: Layout) {
    let keep = layout.size() >= MIN_BYTES && layout.size() <= MAX_TOTAL_BYTES / 4;
    let Some(cache) = cache().filter(|_| keep) else {
        // SAFETY: forwarded from the caller.
        unsafe { dealloc(ptr.as_ptr(), layout) };
        return;
    };
    let mut evicted = Vec::new();
    {
        let mut c = cache.lock();
        while c.total + layout.size() > MAX_TOTAL_BYTES && !c.blocks.is_empty() {
            let old = c.blocks.remove(0);
            c.total -= old.layout.size();
            evicted.push(old);
        }
        c.blocks.push(Block { ptr, layout });
        c.total += layout.size();
    }
    for b in evicted {
        // SAFETY: cached blocks came from the global allocator with their layouts and are
        // owned by the cache alone.
        unsafe { dealloc(b.ptr.as_ptr(), b.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_large_blocks_are_reused_and_small_ones_are_not() {
        // An odd size no other test allocates, so concurrent tests cannot take the block.
        let layout = Layout::from_size_align(MIN_BYTES + 64 * 4099, 64).unwrap();
        // SAFETY: a non-zero layout; the block is handed to the cache and not used again.
        let p = NonNull::new(unsafe { std::alloc::alloc(layout) }).unwrap();
        // SAFETY: allocated with `layout` just above.
        unsafe { give(p, layout) };
        if cache().is_some() {
            assert_eq!(take(layout), Some(p));
        }
        let again = take(layout);
        assert_eq!(again, None);
        if cache().is_some() {
            // SAFETY: `p` was taken back from the cache, so it is ours (with the cache off,
            // `give` freed it and it is not touched).
            unsafe { dealloc(p.as_ptr(), layout) };
        }
        let small = Layout::from_size_align(4096, 64).unwrap();
        assert_eq!(take(small), None);
    }

    #[test]
    fn the_cache_stays_bounded() {
        let layout = Layout::from_size_align(MAX_TOTAL_BYTES / 4 - 64 * 7, 64).unwrap();
        for _ in 0..6 {
            // SAFETY: a non-zero layout; the block is handed to the cache.
            let p = NonNull::new(unsafe { std::alloc::alloc(layout) }).unwrap();
            // SAFETY: allocated with `layout` just above.
            unsafe { give(p, layout) };
        }
        if let Some(c) = cache() {
            assert!(c.lock().total <= MAX_TOTAL_BYTES);
        }
        while let Some(p) = take(layout) {
            // SAFETY: taken from the cache, allocated with `layout`.
            unsafe { dealloc(p.as_ptr(), layout) };
        }
    }
}
