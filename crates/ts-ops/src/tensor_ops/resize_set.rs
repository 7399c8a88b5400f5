//! Operators that change what a tensor handle refers to: `resize_`, `resize_as_`, `set_`
//! (the tensor and geometry overloads; `Storage` values cannot exist in TorchScript), the
//! `copy_` overloads of numbers and tensors, `fill_diagonal_`, and the helpers `_copy_from`,
//! `_resize_output_`.
//!
//! Metadata changes go through `Tensor::set_meta`, so every handle of the tensor sees them,
//! as in PyTorch. Growing beyond the storage allocates a larger storage holding the old bytes
//! (views that shared the old storage keep it).

use ts_core::IValue;
use ts_tensor::factory;
use ts_tensor::{Error, Scalar, Tensor, TensorMeta};

use super::def;
use crate::registry::Registry;

fn contiguous_strides(sizes: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * sizes[d + 1].max(1);
    }
    strides
}

/// `resize_(size)`: contiguous geometry of `size` at the same offset, keeping the elements
/// that were there.
pub fn resize_(t: &Tensor, sizes: &[i64]) -> Result<(), Error> {
    if let Some(s) = sizes.iter().find(|&&s| s < 0) {
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {s}: {sizes:?}"
        )));
    }
    let m = t.meta_snapshot();
    let strides = contiguous_strides(sizes);
    let numel: i64 = sizes.iter().product();
    let need = m.offset + numel.max(0) as usize;
    let es = m.dtype.size();
    let storage = if need * es <= m.storage.nbytes() {
        m.storage.clone()
    } else {
        let old = m.storage.nbytes() / es;
        let fresh = factory::zeros(&[need as i64], Some(m.dtype))?;
        if old > 0 {
            let old_flat = Tensor::from_parts(m.storage.clone(), &[old as i64], &[1], 0, m.dtype)?;
            fresh.narrow(0, 0, old as i64)?.copy_(&old_flat)?;
        }
        fresh.storage()
    };
    t.set_meta(TensorMeta {
        storage,
        sizes: sizes.into(),
        strides: strides.as_slice().into(),
        offset: m.offset,
        dtype: m.dtype,
        requires_grad: m.requires_grad,
    });
    Ok(())
}

/// `set_(source, storage_offset, size, stride)`: `t` views `source`'s storage.
fn set_geometry(
    t: &Tensor,
    source: &Tensor,
    offset: i64,
    sizes: &[i64],
    strides: &[i64],
) -> Result<(), Error> {
    if source.dtype() != t.dtype() {
        return Err(Error::runtime(format!(
            "Expected object of scalar type {} but got scalar type {} for argument 'source'",
            t.dtype().scalar_type_name(),
            source.dtype().scalar_type_name()
        )));
    }
    let strides = if strides.is_empty() {
        contiguous_strides(sizes)
    } else {
        strides.to_vec()
    };
    if offset < 0 {
        return Err(Error::runtime(format!(
            "Tensor: invalid storage offset {offset}"
        )));
    }
    // from_parts checks that the geometry lies inside the storage.
    let view = Tensor::from_parts(
        source.storage(),
        sizes,
        &strides,
        offset as usize,
        t.dtype(),
    )?;
    let mut m = view.meta_snapshot();
    m.requires_grad = t.requires_grad();
    t.set_meta(m);
    Ok(())
}

/// `fill_diagonal_(value, wrap)`.
fn fill_diagonal_(t: &Tensor, value: Scalar, wrap: bool) -> Result<(), Error> {
    let sizes = t.sizes();
    let nd = sizes.len();
    if nd < 2 {
        return Err(Error::runtime("dimensions must larger than 1"));
    }
    if nd > 2 && sizes.iter().any(|&s| s != sizes[0]) {
        return Err(Error::runtime(
            "all dimensions of input must be of equal length",
        ));
    }
    let work = if t.is_contiguous() {
        t.clone()
    } else {
        t.contiguous()?
    };
    let strides = work.strides();
    let step: i64 = strides.iter().sum();
    let mut count = *sizes.iter().min().unwrap_or(&0);
    if wrap && nd == 2 && sizes[0] > sizes[1] + 1 {
        // Tall matrices restart the diagonal every `width + 1` rows.
        let numel = sizes[0] * sizes[1];
        count = (numel + step - 1) / step;
    }
    if count > 0 {
        work.as_strided(&[count], &[step], None)?.fill_(value)?;
    }
    if !Tensor::is_same(&work, t) {
        t.copy_(&work)?;
    }
    Ok(())
}

