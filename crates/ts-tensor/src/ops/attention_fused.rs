//! Single-kernel f32 versions of the inference fast paths `_native_multi_head_attention` and
//! `_transformer_encoder_layer_fwd` (what ATen does in one fused operator). The composed version
//! in `attention.rs` ran ~40 tensor operations per encoder layer (views, expands, bias copies,
//! softmax, layer norms), and on the small shapes these layers usually see the per-operation
//! cost (allocation, metadata, dispatch) was most of the time. Here the projections are packed
//! GEMMs on the raw buffers with the bias (and the residual) as the initial accumulator, the
//! attention runs head by head on strided views of the packed `qkv` rows, and the softmax and
//! layer norm are the row kernels of `scan.rs` / `norm.rs`. Anything else (other dtypes,
//! unexpected weight shapes, masks that do not broadcast) returns `None` so the caller takes the
//! composed path, which reports errors as ATen does.

use crate::cpu::blocked_gemm::{self, Problem};
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::attention::{shape_mask, EncoderLayerWeights};
use crate::ops::norm::layer_norm_row_simd;
use crate::ops::scan::{softmax_row_simd, SoftmaxKind};
use crate::scalar::Scalar;
use crate::tensor::{Tensor, TensorMeta};

/// The elements of a contiguous f32 tensor, kept alive by a metadata snapshot (which holds the
/// storage).
struct F32Data {
    meta: TensorMeta,
    len: usize,
}

impl F32Data {
    /// The data of `t` when it is an f32 tensor of exactly `sizes` (made contiguous if needed).
    fn of(t: &Tensor, sizes: &[i64]) -> Result<Option<F32Data>> {
        if t.dtype() != DType::Float32 || t.sizes().as_slice() != sizes || t.is_quantized() {
            return Ok(None);
        }
        let meta = t.contiguous()?.meta_snapshot();
        let len = meta.numel();
        Ok(Some(F32Data { meta, len }))
    }

    fn slice(&self) -> &[f32] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the metadata describes a contiguous f32 tensor of `len` elements starting at
        // its data pointer, inside its storage (checked when the view was made); `self.meta`
        // keeps the storage alive. The fused kernels only read their inputs and write fresh
        // buffers, so nothing writes these elements while the slice lives.
        unsafe { std::slice::from_raw_parts(self.meta.data_ptr() as *const f32, self.len) }
    }
}

/// Optional operand data: `Ok(None)` when the tensor is absent, `Err(())`-like `None` outer when
/// it is present but not an f32 tensor of `sizes`.
fn opt_data(t: Option<&Tensor>, sizes: &[i64]) -> Result<Option<Option<F32Data>>> {
    match t {
        None => Ok(Some(None)),
        Some(t) => Ok(F32Data::of(t, sizes)?.map(Some)),
    }
}

/// A matrix inside a slice: element `(i, j)` at `off + i * rs + j * cs`.
#[derive(Clone, Copy)]
struct Mat {
    off: usize,
    rs: usize,
    cs: usize,
}

impl Mat {
    /// Row-major rows of stride `rs` from `off`.
    fn rows(off: usize, rs: usize) -> Mat {
        Mat { off, rs, cs: 1 }
    }

    /// The transpose of a row-major `[n, k]` weight whose rows have stride `rs`: a `k x n` view.
    fn transposed(off: usize, rs: usize) -> Mat {
        Mat { off, rs: 1, cs: rs }
    }

    /// Index of element `(r - 1, c - 1)` (the furthest one of an `r x c` matrix).
    fn last(&self, r: usize, c: usize) -> usize {
        self.off + (r - 1) * self.rs + (c - 1) * self.cs
    }
}

