//! Attention: `scaled_dot_product_attention` (the math path, with boolean or additive masks,
//! causal masking, dropout and a custom scale) and the fused fast paths scripted
//! `nn.MultiheadAttention` / `nn.TransformerEncoderLayer` take in inference
//! (`_native_multi_head_attention`, `_transformer_encoder_layer_fwd`).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::factory::ones;
use crate::ops::nested::{nested_from_padded_zeroing, padding_mask};
use crate::ops::norm::{dropout, layer_norm};
use crate::ops::scan::SoftmaxKind;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// Softmax over the last dimension where rows that are entirely `-inf` give zeros instead of
/// NaN (ATen's `_safe_softmax`, used by the math attention path).
fn safe_softmax(scores: &Tensor) -> Result<Tensor> {
    scores.softmax_impl(-1, None, SoftmaxKind::SafeSoftmax)
}

/// Applies an attention mask to scores: a bool mask keeps `true` positions, a float mask adds.
fn apply_mask(scores: &Tensor, mask: &Tensor, keep_true: bool) -> Result<Tensor> {
    if mask.dtype() == DType::Bool {
        let drop = if keep_true {
            mask.logical_not()?
        } else {
            mask.clone()
        };
        scores.masked_fill(&drop, Scalar::Float(f64::NEG_INFINITY))
    } else {
        scores.add(&mask.to_dtype(scores.dtype(), false)?, Scalar::Int(1))
    }
}

/// `scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)`:
/// `softmax(q @ k^T * scale + mask) @ v` over `[..., L, E]` queries and `[..., S, E]` keys. A bool
/// mask marks the positions that may be attended; `scale` defaults to `1 / sqrt(E)`.
pub fn scaled_dot_product_attention(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
    is_causal: bool,
    scale: Option<f64>,
) -> Result<Tensor> {
    if query.dim() < 2 || key.dim() < 2 || value.dim() < 2 {
        return Err(Error::runtime(format!(
            "scaled_dot_product_attention: expected query, key and value to be at least 2-D, got {}-D, {}-D and {}-D",
            query.dim(),
            key.dim(),
            value.dim()
        )));
    }
    if is_causal && attn_mask.is_some() {
        return Err(Error::runtime(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
        ));
    }
    if query.dtype() != key.dtype() || query.dtype() != value.dtype() {
        return Err(Error::runtime(format!(
            "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and value.dtype: {} instead.",
            query.dtype().scalar_type_name(),
            key.dtype().scalar_type_name(),
            value.dtype().scalar_type_name()
        )));
    }
    if dropout_p == 0.0 {
        if let Some(out) = crate::ops::attention_fused::scaled_dot_product_attention(
            query, key, value, attn_mask, is_causal, scale,
        )? {
            return Ok(out);
        }
    }
    sdpa_composed(query, key, value, attn_mask, dropout_p, is_causal, scale)
}

/// `scaled_dot_product_attention` as tensor operations (any dtype, dropout, gradients; the f32
/// kernel's reference), on validated inputs.
pub(crate) fn sdpa_composed(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
    is_causal: bool,
    scale: Option<f64>,
) -> Result<Tensor> {
    let qs = query.sizes();
    let e = qs[qs.len() - 1];
    let l = qs[qs.len() - 2];
    let s = key.sizes()[key.dim() - 2];
    let scale = scale.unwrap_or(1.0 / (e as f64).sqrt());
    let mut scores = query
        .matmul(&key.transpose(-2, -1)?)?
        .mul_scalar(Scalar::Float(scale))?;
    if is_causal {
        let causal = ones(&[l, s], Some(DType::Bool))?.tril(0)?;
        scores = apply_mask(&scores, &causal, true)?;
    }
    if let Some(m) = attn_mask {
        scores = apply_mask(&scores, m, true)?;
    }
    let mut p = safe_softmax(&scores)?;
    if dropout_p > 0.0 {
        p = dropout(&p, dropout_p, true, None)?;
    }
    p.matmul(value)
}

/// Splits `[B, L, E]` into heads `[B, H, L, E / H]`.
fn heads(x: &Tensor, h: i64) -> Result<Tensor> {
    let s = x.sizes();
    x.reshape(&[s[0], s[1], h, s[2] / h])?.transpose(1, 2)
}

/// Shapes an encoder/MHA mask of `mask_type` (0: `[L, S]`, 1: key padding `[B, S]`,
/// 2: `[B, H, L, S]`) to broadcast over `[B, H, L, S]` scores.
pub(crate) fn shape_mask(mask: &Tensor, mask_type: Option<i64>) -> Result<Tensor> {
    match (mask_type, mask.dim()) {
        (Some(1), 2) => {
            let s = mask.sizes();
            mask.reshape(&[s[0], 1, 1, s[1]])
        }
        _ => Ok(mask.clone()),
    }
}

