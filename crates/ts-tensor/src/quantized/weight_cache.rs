//! Quantized weights prepared once for the float kernels. A quantized convolution or linear
//! layer runs its exact integer product on the float kernels (see `kernels.rs`), which needs the
//! weight's integers minus their zero points as `f32`/`f64`, each output channel's scale and the
//! largest row sum of `|w|`; converting a whole model's weights on every call cost more than
//! the products; the `u8 x i8` kernels take it packed (`qgemm.rs`, `depthwise.rs`). Prepared weights are kept per weight tensor, keyed by its storage (held, so the
//! identity cannot be reused by another tensor), version counter (an in-place write invalidates
//! the entry), geometry and quantizer, at most [`MAX_BYTES`] of float copies in all.

use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::depthwise::DwWeight;
use super::qgemm::QWeight;
use super::{quantizer_of, Quantizer};
use crate::storage::Storage;
use crate::{Result, Tensor};

/// The most bytes of prepared float weights kept (the oldest entries go first).
const MAX_BYTES: usize = 256 << 20;

/// A weight's float form: integers minus zero points, per-channel scales, the bound.
pub(crate) struct PreparedWeight {
    /// `w - zp` per element, in the weight's logical order.
    pub ints: Vec<i32>,
    /// One scale per output channel.
    pub scales: Vec<f64>,
    /// `max` over output channels of `sum |w - zp|`.
    pub row_l1: u64,
    f32: OnceLock<Tensor>,
    f64: OnceLock<Tensor>,
    packed: OnceLock<Option<QWeight>>,
    depthwise: OnceLock<Option<DwWeight>>,
}

impl PreparedWeight {
    /// The prepared form of `ints` (`n` rows of `w - zp`) with per-channel `scales`.
    pub fn new(ints: Vec<i32>, scales: Vec<f64>, n: usize) -> PreparedWeight {
        let per = ints.len() / n.max(1);
        let row_l1 = ints
            .chunks(per.max(1))
            .map(|r| r.iter().map(|v| v.unsigned_abs() as u64).sum::<u64>())
            .max()
            .unwrap_or(0);
        PreparedWeight {
            ints,
            scales,
            row_l1,
            f32: OnceLock::new(),
            f64: OnceLock::new(),
            packed: OnceLock::new(),
            depthwise: OnceLock::new(),
        }
    }

    /// The weight as `f32` of shape `sizes` (made on first use).
    pub fn as_f32(&self, sizes: &[i64]) -> Result<Tensor> {
        if let Some(t) = self.f32.get() {
            return Ok(t.clone());
        }
        let t = Tensor::from_vec(
            self.ints.iter().map(|&v| v as f32).collect::<Vec<_>>(),
            sizes,
        )?;
        Ok(self.f32.get_or_init(|| t).clone())
    }

    /// The weight packed for the `u8 x i8` kernels (made on first use; `None` when a value
    /// does not fit `i8`).
    pub fn packed(&self, n: usize) -> Option<&QWeight> {
        self.packed
            .get_or_init(|| QWeight::new(&self.ints, n))
            .as_ref()
    }

    /// A depthwise weight of `c` channels as `[taps][c]` (made on first use).
    pub fn depthwise(&self, c: usize) -> Option<&DwWeight> {
        self.depthwise
            .get_or_init(|| DwWeight::new(&self.ints, c))
            .as_ref()
    }

    /// The weight as `f64` of shape `sizes` (made on first use).
    pub fn as_f64(&self, sizes: &[i64]) -> Result<Tensor> {
        if let Some(t) = self.f64.get() {
            return Ok(t.clone());
        }
        let t = Tensor::from_vec(
            self.ints.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            sizes,
        )?;
        Ok(self.f64.get_or_init(|| t).clone())
    }
}

/// What identifies a weight's contents.
struct Key {
    storage: Storage,
    version: u64,
    offset: usize,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    quantizer: Arc<Quantizer>,
}

impl Key {
    fn of(w: &Tensor, q: &Arc<Quantizer>) -> Key {
        let storage = w.storage();
        Key {
            version: storage.version(),
            storage,
            offset: w.storage_offset(),
            sizes: w.sizes().to_vec(),
            strides: w.strides().to_vec(),
            quantizer: q.clone(),
        }
    }

    fn matches(&self, o: &Key) -> bool {
        Storage::ptr_eq(&self.storage, &o.storage)
            && self.version == o.version
            && self.offset == o.offset
            && self.sizes == o.sizes
            && self.strides == o.strides
            && Arc::ptr_eq(&self.quantizer, &o.quantizer)
    }
}

/// Cached entries, oldest first.
static CACHE: Mutex<Vec<(Key, Arc<PreparedWeight>)>> = Mutex::new(Vec::new());

/// The prepared form of qint8 weight `w` with `n` output channels, from the cache or made now
/// by `prepare` (which returns the integers minus zero points and the scales).
pub(crate) fn prepared(
    w: &Tensor,
    n: usize,
    what: &str,
    prepare: impl FnOnce() -> Result<(Vec<i32>, Vec<f64>)>,
) -> Result<Arc<PreparedWeight>> {
    let key = Key::of(w, quantizer_of(w, what)?);
    if let Some((_, p)) = CACHE.lock().iter().find(|(k, _)| k.matches(&key)) {
        return Ok(p.clone());
    }
    let (ints, scales) = prepare()?;
    let p = Arc::new(PreparedWeight::new(ints, scales, n));
    // Each entry may hold the integers and one or two float copies.
    let cost = |p: &PreparedWeight| p.ints.len() * 16;
    let mut c = CACHE.lock();
    c.retain(|(k, _)| !k.matches(&key));
    let mut total: usize = c.iter().map(|(_, p)| cost(p)).sum::<usize>() + cost(&p);
    while total > MAX_BYTES && !c.is_empty() {
        let (_, old) = c.remove(0);
        total -= cost(&old);
    }
    if cost(&p) <= MAX_BYTES {
        c.push((key, p.clone()));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantized::{quantize_per_tensor, QDType};

    #[test]
    fn entries_are_reused_until_the_weight_changes() {
        let f = Tensor::from_vec(vec![0.5f32, -1.0, 2.0, 0.0], &[2, 2]).unwrap();
        let w = quantize_per_tensor(&f, 0.1, 0, QDType::QInt8).unwrap();
        let a = prepared(&w, 2, "t", || Ok((vec![5, -10, 20, 0], vec![0.1, 0.1]))).unwrap();
        assert_eq!(a.row_l1, 20);
        let b = prepared(&w, 2, "t", || panic!("prepared twice")).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(
            b.as_f32(&[2, 2]).unwrap().to_vec::<f32>(),
            vec![5.0, -10.0, 20.0, 0.0]
        );
        // An in-place write bumps the version: the entry no longer matches.
        w.storage().bump_version();
        let c = prepared(&w, 2, "t", || Ok((vec![1, 1, 1, 1], vec![1.0, 1.0]))).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(c.row_l1, 2);
        // A float tensor has no quantizer.
        assert!(prepared(&f, 2, "t", || panic!("not quantized")).is_err());
    }
}
