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
use crate::cpu::contiguous::copy_short;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::attention::{shape_mask, EncoderLayerWeights};
use crate::ops::norm::layer_norm_row_simd;
use crate::ops::scan::softmax_row_in_place_simd;
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

/// A strided f32 tensor read in place (unit last stride, no negative strides): the slice from
/// its first element to its last, kept alive by a metadata snapshot.
struct F32View {
    meta: TensorMeta,
    len: usize,
}

impl F32View {
    fn of(t: &Tensor) -> Option<F32View> {
        let (sizes, strides) = (t.sizes(), t.strides());
        if t.dtype() != DType::Float32
            || t.is_quantized()
            || strides.last() != Some(&1)
            || strides.iter().any(|&s| s < 0)
            || sizes.iter().any(|&n| n <= 0)
        {
            return None;
        }
        let last: i64 = sizes
            .iter()
            .zip(strides.iter())
            .map(|(&n, &s)| (n - 1) * s)
            .sum();
        Some(F32View {
            meta: t.meta_snapshot(),
            len: last as usize + 1,
        })
    }

    /// The operand of `of` (this view's tensor, `[B, H, n, E]`), or of a flattened
    /// `[B * n, E]` one: element (b, h, i, c) at `b * sb + h * sh + i * si + c`.
    fn rows(&self, of: &Tensor, n: i64, e: i64) -> Rows<'_> {
        if of.dim() == 4 {
            let st = of.strides();
            Rows {
                data: self.slice(),
                off: 0,
                batch: st[0] as usize,
                head: st[1] as usize,
                row: st[2] as usize,
            }
        } else {
            Rows::packed(self.slice(), 0, n as usize, e as usize, e as usize)
        }
    }

    fn slice(&self) -> &[f32] {
        // SAFETY: every element of the view, the furthest `len - 1` past its first, lies in
        // its storage (checked when the view was made); `self.meta` keeps the storage alive,
        // and the kernels only read it while they write fresh buffers.
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

/// One attention operand inside a slice: head `h` of batch `b` is the row-major matrix at
/// `off + b * batch + h * head` with rows `row` apart.
#[derive(Clone, Copy)]
struct Rows<'a> {
    data: &'a [f32],
    off: usize,
    batch: usize,
    head: usize,
    row: usize,
}