/// `c = (c if accumulate else 0) + alpha * a @ b` for `a: m x k`, `b: k x n` and `c: m x n`,
/// views into slices (bounds checked here).
#[allow(clippy::too_many_arguments)]
fn gemm_into(
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    a: &[f32],
    am: Mat,
    b: &[f32],
    bm: Mat,
    c: &mut [f32],
    cm: Mat,
    accumulate: bool,
    threads: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(cm.cs == 1 && cm.rs >= n && cm.last(m, n) < c.len());
    if k > 0 {
        assert!(am.last(m, k) < a.len() && bm.last(k, n) < b.len());
    }
    let p = Problem {
        m,
        n,
        k,
        a: a.as_ptr().wrapping_add(am.off),
        rsa: am.rs as isize,
        csa: am.cs as isize,
        b: b.as_ptr().wrapping_add(bm.off),
        rsb: bm.rs as isize,
        csb: bm.cs as isize,
        c: c.as_mut_ptr().wrapping_add(cm.off),
        rsc: cm.rs as isize,
        csc: 1,
        alpha,
        beta: 1.0,
        read_c: accumulate,
    };
    // SAFETY: the asserts above put every element of A, B and C inside their slices; C's
    // elements are distinct (unit column stride, row stride at least `n`) and `c` is borrowed
    // mutably, so it overlaps neither input and nothing else touches it during the call.
    if unsafe { blocked_gemm::gemm(&p, threads) } {
        return;
    }
    // No packed kernel on this CPU: plain loops.
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0f32;
            for q in 0..k {
                s += a[am.off + i * am.rs + q * am.cs] * b[bm.off + q * bm.rs + j * bm.cs];
            }
            let d = &mut c[cm.off + i * cm.rs + j];
            *d = if accumulate {
                *d + alpha * s
            } else {
                alpha * s
            };
        }
    }
}

/// An additive f32 attention mask read with broadcast strides over `[B, H, L, S]` scores.
struct Mask {
    data: F32Data,
    strides: [usize; 4],
}

impl Mask {
    /// The mask of `_native_multi_head_attention` / `_transformer_encoder_layer_fwd` (bool:
    /// `true` excludes; float: added) for `dims` scores; `None` when it does not broadcast.
    fn new(mask: &Tensor, mask_type: Option<i64>, dims: [usize; 4]) -> Result<Option<Mask>> {
        let m = shape_mask(mask, mask_type)?;
        let m = if m.dtype() == DType::Bool {
            Tensor::zeros(&m.sizes(), DType::Float32)?
                .masked_fill(&m, Scalar::Float(f64::NEG_INFINITY))?
        } else if m.dtype().is_floating_point() {
            m.to_dtype(DType::Float32, false)?
        } else {
            return Ok(None);
        };
        let sizes = m.sizes();
        if sizes.len() > 4 {
            return Ok(None);
        }
        let data = match F32Data::of(&m, &sizes)? {
            Some(d) => d,
            None => return Ok(None),
        };
        let mut strides = [0usize; 4];
        let mut step = 1usize;
        for (i, &sz) in sizes.iter().enumerate().rev() {
            let d = 4 - sizes.len() + i;
            if sz as usize == dims[d] && sz != 1 {
                strides[d] = step;
            } else if sz != 1 {
                return Ok(None);
            }
            step *= sz as usize;
        }
        Ok(Some(Mask { data, strides }))
    }
}

/// Row-wise layer norm of `x` (rows of `e`) into a new buffer.
fn layer_norm_rows(
    x: &[f32],
    e: usize,
    eps: f64,
    w: Option<&F32Data>,
    b: Option<&F32Data>,
) -> Vec<f32> {
    let mut out = vec![0.0f32; x.len()];
    let (w, b) = (w.map(F32Data::slice), b.map(F32Data::slice));
    for (o, i) in out.chunks_exact_mut(e).zip(x.chunks_exact(e)) {
        layer_norm_row_simd(i, o, eps, w, b);
    }
    out
}

/// `rows` rows of `n` elements, each `bias` (or zeros) plus the matching row of `residual`.
fn init_rows(rows: usize, n: usize, bias: Option<&F32Data>, residual: Option<&[f32]>) -> Vec<f32> {
    let mut out = match residual {
        Some(r) => r.to_vec(),
        None => vec![0.0f32; rows * n],
    };
    if let Some(b) = bias {
        let b = b.slice();
        for row in out.chunks_exact_mut(n) {
            for (o, &v) in row.iter_mut().zip(b) {
                *o += v;
            }
        }
    }
    out
}

/// Sizes of one attention problem.
#[derive(Clone, Copy)]
struct Dims {
    batch: usize,
    heads: usize,
    /// Query length.
    l: usize,
    /// Key length.
    s: usize,
    embed: usize,
}

impl Dims {
    fn new(batch: i64, heads: i64, l: i64, s: i64, embed: i64) -> Dims {
        Dims {
            batch: batch as usize,
            heads: heads as usize,
            l: l as usize,
            s: s as usize,
            embed: embed as usize,
        }
    }

