//! `hash_tensor`: an order-independent fingerprint of a tensor's values, the XOR of their bit
//! patterns (floats widened to float64, integers sign-extended to 64 bits) reduced over some
//! dimensions, as a uint64 tensor.

use crate::dtype::DType;
use crate::error::Result;
use crate::shape::wrap_dims;
use crate::tensor::Tensor;

impl Tensor {
    /// `hash_tensor(dim, keepdim, mode)`: XOR of the elements' 64-bit patterns over `dim`
    /// (empty: every dimension). Only mode 0 (XOR) exists; complex tensors are rejected as
    /// PyTorch rejects them.
    pub fn hash_tensor(&self, dim: &[i64], keepdim: bool, mode: i64) -> Result<Tensor> {
        let dt = self.dtype();
        if mode != 0 {
            return Err(crate::Error::runtime(format!(
                "hash_tensor only supports mode=0 (xor_sum), got {mode}"
            )));
        }
        if dt.is_complex() {
            return Err(crate::cpu::dispatch::not_implemented("xor_sum_cpu", dt));
        }
        let bits: Vec<u64> = if dt.is_floating_point() {
            self.to_vec::<f64>().into_iter().map(f64::to_bits).collect()
        } else if dt == DType::UInt64 {
            self.to_vec::<u64>()
        } else {
            self.to_vec::<i64>().into_iter().map(|v| v as u64).collect()
        };
        let nd = self.dim();
        let sizes = self.sizes();
        let (_, mask) = wrap_dims(dim, nd)?;
        let reduced = |d: usize| dim.is_empty() || mask & (1 << d) != 0;
        let mut out_sizes: Vec<i64> = Vec::with_capacity(nd);
        for d in 0..nd {
            if !reduced(d) {
                out_sizes.push(sizes[d]);
            } else if keepdim {
                out_sizes.push(1);
            }
        }
        // Strides of the output in the input's dimension order (0 for reduced dimensions).
        let mut out_strides = vec![0usize; nd];
        let mut acc = 1usize;
        for d in (0..nd).rev() {
            if !reduced(d) {
                out_strides[d] = acc;
                acc *= sizes[d] as usize;
            }
        }
        let mut out = vec![0u64; acc];
        let mut idx = vec![0i64; nd];
        for b in bits {
            let o: usize = (0..nd).map(|d| idx[d] as usize * out_strides[d]).sum();
            out[o] ^= b;
            for d in (0..nd).rev() {
                idx[d] += 1;
                if idx[d] < sizes[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Tensor::from_vec(out, &out_sizes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_torch() {
        // torch: hash_tensor([1., 2., 3.]) == 4609434218613702656; [[1,2],[3,7]] over all: 7,
        // over dim 1: [3, 4]; int8 -1: 2^64-1.
        let f = Tensor::from_vec(vec![1f32, 2.0, 3.0], &[3]).unwrap();
        let h = f.hash_tensor(&[], false, 0).unwrap();
        assert_eq!(h.dtype(), DType::UInt64);
        assert_eq!(h.to_vec::<u64>(), vec![4609434218613702656]);
        let i = Tensor::from_vec(vec![1i64, 2, 3, 7], &[2, 2]).unwrap();
        assert_eq!(
            i.hash_tensor(&[], false, 0).unwrap().to_vec::<u64>(),
            vec![7]
        );
        let d1 = i.hash_tensor(&[1], true, 0).unwrap();
        assert_eq!(d1.sizes().as_slice(), &[2, 1]);
        assert_eq!(d1.to_vec::<u64>(), vec![3, 4]);
        let m = Tensor::from_vec(vec![-1i8], &[1]).unwrap();
        assert_eq!(
            m.hash_tensor(&[], false, 0).unwrap().to_vec::<u64>(),
            vec![u64::MAX]
        );
        assert!(f.hash_tensor(&[], false, 1).is_err());
    }
}