/// Registers the operators of this module.
pub fn register(r: &Registry) {
    def(r, "aten::resize_", |a| {
        let t = a.t(0)?;
        resize_(t, &a.ints(1)?)?;
        Ok(t.clone())
    });
    def(r, "aten::resize_as_", |a| {
        let t = a.t(0)?;
        resize_(t, &a.t(1)?.sizes())?;
        Ok(t.clone())
    });
    def(r, "aten::resize", |a| {
        let t = a.t(0)?.clone_tensor()?;
        resize_(&t, &a.ints(1)?)?;
        Ok(t)
    });
    def(r, "aten::resize_as", |a| {
        let t = a.t(0)?.clone_tensor()?;
        resize_(&t, &a.t(1)?.sizes())?;
        Ok(t)
    });
    def(r, "aten::_resize_output_", |a| {
        a.check_device(2)?;
        let t = a.t(0)?;
        let sizes = a.ints(1)?;
        if t.sizes().as_slice() != sizes.as_slice() {
            resize_(t, &sizes)?;
        }
        Ok(t.clone())
    });
    def(r, "aten::_resize_output", |a| {
        a.check_device(2)?;
        let t = a.t(0)?.clone_tensor()?;
        resize_(&t, &a.ints(1)?)?;
        Ok(t)
    });
    def(r, "aten::set_", |a| {
        let t = a.t(0)?;
        let empty = factory::empty(&[0], Some(t.dtype()))?;
        set_geometry(t, &empty, 0, &[0], &[1])?;
        Ok(t.clone())
    });
    def(r, "aten::set_.source_Tensor", |a| {
        let (t, s) = (a.t(0)?, a.t(1)?);
        set_geometry(t, s, s.storage_offset() as i64, &s.sizes(), &s.strides())?;
        Ok(t.clone())
    });
    def(r, "aten::set_.source_Tensor_storage_offset", |a| {
        let t = a.t(0)?;
        set_geometry(t, a.t(1)?, a.int(2)?, &a.ints(3)?, &a.ints(4)?)?;
        Ok(t.clone())
    });
    def(r, "aten::set", |a| {
        factory::empty(&[0], Some(a.t(0)?.dtype()))
    });
    def(r, "aten::set.source_Tensor", |a| {
        let (t, s) = (a.t(0)?, a.t(1)?);
        let out = factory::empty(&[0], Some(t.dtype()))?;
        set_geometry(&out, s, s.storage_offset() as i64, &s.sizes(), &s.strides())?;
        Ok(out)
    });
    def(r, "aten::copy_.Tensor", |a| {
        let t = a.t(0)?;
        t.copy_(a.t(1)?)?;
        Ok(t.clone())
    });
    for name in ["aten::copy_.int", "aten::copy_.float"] {
        def(r, name, |a| {
            let t = a.t(0)?;
            t.fill_(a.s(1)?)?;
            Ok(t.clone())
        });
    }
    def(r, "aten::copy", |a| {
        let t = a.t(0)?.clone_tensor()?;
        t.copy_(a.t(1)?)?;
        Ok(t)
    });
    def(r, "aten::_copy_from", |a| {
        let dst = a.t(1)?;
        dst.copy_(a.t(0)?)?;
        Ok(dst.clone())
    });
    def(r, "aten::_copy_from_and_resize", |a| {
        let (src, dst) = (a.t(0)?, a.t(1)?);
        if dst.sizes() != src.sizes() {
            resize_(dst, &src.sizes())?;
        }
        dst.copy_(src)?;
        Ok(dst.clone())
    });
    def(r, "aten::set_data", |a| {
        // `tensor.data = new_data`: every handle of `self` now refers to `new_data`'s
        // storage, geometry and dtype; `self` keeps its autograd flag.
        let (t, new) = (a.t(0)?, a.t(1)?);
        let mut m = new.meta_snapshot();
        m.requires_grad = t.requires_grad();
        t.set_meta(m);
        Ok(IValue::None)
    });
    def(r, "aten::shallow_copy_data_", |a| {
        // AOT autograd's replay of `self.data = source`, returning `self`.
        let (t, new) = (a.t(0)?, a.t(1)?);
        let mut m = new.meta_snapshot();
        m.requires_grad = t.requires_grad();
        t.set_meta(m);
        Ok(t.clone())
    });
    def(r, "aten::from_file", |a| {
        // The file's bytes as `size` elements of `dtype` (the default dtype when None).
        a.check_device(5)?;
        let (name, size) = (a.str(0)?, a.oint(2)?.unwrap_or(0));
        let dtype = a.dtype(3)?.unwrap_or_else(ts_tensor::default_dtype);
        let bytes = std::fs::read(name)
            .map_err(|e| Error::runtime(format!("from_file: cannot read '{name}': {e}")))?;
        let need = size.max(0) as usize * dtype.size();
        if bytes.len() < need {
            return Err(Error::runtime(format!(
                "from_file: '{name}' holds {} bytes, fewer than the {need} that {size} elements of {} need",
                bytes.len(),
                dtype.scalar_type_name()
            )));
        }
        let storage = ts_tensor::Storage::from_bytes(&bytes[..need])?;
        Tensor::from_parts(storage, &[size.max(0)], &[1], 0, dtype)
    });
    def(r, "aten::fill_diagonal_", |a| {
        let t = a.t(0)?;
        fill_diagonal_(t, a.s(1)?, a.b(2)?)?;
        Ok(t.clone())
    });
    def(r, "aten::_no_grad_fill_", |a| {
        let t = a.t(0)?;
        t.fill_(Scalar::Float(a.f(1)?))?;
        Ok(t.clone())
    });
    def(r, "aten::_no_grad_zero_", |a| {
        let t = a.t(0)?;
        t.zero_()?;
        Ok(t.clone())
    });
    def(r, "aten::_no_grad_uniform_", |a| {
        let t = a.t(0)?;
        t.uniform_(a.f(1)?, a.f(2)?, super::generators::generator_arg(a, 3)?)?;
        Ok(t.clone())
    });
    def(r, "aten::_no_grad_normal_", |a| {
        let t = a.t(0)?;
        t.normal_(a.f(1)?, a.f(2)?, super::generators::generator_arg(a, 3)?)?;
        Ok(t.clone())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resize_keeps_elements_and_grows() {
        let t = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        let alias = t.clone();
        resize_(&t, &[3]).unwrap();
        assert_eq!(alias.sizes().as_slice(), &[3]);
        assert_eq!(t.to_vec::<f64>(), vec![1.0, 2.0, 3.0]);
        resize_(&t, &[2, 3]).unwrap();
        assert_eq!(&t.to_vec::<f64>()[..4], &[1.0, 2.0, 3.0, 4.0]);
        assert!(resize_(&t, &[-1]).is_err());
    }

    #[test]
    fn fill_diagonal_wraps_tall_matrices() {
        let t = factory::zeros(&[5, 2], Some(ts_tensor::DType::Float64)).unwrap();
        fill_diagonal_(&t, Scalar::Int(1), true).unwrap();
        // torch.zeros(5, 2).fill_diagonal_(1, wrap=True)
        assert_eq!(
            t.to_vec::<f64>(),
            vec![1., 0., 0., 1., 0., 0., 1., 0., 0., 1.]
        );
        let u = factory::zeros(&[5, 2], Some(ts_tensor::DType::Float64)).unwrap();
        fill_diagonal_(&u, Scalar::Int(1), false).unwrap();
        assert_eq!(
            u.to_vec::<f64>(),
            vec![1., 0., 0., 1., 0., 0., 0., 0., 0., 0.]
        );
    }
}
