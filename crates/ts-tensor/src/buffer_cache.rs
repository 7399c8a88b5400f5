//! A bounded cache of freed large tensor buffers, reused by the next allocation of the same
//! size. Without it, a large buffer freed to the C allocator goes back to the system (glibc
//! serves big blocks with `mmap` and returns them with `munmap`, or trims the heap), so the next
//! same-sized tensor (an elementwise output, a convolution's result, every iteration of a model)
//! pays a page fault and a kernel zero-fill per page before the kernel writes it: for a 16 MB
//! GELU output that was about as costly as the GELU itself. Only blocks of at least
//! [`MIN_BYTES`] are cached, exact-size matches only, at most [`MAX_TOTAL_BYTES`] in all (the
//! oldest are released first); `TSRS_BUFFER_CACHE=0` turns the cache off.
//!
//! Small blocks (up to [`SMALL_MAX_BYTES`]) are kept apart, in a per-thread free list per size,
//! a few of each: a loop of small-tensor operators frees and allocates the same few sizes on
//! every operator, and the C allocator's aligned allocation (`memalign`: over-allocate, split
//! and later re-merge the pieces) was a sixth of such an operator's time.

use std::alloc::{dealloc, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::OnceLock;

use parking_lot::Mutex;

/// Smallest block worth caching: glibc's default `mmap` threshold (smaller ones come from the
/// allocator's own free lists). At 1 MiB, a batch-8 small CNN's 128-512 KiB activations were
/// page-faulted afresh on every call (a third of its time).
pub(crate) const MIN_BYTES: usize = 128 << 10;
/// The most bytes kept in the cache.
pub(crate) const MAX_TOTAL_BYTES: usize = 256 << 20;

/// Largest block kept in the per-thread small-block lists.
pub(crate) const SMALL_MAX_BYTES: usize = 4096;
/// Size step of the small-block lists: tensor buffers are allocated in multiples of it.
const SMALL_STEP: usize = 64;
/// Blocks kept per small size and thread.
const SMALL_PER_SIZE: usize = 8;

/// One thread's freed small blocks, by size (`SMALL_STEP`, `2 * SMALL_STEP`, ...), all with
/// alignment `SMALL_STEP`.
struct SmallBlocks {
    lists: Vec<Vec<NonNull<u8>>>,
}

impl SmallBlocks {
    /// The list for `layout`, when it is a small-block layout.
    fn list(&mut self, layout: Layout) -> Option<&mut Vec<NonNull<u8>>> {
        let small = layout.align() == SMALL_STEP
            && layout.size().is_multiple_of(SMALL_STEP)
            && (SMALL_STEP..=SMALL_MAX_BYTES).contains(&layout.size());
        if !small {
            return None;
        }
        if self.lists.is_empty() {
            self.lists = (0..SMALL_MAX_BYTES / SMALL_STEP)
                .map(|_| Vec::new())
                .collect();
        }
        self.lists.get_mut(layout.size() / SMALL_STEP - 1)
    }
}

impl Drop for SmallBlocks {
    fn drop(&mut self) {
        for (i, list) in self.lists.iter().enumerate() {
            let size = (i + 1) * SMALL_STEP;
            for p in list {
                // SAFETY: the list holds blocks allocated with this size and `SMALL_STEP`
                // alignment, owned by the list alone.
                unsafe {
                    dealloc(
                        p.as_ptr(),
                        Layout::from_size_align_unchecked(size, SMALL_STEP),
                    )
                };
            }
        }
    }
}

thread_local! {
    static SMALL: RefCell<SmallBlocks> = const { RefCell::new(SmallBlocks { lists: Vec::new() }) };
}

/// A freed small block of exactly `layout` kept by this thread, if there is one.
fn take_small(layout: Layout) -> Option<NonNull<u8>> {
    SMALL
        .try_with(|s| s.try_borrow_mut().ok()?.list(layout)?.pop())
        .ok()
        .flatten()
}

/// Keeps a small block for this thread's next allocation of its size; gives it back when it
/// is not a small-block layout or that size's list is full.
fn keep_small(ptr: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>> {
    let kept = SMALL
        .try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            let list = s.list(layout)?;
            (list.len() < SMALL_PER_SIZE).then(|| list.push(ptr))
        })
        .ok()
        .flatten();
    match kept {
        Some(()) => None,
        None => Some(ptr),
    }
}

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
        return cache().and_then(|_| take_small(layout));
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
    if layout.size() <= SMALL_MAX_BYTES && cache().is_some() {
        if let Some(ptr) = keep_small(ptr, layout) {
            // SAFETY: forwarded from the caller; the block was not kept.
            unsafe { dealloc(ptr.as_ptr(), layout) };
        }
        return;
    }
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
        let small = Layout::from_size_align(MIN_BYTES - 64, 64).unwrap();
        assert_eq!(take(small), None);
    }

    #[test]
    fn small_blocks_are_reused_by_their_thread_a_few_per_size() {
        let layout = Layout::from_size_align(SMALL_MAX_BYTES - SMALL_STEP * 3, SMALL_STEP).unwrap();
        let blocks: Vec<NonNull<u8>> = (0..SMALL_PER_SIZE + 2)
            // SAFETY: a non-zero layout.
            .map(|_| NonNull::new(unsafe { std::alloc::alloc(layout) }).unwrap())
            .collect();
        for &p in &blocks {
            // SAFETY: allocated with `layout` above and not used again.
            unsafe { give(p, layout) };
        }
        if cache().is_none() {
            assert_eq!(take(layout), None);
            return;
        }
        // The list keeps the first `SMALL_PER_SIZE` (the rest were freed), newest first.
        let mut back = Vec::new();
        while let Some(p) = take(layout) {
            back.push(p);
        }
        let kept: Vec<NonNull<u8>> = blocks[..SMALL_PER_SIZE].iter().rev().copied().collect();
        assert_eq!(back, kept);
        // Another thread has its own (empty) list.
        std::thread::spawn(move || assert_eq!(take(layout), None))
            .join()
            .unwrap();
        // A block of another alignment is never a small block.
        let odd = Layout::from_size_align(SMALL_STEP, 16).unwrap();
        assert_eq!(take(odd), None);
        for p in back {
            // SAFETY: taken back from the list, so ours; allocated with `layout`.
            unsafe { dealloc(p.as_ptr(), layout) };
        }
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
