//! Repetition and rotation: `tile`, `repeat_interleave`, `rot90`, `fliplr`/`flipud`.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

/// The source positions `repeat_interleave` reads: position `i` repeated `repeats[i]` times.
fn interleave_index(repeats: &[i64]) -> Result<Vec<i64>> {
    if repeats.iter().any(|&r| r < 0) {
        return Err(Error::runtime("repeats can not be negative"));
    }
    let total: i64 = repeats.iter().sum();
    let mut idx = Vec::with_capacity(total.max(0) as usize);
    for (i, &r) in repeats.iter().enumerate() {
        idx.extend(std::iter::repeat_n(i as i64, r as usize));
    }
    Ok(idx)
}

fn check_output_size(idx: &[i64], output_size: Option<i64>) -> Result<()> {
    match output_size {
        Some(n) if n != idx.len() as i64 => Err(Error::runtime(format!(
            "allocated size does not match required size: output_size {n} but repeats sum to {}",
            idx.len()
        ))),
        _ => Ok(()),
    }
}

fn repeats_values(repeats: &Tensor) -> Result<Vec<i64>> {
    match repeats.dtype() {
        DType::Int64 | DType::Int32 => {}
        other => {
            return Err(Error::runtime(format!(
                "repeat_interleave only accept 1D vector as repeat, got {}",
                other.scalar_type_name()
            )))
        }
    }
    if repeats.dim() > 1 {
        return Err(Error::runtime("repeats must be 0-dim or 1-dim tensor"));
    }
    repeats.contiguous_vec::<i64>()
}

/// `repeat_interleave(repeats)` on a 1-d count tensor: `i` repeated `repeats[i]` times.
pub fn repeat_interleave_counts(repeats: &Tensor, output_size: Option<i64>) -> Result<Tensor> {
    if repeats.dim() != 1 {
        return Err(Error::runtime(
            "repeat_interleave only accept 1D vector as repeat",
        ));
    }
    let idx = interleave_index(&repeats_values(repeats)?)?;
    check_output_size(&idx, output_size)?;
    let n = idx.len() as i64;
    Tensor::from_vec(idx, &[n])?.to_dtype(repeats.dtype(), false)
}

impl Tensor {
    /// `tile(dims)`: `repeat` with `dims` padded by leading ones to the tensor's rank.
    pub fn tile(&self, dims: &[i64]) -> Result<Tensor> {
        let nd = self.dim();
        if dims.len() >= nd {
            return self.repeat(dims);
        }
        let mut padded = vec![1; nd - dims.len()];
        padded.extend_from_slice(dims);
        self.repeat(&padded)
    }

    /// `rot90(k, dims)`: rotation by `k` quarter turns in the plane of `dims`, from the first
    /// towards the second.
    pub fn rot90(&self, k: i64, dims: &[i64]) -> Result<Tensor> {
        if dims.len() != 2 {
            return Err(Error::runtime(format!(
                "expected total rotation dims == 2, but got dims = {}",
                dims.len()
            )));
        }
        let nd = self.dim();
        if nd < 2 {
            return Err(Error::runtime(format!(
                "expected total dims >= 2, but got total dims = {nd}"
            )));
        }
        let (d0, d1) = (dims[0], dims[1]);
        let (w0, w1) = (wrap_dim(d0, nd)?, wrap_dim(d1, nd)?);
        if w0 == w1 {
            return Err(Error::runtime(format!(
                "expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
            )));
        }
        match k.rem_euclid(4) {
            1 => self.flip(&[d1])?.transpose(d0, d1)?.contiguous(),
            2 => self.flip(&[d0, d1]),
            3 => self.flip(&[d0])?.transpose(d0, d1)?.contiguous(),
            _ => self.contiguous().and_then(|t| {
                if Tensor::is_same(&t, self) {
                    self.clone_tensor()
                } else {
                    Ok(t)
                }
            }),
        }
    }

    /// `fliplr`: reverses dimension 1 (needs at least 2 dimensions).
    pub fn fliplr(&self) -> Result<Tensor> {
        if self.dim() < 2 {
            return Err(Error::runtime("Input must be >= 2-d."));
        }
        self.flip(&[1])
    }

    /// `flipud`: reverses dimension 0 (needs at least 1 dimension).
    pub fn flipud(&self) -> Result<Tensor> {
        if self.dim() < 1 {
            return Err(Error::runtime("Input must be >= 1-d."));
        }
        self.flip(&[0])
    }

