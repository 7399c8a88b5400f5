//! Tensor construction: `empty`, `zeros`, `ones`, `full`, `arange`, `linspace`, `eye`, the
//! `_like` forms, scalar tensors, and random tensors from the default generator.

use crate::dispatch_all;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::promotion::default_dtype;
use crate::random::{normal_fill, with_generator};
use crate::scalar::Scalar;
use crate::tensor::Tensor;

impl Tensor {
    /// A new contiguous tensor (zero-filled: this library never exposes uninitialised memory).
    pub fn empty(sizes: &[i64], dtype: DType) -> Result<Tensor> {
        Tensor::zeros(sizes, dtype)
    }

    /// A new tensor filled with ones.
    pub fn ones(sizes: &[i64], dtype: DType) -> Result<Tensor> {
        Tensor::full(sizes, Scalar::Int(1), dtype)
    }

    /// A new tensor filled with `value` converted to `dtype`.
    pub fn full(sizes: &[i64], value: Scalar, dtype: DType) -> Result<Tensor> {
        let t = Tensor::zeros(sizes, dtype)?;
        t.fill_(value)?;
        Ok(t)
    }

    /// A 0-dim tensor holding `value` as `dtype`.
    pub fn scalar_tensor(value: Scalar, dtype: DType) -> Result<Tensor> {
        Tensor::full(&[], value, dtype)
    }

    /// `fill_(value)`: writes `value` to every element (through views).
    pub fn fill_(&self, value: Scalar) -> Result<Tensor> {
        crate::elementwise::check_no_internal_overlap(self)?;
        let dt = self.dtype();
        dispatch_all!(dt, T => {
            let v: T = if dt == DType::Bool {
                T::from_i64(value.to_bool() as i64)
            } else if dt.is_floating_point() {
                T::from_f64(value.to_f64())
            } else {
                match value {
                    Scalar::Float(f) => T::from_f64(f),
                    other => T::from_i64(other.to_i64()),
                }
            };
            let shape = self.sizes();
            let st = self.strides();
            let space = crate::iter::IterSpace::new(&shape, [&st]);
            let p = crate::elementwise::data_ptr::<T>(self);
            space.par_for_each(|[o], n, [s]| {
                for i in 0..n as isize {
                    // SAFETY: the iteration space covers exactly this tensor's elements.
                    unsafe { *p.at(o + i * s) = v };
                }
            });
        });
        Ok(self.clone())
    }

    /// `zero_()`.
    pub fn zero_(&self) -> Result<Tensor> {
        self.fill_(Scalar::Int(0))
    }

    /// `torch.arange(start, end, step)`; the dtype defaults to int64 when all bounds are ints,
    /// else the default float dtype.
    pub fn arange(
        start: Scalar,
        end: Scalar,
        step: Scalar,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let all_int = [start, end, step].iter().all(|s| !s.is_floating_point());
        let dtype = dtype.unwrap_or(if all_int {
            DType::Int64
        } else {
            default_dtype()
        });
        let (s, e, st) = (start.to_f64(), end.to_f64(), step.to_f64());
        if st == 0.0 {
            return Err(Error::runtime("step must be nonzero"));
        }
        if !(s.is_finite() && e.is_finite()) {
            return Err(Error::runtime(format!("unsupported range: {s} -> {e}")));
        }
        if (st > 0.0 && e < s) || (st < 0.0 && e > s) {
            return Err(Error::runtime(
                "upper bound and larger bound inconsistent with step sign",
            ));
        }
        let n = if all_int {
            let (si, ei, sti) = (
                start.to_i64() as i128,
                end.to_i64() as i128,
                step.to_i64() as i128,
            );
            ((ei - si + sti - sti.signum()) / sti).max(0) as i64
        } else {
            ((e - s) / st).ceil() as i64
        };
        let out = Tensor::zeros(&[n], dtype)?;
        dispatch_all!(dtype, T => {
            let p = crate::elementwise::data_ptr::<T>(&out);
            for i in 0..n {
                let v = if all_int && !dtype.is_floating_point() {
                    T::from_i64(start.to_i64() + i * step.to_i64())
                } else {
                    T::from_f64(s + i as f64 * st)
                };
                // SAFETY: `out` is contiguous with `n` elements.
                unsafe { *p.at(i as isize) = v };
            }
        });
        Ok(out)
    }

    /// `torch.linspace(start, end, steps)`, computed as ATen does (from both ends).
    pub fn linspace(start: f64, end: f64, steps: i64, dtype: Option<DType>) -> Result<Tensor> {
        if steps < 0 {
            return Err(Error::runtime("number of steps must be non-negative"));
        }
        let dtype = dtype.unwrap_or_else(default_dtype);
        let mut v = Vec::with_capacity(steps as usize);
        if steps == 1 {
            v.push(start);
        } else if steps > 1 {
            let step = (end - start) / (steps - 1) as f64;
            let half = steps / 2;
            for i in 0..steps {
                v.push(if i < half {
                    start + step * i as f64
                } else {
                    end - step * (steps - i - 1) as f64
                });
            }
        }
        Tensor::from_vec(v, &[steps])?.to_dtype(dtype)
    }

    /// `torch.eye(n, m)`.
    pub fn eye(n: i64, m: Option<i64>, dtype: DType) -> Result<Tensor> {
        let m = m.unwrap_or(n);
        if n < 0 || m < 0 {
            return Err(Error::runtime(format!(
                "n must be greater or equal to 0, got {}",
                n.min(m)
            )));
        }
        let t = Tensor::zeros(&[n, m], dtype)?;
        let d = t.diagonal(0, 0, 1)?;
        d.fill_(Scalar::Int(1))?;
        Ok(t)
    }

