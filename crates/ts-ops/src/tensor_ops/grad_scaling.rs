//! `torch.amp.GradScaler`'s CPU kernels: `_amp_foreach_non_finite_check_and_unscale_`
//! (multiply every gradient by `inv_scale`, set `found_inf` to 1 when any element is not
//! finite) and `_amp_update_scale_` (back the scale off after an overflow, grow it after
//! `growth_interval` clean steps), with their functional forms, as ATen's CPU versions.

use ts_core::IValue;
use ts_tensor::{Error, Scalar, Tensor};

use super::{def, Args};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

/// The functional unscale's results: the unscaled copies and the `found_inf` copy.
struct Unscaled(Vec<Tensor>, Tensor);

impl super::Outputs for Unscaled {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.push(IValue::tensor_list(self.0));
        stack.push(IValue::Tensor(self.1));
    }
}

fn single_element(t: &Tensor, what: &str) -> R<f64> {
    if t.numel() != 1 {
        return Err(Error::runtime(format!(
            "{what} must be a 1-element tensor."
        )));
    }
    Ok(t.item()?.to_f64())
}

/// Unscales `grads` in place, raising `found_inf` on a non-finite element.
fn unscale_(grads: &[Tensor], found_inf: &Tensor, inv_scale: &Tensor) -> R<()> {
    single_element(inv_scale, "inv_scale")?;
    single_element(found_inf, "found_inf")?;
    for g in grads {
        if !g.dtype().is_floating_point() {
            return Err(Error::runtime(
                "_amp_foreach_non_finite_check_and_unscale_: all tensors must be floating point",
            ));
        }
        if g.to_vec::<f64>().iter().any(|v| !v.is_finite()) {
            found_inf.fill_(Scalar::Float(1.0))?;
        }
        g.copy_(&g.mul(&inv_scale.to_dtype(g.dtype(), false)?)?)?;
    }
    Ok(())
}

/// Updates `scale` and `growth_tracker` in place from `found_inf`.
fn update_scale_(a: &Args, scale: &Tensor, tracker: &Tensor) -> R<()> {
    let found = single_element(a.t(2)?, "found_inf")?;
    let (growth, backoff, interval) = (a.f(3)?, a.f(4)?, a.int(5)?);
    single_element(scale, "current_scale")?;
    let current = scale.item()?.to_f64();
    if found != 0.0 {
        scale.fill_(Scalar::Float(current * backoff))?;
        tracker.fill_(Scalar::Int(0))?;
    } else {
        let successful = single_element(tracker, "growth_tracker")? as i64 + 1;
        if successful == interval {
            let grown = current * growth;
            // Growth never overflows the scale to inf.
            if grown.is_finite() {
                scale.fill_(Scalar::Float(grown))?;
            }
            tracker.fill_(Scalar::Int(0))?;
        } else {
            tracker.fill_(Scalar::Int(successful))?;
        }
    }
    Ok(())
}

/// Registers the GradScaler kernels.
pub fn register(r: &Registry) {
    def(r, "aten::_amp_foreach_non_finite_check_and_unscale_", |a| {
        unscale_(&a.tensors(0)?, a.t(1)?, a.t(2)?)?;
        Ok(IValue::None)
    });
    def(r, "aten::_amp_foreach_non_finite_check_and_unscale", |a| {
        let grads = a
            .tensors(0)?
            .iter()
            .map(Tensor::clone_tensor)
            .collect::<R<Vec<_>>>()?;
        let found = a.t(1)?.clone_tensor()?;
        unscale_(&grads, &found, a.t(2)?)?;
        Ok(Unscaled(grads, found))
    });
    // The out= forms still update their non-out `(b!)` arguments in place, as ATen's do.
    def(
        r,
        "aten::_amp_foreach_non_finite_check_and_unscale.out",
        |a| {
            let grads = a
                .tensors(0)?
                .iter()
                .map(Tensor::clone_tensor)
                .collect::<R<Vec<_>>>()?;
            let outs = a.tensors(3)?;
            if outs.len() != grads.len() {
                return Err(Error::runtime(format!(
                    "Expected out to have {} tensors, but got {}",
                    grads.len(),
                    outs.len()
                )));
            }
            unscale_(&grads, a.t(1)?, a.t(2)?)?;
            for (o, g) in outs.iter().zip(&grads) {
                ts_tensor::resize_out_and_copy(o, g)?;
            }
            Ok(IValue::None)
        },
    );
    def(r, "aten::_amp_update_scale.out", |a| {
        let scale = a.t(0)?.clone_tensor()?;
        update_scale_(a, &scale, a.t(1)?)?;
        ts_tensor::resize_out_and_copy(a.t(6)?, &scale)
    });
    def(r, "aten::_amp_update_scale_", |a| {
        let scale = a.t(0)?;
        update_scale_(a, scale, a.t(1)?)?;
        Ok(scale.clone())
    });
    def(r, "aten::_amp_update_scale", |a| {
        let scale = a.t(0)?.clone_tensor()?;
        let tracker = a.t(1)?.clone_tensor()?;
        update_scale_(a, &scale, &tracker)?;
        Ok((scale, tracker))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unscale_and_update_match_torch() {
        // torch: x = [1, inf] unscaled by 0.5 -> [0.5, inf], found_inf -> 1;
        // _amp_update_scale_(2.0, 0, found_inf=1, 2.0, 0.5, 3) -> 1.0.
        let x = Tensor::from_vec(vec![1.0f32, f32::INFINITY], &[2]).unwrap();
        let found = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
        let inv = Tensor::from_vec(vec![0.5f32], &[]).unwrap();
        unscale_(std::slice::from_ref(&x), &found, &inv).unwrap();
        assert_eq!(x.to_vec::<f32>(), vec![0.5, f32::INFINITY]);
        assert_eq!(found.to_vec::<f32>(), vec![1.0]);
        let bad = Tensor::from_vec(vec![0.0f32, 1.0], &[2]).unwrap();
        assert!(unscale_(&[], &bad, &inv).is_err());
    }
}
