//! A bounded cache of freed large tensor buffers, reused by the next allocation of the same
//! size. Without it, a large buffer freed to the C allocator goes back to the system (glibc
//! serves big blocks with `mmap` and returns them with `munmap`, or trims the heap), so the next
//! same-sized tensor (an elementwise output, a convolution's result, every iteration of a model)
//! pays a page fault and a kernel zero-fill per page before the kernel writes it: for a 16 MB
//! GELU output that was about as costly as the GELU itself. Only blocks of at least
//! [`MIN_BYTES`] are cached, at most [`MAX_TOTAL_BYTES`] in all (the oldest are released
//! first); `TSRS_BUFFER_CACHE=0` turns the cache off, and [`set_keep_freed_buffers`] bounds it
//! to [`ONE_CALL_BYTES`] (a process that calls its model once has no later call to serve), and
//! then splits blocks for smaller requests and lets go of those unused for a while.
//!
//! Large blocks are anonymous memory mappings of their own ([`alloc`] and [`free`]), not
//! blocks of the C allocator: glibc raises its `mmap` threshold after the first large free,
//! after which freed blocks stayed in its heap, resident, whether or not anything reused them
//! (a one-shot ResNet-18 forward ended with several megabytes of them).
//!
//! A request takes the smallest cached block that holds it and is at most [`FIT_RATIO`] times
//! its size (the newest of equal ones), not only an exact match: a network's activations
//! shrink stage by stage, and with exact matches every stage's freed blocks stayed cached,
//! unused, while the next stage touched fresh pages (a ResNet-18 forward ended with about
//! 11 MB of such blocks). The pages of a reused block are already resident, so serving a
//! smaller tensor from it costs no memory.
//!
//! Small blocks (up to [`SMALL_MAX_BYTES`]) are kept apart, in a per-thread free list per size,
//! a few of each: a loop of small-tensor operators frees and allocates the same few sizes on
//! every operator, and the C allocator's aligned allocation (`memalign`: over-allocate, split
//! and later re-merge the pieces) was a sixth of such an operator's time.