    /// The attention mask read for these dims: `Some(None)` without one, `None` when it does
    /// not fit this kernel.
    fn mask(&self, mask: Option<&Tensor>, mask_type: Option<i64>) -> Result<Option<Option<Mask>>> {
        let Some(m) = mask else {
            return Ok(Some(None));
        };
        Ok(Mask::new(m, mask_type, [self.batch, self.heads, self.l, self.s])?.map(Some))
    }
}

/// Scaled dot-product attention of every head: `q`, `k`, `v` are row-major rows (`[B * L]` or
/// `[B * S]` rows of stride `*_rs` from `*_off`, head `h` at columns `h * d ..`). Writes the
/// heads' outputs side by side into `o` (`[B * L, E]`) and the probabilities into `p`
/// (`[B, H, L, S]`).
#[allow(clippy::too_many_arguments)]
fn attend(
    dims: Dims,
    (q, q_off, q_rs): (&[f32], usize, usize),
    (k, k_off, k_rs): (&[f32], usize, usize),
    (v, v_off, v_rs): (&[f32], usize, usize),
    mask: Option<&Mask>,
    p: &mut [f32],
    o: &mut [f32],
    threads: usize,
) {
    let Dims {
        batch,
        heads,
        l,
        s,
        embed,
    } = dims;
    let d = embed / heads;
    let scale = (1.0 / (d as f64).sqrt()) as f32;
    // Head `h` of batch `b`: scores into `ph` (`[L, S]`), its output into `out` at `om`.
    let one_head = |b: usize, h: usize, ph: &mut [f32], out: &mut [f32], om: Mat, threads| {
        gemm_into(
            (l, s, d),
            scale,
            q,
            Mat::rows(q_off + b * l * q_rs + h * d, q_rs),
            k,
            Mat::transposed(k_off + b * s * k_rs + h * d, k_rs),
            ph,
            Mat::rows(0, s),
            false,
            threads,
        );
        let mut tmp = vec![0.0f32; s];
        for (i, row) in ph.chunks_exact_mut(s).enumerate() {
            if let Some(m) = mask {
                let md = m.data.slice();
                let base = b * m.strides[0] + h * m.strides[1] + i * m.strides[2];
                for (j, x) in row.iter_mut().enumerate() {
                    *x += md[base + j * m.strides[3]];
                }
            }
            tmp.copy_from_slice(row);
            softmax_row_simd(&tmp, row, SoftmaxKind::SafeSoftmax);
        }
        gemm_into(
            (l, d, s),
            1.0,
            ph,
            Mat::rows(0, s),
            v,
            Mat::rows(v_off + b * s * v_rs + h * d, v_rs),
            out,
            om,
            false,
            threads,
        );
    };
    if l == 0 || s == 0 {
        return;
    }
    let work = batch * heads * l * s * d;
    if threads > 1 && batch * heads > 1 && work >= 1 << 16 {
        // Heads in parallel (a batch of one has as much parallelism as many batches): each
        // writes its own `[L, d]` block, copied into its columns of `o` afterwards.
        use rayon::prelude::*;
        crate::threads::parallel_region();
        let mut heads_out = vec![0.0f32; batch * heads * l * d];
        p.par_chunks_mut(l * s)
            .zip(heads_out.par_chunks_mut(l * d))
            .enumerate()
            .for_each(|(bh, (ph, oh))| {
                one_head(bh / heads, bh % heads, ph, oh, Mat::rows(0, d), 1)
            });
        for (bh, oh) in heads_out.chunks_exact(l * d).enumerate() {
            let (b, h) = (bh / heads, bh % heads);
            for (i, row) in oh.chunks_exact(d).enumerate() {
                let at = (b * l + i) * embed + h * d;
                o[at..at + d].copy_from_slice(row);
            }
        }
    } else {
        for (bh, ph) in p.chunks_mut(l * s).enumerate() {
            let (b, h) = (bh / heads, bh % heads);
            let ob = &mut o[b * l * embed..(b + 1) * l * embed];
            one_head(b, h, ph, ob, Mat::rows(h * d, embed), threads);
        }
    }
}

/// The packed in/out projection weights of one attention block, checked for `embed`.
struct AttnWeights {
    qkv_w: F32Data,
    qkv_b: Option<F32Data>,
    proj_w: F32Data,
    proj_b: Option<F32Data>,
}

