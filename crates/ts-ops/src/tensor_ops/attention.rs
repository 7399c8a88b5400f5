//! Attention operators (`scaled_dot_product_attention` and the fused inference paths of scripted
//! `nn.MultiheadAttention` / `nn.TransformerEncoderLayer`) and the nested-tensor operators of
//! `nn.TransformerEncoder`'s fast path (a nested tensor is a padded tensor plus lengths).

use ts_tensor::{DType, EncoderLayerWeights, Error, Scalar, Tensor};

use super::def;
use crate::registry::Registry;

type R<T> = Result<T, Error>;

/// Repeats the heads (dim -3) of `kv` so that `q_heads` query heads share them, as
/// `enable_gqa=True` does.
fn repeat_heads(kv: &Tensor, q_heads: i64, name: &str) -> R<Tensor> {
    if kv.dim() < 3 {
        return Err(Error::runtime(format!(
            "scaled_dot_product_attention: enable_gqa needs {name} with a head dimension, got a {}-D tensor",
            kv.dim()
        )));
    }
    let kv_heads = kv.sizes()[kv.dim() - 3];
    if kv_heads == q_heads {
        return Ok(kv.clone());
    }
    if kv_heads == 0 || q_heads % kv_heads != 0 {
        return Err(Error::runtime(format!(
            "Number of heads in key and value must divide the number of heads in query, got {q_heads} query heads and {kv_heads} {name} heads"
        )));
    }
    let rep = q_heads / kv_heads;
    let idx: Vec<i64> = (0..q_heads).map(|h| h / rep).collect();
    kv.index_select(-3, &Tensor::from_vec(idx, &[q_heads])?)
}

/// `_scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p, is_causal, attn_mask,
/// scale)`: the attention output and the `logsumexp` of each query's scaled, masked scores
/// (`[..., L]`, float), which ATen's CPU flash kernel returns for the backward pass.
fn flash_attention_for_cpu(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    dropout_p: f64,
    is_causal: bool,
    mask: Option<&Tensor>,
    scale: Option<f64>,
) -> R<(Tensor, Tensor)> {
    if q.dim() != 4 || k.dim() != 4 || v.dim() != 4 {
        return Err(Error::runtime(format!(
            "_scaled_dot_product_flash_attention_for_cpu: expected 4-D query, key and value ([batch, heads, length, dim]), got {}-D, {}-D and {}-D",
            q.dim(),
            k.dim(),
            v.dim()
        )));
    }
    if dropout_p > 0.0 {
        return Err(Error::runtime(
            "_scaled_dot_product_flash_attention_for_cpu: dropout_p > 0 is not supported by torchscript-rs",
        ));
    }
    let out = ts_tensor::scaled_dot_product_attention(q, k, v, mask, 0.0, is_causal, scale)?;
    let (l, s) = (q.sizes()[2], k.sizes()[2]);
    let e = q.sizes()[3];
    let scale = scale.unwrap_or(1.0 / (e as f64).sqrt());
    let mut scores = q
        .matmul(&k.transpose(-2, -1)?)?
        .mul_scalar(Scalar::Float(scale))?;
    let neg_inf = Scalar::Float(f64::NEG_INFINITY);
    if is_causal {
        let keep = ts_tensor::factory::ones(&[l, s], Some(DType::Bool))?.tril(0)?;
        scores = scores.masked_fill(&keep.logical_not()?, neg_inf)?;
    }
    if let Some(m) = mask {
        scores = if m.dtype() == DType::Bool {
            scores.masked_fill(&m.logical_not()?, neg_inf)?
        } else {
            scores.add(&m.to_dtype(scores.dtype(), false)?, Scalar::Int(1))?
        };
    }
    let lse = scores.logsumexp(&[-1], false)?;
    Ok((out, lse))
}

/// Registers the attention operators.
pub fn register(r: &Registry) {
    def(
        r,
        "aten::_scaled_dot_product_flash_attention_for_cpu",
        |a| {
            flash_attention_for_cpu(
                a.t(0)?,
                a.t(1)?,
                a.t(2)?,
                a.f(3)?,
                a.b(4)?,
                a.ot(5)?,
                a.of(6)?,
            )
        },
    );
    def(r, "aten::scaled_dot_product_attention", |a| {
        let (q, k, v) = (a.t(0)?, a.t(1)?, a.t(2)?);
        let (k, v) = if a.b(7)? && q.dim() >= 3 {
            let qh = q.sizes()[q.dim() - 3];
            (repeat_heads(k, qh, "key")?, repeat_heads(v, qh, "value")?)
        } else {
            (k.clone(), v.clone())
        };
        ts_tensor::scaled_dot_product_attention(q, &k, &v, a.ot(3)?, a.f(4)?, a.b(5)?, a.of(6)?)
    });
    def(r, "aten::_native_multi_head_attention", |a| {
        ts_tensor::native_multi_head_attention(
            a.t_nested(0)?,
            a.t_nested(1)?,
            a.t_nested(2)?,
            a.int(3)?,
            a.int(4)?,
            a.t(5)?,
            a.ot(6)?,
            a.t(7)?,
            a.ot(8)?,
            a.ot(9)?,
            a.b(10)?,
            a.b(11)?,
            a.oint(12)?,
        )
    });
    def(r, "aten::_transformer_encoder_layer_fwd", |a| {
        let w = EncoderLayerWeights {
            qkv_weight: a.t(3)?,
            qkv_bias: a.ot(4)?,
            proj_weight: a.t(5)?,
            proj_bias: a.ot(6)?,
            norm_weight_1: a.ot(10)?,
            norm_bias_1: a.ot(11)?,
            norm_weight_2: a.ot(12)?,
            norm_bias_2: a.ot(13)?,
            ffn_weight_1: a.t(14)?,
            ffn_bias_1: a.ot(15)?,
            ffn_weight_2: a.t(16)?,
            ffn_bias_2: a.ot(17)?,
        };
        ts_tensor::transformer_encoder_layer_fwd(
            a.t_nested(0)?,
            a.int(1)?,
            a.int(2)?,
            &w,
            a.b(7)?,
            a.b(8)?,
            a.f(9)?,
            a.ot(18)?,
            a.oint(19)?,
        )
    });
    def(r, "aten::_nested_tensor_from_mask_left_aligned", |a| {
        ts_tensor::nested_mask_left_aligned(a.t(0)?, a.t(1)?)
    });
    def(r, "aten::_nested_tensor_from_mask", |a| {
        ts_tensor::nested_tensor_from_mask(a.t(0)?, a.t(1)?, a.b(2)?)
    });
    for name in ["aten::to_padded_tensor", "aten::nested_to_padded_tensor"] {
        def(r, name, |a| {
            a.t_nested(0)?
                .to_padded_tensor(a.f(1)?, a.oints(2)?.as_deref())
        });
    }
}
