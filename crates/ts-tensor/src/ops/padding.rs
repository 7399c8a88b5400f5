//! Non-constant padding: `reflection_pad{1,2,3}d`, `replication_pad{1,2,3}d` and
//! `_pad_circular`, built as one index gather per padded dim (exact for every dtype). Pads are
//! `(left, right)` pairs from the last dim backwards; negative pads crop.

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// How positions outside the input are filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadMode {
    /// Mirror around the edge element (excluded): `[c b | a b c | b a]`.
    Reflect,
    /// Repeat the edge element.
    Replicate,
    /// Wrap around.
    Circular,
}

impl PadMode {
    /// The mode named by `F.pad`'s `mode` string (`None` for `"constant"` or unknown).
    pub fn parse(s: &str) -> Option<PadMode> {
        match s {
            "reflect" => Some(PadMode::Reflect),
            "replicate" => Some(PadMode::Replicate),
            "circular" => Some(PadMode::Circular),
            _ => None,
        }
    }

    /// The mode's name in `F.pad` and ATen's messages.
    pub fn name(self) -> &'static str {
        match self {
            PadMode::Reflect => "reflect",
            PadMode::Replicate => "replicate",
            PadMode::Circular => "circular",
        }
    }
}

/// The source position of output `j` for an axis of `n` inputs padded by `lo` in front.
fn source(mode: PadMode, j: i64, lo: i64, n: i64) -> i64 {
    let i = j - lo;
    match mode {
        PadMode::Reflect => {
            if i < 0 {
                -i
            } else if i >= n {
                2 * (n - 1) - i
            } else {
                i
            }
        }
        PadMode::Replicate => i.clamp(0, n - 1),
        PadMode::Circular => i.rem_euclid(n),
    }
}

/// Circular padding's source of output `j`: ATen first crops negative pads, then wraps the
/// positive ones around what is left (`m` elements starting at `start`).
fn circular_source(j: i64, lo: i64, hi: i64, n: i64) -> Option<i64> {
    let start = (-lo).max(0);
    let m = n - start - (-hi).max(0);
    (m > 0).then(|| start + (j - lo.max(0)).rem_euclid(m))
}

impl Tensor {
    /// Pads the last `pad.len() / 2` dims with `mode`, checking sizes as ATen's
    /// `reflection_pad*`/`replication_pad*`/`_pad_circular` do (`op` names the kernel in
    /// messages). Input dims must be `k + 1` or `k + 2` for `k` padded dims (any, for circular).
    pub fn pad_mode(&self, pad: &[i64], mode: PadMode) -> Result<Tensor> {
        if !pad.len().is_multiple_of(2) || pad.is_empty() {
            return Err(Error::runtime(format!(
                "Padding length must be divisible by 2 and positive, got {}",
                pad.len()
            )));
        }
        let k = pad.len() / 2;
        let nd = self.dim();
        let sz = self.sizes();
        if mode == PadMode::Circular {
            if nd < k + 1 {
                return Err(Error::runtime(format!(
                    "Expected at least {} dimensions for circular padding of {k} dimensions, but got input of size {:?}",
                    k + 1,
                    sz.as_slice()
                )));
            }
        } else if nd != k + 1 && nd != k + 2 {
            return Err(Error::runtime(format!(
                "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {:?}",
                k + 1,
                k + 2,
                sz.as_slice()
            )));
        }
        // Every non-batch dim must be non-empty (the batch dim may be 0).
        let first = if nd == k + 2 { 1 } else { 0 };
        if mode != PadMode::Circular && sz[first..].contains(&0) {
            return Err(Error::runtime(format!(
                "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {:?}",
                k + 1,
                k + 2,
                sz.as_slice()
            )));
        }
        let mut cur = self.clone();
        for (i, pair) in pad.chunks(2).enumerate() {
            let d = nd - 1 - i;
            let (lo, hi) = (pair[0], pair[1]);
            let n = sz[d];
            match mode {
                PadMode::Reflect => {
                    if lo >= n || hi >= n {
                        return Err(Error::runtime(format!(
                            "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input {:?}",
                            sz.as_slice()
                        )));
                    }
                }
                PadMode::Circular => {
                    if lo > n || hi > n {
                        return Err(Error::runtime(
                            "Padding value causes wrapping around more than once.",
                        ));
                    }
                }
                PadMode::Replicate => {}
            }
            let out = n + lo + hi;
            if out < 1 && !(mode == PadMode::Circular && out == 0) {
                return Err(Error::runtime(format!(
                    "input ({n}) at dimension {d} is too small. Calculated output size: {out}"
                )));
            }
            if out < 0 {
                return Err(Error::runtime(
                    "Negative padding value is resulting in an empty dimension.",
                ));
            }
            let idx: Vec<i64> = if mode == PadMode::Circular {
                (0..out)
                    .map(|j| circular_source(j, lo, hi, n))
                    .collect::<Option<Vec<i64>>>()
                    .ok_or_else(|| {
                        Error::runtime("Padding value causes wrapping around more than once.")
                    })?
            } else {
                (0..out).map(|j| source(mode, j, lo, n)).collect()
            };
            let idx = Tensor::from_vec(idx, &[out])?;
            cur = cur.index_select(d as i64, &idx)?;
        }
        cur.contiguous()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_negative_pads() {
        let x = Tensor::from_vec(vec![1f32, 2., 3.], &[1, 3]).unwrap();
        let r = |m, p: &[i64]| x.pad_mode(p, m).map(|t| t.to_vec::<f32>());
        assert_eq!(
            r(PadMode::Reflect, &[2, 1]).unwrap(),
            vec![3., 2., 1., 2., 3., 2.]
        );
        assert_eq!(
            r(PadMode::Replicate, &[1, 2]).unwrap(),
            vec![1., 1., 2., 3., 3., 3.]
        );
        assert_eq!(
            r(PadMode::Circular, &[1, 2]).unwrap(),
            vec![3., 1., 2., 3., 1., 2.]
        );
        assert_eq!(r(PadMode::Replicate, &[-1, 1]).unwrap(), vec![2., 3., 3.]);
        assert!(r(PadMode::Reflect, &[3, 0]).is_err());
        assert!(r(PadMode::Circular, &[4, 0]).is_err());
        // Circular crops negative pads first, then wraps around what is left (as ATen).
        assert_eq!(r(PadMode::Circular, &[1, -1]).unwrap(), vec![2., 1., 2.]);
        assert_eq!(
            r(PadMode::Circular, &[-1, 2]).unwrap(),
            vec![2., 3., 2., 3.]
        );
    }
}
