//! `Generator` values: `torch.Generator(device=..., seed=...)` in scripted code, its methods
//! (`manual_seed`, `seed`, `initial_seed`) and the `generator=` argument of the samplers.
//!
//! A Generator is a shared handle to one RNG state (PyTorch's CPU generator, MT19937), held in
//! an `IValue::Capsule` like the packed weights of the quantized operators: copies of the
//! value draw from and advance the same stream, as in PyTorch. Samplers given `None` draw from
//! the default generator.

use std::sync::Arc;

use ts_core::ivalue::Capsule;
use ts_core::IValue;
use ts_tensor::{Device, Error, Generator};

use super::{def, Args};
use crate::registry::Registry;

/// PyTorch's seed of a generator made without one (`default_rng_seed_val`).
const DEFAULT_SEED: u64 = 67_280_421_310_721;

/// A Generator value around `g`.
pub fn generator_value(g: Generator) -> IValue {
    IValue::Capsule(Arc::new(Capsule(Box::new(g))))
}

/// The generator in `v`, if it holds one.
pub fn as_generator(v: &IValue) -> Option<&Generator> {
    match v {
        IValue::Capsule(c) => c.0.downcast_ref::<Generator>(),
        _ => None,
    }
}

/// A `Generator?` argument: None (the default generator) or a Generator value.
pub fn generator_arg(a: &Args, i: usize) -> Result<Option<&Generator>, Error> {
    match a.v(i)? {
        IValue::None => Ok(None),
        v => as_generator(v).map(Some).ok_or_else(|| {
            Error::runtime(format!(
                "argument {i}: expected a value of type 'Optional[Generator]' but got '{}'",
                v.tag_name()
            ))
        }),
    }
}

/// A `Generator` argument.
fn generator(a: &Args, i: usize) -> Result<&Generator, Error> {
    generator_arg(a, i)?.ok_or_else(|| {
        Error::runtime(format!(
            "argument {i}: expected a value of type 'Generator' but got 'NoneType'"
        ))
    })
}

/// A seed from the operating system's entropy, as `Generator.seed()` draws one.
fn nondeterministic_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // `RandomState` is seeded from the OS per instance; mix in the time for good measure.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.finish()
}

/// Registers the Generator constructor and methods.
pub fn register(r: &Registry) {
    def(r, "aten::Generator", |a| {
        if let IValue::Device(d) = a.v(0)? {
            if *d != Device::Cpu {
                return Err(Error::runtime(format!(
                    "torch.Generator: torchscript-rs has CPU generators only, got device '{d}'"
                )));
            }
        }
        let seed = a.oint(1)?.map_or(DEFAULT_SEED, |s| s as u64);
        Ok(generator_value(Generator::new(seed)))
    });
    def(r, "aten::manual_seed.generator", |a| {
        generator(a, 0)?.manual_seed(a.int(1)? as u64);
        Ok(a.v(0)?.clone())
    });
    def(r, "aten::initial_seed", |a| {
        Ok(generator(a, 0)?.initial_seed() as i64)
    });
    def(r, "aten::seed", |a| {
        let seed = nondeterministic_seed();
        generator(a, 0)?.manual_seed(seed);
        Ok(seed as i64)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_shared_handles() {
        let v = generator_value(Generator::new(5));
        let w = v.clone();
        let g = as_generator(&v).unwrap();
        // torch.rand(3, generator=torch.Generator().manual_seed(5))
        let a = ts_tensor::ops::random::rand(&[3], None, Some(g)).unwrap();
        let want: [f32; 3] = [0.8303, 0.1261, 0.9075];
        for (x, y) in a.to_vec::<f32>().iter().zip(want) {
            assert!((x - y).abs() < 1e-4, "{x} vs {y}");
        }
        as_generator(&w).unwrap().manual_seed(5);
        let b = ts_tensor::ops::random::rand(&[3], None, Some(g)).unwrap();
        assert_eq!(a.to_vec::<f32>(), b.to_vec::<f32>());
        assert_eq!(g.initial_seed(), 5);
        assert!(as_generator(&IValue::Int(1)).is_none());
    }
}
