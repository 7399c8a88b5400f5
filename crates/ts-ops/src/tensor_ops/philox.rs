//! PyTorch's counter-based ("stateless") random numbers, `torch.func._random`: keys are
//! `uint64` tensors of shape `(*batch, 2)` holding `(seed, offset)`; `_philox_key_split` and
//! `_philox_key_fold_in` derive keys, `_philox_uniform`/`_normal`/`_randint` fill a tensor
//! from a key. Values are those of ATen's kernels bit for bit (they are the same on every
//! device by design):
//!
//! - the generator is Philox-4x32-10, keyed by the seed; element chunk `c` of a key is the
//!   block at counter `(offset + c, 0)` (four `u32`s: four floats/halfs/32-bit integers, or two
//!   doubles/64-bit integers from `(x << 32) | y` and `(z << 32) | w`);
//! - uniform keeps the dtype's mantissa bits (`v & (2^digits - 1)) * 2^-digits`, then
//!   `unit * (high - low) + low` in the dtype (float for half/bfloat16);
//! - normal is Box-Muller on pairs (`u = v * 2^-32 + 2^-33`, fused; doubles take 64 bits per
//!   uniform), `cos` then `sin`, then `n * std + mean`;
//! - randint reduces the sample (32 or 64 bits, by the dtype's width) modulo `high - low`;
//! - key derivation runs the counter stream from `offset` (counted in `u32` outputs, as
//!   curand does) and takes four outputs per derived key; `fold_in(k, d)` is `split(k, d +
//!   1)[d]`.
//!
//! A batched key `(*batch, 2)` has one batch dim per output dim (size 1 or the output's);
//! each key fills the contiguous block of trailing dims where its batch size is 1.

use ts_tensor::{DType, Error, Tensor};

use super::{def, Args};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;

/// One Philox-4x32 block: ten rounds of `counter` under `key`.
fn philox4x32_10(mut c: [u32; 4], mut k: [u32; 2]) -> [u32; 4] {
    let round = |c: [u32; 4], k: [u32; 2]| {
        let p0 = u64::from(PHILOX_M0) * u64::from(c[0]);
        let p1 = u64::from(PHILOX_M1) * u64::from(c[2]);
        let (lo0, hi0) = (p0 as u32, (p0 >> 32) as u32);
        let (lo1, hi1) = (p1 as u32, (p1 >> 32) as u32);
        [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0]
    };
    for _ in 0..9 {
        c = round(c, k);
        k = [k[0].wrapping_add(PHILOX_W0), k[1].wrapping_add(PHILOX_W1)];
    }
    round(c, k)
}