/// Multi-head attention with packed in-projection: returns the projected output `[B, L, E]`
/// and the attention weights `[B, H, L, S]`. Bool masks mark positions to *exclude*.
#[allow(clippy::too_many_arguments)]
pub(crate) fn mha(
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
    need_weights: bool,
) -> Result<(Tensor, Tensor)> {
    if query.dim() != 3 || num_heads <= 0 || embed_dim % num_heads != 0 {
        return Err(Error::runtime(format!(
            "multi-head attention expects a [B, L, E] query and embed_dim divisible by num_heads, got query of size {:?}, embed_dim={embed_dim}, num_heads={num_heads}",
            query.sizes().as_slice()
        )));
    }
    let (q, k, v) = if Tensor::is_same(query, key) && Tensor::is_same(key, value) {
        // Self-attention: one product with the stacked weights, split afterwards.
        let qkv = query.linear(qkv_weight, qkv_bias)?.chunk(3, -1)?;
        (qkv[0].clone(), qkv[1].clone(), qkv[2].clone())
    } else {
        let w = qkv_weight.chunk(3, 0)?;
        let b = match qkv_bias {
            Some(b) => b.chunk(3, 0)?.into_iter().map(Some).collect(),
            None => vec![None, None, None],
        };
        (
            query.linear(&w[0], b[0].as_ref())?,
            key.linear(&w[1], b[1].as_ref())?,
            value.linear(&w[2], b[2].as_ref())?,
        )
    };
    let d = embed_dim / num_heads;
    // The scale goes on q (ATen's `transform_bias_rescale_qkv` does the same): L x d elements
    // instead of L x L scores.
    let q = heads(
        &q.mul_scalar(Scalar::Float(1.0 / (d as f64).sqrt()))?,
        num_heads,
    )?;
    let (k, v) = (heads(&k, num_heads)?, heads(&v, num_heads)?);
    let qs = query.sizes();
    if !need_weights && mask.is_none() {
        // Without weights to return, the f32 attention kernel keeps each head's scores in cache.
        let fused = crate::ops::attention_fused::scaled_dot_product_attention(
            &q,
            &k,
            &v,
            None,
            false,
            Some(1.0),
        )?;
        if let Some(o) = fused {
            let o = o.transpose(1, 2)?.reshape(&[qs[0], qs[1], embed_dim])?;
            return Ok((
                o.linear(proj_weight, proj_bias)?,
                Tensor::zeros(&[0], o.dtype())?,
            ));
        }
    }
    let mut scores = q.matmul(&k.transpose(-2, -1)?)?;
    if let Some(m) = mask {
        scores = apply_mask(&scores, &shape_mask(m, mask_type)?, false)?;
    }
    let p = safe_softmax(&scores)?;
    let o = p.matmul(&v)?.transpose(1, 2)?;
    let o = o.reshape(&[qs[0], qs[1], embed_dim])?;
    Ok((o.linear(proj_weight, proj_bias)?, p))
}

/// `_native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
/// proj_weight, proj_bias, mask, need_weights, average_attn_weights, mask_type)` on batch-first
/// `[B, L, E]` inputs: returns the output and the weights (averaged over heads when asked; an
/// empty tensor when not needed).
#[allow(clippy::too_many_arguments)]
pub fn native_multi_head_attention(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    embed_dim: i64,
    num_head: i64,
    qkv_weight: &Tensor,
    qkv_bias: Option<&Tensor>,
    proj_weight: &Tensor,
    proj_bias: Option<&Tensor>,
    mask: Option<&Tensor>,
    need_weights: bool,
    average_attn_weights: bool,
    mask_type: Option<i64>,
) -> Result<(Tensor, Tensor)> {
    if let Some(lengths) = query.nested_lengths() {
        // Self-attention over each sequence alone: the padded batch with its padding masked out.
        if !Tensor::is_same(query, key) || !Tensor::is_same(key, value) || mask.is_some() {
            return Err(Error::runtime(
                "_native_multi_head_attention: a nested query is supported for self-attention without a mask only",
            ));
        }
        let lengths = lengths.to_vec();
        let padded = query.nested_padded();
        let pad = padding_mask(&lengths, padded.sizes()[1])?;
        let (o, w) = native_multi_head_attention(
            &padded,
            &padded,
            &padded,
            embed_dim,
            num_head,
            qkv_weight,
            qkv_bias,
            proj_weight,
            proj_bias,
            Some(&pad),
            need_weights,
            average_attn_weights,
            Some(1),
        )?;
        return Ok((nested_from_padded_zeroing(&o, lengths)?, w));
    }
    let fused = crate::ops::attention_fused::multi_head_attention(
        query,
        key,
        value,
        embed_dim,
        num_head,
        qkv_weight,
        qkv_bias,
        proj_weight,
        proj_bias,
        mask,
        mask_type,
    )?;
    let (o, p) = match fused {
        Some(r) => r,
        None => mha(
            query,
            key,
            value,
            embed_dim,
            num_head,
            qkv_weight,
            qkv_bias,
            proj_weight,
            proj_bias,
            mask,
            mask_type,
            need_weights,
        )?,
    };
    let weights = if !need_weights {
        Tensor::zeros(&[0], query.dtype())?
    } else if average_attn_weights {
        p.mean(Some(&[1]), false, None)?
    } else {
        p
    };
    Ok((o, weights))
}