impl AttnWeights {
    fn of(
        e: i64,
        qkv_w: &Tensor,
        qkv_b: Option<&Tensor>,
        proj_w: &Tensor,
        proj_b: Option<&Tensor>,
    ) -> Result<Option<AttnWeights>> {
        let (Some(qkv_w), Some(qkv_b), Some(proj_w), Some(proj_b)) = (
            F32Data::of(qkv_w, &[3 * e, e])?,
            opt_data(qkv_b, &[3 * e])?,
            F32Data::of(proj_w, &[e, e])?,
            opt_data(proj_b, &[e])?,
        ) else {
            return Ok(None);
        };
        Ok(Some(AttnWeights {
            qkv_w,
            qkv_b,
            proj_w,
            proj_b,
        }))
    }

    /// Self-attention of `x` (`[B * L, E]` rows): returns `residual + out_proj(attention)` (no
    /// residual: just the projection) and the probabilities `[B, H, L, L]`.
    fn self_attention(
        &self,
        dims: Dims,
        x: &[f32],
        residual: Option<&[f32]>,
        mask: Option<&Mask>,
        threads: usize,
    ) -> (Vec<f32>, Vec<f32>) {
        let e = dims.embed;
        let rows = dims.batch * dims.l;
        let mut qkv = init_rows(rows, 3 * e, self.qkv_b.as_ref(), None);
        gemm_into(
            (rows, 3 * e, e),
            1.0,
            x,
            Mat::rows(0, e),
            self.qkv_w.slice(),
            Mat::transposed(0, e),
            &mut qkv,
            Mat::rows(0, 3 * e),
            true,
            threads,
        );
        let mut p = vec![0.0f32; dims.batch * dims.heads * dims.l * dims.s];
        let mut o = vec![0.0f32; rows * e];
        attend(
            dims,
            (&qkv, 0, 3 * e),
            (&qkv, e, 3 * e),
            (&qkv, 2 * e, 3 * e),
            mask,
            &mut p,
            &mut o,
            threads,
        );
        (self.out_projection(rows, e, &o, residual, threads), p)
    }

    /// `residual + o @ proj_w^T + proj_b` for `rows` rows.
    fn out_projection(
        &self,
        rows: usize,
        e: usize,
        o: &[f32],
        residual: Option<&[f32]>,
        threads: usize,
    ) -> Vec<f32> {
        let mut y = init_rows(rows, e, self.proj_b.as_ref(), residual);
        gemm_into(
            (rows, e, e),
            1.0,
            o,
            Mat::rows(0, e),
            self.proj_w.slice(),
            Mat::transposed(0, e),
            &mut y,
            Mat::rows(0, e),
            true,
            threads,
        );
        y
    }
}

/// True for problems (tokens x embedding) small enough that per-op overhead dominates, where
/// the fused kernel wins (2.4x on a [2, 6, 16] encoder layer); on larger ones the composed
/// ops' threaded products are faster (a [1, 128, 256] layer: 1.31 ms fused, 0.9 ms composed).
fn small_enough(elements: i64) -> bool {
    elements <= 1 << 14
}