fn seed_key(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// The block a distribution kernel uses for chunk `chunk` of key `(seed, offset)`.
fn chunk_block(seed: u64, offset: u64, chunk: u64) -> [u32; 4] {
    let seq = offset.wrapping_add(chunk);
    philox4x32_10([seq as u32, (seq >> 32) as u32, 0, 0], seed_key(seed))
}

/// ATen's `philox_engine` started at `offset` `u32` outputs into subsequence 0: a stream of
/// `u32`s over consecutive 128-bit counters.
struct Stream {
    key: [u32; 2],
    counter: u128,
    block: [u32; 4],
    index: usize,
}

impl Stream {
    fn new(seed: u64, offset: u64) -> Stream {
        let mut s = Stream {
            key: seed_key(seed),
            counter: u128::from(offset / 4),
            block: [0; 4],
            index: 4,
        };
        for _ in 0..offset % 4 {
            s.next_u32();
        }
        s
    }

    fn next_u32(&mut self) -> u32 {
        if self.index == 4 {
            let c = self.counter;
            self.block = philox4x32_10(
                [
                    c as u32,
                    (c >> 32) as u32,
                    (c >> 64) as u32,
                    (c >> 96) as u32,
                ],
                self.key,
            );
            self.counter = c.wrapping_add(1);
            self.index = 0;
        }
        let v = self.block[self.index];
        self.index += 1;
        v
    }

    /// A derived key: four outputs as `(seed, offset)`.
    fn next_key(&mut self) -> [u64; 2] {
        let r: [u32; 4] = std::array::from_fn(|_| self.next_u32());
        [
            u64::from(r[0]) | (u64::from(r[1]) << 32),
            u64::from(r[2]) | (u64::from(r[3]) << 32),
        ]
    }
}

/// The `(seed, offset)` pairs of a key tensor, checked to be `uint64` of shape `(*batch, 2)`.
fn read_keys(key: &Tensor, op: &str) -> R<Vec<[u64; 2]>> {
    if key.dim() < 1 || key.sizes()[key.dim() - 1] != 2 {
        return Err(Error::runtime(format!(
            "{op}: key must have shape (2,) or (*batch, 2), got shape {:?}",
            key.sizes().as_slice()
        )));
    }
    if key.dtype() != DType::UInt64 {
        return Err(Error::runtime(format!(
            "{op}: key must have dtype uint64, got {}",
            key.dtype().scalar_type_name()
        )));
    }
    Ok(key
        .to_vec::<u64>()
        .chunks_exact(2)
        .map(|p| [p[0], p[1]])
        .collect())
}

fn keys_tensor(keys: &[[u64; 2]], sizes: &[i64]) -> R<Tensor> {
    Tensor::from_vec(keys.iter().flatten().copied().collect::<Vec<u64>>(), sizes)
}

/// `_philox_key_split(key, n)`: `n` keys per key, the split index outermost.
fn key_split(key: &Tensor, n: i64) -> R<Tensor> {
    let keys = read_keys(key, "_philox_key_split")?;
    if n <= 0 {
        return Err(Error::runtime(format!(
            "_philox_key_split: num_splits must be positive, got {n}"
        )));
    }
    let n = n as usize;
    let mut out = vec![[0u64; 2]; n * keys.len()];
    for (i, &[seed, offset]) in keys.iter().enumerate() {
        let mut s = Stream::new(seed, offset);
        for j in 0..n {
            out[j * keys.len() + i] = s.next_key();
        }
    }
    let mut sizes = vec![n as i64];
    sizes.extend_from_slice(&key.sizes());
    keys_tensor(&out, &sizes)
}

/// `_philox_key_fold_in(key, data)`: the key `split(key, data + 1)[data]` would give.
fn key_fold_in(key: &Tensor, data: u64) -> R<Tensor> {
    let keys = read_keys(key, "_philox_key_fold_in")?;
    let out: Vec<[u64; 2]> = keys
        .iter()
        .map(|&[seed, offset]| {
            Stream::new(seed, offset.wrapping_add(data.wrapping_mul(4))).next_key()
        })
        .collect();
    keys_tensor(&out, &key.sizes())
}

/// How the keys cover an output of `sizes`: the key of each block of `per_key` contiguous
/// elements, in order.
fn key_layout(op: &str, key: &Tensor, sizes: &[i64]) -> R<(Vec<[u64; 2]>, usize)> {
    let keys = read_keys(key, op)?;
    let numel: i64 = sizes.iter().product();
    if key.dim() == 1 {
        return Ok((vec![keys[0]], numel.max(0) as usize));
    }
    let ks = key.sizes();
    let batch = &ks[..ks.len() - 1];
    if batch.len() != sizes.len() {
        return Err(Error::runtime(format!(
            "{op}: batched key must have ndim == output ndim + 1, got key shape {:?} with output shape {sizes:?}",
            ks.as_slice()
        )));
    }
    if batch.iter().zip(sizes).any(|(&b, &s)| b != 1 && b != s) {
        return Err(Error::runtime(format!(
            "{op}: key batch shape {batch:?} is not broadcastable with output shape {sizes:?}"
        )));
    }
    // Trailing dims the key does not vary over form each key's block.
    let mut lead = sizes.len();
    let mut per_key = 1i64;
    while lead > 0 && batch[lead - 1] == 1 {
        per_key *= sizes[lead - 1];
        lead -= 1;
    }
    // Row-major strides of the key's batch dims (in keys), zero where broadcast.
    let mut kstride = vec![0usize; lead];
    let mut acc = 1usize;
    for d in (0..batch.len()).rev() {
        if d < lead && batch[d] != 1 {
            kstride[d] = acc;
        }
        acc *= batch[d] as usize;
    }
    let nblocks: i64 = sizes[..lead].iter().product();
    let mut order = Vec::with_capacity(nblocks.max(0) as usize);
    let mut idx = vec![0i64; lead];
    for _ in 0..nblocks.max(0) {
        let k: usize = idx
            .iter()
            .zip(&kstride)
            .map(|(&i, &s)| i as usize * s)
            .sum();
        order.push(keys[k]);
        for d in (0..lead).rev() {
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok((order, per_key.max(0) as usize))
}

/// Fills `n` values per key, one Philox block per `epc` values.
fn fill<T: Copy + Default>(
    keys: &[[u64; 2]],
    per_key: usize,
    epc: usize,
    mut gen: impl FnMut([u32; 4], &mut [T]),
) -> Vec<T> {
    let mut out = vec![T::default(); keys.len() * per_key];
    if per_key == 0 {
        return out;
    }
    for (block, &[seed, offset]) in out.chunks_mut(per_key).zip(keys) {
        for (c, dst) in block.chunks_mut(epc).enumerate() {
            let r = chunk_block(seed, offset, c as u64);
            let mut vals = [T::default(); 4];
            gen(r, &mut vals[..epc]);
            dst.copy_from_slice(&vals[..dst.len()]);
        }
    }
    out
}

fn pack64(r: [u32; 4]) -> [u64; 2] {
    [
        (u64::from(r[0]) << 32) | u64::from(r[1]),
        (u64::from(r[2]) << 32) | u64::from(r[3]),
    ]
}

fn check_float(op: &str, x: &Tensor) -> R<()> {
    if x.dtype().is_floating_point() {
        Ok(())
    } else {
        Err(Error::runtime(format!(
            "{op}: self must be a floating point tensor, got {}",
            x.dtype().scalar_type_name()
        )))
    }
}

/// The mantissa digits `uniform_real` keeps for `dt` (float for half/bfloat16 arithmetic).
fn digits(dt: DType) -> u32 {
    match dt {
        DType::Float16 => 11,
        DType::BFloat16 => 8,
        _ => 24,
    }
}

/// `_philox_uniform(self, key, low, high)`: a tensor like `self` of uniform values.
fn philox_uniform(x: &Tensor, key: &Tensor, low: f64, high: f64) -> R<Tensor> {
    const OP: &str = "_philox_uniform_";
    check_float(OP, x)?;
    let sizes = x.sizes().to_vec();
    let (keys, per_key) = key_layout(OP, key, &sizes)?;
    let dt = x.dtype();
    if dt == DType::Float64 {
        let v = fill(&keys, per_key, 2, |r, out: &mut [f64]| {
            for (o, v) in out.iter_mut().zip(pack64(r)) {
                let unit = (v & ((1u64 << 53) - 1)) as f64 * (1.0 / (1u64 << 53) as f64);
                *o = unit * (high - low) + low;
            }
        });
        return Tensor::from_vec(v, &sizes);
    }
    // float keeps its bounds in float; half/bfloat16 round the bounds to the dtype first and
    // compute in float.
    let (lo, hi) = match dt {
        DType::Float32 => (low as f32, high as f32),
        _ => {
            let b = Tensor::from_vec(vec![low, high], &[2])?
                .to_dtype(dt, false)?
                .to_vec::<f32>();
            (b[0], b[1])
        }
    };
    let mask = (1u32 << digits(dt)) - 1;
    let scale = 1.0 / (1u32 << digits(dt)) as f32;
    let v = fill(&keys, per_key, 4, |r, out: &mut [f32]| {
        for (o, v) in out.iter_mut().zip(r) {
            let unit = (v & mask) as f32 * scale;
            *o = unit * (hi - lo) + lo;
        }
    });
    Tensor::from_vec(v, &sizes)?.to_dtype(dt, false)
}

/// `_philox_normal(self, key, mean, std)`: a tensor like `self` of normal values.
fn philox_normal(x: &Tensor, key: &Tensor, mean: f64, std: f64) -> R<Tensor> {
    const OP: &str = "_philox_normal_";
    check_float(OP, x)?;
    let sizes = x.sizes().to_vec();
    let (keys, per_key) = key_layout(OP, key, &sizes)?;
    let dt = x.dtype();
    if dt == DType::Float64 {
        const M: f64 = 2.328_306_436_538_696_3e-10;
        const M2: f64 = M * M;
        let v = fill(&keys, per_key, 2, |r, out: &mut [f64]| {
            let u0 = f64::from(r[0]).mul_add(M, f64::from(r[1]) * M2 + M2 * 0.5);
            let u1 = f64::from(r[2]).mul_add(M, f64::from(r[3]) * M2 + M2 * 0.5);
            let radius = (-2.0 * u0.ln()).sqrt();
            let angle = std::f64::consts::TAU * u1;
            out[0] = radius * angle.cos() * std + mean;
            out[1] = radius * angle.sin() * std + mean;
        });
        return Tensor::from_vec(v, &sizes);
    }
    const M: f32 = 2.328_306_4e-10;
    let (mean, std) = (mean as f32, std as f32);
    let v = fill(&keys, per_key, 4, |r, out: &mut [f32]| {
        let u: [f32; 4] = std::array::from_fn(|i| (r[i] as f32).mul_add(M, M * 0.5));
        for i in [0, 2] {
            let radius = (-2.0f32 * u[i].ln()).sqrt();
            let angle = 6.283_185_5f32 * u[i + 1];
            out[i] = radius * angle.cos() * std + mean;
            out[i + 1] = radius * angle.sin() * std + mean;
        }
    });
    Tensor::from_vec(v, &sizes)?.to_dtype(dt, false)
}

/// The smallest value of an integer dtype and its bit width.
fn int_range(dt: DType) -> Option<(i64, u32)> {
    Some(match dt {
        DType::UInt8 => (0, 8),
        DType::Int8 => (i64::from(i8::MIN), 8),
        DType::Int16 => (i64::from(i16::MIN), 16),
        DType::UInt16 => (0, 16),
        DType::Int32 => (i64::from(i32::MIN), 32),
        DType::UInt32 => (0, 32),
        DType::Int64 => (i64::MIN, 64),
        DType::UInt64 => (0, 64),
        _ => return None,
    })
}

/// `_philox_randint(self, key, low, high)`: a tensor like `self` of integers in `[low, high)`
/// (the dtype's limits where None).
fn philox_randint(x: &Tensor, key: &Tensor, low: Option<i64>, high: Option<i64>) -> R<Tensor> {
    const OP: &str = "_philox_randint_";
    let dt = x.dtype();
    let Some((dtype_low, bits)) = int_range(dt) else {
        return Err(Error::runtime(format!(
            "{OP}: self must have an integer dtype, got {}",
            dt.scalar_type_name()
        )));
    };
    let sizes = x.sizes().to_vec();
    let (keys, per_key) = key_layout(OP, key, &sizes)?;
    let full = (low.is_none() || low == Some(dtype_low)) && high.is_none();
    let wide = bits == 64;
    // Bounds in the sampled width (u32 or u64), wrapping as the kernel's unsigned arithmetic.
    let width_mask = if wide { u64::MAX } else { u64::from(u32::MAX) };
    let lo = low.unwrap_or(dtype_low) as u64 & width_mask;
    let count = if bits == 64 { 0 } else { 1u64 << bits };
    let hi = match high {
        Some(h) => h as u64 & width_mask,
        None => (dtype_low as u64).wrapping_add(count) & width_mask,
    };
    let range = hi.wrapping_sub(lo) & width_mask;
    if !full {
        if range == 0 {
            return Err(Error::runtime(format!(
                "{OP}: [low, high) must be non-empty; pass high=None for the dtype's full range"
            )));
        }
        if !wide && !(1u64 << 32).is_multiple_of(range) && range >= 1 << 28 {
            return Err(Error::runtime(format!(
                "{OP}: range (high - low = {range}) does not divide 2^32 evenly and is too large for the output dtype {}. Each element draws only 32 random bits, so a non-dividing range >= 2^28 gives a significantly biased distribution. Use a range that divides 2^32 (a power of two), or a 64-bit dtype (torch.int64 or torch.uint64).",
                dt.scalar_type_name()
            )));
        }
    }
    let reduce = |v: u64| -> u64 {
        if full {
            v
        } else {
            lo.wrapping_add(v % range) & width_mask
        }
    };
    // The sampled value's bits, C-cast to the dtype below (narrow dtypes truncate).
    let v: Vec<u64> = if wide {
        fill(&keys, per_key, 2, |r, out: &mut [u64]| {
            for (o, v) in out.iter_mut().zip(pack64(r)) {
                *o = reduce(v);
            }
        })
    } else {
        fill(&keys, per_key, 4, |r, out: &mut [u64]| {
            for (o, v) in out.iter_mut().zip(r) {
                *o = reduce(u64::from(v));
            }
        })
    };
    if dt == DType::UInt64 {
        return Tensor::from_vec(v, &sizes);
    }
    // Sign-extend 32-bit samples so the cast to a signed dtype keeps their value.
    let signed: Vec<i64> = v
        .into_iter()
        .map(|b| {
            if wide {
                b as i64
            } else {
                i64::from(b as u32 as i32)
            }
        })
        .collect();
    Tensor::from_vec(signed, &sizes)?.to_dtype(dt, false)
}

/// Registers the `_philox_*` operators (the in-place and `out=` forms derive from these).
pub fn register(r: &Registry) {
    def(r, "aten::_philox_key_split", |a| {
        key_split(a.t(0)?, a.int(1)?)
    });
    def(r, "aten::_philox_key_fold_in", |a| {
        key_fold_in(a.t(0)?, a.int(1)? as u64)
    });
    def(r, "aten::_philox_key_fold_in.Tensor", |a| {
        let d = a.t(1)?;
        if d.dtype() != DType::UInt64 || d.numel() != 1 {
            return Err(Error::runtime(format!(
                "_philox_key_fold_in: data must be a single-element uint64 tensor, got dtype {} with {} elements",
                d.dtype().scalar_type_name(),
                d.numel()
            )));
        }
        key_fold_in(a.t(0)?, d.to_vec::<u64>()[0])
    });
    def(r, "aten::_philox_uniform", |a: &Args| {
        philox_uniform(a.t(0)?, a.t(1)?, a.f(2)?, a.f(3)?)
    });
    def(r, "aten::_philox_normal", |a: &Args| {
        philox_normal(a.t(0)?, a.t(1)?, a.f(2)?, a.f(3)?)
    });
    def(r, "aten::_philox_randint", |a: &Args| {
        philox_randint(a.t(0)?, a.t(1)?, a.oint(2)?, a.oint(3)?)
    });
}

#[cfg(test)]
// torch's printed float32 values, kept digit for digit.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    fn key(seed: u64, offset: u64) -> Tensor {
        Tensor::from_vec(vec![seed, offset], &[2]).unwrap()
    }

    fn like(dt: DType, n: i64) -> Tensor {
        ts_tensor::ops::factory::empty(&[n], Some(dt)).unwrap()
    }

    // Expected values: torch.func._random with torch 2.15 on CPU.
    #[test]
    fn batched_keys_fill_their_rows() {
        // torch.func._random.uniform(split(key(42), 2).reshape(2, 1, 2), 2, 3)
        let kb = key_split(&key(42, 0), 2)
            .unwrap()
            .reshape(&[2, 1, 2])
            .unwrap();
        let u = philox_uniform(
            &like(DType::Float32, 6).reshape(&[2, 3]).unwrap(),
            &kb,
            0.0,
            1.0,
        )
        .unwrap();
        let want: [f32; 6] = [
            0.0016701221466064453,
            0.46790021657943726,
            0.47341084480285645,
            0.1333981156349182,
            0.8361791372299194,
            0.8430354595184326,
        ];
        assert_eq!(u.to_vec::<f32>(), want.to_vec());
        let bad = Tensor::from_vec(vec![0u64; 6], &[3, 1, 2]).unwrap();
        assert!(philox_uniform(
            &like(DType::Float32, 6).reshape(&[2, 3]).unwrap(),
            &bad,
            0.0,
            1.0
        )
        .is_err());
    }

    #[test]
    fn key_derivation_matches_torch() {
        let k = key(42, 0);
        let s = key_split(&k, 3).unwrap();
        assert_eq!(s.sizes().as_slice(), &[3, 2]);
        assert_eq!(
            s.to_vec::<u64>(),
            vec![
                8643895580192075859,
                6287785766076502189,
                6033254488940945703,
                8380643633896839790,
                12143778050234647077,
                14270118698559565209
            ]
        );
        let f = key_fold_in(&k, 5).unwrap();
        assert_eq!(
            f.to_vec::<u64>(),
            vec![5413526666999355401, 749062117918881250]
        );
        assert!(key_split(&k, 0).is_err());
        assert!(key_split(&Tensor::from_vec(vec![1i64, 2], &[2]).unwrap(), 2).is_err());
    }

    #[test]
    fn distributions_match_torch() {
        let k = key(42, 0);
        let u = philox_uniform(&like(DType::Float32, 9), &k, 0.0, 1.0).unwrap();
        let want: [f32; 9] = [
            0.9177295565605164,
            0.9581486582756042,
            0.7473247647285461,
            0.2605566382408142,
            0.8559746146202087,
            0.7282255291938782,
            0.5599735975265503,
            0.3047940135002136,
            0.4219077229499817,
        ];
        assert_eq!(u.to_vec::<f32>(), want.to_vec());
        let i = philox_randint(&like(DType::Int32, 6), &k, Some(0), Some(10)).unwrap();
        assert_eq!(i.to_vec::<i64>(), vec![3, 1, 7, 7, 3, 5]);
        let l = philox_randint(&like(DType::Int64, 6), &k, Some(0), Some(10)).unwrap();
        assert_eq!(l.to_vec::<i64>(), vec![9, 9, 3, 5, 7, 9]);
        assert!(philox_randint(&like(DType::Int64, 2), &k, Some(5), Some(5)).is_err());
        let full = philox_randint(&like(DType::Int8, 6), &k, None, None).unwrap();
        assert_eq!(full.to_vec::<i64>(), vec![83, 59, -83, -41, 39, -3]);
        let neg = philox_randint(&like(DType::Int64, 3), &k, Some(-5), Some(5)).unwrap();
        assert_eq!(neg.to_vec::<i64>(), vec![4, 4, -2]);
        let d = philox_uniform(&like(DType::Float64, 5), &k, -2.0, 3.0).unwrap();
        assert_eq!(
            d.to_vec::<f64>(),
            vec![
                -0.29081662038202705,
                2.892991401819108,
                2.238985364588215,
                0.39894498423481384,
                -0.12368951245420678
            ]
        );
        let n = philox_normal(&like(DType::Float32, 5), &k, 0.0, 1.0).unwrap();
        let want: [f32; 5] = [
            -0.9701898097991943,
            0.1940188705921173,
            -1.2356212139129639,
            1.923926591873169,
            -0.07318153232336044,
        ];
        assert_eq!(n.to_vec::<f32>(), want.to_vec());
        let n = philox_normal(&like(DType::Float64, 5), &k, 1.0, 2.0).unwrap();
        let want = [
            2.772995011802882,
            1.8787121388758536,
            0.6867807541759655,
            0.972562642339579,
            0.011798974660508388,
        ];
        for (g, w) in n.to_vec::<f64>().iter().zip(want) {
            assert!((g - w).abs() <= 1e-15 * w.abs().max(1.0), "{g} vs {w}");
        }
        let h = philox_uniform(&like(DType::Float16, 5), &k, 0.0, 1.0).unwrap();
        assert_eq!(
            h.to_vec::<f64>(),
            vec![
                0.04052734375,
                0.15380859375,
                0.08447265625,
                0.47998046875,
                0.14404296875
            ]
        );
        let b = philox_normal(&like(DType::BFloat16, 5), &k, 0.0, 1.0).unwrap();
        assert_eq!(
            b.to_vec::<f64>(),
            vec![-0.96875, 0.1943359375, -1.234375, 1.921875, -0.0732421875]
        );
        assert!(philox_uniform(&like(DType::Int64, 2), &k, 0.0, 1.0).is_err());
    }
}