/// The weights of one `nn.TransformerEncoderLayer`, in the order of
/// `_transformer_encoder_layer_fwd`'s arguments.
pub struct EncoderLayerWeights<'a> {
    pub qkv_weight: &'a Tensor,
    pub qkv_bias: Option<&'a Tensor>,
    pub proj_weight: &'a Tensor,
    pub proj_bias: Option<&'a Tensor>,
    pub norm_weight_1: Option<&'a Tensor>,
    pub norm_bias_1: Option<&'a Tensor>,
    pub norm_weight_2: Option<&'a Tensor>,
    pub norm_bias_2: Option<&'a Tensor>,
    pub ffn_weight_1: &'a Tensor,
    pub ffn_bias_1: Option<&'a Tensor>,
    pub ffn_weight_2: &'a Tensor,
    pub ffn_bias_2: Option<&'a Tensor>,
}

/// `_transformer_encoder_layer_fwd(src, embed_dim, num_heads, ..., use_gelu, norm_first, eps,
/// ..., mask, mask_type)`: the inference fast path of a batch-first encoder layer
/// (self-attention and feed-forward blocks with residuals and layer norms).
#[allow(clippy::too_many_arguments)]
pub fn transformer_encoder_layer_fwd(
    src: &Tensor,
    embed_dim: i64,
    num_heads: i64,
    w: &EncoderLayerWeights,
    use_gelu: bool,
    norm_first: bool,
    eps: f64,
    mask: Option<&Tensor>,
    mask_type: Option<i64>,
) -> Result<Tensor> {
    if let Some(lengths) = src.nested_lengths() {
        // Each sequence of a nested batch is encoded alone: the padded batch, with its padding
        // as the key padding mask (a nested input carries its own mask, so none may be given).
        if mask.is_some() {
            return Err(Error::runtime(
                "_transformer_encoder_layer_fwd: a mask cannot be combined with a nested tensor input",
            ));
        }
        let lengths = lengths.to_vec();
        let padded = src.nested_padded();
        let pad = padding_mask(&lengths, padded.sizes()[1])?;
        let out = transformer_encoder_layer_fwd(
            &padded,
            embed_dim,
            num_heads,
            w,
            use_gelu,
            norm_first,
            eps,
            Some(&pad),
            Some(1),
        )?;
        return nested_from_padded_zeroing(&out, lengths);
    }
    let unbatched = src.dim() == 2;
    let x = if unbatched {
        src.unsqueeze(0)?
    } else {
        src.clone()
    };
    // The f32 kernel when the operands fit it, else the composition of tensor operations.
    let out = match crate::ops::attention_fused::encoder_layer(
        &x, embed_dim, num_heads, w, use_gelu, norm_first, eps, mask, mask_type,
    )? {
        Some(out) => out,
        None => encoder_layer_composed(
            &x, embed_dim, num_heads, w, use_gelu, norm_first, eps, mask, mask_type,
        )?,
    };
    if unbatched {
        out.squeeze_dim(0)
    } else {
        Ok(out)
    }
}

/// `_transformer_encoder_layer_fwd` on a dense `[B, L, E]` input as a composition of tensor
/// operations (any dtype; the f32 kernel's reference).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encoder_layer_composed(
    x: &Tensor,
    embed_dim: i64,
    num_heads: i64,
    w: &EncoderLayerWeights,
    use_gelu: bool,
    norm_first: bool,
    eps: f64,
    mask: Option<&Tensor>,
    mask_type: Option<i64>,
) -> Result<Tensor> {
    let ln1 = |t: &Tensor| layer_norm(t, &[embed_dim], w.norm_weight_1, w.norm_bias_1, eps);
    let ln2 = |t: &Tensor| layer_norm(t, &[embed_dim], w.norm_weight_2, w.norm_bias_2, eps);
    let attn = |t: &Tensor| -> Result<Tensor> {
        Ok(mha(
            t,
            t,
            t,
            embed_dim,
            num_heads,
            w.qkv_weight,
            w.qkv_bias,
            w.proj_weight,
            w.proj_bias,
            mask,
            mask_type,
            false,
        )?
        .0)
    };
    let ffn = |t: &Tensor| -> Result<Tensor> {
        let h = t.linear(w.ffn_weight_1, w.ffn_bias_1)?;
        let h = if use_gelu { h.gelu("none")? } else { h.relu()? };
        h.linear(w.ffn_weight_2, w.ffn_bias_2)
    };
    let one = Scalar::Int(1);
    Ok(if norm_first {
        let x = x.add(&attn(&ln1(x)?)?, one)?;
        x.add(&ffn(&ln2(&x)?)?, one)?
    } else {
        let x = ln1(&x.add(&attn(x)?, one)?)?;
        ln2(&x.add(&ffn(&x)?, one)?)?
    })
}