/// The f32 `_native_multi_head_attention` on dense batch-first inputs: the output `[B, L, E]`
/// and the probabilities `[B, H, L, S]`; `None` when the inputs do not fit this kernel.
#[allow(clippy::too_many_arguments)]
pub(crate) fn multi_head_attention(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    embed_dim: i64,
    num_heads: i64,
    qkv_weight: &Tensor,
    qkv_bias: Option<&Tensor>,
    proj_weight: &Tensor,
    proj_bias: Option<&Tensor>,
    mask: Option<&Tensor>,
    mask_type: Option<i64>,
) -> Result<Option<(Tensor, Tensor)>> {
    let (qs, ks) = (query.sizes(), key.sizes());
    if qs.len() != 3
        || ks.len() != 3
        || num_heads <= 0
        || embed_dim <= 0
        || embed_dim % num_heads != 0
        || qs[2] != embed_dim
        || ks[0] != qs[0]
        || !small_enough(qs[0] * qs[1].max(ks[1]) * embed_dim)
    {
        return Ok(None);
    }
    let (e, h) = (embed_dim, num_heads);
    let Some(w) = AttnWeights::of(e, qkv_weight, qkv_bias, proj_weight, proj_bias)? else {
        return Ok(None);
    };
    let dims = Dims::new(qs[0], h, qs[1], ks[1], e);
    let Some(mask) = dims.mask(mask, mask_type)? else {
        return Ok(None);
    };
    let threads = crate::threads::num_threads();
    let ue = dims.embed;
    let (out, p) = if Tensor::is_same(query, key) && Tensor::is_same(key, value) {
        let Some(x) = F32Data::of(query, &qs)? else {
            return Ok(None);
        };
        w.self_attention(dims, x.slice(), None, mask.as_ref(), threads)
    } else {
        let (Some(xq), Some(xk), Some(xv)) = (
            F32Data::of(query, &qs)?,
            F32Data::of(key, &ks)?,
            F32Data::of(value, &ks)?,
        ) else {
            return Ok(None);
        };
        // Three products with the stacked weights' row blocks.
        let project = |x: &[f32], rows: usize, part: usize| -> Vec<f32> {
            let mut y = vec![0.0f32; rows * ue];
            if let Some(b) = &w.qkv_b {
                let b = &b.slice()[part * ue..(part + 1) * ue];
                for row in y.chunks_exact_mut(ue) {
                    row.copy_from_slice(b);
                }
            }
            gemm_into(
                (rows, ue, ue),
                1.0,
                x,
                Mat::rows(0, ue),
                w.qkv_w.slice(),
                Mat::transposed(part * ue * ue, ue),
                &mut y,
                Mat::rows(0, ue),
                true,
                threads,
            );
            y
        };
        let (lr, sr) = (dims.batch * dims.l, dims.batch * dims.s);
        let (q, k, v) = (
            project(xq.slice(), lr, 0),
            project(xk.slice(), sr, 1),
            project(xv.slice(), sr, 2),
        );
        let mut p = vec![0.0f32; dims.batch * dims.heads * dims.l * dims.s];
        let mut o = vec![0.0f32; lr * ue];
        attend(
            dims,
            (&q, 0, ue),
            (&k, 0, ue),
            (&v, 0, ue),
            mask.as_ref(),
            &mut p,
            &mut o,
            threads,
        );
        (w.out_projection(lr, ue, &o, None, threads), p)
    };
    let out = Tensor::from_vec(out, &[qs[0], qs[1], e])?;
    let p = Tensor::from_vec(p, &[qs[0], h, qs[1], ks[1]])?;
    Ok(Some((out, p)))
}