    /// `torch.rand(sizes)`: uniform in [0, 1).
    pub fn rand(sizes: &[i64], dtype: DType) -> Result<Tensor> {
        let t = Tensor::zeros(sizes, dtype)?;
        t.uniform_(0.0, 1.0)?;
        Ok(t)
    }

    /// `torch.randn(sizes)`: standard normal.
    pub fn randn(sizes: &[i64], dtype: DType) -> Result<Tensor> {
        let t = Tensor::zeros(sizes, dtype)?;
        t.normal_(0.0, 1.0)?;
        Ok(t)
    }

    /// `torch.randint(low, high, sizes)`.
    pub fn randint(low: i64, high: i64, sizes: &[i64], dtype: DType) -> Result<Tensor> {
        if low >= high {
            return Err(Error::runtime(format!(
                "random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )));
        }
        let n = crate::tensor::checked_numel(sizes)?;
        let v: Vec<f64> =
            with_generator(|g| (0..n).map(|_| g.random_range(low, high) as f64).collect());
        Tensor::from_vec(v, sizes)?.to_dtype(dtype)
    }

    /// `uniform_(from, to)` in place.
    pub fn uniform_(&self, from: f64, to: f64) -> Result<Tensor> {
        if !self.dtype().is_floating_point() {
            return Err(Error::runtime(format!(
                "uniform_ not implemented for '{}'",
                self.dtype().scalar_type_name()
            )));
        }
        let n = self.numel();
        let f64_draws = self.dtype() == DType::Float64;
        let v: Vec<f64> = with_generator(|g| {
            (0..n)
                .map(|_| {
                    let u = if f64_draws {
                        g.uniform_f64()
                    } else {
                        g.uniform_f32() as f64
                    };
                    u * (to - from) + from
                })
                .collect()
        });
        self.copy_(&Tensor::from_vec(v, &self.sizes())?)?;
        Ok(self.clone())
    }

    /// `normal_(mean, std)` in place.
    pub fn normal_(&self, mean: f64, std: f64) -> Result<Tensor> {
        if !self.dtype().is_floating_point() {
            return Err(Error::runtime(format!(
                "normal_ not implemented for '{}'",
                self.dtype().scalar_type_name()
            )));
        }
        if std < 0.0 {
            return Err(Error::runtime(format!(
                "normal expects std >= 0.0, but found std {std}"
            )));
        }
        let n = self.numel();
        let f64_draws = self.dtype() == DType::Float64;
        let mut v = vec![0.0f64; n];
        with_generator(|g| {
            if n >= 16 && self.is_contiguous() {
                normal_fill(g, &mut v, mean, std, |g| {
                    if f64_draws {
                        g.uniform_f64()
                    } else {
                        g.uniform_f32() as f64
                    }
                });
            } else {
                for x in v.iter_mut() {
                    *x = g.normal_f64() * std + mean;
                }
            }
        });
        self.copy_(&Tensor::from_vec(v, &self.sizes())?)?;
        Ok(self.clone())
    }

    /// `bernoulli_(p)` in place: 1 with probability `p`.
    pub fn bernoulli_(&self, p: f64) -> Result<Tensor> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::runtime(format!(
                "bernoulli_ expects p to be in [0, 1], but got p={p}"
            )));
        }
        let n = self.numel();
        let v: Vec<f64> = with_generator(|g| {
            (0..n)
                .map(|_| (g.uniform_f64() < p) as i64 as f64)
                .collect()
        });
        self.copy_(&Tensor::from_vec(v, &self.sizes())?)?;
        Ok(self.clone())
    }

    /// `torch.bernoulli(self)`: samples with per-element probabilities.
    pub fn bernoulli(&self) -> Result<Tensor> {
        let probs = self.to_vec::<f64>();
        if probs.iter().any(|p| !(0.0..=1.0).contains(p)) {
            return Err(Error::runtime(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
            ));
        }
        let v: Vec<f64> = with_generator(|g| {
            probs
                .iter()
                .map(|&p| (g.uniform_f64() < p) as i64 as f64)
                .collect()
        });
        Tensor::from_vec(v, &self.sizes())?.to_dtype(self.dtype())
    }

    /// `torch.zeros_like`.
    pub fn zeros_like(&self, dtype: Option<DType>) -> Result<Tensor> {
        Tensor::zeros(&self.sizes(), dtype.unwrap_or(self.dtype()))
    }

    /// `torch.ones_like`.
    pub fn ones_like(&self, dtype: Option<DType>) -> Result<Tensor> {
        Tensor::ones(&self.sizes(), dtype.unwrap_or(self.dtype()))
    }

    /// `torch.full_like`.
    pub fn full_like(&self, value: Scalar, dtype: Option<DType>) -> Result<Tensor> {
        Tensor::full(&self.sizes(), value, dtype.unwrap_or(self.dtype()))
    }

    /// `torch.empty_like`.
    pub fn empty_like(&self, dtype: Option<DType>) -> Result<Tensor> {
        Tensor::empty(&self.sizes(), dtype.unwrap_or(self.dtype()))
    }

    /// `torch.rand_like`.
    pub fn rand_like(&self, dtype: Option<DType>) -> Result<Tensor> {
        Tensor::rand(&self.sizes(), dtype.unwrap_or(self.dtype()))
    }

    /// `torch.randn_like`.
    pub fn randn_like(&self, dtype: Option<DType>) -> Result<Tensor> {
        Tensor::randn(&self.sizes(), dtype.unwrap_or(self.dtype()))
    }

    /// A 1-D tensor from f64 values converted to `dtype`.
    pub fn from_f64s(values: &[f64], sizes: &[i64], dtype: DType) -> Result<Tensor> {
        Tensor::from_vec(values.to_vec(), sizes)?.to_dtype(dtype)
    }
}