use std::alloc::{alloc as global_alloc, alloc_zeroed, dealloc, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;

/// Smallest block worth caching: glibc's default `mmap` threshold (smaller ones come from the
/// allocator's own free lists). At 1 MiB, a batch-8 small CNN's 128-512 KiB activations were
/// page-faulted afresh on every call (a third of its time).
pub(crate) const MIN_BYTES: usize = 128 << 10;
/// The most bytes kept in the cache.
pub(crate) const MAX_TOTAL_BYTES: usize = 256 << 20;

/// A cached block serves requests down to `1 / FIT_RATIO` of its size.
pub(crate) const FIT_RATIO: usize = 4;

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

/// A freed block: its pointer, the layout it was allocated with, and the allocation count
/// when it was cached or last served a request (see [`ONE_CALL_AGE`]).
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
    since: u64,
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

impl Cache {
    /// The block [`best_fit`] picks for `layout`, removed; with `split`, any larger block
    /// serves and only the pages the request needs are handed out (the rest stays cached).
    fn take(&mut self, layout: Layout, split: bool, now: u64) -> Option<(NonNull<u8>, Layout)> {
        let i = best_fit(&self.blocks, layout, split)?;
        let b = self.blocks.remove(i);
        self.total -= b.layout.size();
        if split {
            if let Some((front, tail)) = split_block(&b, layout.size(), now) {
                self.total += tail.layout.size();
                self.blocks.insert(i, tail);
                return Some((b.ptr, front));
            }
        }
        Some((b.ptr, b.layout))
    }

    /// Removes the oldest blocks until at most `bytes` are cached; returns them for freeing
    /// (outside the lock).
    fn shrink_to(&mut self, bytes: usize) -> Vec<Block> {
        let mut evicted = Vec::new();
        while self.total > bytes && !self.blocks.is_empty() {
            let old = self.blocks.remove(0);
            self.total -= old.layout.size();
            evicted.push(old);
        }
        evicted
    }

    /// Removes the blocks that have served nothing in the last `age` allocations before
    /// `now`; returns them for freeing (outside the lock).
    fn expire(&mut self, now: u64, age: u64) -> Vec<Block> {
        if self
            .blocks
            .iter()
            .all(|b| now.saturating_sub(b.since) <= age)
        {
            return Vec::new();
        }
        let (old, young) = std::mem::take(&mut self.blocks)
            .into_iter()
            .partition(|b| now.saturating_sub(b.since) > age);
        self.blocks = young;
        self.total = self.blocks.iter().map(|b| b.layout.size()).sum();
        old
    }
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

/// What the cache holds when freed buffers are not kept for later calls: the blocks the next
/// few layers reuse. A block there is split to serve smaller requests and released when it
/// has served nothing for [`ONE_CALL_AGE`] allocations, so a shrinking network's early
/// megabyte-sized activations become its next stages' (a one-shot ResNet-18 forward: 7,100
/// -> 5,150 page faults against a 1 MiB cache without splitting, same peak memory).
pub(crate) const ONE_CALL_BYTES: usize = 4 << 20;

/// Whether freed large blocks are kept for reuse (see [`set_keep_freed_buffers`]).
static KEEP_FREED: AtomicBool = AtomicBool::new(true);

/// Sets whether freed large tensor buffers are kept for later allocations (the default) or,
/// beyond [`ONE_CALL_BYTES`] of them, returned to the system at once. Keeping them spares a
/// model called again the page faults of fresh memory; a process that runs a model once
/// (`tsrs run`) would only hold them to its end. Turning it off releases what the cache holds
/// beyond that bound.
pub fn set_keep_freed_buffers(keep: bool) {
    KEEP_FREED.store(keep, Ordering::Relaxed);
    if let Some(cache) = cache() {
        let evicted = cache.lock().shrink_to(budget());
        release(evicted);
    }
}

/// The most bytes the cache holds under the current setting.
fn budget() -> usize {
    if keep_freed() {
        MAX_TOTAL_BYTES
    } else {
        ONE_CALL_BYTES
    }
}

/// Frees blocks the cache let go of.
fn release(blocks: Vec<Block>) {
    for b in blocks {
        // SAFETY: cached blocks came from `alloc` with their layouts and were owned by the
        // cache alone, which has removed them.
        unsafe { free(b.ptr, b.layout) };
    }
}

/// Whether freed large buffers are kept for reuse ([`set_keep_freed_buffers`]); the kernels'
/// own buffer pools follow it too.
pub(crate) fn keep_freed() -> bool {
    KEEP_FREED.load(Ordering::Relaxed)
}

/// A fresh block for `layout` (non-zero size), zero-filled when `zero`: an anonymous mapping of
/// its own when it is large (fresh pages are zero without a memset), else from the global
/// allocator. `None` when the system has no memory for it.
pub(crate) fn alloc(layout: Layout, zero: bool) -> Option<NonNull<u8>> {
    if layout.size() >= MIN_BYTES {
        return mapping::map(layout.size());
    }
    // SAFETY: the caller's layout has a non-zero size.
    NonNull::new(unsafe {
        if zero {
            alloc_zeroed(layout)
        } else {
            global_alloc(layout)
        }
    })
}

/// Frees a block from [`alloc`].
///
/// # Safety
/// `ptr` must come from [`alloc`] with `layout` (or from [`take`], which hands out its layout),
/// and nothing may use it afterwards.
pub(crate) unsafe fn free(ptr: NonNull<u8>, layout: Layout) {
    if layout.size() >= MIN_BYTES {
        // SAFETY: forwarded from the caller: a large block is a mapping of `layout.size()`.
        unsafe { mapping::unmap(ptr, layout.size()) };
    } else {
        // SAFETY: forwarded from the caller: a small block came from the global allocator.
        unsafe { dealloc(ptr.as_ptr(), layout) };
    }
}

/// Large blocks as anonymous private mappings (the global allocator under Miri and off Unix).
mod mapping {
    use std::ptr::NonNull;

    /// Whether a block may be split into pieces freed one by one (mappings may; blocks of the
    /// global allocator must be freed whole).
    pub(super) const SPLITS: bool = cfg!(all(unix, not(miri)));

    /// The system's page size: pieces of a split mapping start on page boundaries.
    #[cfg(all(unix, not(miri)))]
    pub(super) fn page_size() -> usize {
        // SAFETY: `sysconf` only reads a system constant.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
    }

    /// A page size for blocks that are never split.
    #[cfg(not(all(unix, not(miri))))]
    pub(super) fn page_size() -> usize {
        4096
    }

    /// A zero-filled, page-aligned mapping of `len` bytes.
    #[cfg(all(unix, not(miri)))]
    pub(super) fn map(len: usize) -> Option<NonNull<u8>> {
        // SAFETY: a fresh anonymous private mapping: no file, no fixed address, so it cannot
        // alias any existing memory.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        NonNull::new(p as *mut u8)
    }

    /// Unmaps a block from [`map`].
    ///
    /// # Safety
    /// `ptr` and `len` must be one mapping from [`map`], unused afterwards.
    #[cfg(all(unix, not(miri)))]
    pub(super) unsafe fn unmap(ptr: NonNull<u8>, len: usize) {
        // SAFETY: forwarded from the caller. Unmapping a whole mapping of ours cannot fail.
        unsafe { libc::munmap(ptr.as_ptr() as *mut libc::c_void, len) };
    }

    /// The layout of a large block from the global allocator.
    #[cfg(not(all(unix, not(miri))))]
    fn layout(len: usize) -> std::alloc::Layout {
        // A page alignment, like a mapping's; `len` came from a valid layout.
        std::alloc::Layout::from_size_align(len, 4096).expect("block layout")
    }

    /// A zero-filled, page-aligned block of `len` bytes.
    #[cfg(not(all(unix, not(miri))))]
    pub(super) fn map(len: usize) -> Option<NonNull<u8>> {
        // SAFETY: `len` is non-zero (at least `MIN_BYTES`).
        NonNull::new(unsafe { std::alloc::alloc_zeroed(layout(len)) })
    }

    /// Frees a block from [`map`].
    ///
    /// # Safety
    /// `ptr` and `len` must be one block from [`map`], unused afterwards.
    #[cfg(not(all(unix, not(miri))))]
    pub(super) unsafe fn unmap(ptr: NonNull<u8>, len: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { std::alloc::dealloc(ptr.as_ptr(), layout(len)) };
    }
}

/// A cached block that holds `layout`, if there is one, with the layout it was allocated
/// with (at least as large; free it with that one). Its contents are whatever the previous
/// tensor left.
pub(crate) fn take(layout: Layout) -> Option<(NonNull<u8>, Layout)> {
    let now = ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    let one_call = !keep_freed();
    if layout.size() < MIN_BYTES {
        // A network's last layers may allocate only small tensors: they age the cache too.
        if one_call && HOLDS_BLOCKS.load(Ordering::Relaxed) && now.is_multiple_of(16) {
            if let Some(cache) = cache() {
                let expired = cache.lock().expire(now, ONE_CALL_AGE);
                release(expired);
            }
        }
        return cache()
            .and_then(|_| take_small(layout))
            .map(|p| (p, layout));
    }
    let (taken, expired) = {
        let mut c = cache()?.lock();
        let expired = if one_call {
            c.expire(now, ONE_CALL_AGE)
        } else {
            Vec::new()
        };
        let taken = c.take(layout, one_call && mapping::SPLITS, now);
        HOLDS_BLOCKS.store(!c.blocks.is_empty(), Ordering::Relaxed);
        (taken, expired)
    };
    release(expired);
    taken
}

/// Allocations so far (through [`take`]): the clock cached blocks age by.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// Whether the large-block cache may hold blocks (read without its lock).
static HOLDS_BLOCKS: AtomicBool = AtomicBool::new(false);

/// In a one-call process, a cached block that has served no request in this many allocations
/// is released: a network's activations shrink stage by stage, so a block the next few layers
/// did not use would only add to the process's peak memory at its end, when the last layers'
/// weights are mapped in.
const ONE_CALL_AGE: u64 = 32;

/// Splits `b` into a front block of `need` bytes rounded up to whole pages and the rest, when
/// the rest is still a large block (and `b` is aligned to at most a page); `None` otherwise.
/// Both pieces keep `b`'s alignment.
fn split_block(b: &Block, need: usize, now: u64) -> Option<(Layout, Block)> {
    let front = need.div_ceil(mapping::page_size()) * mapping::page_size();
    let rest = b.layout.size().checked_sub(front)?;
    let align = b.layout.align();
    // The tail starts on a page boundary: a block aligned past that is never split.
    if rest < MIN_BYTES || align > mapping::page_size() {
        return None;
    }
    // SAFETY: `front < b.layout.size()`, so the tail pointer is inside the block.
    let tail = NonNull::new(unsafe { b.ptr.as_ptr().add(front) })?;
    Some((
        Layout::from_size_align(front, align).ok()?,
        Block {
            ptr: tail,
            layout: Layout::from_size_align(rest, align).ok()?,
            since: now,
        },
    ))
}

/// The index of the block `take` hands out for `layout`: the smallest one of its alignment
/// that holds it and is at most [`FIT_RATIO`] times as large, the newest among equals.
fn best_fit(blocks: &[Block], layout: Layout, any_larger: bool) -> Option<usize> {
    let fits = |b: &Block| {
        b.layout.align() == layout.align()
            && b.layout.size() >= layout.size()
            && (any_larger || b.layout.size() / FIT_RATIO <= layout.size())
    };
    let mut best: Option<(usize, usize)> = None;
    for (i, b) in blocks.iter().enumerate() {
        if fits(b) && best.is_none_or(|(_, size)| b.layout.size() <= size) {
            best = Some((i, b.layout.size()));
        }
    }
    best.map(|(i, _)| i)
}

/// Returns a block to the cache, or frees it when it is small, the cache is off, or it does not
/// fit (older blocks are freed to make room).
///
/// # Safety
/// `ptr` must have been allocated by [`alloc`] with `layout` (or taken from the cache with it),
/// and nothing may use it afterwards.
pub(crate) unsafe fn give(ptr: NonNull<u8>, layout: Layout) {
    if layout.size() <= SMALL_MAX_BYTES && cache().is_some() {
        if let Some(ptr) = keep_small(ptr, layout) {
            // SAFETY: forwarded from the caller; the block was not kept.
            unsafe { dealloc(ptr.as_ptr(), layout) };
        }
        return;
    }
    let budget = budget();
    let keep = layout.size() >= MIN_BYTES && layout.size() <= (MAX_TOTAL_BYTES / 4).min(budget);
    let Some(cache) = cache().filter(|_| keep) else {
        // SAFETY: forwarded from the caller.
        unsafe { free(ptr, layout) };
        return;
    };
    let evicted = {
        let mut c = cache.lock();
        let evicted = c.shrink_to(budget - layout.size());
        c.blocks.push(Block {
            ptr,
            layout,
            since: ALLOCATIONS.load(Ordering::Relaxed),
        });
        c.total += layout.size();
        HOLDS_BLOCKS.store(true, Ordering::Relaxed);
        evicted
    };
    release(evicted);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_large_blocks_are_reused_and_small_ones_are_not() {
        // An odd size few other tests come near, so concurrent tests are unlikely to take it;
        // if one does, the block is simply not seen again here.
        let layout = Layout::from_size_align((40 << 20) + 64 * 4099, 64).unwrap();
        // The block is handed to the cache and not used again.
        let p = alloc(layout, false).unwrap();
        // SAFETY: allocated with `layout` just above.
        unsafe { give(p, layout) };
        let back = take(layout);
        if cache().is_none() {
            assert_eq!(back, None);
        }
        if let Some((q, got)) = back {
            assert!(got.size() >= layout.size() && got.align() == layout.align());
            // SAFETY: a block taken from the cache is ours, allocated with `got`.
            unsafe { free(q, got) };
        }
        let small = Layout::from_size_align(MIN_BYTES - 64, 64).unwrap();
        assert_eq!(take(small), None);
    }

    #[test]
    fn fresh_blocks_are_zeroed_when_asked_and_freed_by_their_size() {
        // Below and above `MIN_BYTES`: the global allocator, then a mapping of its own.
        for size in [4096, MIN_BYTES, MIN_BYTES * 3 + 64] {
            let layout = Layout::from_size_align(size, 64).unwrap();
            let p = alloc(layout, true).unwrap();
            assert_eq!(p.as_ptr() as usize % 64, 0);
            // SAFETY: a fresh block of `size` bytes, ours alone.
            let bytes = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), size) };
            assert!(bytes.iter().all(|&b| b == 0));
            bytes.fill(7);
            // SAFETY: allocated with `layout` just above and not used again.
            unsafe { free(p, layout) };
        }
    }

    fn blocks_of(sizes: &[usize]) -> Vec<Block> {
        sizes
            .iter()
            .map(|&size| Block {
                ptr: NonNull::dangling(),
                layout: Layout::from_size_align(size, 64).unwrap(),
                since: 0,
            })
            .collect()
    }

    #[test]
    fn a_request_takes_the_smallest_block_that_holds_it_within_the_ratio() {
        let mb = 1 << 20;
        let blocks = blocks_of(&[8 * mb, 2 * mb, 3 * mb, 2 * mb, mb]);
        let want = |size: usize| Layout::from_size_align(size, 64).unwrap();
        // Exact matches win, the newest of equal blocks first.
        assert_eq!(best_fit(&blocks, want(2 * mb), false), Some(3));
        assert_eq!(best_fit(&blocks, want(mb), false), Some(4));
        // Otherwise the smallest block that holds the request.
        assert_eq!(best_fit(&blocks, want(2 * mb + 64), false), Some(2));
        assert_eq!(best_fit(&blocks, want(4 * mb), false), Some(0));
        // Nothing holds a larger request.
        assert_eq!(best_fit(&blocks, want(9 * mb), false), None);
        // A block more than FIT_RATIO times the request is left for a larger one.
        let big = blocks_of(&[8 * mb]);
        assert_eq!(best_fit(&big, want(2 * mb), false), Some(0));
        assert_eq!(best_fit(&big, want(2 * mb - 64), false), None);
        // Another alignment never matches.
        let odd = Layout::from_size_align(2 * mb, 128).unwrap();
        assert_eq!(best_fit(&blocks, odd, false), None);
    }

    #[test]
    fn a_split_block_hands_out_whole_pages_and_keeps_the_rest() {
        let page = mapping::page_size();
        let layout = Layout::from_size_align(128 * page, 64).unwrap();
        let p = alloc(layout, true).unwrap();
        let mut c = Cache::default();
        c.blocks.push(Block {
            ptr: p,
            layout,
            since: 0,
        });
        c.total = layout.size();
        // Without splitting, a request under a quarter of the block is refused.
        let small = Layout::from_size_align(3 * page + 64, 64).unwrap();
        assert!(c.take(small, false, 0).is_none());
        if !mapping::SPLITS {
            let (q, got) = c.take(layout, false, 0).unwrap();
            // SAFETY: the block taken back, allocated with `got`.
            unsafe { free(q, got) };
            return;
        }
        // The front piece stays a large block (freed as a mapping) and so does the rest.
        let split = MIN_BYTES.div_ceil(page) + 2;
        assert!((128 - split) * page >= MIN_BYTES);
        let front_want = Layout::from_size_align((128 - split) * page - 64, 64).unwrap();
        let (q, front) = c.take(front_want, true, 0).unwrap();
        assert_eq!(
            (q, front.size(), front.align()),
            (p, (128 - split) * page, 64)
        );
        assert_eq!(c.total, split * page);
        assert_eq!(c.blocks.len(), 1);
        // A rest below `MIN_BYTES` is not split off: the whole rest is handed out.
        let (r, rest) = c.take(small, true, 0).unwrap();
        assert_eq!(r.as_ptr() as usize, p.as_ptr() as usize + front.size());
        assert_eq!(rest.size(), split * page);
        assert_eq!((c.total, c.blocks.len()), (0, 0));
        // The pieces are writable and are freed one by one.
        for (ptr, l) in [(q, front), (r, rest)] {
            // SAFETY: each piece is a part of the mapping, ours alone, of `l.size()` bytes.
            let bytes = unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr(), l.size()) };
            assert!(bytes.iter().all(|&b| b == 0));
            bytes.fill(3);
            // SAFETY: a piece handed out with `l`, not used again.
            unsafe { free(ptr, l) };
        }
    }

    #[test]
    fn blocks_unused_for_the_age_expire_and_the_rest_stay() {
        let mut c = Cache {
            blocks: blocks_of(&[MIN_BYTES, 2 * MIN_BYTES, 3 * MIN_BYTES]),
            total: 6 * MIN_BYTES,
        };
        c.blocks[1].since = 10;
        c.blocks[2].since = 40;
        assert!(c.expire(30, 30).is_empty());
        let old = c.expire(31, 30);
        assert_eq!(old.len(), 1);
        assert_eq!(old[0].layout.size(), MIN_BYTES);
        assert_eq!(c.total, 5 * MIN_BYTES);
        let old = c.expire(100, 30);
        assert_eq!(old.len(), 2);
        assert_eq!((c.total, c.blocks.len()), (0, 0));
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
        while let Some((p, got)) = take(layout) {
            assert_eq!(got, layout);
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
            // The block is handed to the cache.
            let p = alloc(layout, false).unwrap();
            // SAFETY: allocated with `layout` just above.
            unsafe { give(p, layout) };
        }
        if let Some(c) = cache() {
            assert!(c.lock().total <= MAX_TOTAL_BYTES);
        }
        while let Some((p, got)) = take(layout) {
            // SAFETY: taken from the cache, allocated with `got`.
            unsafe { free(p, got) };
        }
    }
}