impl<'a> Rows<'a> {
    /// `[B * n]` rows of stride `row` from `off` with head `h` at columns `h * d ..`.
    fn packed(data: &'a [f32], off: usize, n: usize, row: usize, d: usize) -> Rows<'a> {
        Rows {
            data,
            off,
            batch: n * row,
            head: d,
            row,
        }
    }

    /// The matrix of head `h` of batch `b` (transposed: as a `d x n` view).
    fn of(&self, b: usize, h: usize, transposed: bool) -> Mat {
        let off = self.off + b * self.batch + h * self.head;
        if transposed {
            Mat::transposed(off, self.row)
        } else {
            Mat::rows(off, self.row)
        }
    }
}

/// Scaled dot-product attention of every head of `q`, `k`, `v` (`[L, d]`, `[S, d]`, `[S, d]`
/// matrices). Writes the heads' outputs side by side into `o` (`[B * L, E]`, head `h` at
/// columns `h * d ..`) and, when asked for, the probabilities
/// into `p` (`[B, H, L, S]`). `scale` multiplies the scores (`None`: `1 / sqrt(d)`).
#[allow(clippy::too_many_arguments)]
fn attend(
    dims: Dims,
    q: Rows,
    k: Rows,
    v: Rows,
    mask: Option<&Mask>,
    scale: Option<f32>,
    p: Option<&mut [f32]>,
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
    let scale = scale.unwrap_or((1.0 / (d as f64).sqrt()) as f32);
    // Head `h` of batch `b`: scores into `ph` (`[L, S]`), its output into `out` at `om`.
    let one_head = |b: usize, h: usize, ph: &mut [f32], out: &mut [f32], om: Mat, threads| {
        gemm_into(
            (l, s, d),
            scale,
            q.data,
            q.of(b, h, false),
            k.data,
            k.of(b, h, true),
            ph,
            Mat::rows(0, s),
            false,
            threads,
        );
        for (i, row) in ph.chunks_exact_mut(s).enumerate() {
            if let Some(m) = mask {
                let md = m.data.slice();
                let base = b * m.strides[0] + h * m.strides[1] + i * m.strides[2];
                for (j, x) in row.iter_mut().enumerate() {
                    *x += md[base + j * m.strides[3]];
                }
            }
            softmax_row_in_place_simd(row, true);
        }
        gemm_into(
            (l, d, s),
            1.0,
            ph,
            Mat::rows(0, s),
            v.data,
            v.of(b, h, false),
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
    // Without `p` each head's scores go to a scratch block that stays in cache for its softmax
    // and second product (one per task when heads run in parallel).
    let mut p = p;
    if threads > 1 && batch * heads > 1 && work >= 1 << 16 {
        // Heads in parallel (a batch of one has as much parallelism as many batches): each
        // writes its own `[L, d]` block, copied into its columns of `o` afterwards (straight
        // into `o` when one head fills whole rows).
        use rayon::prelude::*;
        crate::threads::parallel_region();
        let direct = heads == 1;
        // Reused between calls: a fresh buffer this size was a page-faulted `mmap` every call.
        thread_local! {
            static HEADS_OUT: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut own = Vec::new();
        let mut kept =
            HEADS_OUT.with(|c| c.try_borrow_mut().map(|mut v| std::mem::take(&mut *v)).ok());
        let heads_out = kept.as_mut().unwrap_or(&mut own);
        heads_out.resize(if direct { 0 } else { batch * heads * l * d }, 0.0);
        let outs = if direct {
            &mut o[..]
        } else {
            &mut heads_out[..]
        };
        match p.as_deref_mut() {
            Some(p) => p
                .par_chunks_mut(l * s)
                .zip(outs.par_chunks_mut(l * d))
                .enumerate()
                .with_min_len(crate::threads::min_piece(true))
                .for_each(|(bh, (ph, oh))| {
                    one_head(bh / heads, bh % heads, ph, oh, Mat::rows(0, d), 1)
                }),
            None => outs
                .par_chunks_mut(l * d)
                .enumerate()
                .with_min_len(crate::threads::min_piece(true))
                .for_each_init(
                    || vec![0.0f32; l * s],
                    |ph, (bh, oh)| one_head(bh / heads, bh % heads, ph, oh, Mat::rows(0, d), 1),
                ),
        }
        for (bh, oh) in heads_out.chunks_exact(l * d).enumerate() {
            let (b, h) = (bh / heads, bh % heads);
            for (i, row) in oh.chunks_exact(d).enumerate() {
                let at = (b * l + i) * embed + h * d;
                copy_short(&mut o[at..at + d], row);
            }
        }
        if let Some(v) = kept {
            HEADS_OUT.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    *c = v;
                }
            });
        }
    } else {
        let mut scratch = Vec::new();
        for bh in 0..batch * heads {
            let (b, h) = (bh / heads, bh % heads);
            let ph = match p.as_deref_mut() {
                Some(p) => &mut p[bh * l * s..(bh + 1) * l * s],
                None => {
                    scratch.resize(l * s, 0.0f32);
                    &mut scratch[..]
                }
            };
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
            Rows::packed(&qkv, 0, dims.l, 3 * e, e / dims.heads),
            Rows::packed(&qkv, e, dims.s, 3 * e, e / dims.heads),
            Rows::packed(&qkv, 2 * e, dims.s, 3 * e, e / dims.heads),
            mask,
            None,
            Some(&mut p),
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

/// The f32 `scaled_dot_product_attention` without dropout or gradients, on `[..., L, E]`
/// queries and `[..., S, E]` keys and values with the same leading sizes, unmasked, causal or
/// with a mask over `[L, S]` alone (bool: `true` attends). Each head's scores stay in a
/// cache-sized block for their softmax and the second product, with the scale folded into the
/// first: the composed path wrote, rescaled, re-read and softmaxed every head's scores as whole
/// tensors (2.8x PyTorch's time on `[1, 8, 128, 32]` at one thread). `None` when the inputs do
/// not fit; the caller then takes the composed path.
pub(crate) fn scaled_dot_product_attention(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
    is_causal: bool,
    scale: Option<f64>,
) -> Result<Option<Tensor>> {
    let qs = query.sizes();
    let n = qs.len();
    if n < 2 || key.dim() != n || value.dim() != n {
        return Ok(None);
    }
    let (l, e) = (qs[n - 2], qs[n - 1]);
    let s = key.sizes()[n - 2];
    let mut kv_sizes = qs.to_vec();
    kv_sizes[n - 2] = s;
    let batch: i64 = qs[..n - 2].iter().product();
    if l == 0 || s == 0 || e == 0 || batch == 0 {
        return Ok(None);
    }
    if [query, key, value].iter().any(|t| t.requires_grad()) {
        return Ok(None);
    }
    if key.sizes().as_slice() != kv_sizes || value.sizes().as_slice() != kv_sizes {
        return Ok(None);
    }
    // `[B, H, L, E]` views are read in place: attention layers make them by transposing a
    // `[B, L, H, E]` buffer, and the output is made the same way (as ATen's CPU kernel does),
    // so the caller's transpose back is free. Other ranks are flattened to one batch dim.
    let (views, dims) = if n == 4 {
        (
            [query, key, value].map(F32View::of),
            Dims::new(qs[0], qs[1], l, s, qs[1] * e),
        )
    } else {
        let flat = |t: &Tensor, len: i64| -> Result<Option<F32View>> {
            Ok(F32View::of(&t.contiguous()?.reshape(&[batch * len, e])?))
        };
        (
            [flat(query, l)?, flat(key, s)?, flat(value, s)?],
            Dims::new(batch, 1, l, s, e),
        )
    };
    let [Some(q), Some(k), Some(v)] = views else {
        return Ok(None);
    };
    // An additive f32 mask over `[L, S]` (bool masks keep their `true` positions).
    let additive = match (attn_mask, is_causal) {
        (None, false) => None,
        (None, true) => {
            let keep = crate::ops::factory::ones(&[l, s], Some(DType::Bool))?.tril(0)?;
            Some(
                Tensor::zeros(&[l, s], DType::Float32)?
                    .masked_fill(&keep.logical_not()?, Scalar::Float(f64::NEG_INFINITY))?,
            )
        }
        (Some(m), false) => {
            let ms = m.sizes();
            // (More dims than the query would broadcast the output to them.)
            if ms.len() > n || (ms.len() > 2 && ms[..ms.len() - 2].iter().any(|&d| d != 1)) {
                return Ok(None);
            }
            let m = m.reshape(&ms[ms.len().saturating_sub(2)..])?;
            Some(if m.dtype() == DType::Bool {
                Tensor::zeros(&m.sizes(), DType::Float32)?
                    .masked_fill(&m.logical_not()?, Scalar::Float(f64::NEG_INFINITY))?
            } else if m.dtype().is_floating_point() {
                m.to_dtype(DType::Float32, false)?
            } else {
                return Ok(None);
            })
        }
        // Rejected by the caller.
        (Some(_), true) => return Ok(None),
    };
    let mask = match &additive {
        Some(m) => match Mask::new(m, None, [dims.batch, 1, dims.l, dims.s])? {
            Some(m) => Some(m),
            None => return Ok(None),
        },
        None => None,
    };
    let threads = crate::threads::num_threads();
    // The output from the tensor buffer cache: a `Vec` this size was a fresh `mmap`, page
    // faults and an unmap on every call.
    let out = Tensor::zeros(&[batch * l * e], DType::Float32)?;
    // SAFETY: `out` is a new contiguous f32 tensor of `batch * l * e` elements that nothing
    // else references; this is the only access to its elements until `o`'s last use below.
    let o = unsafe {
        std::slice::from_raw_parts_mut(
            out.meta_snapshot().data_ptr() as *mut f32,
            (batch * l * e) as usize,
        )
    };
    attend(
        dims,
        q.rows(query, l, e),
        k.rows(key, s, e),
        v.rows(value, s, e),
        mask.as_ref(),
        scale.map(|x| x as f32),
        None,
        o,
        threads,
    );
    Ok(Some(if n == 4 {
        out.reshape(&[qs[0], l, qs[1], e])?.transpose(1, 2)?
    } else {
        out.reshape(&qs)?
    }))
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
            Rows::packed(&q, 0, dims.l, ue, ue / dims.heads),
            Rows::packed(&k, 0, dims.s, ue, ue / dims.heads),
            Rows::packed(&v, 0, dims.s, ue, ue / dims.heads),
            mask.as_ref(),
            None,
            Some(&mut p),
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
        let (wo, wp) = mha(&q, &k, &v, e, h, &lw.qkv_w, qb, &lw.proj_w, pb, m, mt, true).unwrap();
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
                true,
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
    /// The f32 `scaled_dot_product_attention` kernel against the composed operators: lengths
    /// that differ, head sizes off the vector widths, leading dims from none to two, the
    /// parallel-heads branch (at more than one thread), every mask form it takes (causal, bool
    /// with a fully masked row, float over `[S]` and `[1, .., L, S]`), a custom scale, NaN
    /// inputs and strided views; and the inputs it leaves to the composed path.
    #[test]
    fn sdpa_kernel_matches_composed() {
        use crate::ops::attention::{scaled_dot_product_attention as sdpa, sdpa_composed};
        both_isas(|| {
            let check = |q: &Tensor, k: &Tensor, v: &Tensor, m: Option<&Tensor>, causal, scale| {
                let fused = scaled_dot_product_attention(q, k, v, m, causal, scale).unwrap();
                let fused = fused.expect("the kernel takes these inputs");
                let want = sdpa_composed(q, k, v, m, 0.0, causal, scale).unwrap();
                let what = format!("q {:?} k {:?} causal {causal}", q.sizes(), k.sizes());
                close(&fused, &want, &what);
                close(&sdpa(q, k, v, m, 0.0, causal, scale).unwrap(), &want, &what);
            };
            for (lead, l, s, d) in [
                (vec![2, 3], 7, 9, 5),
                (vec![2, 4], 64, 40, 24),
                (vec![], 6, 10, 8),
                (vec![3], 33, 17, 16),
                (vec![1, 2], 9, 7, 48),
            ] {
                let dims = |n: i64| [lead.clone(), vec![n, d]].concat();
                let (q, k, v) = (data(70, &dims(l)), data(71, &dims(s)), data(72, &dims(s)));
                check(&q, &k, &v, None, false, None);
                check(&q, &k, &v, None, true, None);
                check(&q, &k, &v, None, false, Some(0.3));
                let keep: Vec<bool> = (0..l * s).map(|i| i % 3 != 1 && i >= s).collect();
                let keep = Tensor::from_vec(keep, &[l, s]).unwrap();
                check(&q, &k, &v, Some(&keep), false, None);
                check(&q, &k, &v, Some(&data(73, &[s])), false, None);
                let ones = [vec![1; lead.len()], vec![l, s]].concat();
                check(&q, &k, &v, Some(&data(74, &ones)), false, None);
            }
            // NaN in one query row; strided (transposed) views.
            let mut qv = data(75, &[2, 5, 8]).to_vec::<f32>();
            qv[9] = f32::NAN;
            let q = Tensor::from_vec(qv, &[2, 5, 8]).unwrap();
            let (k, v) = (data(76, &[2, 6, 8]), data(77, &[2, 6, 8]));
            check(&q, &k, &v, None, false, None);
            let qt = data(78, &[5, 2, 8]).transpose(0, 1).unwrap();
            check(&qt, &k, &v, None, true, None);
            // `[B, H, L, E]` views of `[B, L, H, E]` buffers, keys and values interleaved in
            // one (as attention layers split their projections), read in place.
            let q4 = data(83, &[2, 5, 3, 8]).transpose(1, 2).unwrap();
            let kv = data(84, &[2, 6, 2, 3, 8]);
            let k4 = kv.select(2, 0).unwrap().transpose(1, 2).unwrap();
            let v4 = kv.select(2, 1).unwrap().transpose(1, 2).unwrap();
            check(&q4, &k4, &v4, None, false, None);
            check(&q4, &k4, &v4, Some(&data(85, &[5, 6])), false, Some(0.5));
            // Left to the composed path: a mask with a batch dim, broadcast leading dims,
            // a value of another width, gradients.
            let m = data(79, &[2, 5, 6]);
            assert!(
                scaled_dot_product_attention(&q, &k, &v, Some(&m), false, None)
                    .unwrap()
                    .is_none()
            );
            let m4 = data(82, &[1, 1, 5, 6]);
            assert!(
                scaled_dot_product_attention(&q, &k, &v, Some(&m4), false, None)
                    .unwrap()
                    .is_none()
            );
            let k1 = data(80, &[1, 6, 8]);
            assert!(
                scaled_dot_product_attention(&q, &k1, &k1, None, false, None)
                    .unwrap()
                    .is_none()
            );
            let v4 = data(81, &[2, 6, 4]);
            assert!(scaled_dot_product_attention(&q, &k, &v4, None, false, None)
                .unwrap()
                .is_none());
            let qg = q.detach();
            qg.set_requires_grad(true);
            assert!(scaled_dot_product_attention(&qg, &k, &v, None, false, None)
                .unwrap()
                .is_none());
        });
    }
}