    /// `repeat_interleave(repeats, dim)` with one repeat count for every slice; without `dim`
    /// the flattened tensor is repeated.
    pub fn repeat_interleave_int(
        &self,
        repeats: i64,
        dim: Option<i64>,
        output_size: Option<i64>,
    ) -> Result<Tensor> {
        let (input, d) = self.interleave_input(dim)?;
        let n = if input.dim() == 0 {
            1
        } else {
            input.sizes()[d]
        };
        input.interleave_with(&vec![repeats; n as usize], d, output_size)
    }

    /// `repeat_interleave(repeats, dim)` with a repeat count per slice (or one count in a 0-d or
    /// one-element tensor).
    pub fn repeat_interleave_tensor(
        &self,
        repeats: &Tensor,
        dim: Option<i64>,
        output_size: Option<i64>,
    ) -> Result<Tensor> {
        let (input, d) = self.interleave_input(dim)?;
        let n = if input.dim() == 0 {
            1
        } else {
            input.sizes()[d]
        };
        let mut reps = repeats_values(repeats)?;
        if reps.len() == 1 {
            reps = vec![reps[0]; n as usize];
        } else if reps.len() as i64 != n {
            return Err(Error::runtime(format!(
                "repeats must have the same size as input along dim, but got repeats.size(0) = {} and input.size({d}) = {n}",
                reps.len()
            )));
        }
        input.interleave_with(&reps, d, output_size)
    }

    fn interleave_input(&self, dim: Option<i64>) -> Result<(Tensor, usize)> {
        match dim {
            None => Ok((self.reshape(&[-1])?, 0)),
            Some(d) => Ok((self.clone(), wrap_dim(d, self.dim())?)),
        }
    }

    fn interleave_with(&self, reps: &[i64], d: usize, output_size: Option<i64>) -> Result<Tensor> {
        let idx = interleave_index(reps)?;
        check_output_size(&idx, output_size)?;
        let n = idx.len() as i64;
        let src = if self.dim() == 0 {
            self.reshape(&[1])?
        } else {
            self.clone()
        };
        src.index_select(d as i64, &Tensor::from_vec(idx, &[n])?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ar(n: i64, shape: &[i64]) -> Tensor {
        Tensor::from_vec((0..n).map(|i| i as f32).collect(), shape).unwrap()
    }

    #[test]
    fn rot90_quarter_turns() {
        let t = ar(4, &[2, 2]);
        assert_eq!(
            t.rot90(1, &[0, 1]).unwrap().to_vec::<f32>(),
            vec![1., 3., 0., 2.]
        );
        assert_eq!(
            t.rot90(2, &[0, 1]).unwrap().to_vec::<f32>(),
            vec![3., 2., 1., 0.]
        );
        assert_eq!(
            t.rot90(-1, &[0, 1]).unwrap().to_vec::<f32>(),
            vec![2., 0., 3., 1.]
        );
        assert_eq!(
            t.rot90(4, &[0, 1]).unwrap().to_vec::<f32>(),
            vec![0., 1., 2., 3.]
        );
        assert!(t.rot90(1, &[0, 0]).is_err());
        assert!(ar(2, &[2]).rot90(1, &[0, 1]).is_err());
    }

    #[test]
    fn tile_pads_dims() {
        let t = ar(4, &[2, 2]);
        assert_eq!(t.tile(&[2]).unwrap().sizes().as_slice(), &[2, 4]);
        assert_eq!(t.tile(&[2, 1, 1]).unwrap().sizes().as_slice(), &[2, 2, 2]);
    }

    #[test]
    fn repeat_interleave_forms() {
        let t = ar(4, &[2, 2]);
        let r = t.repeat_interleave_int(2, None, None).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![0., 0., 1., 1., 2., 2., 3., 3.]);
        let reps = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
        let r = t.repeat_interleave_tensor(&reps, Some(0), None).unwrap();
        assert_eq!(r.sizes().as_slice(), &[3, 2]);
        let c = repeat_interleave_counts(&reps, None).unwrap();
        assert_eq!(c.to_vec::<i64>(), vec![0, 1, 1]);
        let bad = Tensor::from_vec(vec![-1i64, 2], &[2]).unwrap();
        assert!(t.repeat_interleave_tensor(&bad, Some(0), None).is_err());
    }
}