/// The f32 `_transformer_encoder_layer_fwd` on a dense `[B, L, E]` input; `None` when the
/// inputs do not fit this kernel.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encoder_layer(
    x: &Tensor,
    embed_dim: i64,
    num_heads: i64,
    w: &EncoderLayerWeights,
    use_gelu: bool,
    norm_first: bool,
    eps: f64,
    mask: Option<&Tensor>,
    mask_type: Option<i64>,
) -> Result<Option<Tensor>> {
    let xs = x.sizes();
    if xs.len() != 3
        || num_heads <= 0
        || embed_dim <= 0
        || embed_dim % num_heads != 0
        || xs[2] != embed_dim
        || !small_enough(xs[0] * xs[1] * embed_dim)
    {
        return Ok(None);
    }
    let e = embed_dim;
    let Some(attn) = AttnWeights::of(e, w.qkv_weight, w.qkv_bias, w.proj_weight, w.proj_bias)?
    else {
        return Ok(None);
    };
    let f = w.ffn_weight_1.sizes().first().copied().unwrap_or(-1);
    let (Some(x_data), Some(n1w), Some(n1b), Some(n2w), Some(n2b)) = (
        F32Data::of(x, &xs)?,
        opt_data(w.norm_weight_1, &[e])?,
        opt_data(w.norm_bias_1, &[e])?,
        opt_data(w.norm_weight_2, &[e])?,
        opt_data(w.norm_bias_2, &[e])?,
    ) else {
        return Ok(None);
    };
    let (Some(w1), Some(b1), Some(w2), Some(b2)) = (
        F32Data::of(w.ffn_weight_1, &[f, e])?,
        opt_data(w.ffn_bias_1, &[f])?,
        F32Data::of(w.ffn_weight_2, &[e, f])?,
        opt_data(w.ffn_bias_2, &[e])?,
    ) else {
        return Ok(None);
    };
    let dims = Dims::new(xs[0], num_heads, xs[1], xs[1], e);
    let Some(mask) = dims.mask(mask, mask_type)? else {
        return Ok(None);
    };
    let threads = crate::threads::num_threads();
    let (ue, uf) = (dims.embed, f as usize);
    let rows = dims.batch * dims.l;
    let xv = x_data.slice();
    let ln = |v: &[f32], w: &Option<F32Data>, b: &Option<F32Data>| {
        layer_norm_rows(v, ue, eps, w.as_ref(), b.as_ref())
    };
    // The feed-forward block: `residual + linear2(act(linear1(input)))`.
    let ffn = |input: &[f32], residual: &[f32]| -> Result<Vec<f32>> {
        let mut hidden = init_rows(rows, uf, b1.as_ref(), None);
        gemm_into(
            (rows, uf, ue),
            1.0,
            input,
            Mat::rows(0, ue),
            w1.slice(),
            Mat::transposed(0, ue),
            &mut hidden,
            Mat::rows(0, uf),
            true,
            threads,
        );
        let hidden = if use_gelu {
            let t = Tensor::from_vec(hidden, &[rows as i64, f])?.gelu("none")?;
            t.to_vec::<f32>()
        } else {
            for v in hidden.iter_mut() {
                // `max` would turn NaN into 0; relu keeps it.
                if *v < 0.0 {
                    *v = 0.0;
                }
            }
            hidden
        };
        let mut out = init_rows(rows, ue, b2.as_ref(), Some(residual));
        gemm_into(
            (rows, ue, uf),
            1.0,
            &hidden,
            Mat::rows(0, uf),
            w2.slice(),
            Mat::transposed(0, uf),
            &mut out,
            Mat::rows(0, ue),
            true,
            threads,
        );
        Ok(out)
    };
    let out = if norm_first {
        let n1 = ln(xv, &n1w, &n1b);
        let (y, _) = attn.self_attention(dims, &n1, Some(xv), mask.as_ref(), threads);
        let n2 = ln(&y, &n2w, &n2b);
        ffn(&n2, &y)?
    } else {
        let (y, _) = attn.self_attention(dims, xv, Some(xv), mask.as_ref(), threads);
        let y = ln(&y, &n1w, &n1b);
        let z = ffn(&y, &y)?;
        ln(&z, &n2w, &n2b)
    };
    Ok(Some(Tensor::from_vec(out, &xs)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::attention::{encoder_layer_composed, mha};

    /// Deterministic values in [-1, 1) from a seed (an LCG), as an f32 tensor.
    fn data(seed: u64, sizes: &[i64]) -> Tensor {
        let n: i64 = sizes.iter().product();
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v: Vec<f32> = (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect();
        Tensor::from_vec(v, sizes).unwrap()
    }

    /// Asserts equal shapes and values within f32 rounding (NaNs must match NaNs).
    fn close(got: &Tensor, want: &Tensor, what: &str) {
        assert_eq!(got.sizes(), want.sizes(), "{what}: sizes");
        let (g, w) = (got.to_vec::<f32>(), want.to_vec::<f32>());
        for (i, (a, b)) in g.iter().zip(&w).enumerate() {
            let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-5 + 1e-4 * b.abs();
            assert!(ok, "{what}: element {i}: {a} vs {b}");
        }
    }

    /// Runs `f` with the widest kernels and again with AVX2 forced.
    fn both_isas(f: impl Fn()) {
        f();
        crate::cpu::simd::with_avx2_only(&f);
    }

    struct Layer {
        qkv_w: Tensor,
        qkv_b: Tensor,
        proj_w: Tensor,
        proj_b: Tensor,
        n: [Tensor; 4],
        w1: Tensor,
        b1: Tensor,
        w2: Tensor,
        b2: Tensor,
    }

    fn layer(e: i64, f: i64) -> Layer {
        Layer {
            qkv_w: data(1, &[3 * e, e]),
            qkv_b: data(2, &[3 * e]),
            proj_w: data(3, &[e, e]),
            proj_b: data(4, &[e]),
            n: [data(5, &[e]), data(6, &[e]), data(7, &[e]), data(8, &[e])],
            w1: data(9, &[f, e]),
            b1: data(10, &[f]),
            w2: data(11, &[e, f]),
            b2: data(12, &[e]),
        }
    }

    /// The fused multi-head attention against the composed one (output and probabilities).
    #[allow(clippy::too_many_arguments)]
    fn check_mha(
        b: i64,
        l: i64,
        s: i64,
        e: i64,
        h: i64,
        self_attn: bool,
        mask: Option<(&Tensor, Option<i64>)>,
        with_bias: bool,
    ) {
        let lw = layer(e, 1);
        let q = data(20, &[b, l, e]);
        let (k, v) = if self_attn {
            (q.clone(), q.clone())
        } else {
            (data(21, &[b, s, e]), data(22, &[b, s, e]))
        };
        let (qb, pb) = if with_bias {
            (Some(&lw.qkv_b), Some(&lw.proj_b))
        } else {
            (None, None)
        };
        let (m, mt) = match mask {
            Some((m, t)) => (Some(m), t),
            None => (None, None),
        };
        let what = format!("mha b{b} l{l} s{s} e{e} h{h} self {self_attn} mask {mt:?}");
        let (go, gp) = multi_head_attention(&q, &k, &v, e, h, &lw.qkv_w, qb, &lw.proj_w, pb, m, mt)
            .unwrap()
            .unwrap_or_else(|| panic!("{what}: not taken by the fused kernel"));
        let (wo, wp) = mha(&q, &k, &v, e, h, &lw.qkv_w, qb, &lw.proj_w, pb, m, mt).unwrap();
        close(&go, &wo, &what);
        close(&gp, &wp, &what);
    }

    #[test]
    fn multi_head_attention_matches_the_composed_path() {
        both_isas(|| {
            // Head sizes and lengths around every vector width (1, 4, 8, 16 lanes), empty ones.
            for &(b, l, e, h) in &[
                (1, 1, 4, 1),
                (2, 6, 16, 2),
                (3, 5, 20, 4),
                (2, 17, 48, 3),
                (1, 33, 8, 8),
                (2, 0, 16, 2),
                (0, 3, 8, 2),
                (2, 40, 64, 4),
                // One batch, heads in parallel.
                (1, 48, 64, 4),
            ] {
                check_mha(b, l, l, e, h, true, None, true);
                check_mha(b, l, l + 3, e, h, false, None, b % 2 == 0);
            }
        });
    }

    #[test]
    fn multi_head_attention_masks() {
        both_isas(|| {
            let (b, l, s, e, h) = (2, 5, 7, 12, 3);
            // [L, S] bool mask (true excludes), one row fully masked (zeros, not NaN).
            let mut v = vec![false; (l * s) as usize];
            for (i, x) in v.iter_mut().enumerate() {
                *x = i % 3 == 1 || i / s as usize == 2;
            }
            let m = Tensor::from_vec(v, &[l, s]).unwrap();
            check_mha(b, l, s, e, h, false, Some((&m, Some(0))), true);
            // Key padding [B, S] (type 1), a batch with every key padded.
            let mut v = vec![false; (b * s) as usize];
            for (i, x) in v.iter_mut().enumerate() {
                *x = i >= s as usize || i % s as usize >= 4;
            }
            let kp = Tensor::from_vec(v, &[b, s]).unwrap();
            check_mha(b, l, s, e, h, false, Some((&kp, Some(1))), true);
            // Float [B, H, L, S] mask (type 2) with -inf entries, and a broadcast [1, L, S].
            let mut fm = data(30, &[b, h, l, s]).to_vec::<f32>();
            fm[3] = f32::NEG_INFINITY;
            let fm = Tensor::from_vec(fm, &[b, h, l, s]).unwrap();
            check_mha(b, l, s, e, h, false, Some((&fm, Some(2))), false);
            let bm = data(31, &[1, l, s]);
            check_mha(b, l, s, e, h, false, Some((&bm, None)), true);
            // Self-attention with a square mask.
            let sq = data(32, &[l, l]);
            check_mha(b, l, l, e, h, true, Some((&sq, Some(0))), true);
        });
    }

    #[test]
    fn unfit_operands_take_the_composed_path() {
        let lw = layer(8, 4);
        let q = data(40, &[2, 3, 8]);
        // A mask that does not broadcast: the composed path reports the error.
        let bad = data(41, &[4, 4]);
        assert!(multi_head_attention(
            &q,
            &q,
            &q,
            8,
            2,
            &lw.qkv_w,
            None,
            &lw.proj_w,
            None,
            Some(&bad),
            None
        )
        .unwrap()
        .is_none());
        // f64 inputs and mis-shaped weights are not for this kernel.
        let q64 = q.to_dtype(DType::Float64, false).unwrap();
        assert!(multi_head_attention(
            &q64, &q64, &q64, 8, 2, &lw.qkv_w, None, &lw.proj_w, None, None, None
        )
        .unwrap()
        .is_none());
        assert!(multi_head_attention(
            &q, &q, &q, 8, 2, &lw.proj_w, None, &lw.proj_w, None, None, None
        )
        .unwrap()
        .is_none());
    }

    #[test]
    fn non_finite_inputs_propagate_as_in_the_composed_path() {
        both_isas(|| {
            let lw = layer(16, 32);
            let mut x = data(50, &[2, 6, 16]).to_vec::<f32>();
            x[5] = f32::NAN;
            x[40] = f32::INFINITY;
            let x = Tensor::from_vec(x, &[2, 6, 16]).unwrap();
            let (go, _) = multi_head_attention(
                &x,
                &x,
                &x,
                16,
                2,
                &lw.qkv_w,
                Some(&lw.qkv_b),
                &lw.proj_w,
                Some(&lw.proj_b),
                None,
                None,
            )
            .unwrap()
            .unwrap();
            let (wo, _) = mha(
                &x,
                &x,
                &x,
                16,
                2,
                &lw.qkv_w,
                Some(&lw.qkv_b),
                &lw.proj_w,
                Some(&lw.proj_b),
                None,
                None,
            )
            .unwrap();
            close(&go, &wo, "mha with NaN/inf");
            for norm_first in [false, true] {
                for gelu in [false, true] {
                    check_layer(&x, &lw, 2, gelu, norm_first, true, None);
                }
            }
        });
    }

    fn check_layer(
        x: &Tensor,
        lw: &Layer,
        h: i64,
        use_gelu: bool,
        norm_first: bool,
        with_bias: bool,
        mask: Option<(&Tensor, Option<i64>)>,
    ) {
        let e = x.sizes()[2];
        let o = |t: &Tensor| if with_bias { Some(t.clone()) } else { None };
        let (qb, pb, b1, b2) = (o(&lw.qkv_b), o(&lw.proj_b), o(&lw.b1), o(&lw.b2));
        let ns: Vec<Option<Tensor>> = lw.n.iter().map(o).collect();
        let w = EncoderLayerWeights {
            qkv_weight: &lw.qkv_w,
            qkv_bias: qb.as_ref(),
            proj_weight: &lw.proj_w,
            proj_bias: pb.as_ref(),
            norm_weight_1: ns[0].as_ref(),
            norm_bias_1: ns[1].as_ref(),
            norm_weight_2: ns[2].as_ref(),
            norm_bias_2: ns[3].as_ref(),
            ffn_weight_1: &lw.w1,
            ffn_bias_1: b1.as_ref(),
            ffn_weight_2: &lw.w2,
            ffn_bias_2: b2.as_ref(),
        };
        let (m, mt) = match mask {
            Some((m, t)) => (Some(m), t),
            None => (None, None),
        };
        let what = format!(
            "layer {:?} gelu {use_gelu} norm_first {norm_first} bias {with_bias} mask {mt:?}",
            x.sizes().as_slice()
        );
        let got = encoder_layer(x, e, h, &w, use_gelu, norm_first, 1e-5, m, mt)
            .unwrap()
            .unwrap_or_else(|| panic!("{what}: not taken by the fused kernel"));
        let want = encoder_layer_composed(x, e, h, &w, use_gelu, norm_first, 1e-5, m, mt).unwrap();
        close(&got, &want, &what);
    }

    #[test]
    fn encoder_layer_matches_the_composed_path() {
        both_isas(|| {
            for &(b, l, e, h, f) in &[
                (2, 6, 16, 2, 32),
                (1, 1, 4, 1, 3),
                (3, 17, 24, 3, 37),
                (2, 0, 8, 2, 16),
                (1, 9, 64, 4, 200),
                (1, 40, 64, 4, 64),
            ] {
                let lw = layer(e, f);
                let x = data(60, &[b, l, e]);
                for norm_first in [false, true] {
                    for gelu in [false, true] {
                        check_layer(&x, &lw, h, gelu, norm_first, true, None);
                    }
                    check_layer(&x, &lw, h, false, norm_first, false, None);
                }
            }
            // Masks: key padding and an additive [L, L] mask; a strided (transposed) input.
            let lw = layer(16, 32);
            let x = data(61, &[2, 5, 16]);
            let kp = Tensor::from_vec(
                vec![
                    false, false, true, false, true, false, false, false, false, true,
                ],
                &[2, 5],
            )
            .unwrap();
            check_layer(&x, &lw, 4, false, false, true, Some((&kp, Some(1))));
            let am = data(62, &[5, 5]);
            check_layer(&x, &lw, 4, true, true, true, Some((&am, Some(0))));
            let xt = data(63, &[5, 2, 16]).transpose(0, 1).unwrap();
            check_layer(&xt, &lw, 2, false, true, true, None);
        });
    }
}
