//! Attention operators (`scaled_dot_product_attention` and the fused inference paths of scripted
//! `nn.MultiheadAttention` / `nn.TransformerEncoderLayer`) and the nested-tensor checks that
//! `nn.TransformerEncoder`'s fast path makes.

use ts_tensor::{DType, EncoderLayerWeights, Error, Tensor};

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

/// `_nested_tensor_from_mask_left_aligned(t, mask)`: whether every row of the 2-d bool mask is a
/// run of `true` followed only by `false` (the padding), so a nested tensor can be built.
fn left_aligned(t: &Tensor, mask: &Tensor) -> R<bool> {
    if mask.dtype() != DType::Bool {
        return Err(Error::runtime(format!(
            "Expected mask to be of type Bool, got {}",
            mask.dtype().scalar_type_name()
        )));
    }
    if mask.dim() != 2 {
        return Err(Error::runtime("Padding mask should be 2D"));
    }
    if t.dim() != 3 {
        return Err(Error::runtime("Input should be a 3D tensor, N * L * D"));
    }
    if mask.sizes()[..] != t.sizes()[..2] {
        return Err(Error::runtime("Mask size should match input size"));
    }
    let cols = mask.sizes()[1] as usize;
    let m: Vec<bool> = mask.contiguous()?.to_vec();
    if cols == 0 {
        return Ok(true);
    }
    Ok(m.chunks(cols)
        .all(|row| row.windows(2).all(|w| w[0] || !w[1])))
}

/// Registers the attention operators.
pub fn register(r: &Registry) {
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
            a.t(0)?,
            a.t(1)?,
            a.t(2)?,
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
            a.t(0)?,
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
        left_aligned(a.t(0)?, a.t(1)?)
    });
    // Only reached on the encoder's nested fast path (a left-aligned key padding mask);
    // torchscript-rs has no nested tensors, so these say so instead of failing to compile.
    for name in ["aten::_nested_tensor_from_mask", "aten::to_padded_tensor"] {
        let short = &name[6..];
        def(r, name, move |_a| -> R<Tensor> {
            Err(Error::runtime(format!(
                "{short}: nested tensors are not supported by torchscript-rs"
            )))
        });
    }
}
