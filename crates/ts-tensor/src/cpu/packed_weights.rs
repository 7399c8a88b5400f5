//! Convolution weights packed for the GEMM micro-kernel, kept between calls. Packing a layer's
//! weights (a transpose into `mr`-row micro-panels) on every call was ~9% of a ResNet-18
//! forward: its deep layers hold megabytes of weights for few output columns. An entry is keyed
//! by the weight's storage (held, so its address cannot be reused by another tensor), version
//! counter (an in-place write, which the operator layer records, invalidates it), offset,
//! sizes, dtype and group count.
//!
//! A weight is cached only the second time it is seen with the same contents: a single forward
//! (process start-up, a test) keeps no second copy of the model's weights, and weights that
//! change on every call (a training loop's parameters) are never copied into the cache.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::dtype::DType;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The most bytes held by the cache (packed copies plus the weights their entries keep alive);
/// the oldest entries go first.
const MAX_BYTES: usize = 256 << 20;
/// Weights remembered as seen once (not yet cached).
const SEEN: usize = 512;

/// What identifies a weight's contents.
#[derive(Clone, PartialEq, Eq)]
struct Key {
    addr: usize,
    offset: usize,
    version: u64,
    sizes: Vec<i64>,
    dtype: DType,
    groups: usize,
    /// Which packed layout (the caller's tag).
    layout: u8,
}

impl Key {
    fn of(w: &Tensor, storage: &Storage, groups: usize, layout: u8) -> Key {
        Key {
            addr: storage.as_ptr() as usize,
            offset: w.storage_offset(),
            version: storage.version(),
            sizes: w.sizes().to_vec(),
            dtype: w.dtype(),
            groups,
            layout,
        }
    }
}

/// A cached packed weight.
struct Entry {
    key: Key,
    /// Keeps the weight's storage (and so its address) alive while the entry exists.
    storage: Storage,
    packed: Arc<dyn Any + Send + Sync>,
    bytes: usize,
}

/// The entries (oldest first), the weights seen once, and the bytes held.
struct Cache {
    entries: Vec<Entry>,
    seen: VecDeque<Key>,
    bytes: usize,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    entries: Vec::new(),
    seen: VecDeque::new(),
    bytes: 0,
});

/// The packed form (`layout`, a tag of the caller's) of convolution weight `w` (`groups`
/// groups) from the cache; or, the second time the same contents are seen, packed now by
/// `pack` (which fills a vector of `len` elements) and cached. `None` the first time: the
/// caller packs into its own scratch.
pub(crate) fn cached<T: Copy + Default + Send + Sync + 'static>(
    w: &Tensor,
    groups: usize,
    layout: u8,
    len: usize,
    pack: impl FnOnce(&mut [T]),
) -> Option<Arc<Vec<T>>> {
    let storage = w.storage();
    let key = Key::of(w, &storage, groups, layout);
    {
        let mut c = CACHE.lock();
        if let Some(e) = c
            .entries
            .iter()
            .find(|e| e.key == key && Storage::ptr_eq(&e.storage, &storage))
        {
            return e.packed.clone().downcast::<Vec<T>>().ok();
        }
        // A stale entry (the weight was written since) is dropped now.
        let Cache { entries, bytes, .. } = &mut *c;
        entries.retain(|e| {
            let stale = Storage::ptr_eq(&e.storage, &storage)
                && e.key.offset == key.offset
                && e.key.version != key.version;
            if stale {
                *bytes -= e.bytes;
            }
            !stale
        });
        if !c.seen.contains(&key) {
            if c.seen.len() == SEEN {
                c.seen.pop_front();
            }
            c.seen.push_back(key);
            return None;
        }
    }
    let bytes = len * std::mem::size_of::<T>() + storage.nbytes();
    if bytes > MAX_BYTES / 4 {
        return None;
    }
    let mut v = vec![T::default(); len];
    pack(&mut v);
    let packed = Arc::new(v);
    let mut c = CACHE.lock();
    c.seen.retain(|k| *k != key);
    if !c.entries.iter().any(|e| e.key == key) {
        let mut evicted = Vec::new();
        while c.bytes + bytes > MAX_BYTES && !c.entries.is_empty() {
            let old = c.entries.remove(0);
            c.bytes -= old.bytes;
            evicted.push(old);
        }
        c.bytes += bytes;
        c.entries.push(Entry {
            key,
            storage,
            packed: packed.clone(),
            bytes,
        });
        drop(c);
        // Freed outside the lock.
        drop(evicted);
    }
    Some(packed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack_count(w: &Tensor, calls: &mut usize) -> Option<Vec<f32>> {
        cached::<f32>(w, 1, 0, 4, |v| {
            *calls += 1;
            let x = w.to_vec::<f32>();
            v.copy_from_slice(&x);
        })
        .map(|a| a.to_vec())
    }

    #[test]
    fn cached_on_the_second_sighting_and_invalidated_by_a_write() {
        let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
        let mut calls = 0;
        assert_eq!(pack_count(&w, &mut calls), None);
        assert_eq!(pack_count(&w, &mut calls), Some(vec![1.0, 2.0, 3.0, 4.0]));
        assert_eq!(pack_count(&w, &mut calls), Some(vec![1.0, 2.0, 3.0, 4.0]));
        assert_eq!(calls, 1);
        // An in-place write (as the operator layer records it) makes the entry stale.
        // SAFETY: `w` is contiguous f32 with 4 elements and no other handle reads it now.
        unsafe { *(w.storage().as_mut_ptr() as *mut f32) = 9.0 };
        w.storage().bump_version();
        assert_eq!(pack_count(&w, &mut calls), None);
        assert_eq!(pack_count(&w, &mut calls), Some(vec![9.0, 2.0, 3.0, 4.0]));
        assert_eq!(calls, 2);
        // Another tensor (its own storage) never shares the entry.
        let v = Tensor::from_vec(vec![5.0f32, 6.0, 7.0, 8.0], &[4]).unwrap();
        assert_eq!(pack_count(&v, &mut calls), None);
        assert_eq!(pack_count(&v, &mut calls), Some(vec![5.0, 6.0, 7.0, 8.0]));
    }
}
