//! `linear` (`x @ W^T + b`) with the weight packed once and kept between calls. The GEMM packs
//! B into column micro-panels per call; for a linear layer B is the weight read transposed, and
//! that packing (a strided transpose of every weight element) was ~20% of an MLP's forward at
//! batch 64. The weight's packed panels come from the packed-weight cache, which keeps them only
//! once the same, unchanged weight is seen a second time, so a single call costs no extra copy.

use crate::cpu::blocked_gemm::{self, Prepacked, Problem};
use crate::cpu::contiguous::{uninit_contiguous, with_slice};
use crate::cpu::packed_weights;
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::Tensor;

/// The packed-weight cache's layout tag for a weight packed as the transposed right operand.
const LAYOUT: u8 = 2;

/// `x @ weight^T + bias` for f32 `x: [.., K]`, contiguous `weight: [N, K]` and a 1-d `bias` of
/// `N`, when the weight's packed panels are cached (see the module comment). `Ok(None)`: not
/// this case, or the weight was not seen before; the caller computes it the general way.
pub(crate) fn linear(x: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Option<Tensor>> {
    let f32s = |t: &Tensor| t.dtype() == DType::Float32 && t.is_contiguous();
    if x.dim() < 2 || weight.dim() != 2 || !f32s(x) || !f32s(weight) {
        return Ok(None);
    }
    let (ws, xs) = (weight.sizes(), x.sizes());
    let (n, k) = (ws[0] as usize, ws[1] as usize);
    if xs[xs.len() - 1] as usize != k || n == 0 || k == 0 {
        return Ok(None);
    }
    if let Some(b) = bias {
        if !f32s(b) || b.dim() != 1 || b.sizes()[0] as usize != n {
            return Ok(None);
        }
    }
    let rows = x.numel() / k;
    let Some((_, nr)) = blocked_gemm::micro_tile::<f32>() else {
        return Ok(None);
    };
    // One row is a matrix-vector product, which reads the weight in place (`gemv`): packed
    // panels would only add a copy of the weight.
    if rows <= 1 {
        return Ok(None);
    }
    let len = n.div_ceil(nr) * nr * k;
    let packed = with_slice::<f32, _>(weight, |w| {
        packed_weights::cached::<f32>(weight, 1, LAYOUT, len, |dst| {
            blocked_gemm::pack_rhs_transposed(w, n, k, dst);
        })
    })?;
    let Some(packed) = packed else {
        return Ok(None);
    };
    let mut shape = xs[..xs.len() - 1].to_vec();
    shape.push(n as i64);
    let out = uninit_contiguous(&shape, DType::Float32)?;
    let c = out.meta().data_ptr() as *mut f32;
    if let Some(b) = bias {
        with_slice::<f32, _>(b, |b| {
            // SAFETY: `out` is a fresh contiguous `[rows, n]` f32 tensor no other handle
            // reaches; each row of `n` elements is written whole.
            let all = unsafe { std::slice::from_raw_parts_mut(c, rows * n) };
            for row in all.chunks_exact_mut(n) {
                row.copy_from_slice(b);
            }
        })?;
    }
    with_slice::<f32, _>(x, |xv| {
        let p = Problem {
            m: rows,
            n,
            k,
            a: xv.as_ptr(),
            rsa: k as isize,
            csa: 1,
            b: std::ptr::null(),
            rsb: 0,
            csb: 0,
            c,
            rsc: n as isize,
            csc: 1,
            alpha: 1.0,
            beta: 1.0,
            read_c: bias.is_some(),
        };
        let pre = Prepacked {
            a: None,
            b: Some(packed.as_ptr()),
        };
        // SAFETY: A is the contiguous `[rows, k]` input, read in place; B is the weight's
        // `ceil(n / nr)` panels of `k x nr`, packed for the fastest kernel (the one
        // `micro_tile` described) and kept alive by `packed`; C is the fresh `[rows, n]`
        // output, disjoint from both, that only this call writes.
        unsafe { blocked_gemm::gemm_packed(&p, pre, crate::threads::num_threads()) }
    })
    .map(|done| done.then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scalar;

    fn reference(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Vec<f32> {
        let k = *w.sizes().last().unwrap();
        let rows = x.numel() as i64 / k;
        let x2 = x.reshape(&[rows, k]).unwrap();
        let out = x2.matmul(&w.t().unwrap()).unwrap();
        match b {
            Some(b) => out.add(b, Scalar::Int(1)).unwrap().to_vec(),
            None => out.to_vec(),
        }
    }

    fn ramp(n: i64, shape: &[i64], scale: f32) -> Tensor {
        let v: Vec<f32> = (0..n)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) * scale)
            .collect();
        Tensor::from_vec(v, shape).unwrap()
    }

    #[test]
    fn packed_on_the_second_call_and_equal_to_the_general_path() {
        // Remainders of the micro-panel (n) and the micro-tile (rows), several depth blocks.
        for (rows, n, k) in [
            (2, 1, 1),
            (5, 47, 3),
            (64, 49, 300),
            (17, 96, 1000),
            (3, 10, 784),
        ] {
            let x = ramp(rows * k, &[rows, k], 0.5);
            let w = ramp(n * k, &[n, k], 0.25);
            let b = ramp(n, &[n], 1.0);
            for bias in [None, Some(&b)] {
                let want = reference(&x, &w, bias);
                let first = linear(&x, &w, bias).unwrap();
                let got = linear(&x, &w, bias)
                    .unwrap()
                    .expect("cached on the second call");
                if let Some(first) = first {
                    assert_eq!(first.to_vec::<f32>(), want);
                }
                // Integer-valued products are exact in f32 at these sizes.
                assert_eq!(got.sizes()[..], [rows, n]);
                assert_eq!(got.to_vec::<f32>(), want, "{rows}x{n}x{k}");
            }
        }
    }

    #[test]
    fn leading_dimensions_fold_and_a_write_to_the_weight_repacks() {
        let x = ramp(2 * 3 * 8, &[2, 3, 8], 1.0);
        let w = ramp(5 * 8, &[5, 8], 1.0);
        let _ = linear(&x, &w, None).unwrap();
        let got = linear(&x, &w, None).unwrap().unwrap();
        assert_eq!(got.sizes()[..], [2, 3, 5]);
        assert_eq!(got.to_vec::<f32>(), reference(&x, &w, None));
        w.fill_(Scalar::Float(2.0)).unwrap();
        // The operator layer records in-place writes (as a `fill_` call from TorchScript does).
        w.storage().bump_version();
        let after = linear(&x, &w, None).unwrap();
        assert!(after.is_none(), "a written weight is seen anew");
        let again = linear(&x, &w, None).unwrap().unwrap();
        assert_eq!(again.to_vec::<f32>(), reference(&x, &w, None));
    }

    #[test]
    fn other_cases_are_left_to_the_general_path() {
        let w = ramp(4 * 3, &[4, 3], 1.0);
        let x64 = Tensor::zeros(&[2, 3], DType::Float64).unwrap();
        assert!(linear(&x64, &w, None).unwrap().is_none());
        let x1 = ramp(3, &[3], 1.0);
        assert!(linear(&x1, &w, None).unwrap().is_none());
        let strided = ramp(3 * 4, &[3, 4], 1.0).t().unwrap();
        assert!(linear(&strided, &w.t().unwrap().t().unwrap(), None)
            .unwrap()
            .is_none());
        let bad_bias = ramp(3, &[3], 1.0);
        let x = ramp(6, &[2, 3], 1.0);
        assert!(linear(&x, &w, Some(&bad_bias)).unwrap().is_none());
        let empty = Tensor::zeros(&[0, 3], DType::Float32).unwrap();
        assert!(linear(&empty, &w, None).unwrap().is_none());
        // One row is a matrix-vector product: never packed, however often it is seen.
        let row = ramp(3, &[1, 3], 1.0);
        for _ in 0..3 {
            assert!(linear(&row, &w, None).unwrap().is_none());
        }
    }
}
