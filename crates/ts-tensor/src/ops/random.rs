//! Random sampling: `rand`, `randn`, `randint`, `bernoulli`, and the in-place `uniform_`,
//! `normal_`, `random_`. They follow PyTorch's CPU kernels: elements are drawn serially in
//! row-major order; float32 uniforms use 24 random bits and float64 ones 53; `normal_` on a
//! contiguous tensor of 16 or more elements uses the Box-Muller "fill 16" scheme on float32
//! uniforms (float64 for double tensors), smaller or strided tensors draw double-precision
//! normals one by one. With the same seed the streams match PyTorch's up to the last bits of
//! the transcendental functions. `bernoulli` compares a double uniform with `p` (PyTorch's
//! non-MKL path).

use crate::cpu::loops::{LoopOperand, Plan, SendPtr};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::generator::{default_generator, Generator, Mt19937};
use crate::ops::factory;
use crate::tensor::Tensor;

fn gen_or_default(g: Option<&Generator>) -> &Generator {
    match g {
        Some(g) => g,
        None => default_generator(),
    }
}

impl Tensor {
    /// Writes `f(state)` into every element (row-major order, serially), converting from f64.
    fn fill_with(&self, g: &Generator, mut f: impl FnMut(&mut Mt19937) -> f64) -> Result<()> {
        let m = self.meta_snapshot();
        crate::overlap::assert_no_internal_overlap(&m)?;
        if m.dtype.is_complex() {
            // ATen samples both parts (scaled); that is not implemented here.
            return Err(crate::cpu::dispatch::not_implemented(
                "random sampling",
                m.dtype,
            ));
        }
        let es = m.dtype.size() as isize;
        let plan = Plan::<1>::new(
            &m.sizes,
            &crate::cpu::loops::identity_order(m.dim()),
            [LoopOperand {
                ptr: SendPtr(m.data_ptr()),
                strides: m.strides.iter().map(|&s| s as isize * es).collect(),
            }],
        );
        let dt = m.dtype;
        g.with(|st| {
            plan.run_serial(|p, s, n| {
                let mut q = p[0];
                for _ in 0..n {
                    let v = f(st);
                    dispatch_all_c!(dt, T => {
                        // SAFETY: the plan addresses elements of this tensor's dtype.
                        unsafe { *(q as *mut T) = <T as crate::Element>::from_f64(v) };
                    });
                    q = q.wrapping_offset(s[0]);
                }
            })
        });
        Ok(())
    }

    /// `uniform_(from, to)`: uniform samples in `[from, to)`.
    pub fn uniform_(&self, from: f64, to: f64, generator: Option<&Generator>) -> Result<()> {
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(crate::cpu::dispatch::not_implemented(
                "check_uniform_bounds",
                dt,
            ));
        }
        if from > to {
            return Err(Error::runtime(format!(
                "uniform_ expects to return a [from, to) range, but found from={from} > to={to}"
            )));
        }
        let g = gen_or_default(generator);
        if dt == DType::Float64 {
            self.fill_with(g, |st| st.uniform_f64() * (to - from) + from)
        } else {
            let (f, t) = (from as f32, to as f32);
            self.fill_with(g, |st| (st.uniform_f32() * (t - f) + f) as f64)
        }
    }

    /// `normal_(mean, std)`: normal samples.
    pub fn normal_(&self, mean: f64, std: f64, generator: Option<&Generator>) -> Result<()> {
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(crate::cpu::dispatch::not_implemented(
                "normal_kernel_cpu",
                dt,
            ));
        }
        if std < 0.0 {
            return Err(Error::runtime(format!(
                "normal expects std >= 0.0, but found std {std}"
            )));
        }
        let g = gen_or_default(generator);
        let n = self.numel();
        if n >= 16 && self.is_contiguous() {
            let vals = g.with(|st| normal_fill(st, n, mean, std, dt == DType::Float64));
            let src = Tensor::from_vec(vals, &self.sizes())?;
            return self.copy_(&src);
        }
        self.fill_with(g, |st| st.normal_f64() * std + mean)
    }

    /// `random_(from, to)`: integers uniformly in `[from, to)` (as PyTorch's `random_from_to`).
    pub fn random_(&self, from: i64, to: i64, generator: Option<&Generator>) -> Result<()> {
        if from >= to {
            return Err(Error::runtime(format!(
                "random_ expects 'from' to be less than 'to', but got from={from} >= to={to}"
            )));
        }
        let range = (to as i128 - from as i128) as u64;
        let g = gen_or_default(generator);
        self.fill_with(g, |st| {
            let v = if range >= 1 << 32 {
                st.next_u64() % range
            } else {
                st.next_u32() as u64 % range
            };
            (v as i128 + from as i128) as f64
        })
    }

    /// `bernoulli_(p)`: 1 with probability `p`, else 0.
    pub fn bernoulli_(&self, p: f64, generator: Option<&Generator>) -> Result<()> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::runtime(format!(
                "bernoulli_ expects p to be in [0, 1], but got p={p}"
            )));
        }
        let g = gen_or_default(generator);
        self.fill_with(g, |st| if st.uniform_f64() < p { 1.0 } else { 0.0 })
    }

    /// `bernoulli()`: samples with the probabilities held in `self`.
    pub fn bernoulli(&self, generator: Option<&Generator>) -> Result<Tensor> {
        let probs = self.contiguous_vec::<f64>()?;
        if probs.iter().any(|p| !(0.0..=1.0).contains(p)) {
            return Err(Error::runtime(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
            ));
        }
        let g = gen_or_default(generator);
        let vals: Vec<f64> = g.with(|st| {
            probs
                .iter()
                .map(|&p| if st.uniform_f64() < p { 1.0 } else { 0.0 })
                .collect()
        });
        let r = Tensor::from_vec(vals, &self.sizes())?;
        let dt = if self.dtype().is_floating_point() {
            self.dtype()
        } else {
            crate::default_dtype()
        };
        r.to_dtype(dt, false)
    }
}

/// PyTorch's `normal_fill`: uniforms for every element, then Box-Muller over blocks of 16
/// (values `j` and `j + 8` of a block form a pair); a ragged tail redraws the last 16.
fn normal_fill(st: &mut Mt19937, n: usize, mean: f64, std: f64, double: bool) -> Vec<f64> {
    let mut data: Vec<f64> = (0..n)
        .map(|_| {
            if double {
                st.uniform_f64()
            } else {
                st.uniform_f32() as f64
            }
        })
        .collect();
    let fill16 = |d: &mut [f64]| {
        if double {
            for j in 0..8 {
                let u1 = 1.0 - d[j];
                let u2 = d[j + 8];
                let r = (-2.0 * u1.ln()).sqrt();
                let theta = 2.0 * std::f64::consts::PI * u2;
                d[j] = r * theta.cos() * std + mean;
                d[j + 8] = r * theta.sin() * std + mean;
            }
        } else {
            let (m, s) = (mean as f32, std as f32);
            for j in 0..8 {
                let u1 = 1.0f32 - d[j] as f32;
                let u2 = d[j + 8] as f32;
                let r = (-2.0f32 * u1.ln()).sqrt();
                let theta = (2.0 * std::f64::consts::PI) as f32 * u2;
                d[j] = (r * theta.cos() * s + m) as f64;
                d[j + 8] = (r * theta.sin() * s + m) as f64;
            }
        }
    };
    let mut i = 0;
    while i + 16 <= n {
        fill16(&mut data[i..i + 16]);
        i += 16;
    }
    if !n.is_multiple_of(16) {
        let tail = &mut data[n - 16..];
        for v in tail.iter_mut() {
            *v = if double {
                st.uniform_f64()
            } else {
                st.uniform_f32() as f64
            };
        }
        fill16(tail);
    }
    data
}

/// `torch.rand(sizes, dtype)`: uniform in `[0, 1)`.
pub fn rand(sizes: &[i64], dtype: Option<DType>, generator: Option<&Generator>) -> Result<Tensor> {
    let t = factory::empty(sizes, dtype)?;
    t.uniform_(0.0, 1.0, generator)?;
    Ok(t)
}

/// `torch.randn(sizes, dtype)`: standard normal.
pub fn randn(sizes: &[i64], dtype: Option<DType>, generator: Option<&Generator>) -> Result<Tensor> {
    let t = factory::empty(sizes, dtype)?;
    t.normal_(0.0, 1.0, generator)?;
    Ok(t)
}

/// `torch.randint(low, high, sizes, dtype)`: integers in `[low, high)`, int64 by default.
pub fn randint(
    low: i64,
    high: i64,
    sizes: &[i64],
    dtype: Option<DType>,
    generator: Option<&Generator>,
) -> Result<Tensor> {
    let t = factory::empty(sizes, Some(dtype.unwrap_or(DType::Int64)))?;
    t.random_(low, high, generator)?;
    Ok(t)
}

/// `torch.rand_like(t)`.
pub fn rand_like(
    t: &Tensor,
    dtype: Option<DType>,
    generator: Option<&Generator>,
) -> Result<Tensor> {
    let r = factory::empty_like(t, dtype)?;
    r.uniform_(0.0, 1.0, generator)?;
    Ok(r)
}

/// `torch.randn_like(t)`.
pub fn randn_like(
    t: &Tensor,
    dtype: Option<DType>,
    generator: Option<&Generator>,
) -> Result<Tensor> {
    let r = factory::empty_like(t, dtype)?;
    r.normal_(0.0, 1.0, generator)?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f32], b: &[f64], tol: f64) {
        for (x, y) in a.iter().zip(b) {
            assert!(((*x as f64) - y).abs() <= tol, "{x} vs {y}");
        }
    }

    #[test]
    fn streams_match_torch() {
        // Each expected list is `torch.manual_seed(0); <call>.tolist()` from torch 2.15.
        let g = Generator::new(0);
        close(
            &rand(&[5], None, Some(&g)).unwrap().to_vec::<f32>(),
            &[
                0.49625658988952637,
                0.7682217955589294,
                0.08847743272781372,
                0.13203048706054688,
                0.30742281675338745,
            ],
            0.0,
        );
        g.manual_seed(0);
        close(
            &randn(&[5], None, Some(&g)).unwrap().to_vec::<f32>(),
            &[
                1.5409960746765137,
                -0.293428897857666,
                -2.1787893772125244,
                0.5684312582015991,
                -1.0845223665237427,
            ],
            1e-6,
        );
        g.manual_seed(0);
        close(
            &randn(&[20], None, Some(&g)).unwrap().to_vec::<f32>(),
            &[
                -1.1258398294448853,
                -1.152360200881958,
                -0.2505785822868347,
                -0.4338788092136383,
                0.5988394618034363,
                -1.5550950765609741,
                -0.3413603901863098,
                1.85300612449646,
                0.46809640526771545,
                -0.1577124446630478,
                1.4436601400375366,
                0.26604941487312317,
                1.3893661499023438,
                1.586334228515625,
                0.946298360824585,
                -0.843676745891571,
                0.9318265914916992,
                1.2590092420578003,
                2.0049805641174316,
                0.05373690277338028,
            ],
            1e-5,
        );
        g.manual_seed(0);
        assert_eq!(
            randint(0, 10, &[8], None, Some(&g))
                .unwrap()
                .to_vec::<i64>(),
            vec![4, 9, 3, 0, 3, 9, 7, 3]
        );
        g.manual_seed(0);
        assert_eq!(
            randint(0, 1 << 40, &[3], None, Some(&g))
                .unwrap()
                .to_vec::<i64>(),
            vec![741280623151, 506137267392, 291447657211]
        );
        g.manual_seed(0);
        let t = factory::empty(&[3], None).unwrap();
        t.normal_(2.0, 3.0, Some(&g)).unwrap();
        close(
            &t.to_vec::<f32>(),
            &[6.622988224029541, 1.119713306427002, -4.536368370056152],
            1e-5,
        );
        g.manual_seed(0);
        let u = factory::empty(&[3], None).unwrap();
        u.uniform_(-1.0, 1.0, Some(&g)).unwrap();
        close(
            &u.to_vec::<f32>(),
            &[
                -0.007486820220947266,
                0.5364435911178589,
                -0.8230451345443726,
            ],
            1e-7,
        );
    }

    #[test]
    fn errors_and_bernoulli() {
        let g = Generator::new(1);
        let i = Tensor::zeros(&[2], DType::Int64).unwrap();
        assert!(i.normal_(0.0, 1.0, Some(&g)).is_err());
        assert!(randint(3, 3, &[1], None, Some(&g)).is_err());
        let b = factory::empty(&[1000], None).unwrap();
        b.bernoulli_(0.25, Some(&g)).unwrap();
        let s: f32 = b.to_vec::<f32>().iter().sum();
        assert!((150.0..350.0).contains(&s));
        assert!(b.bernoulli_(1.5, Some(&g)).is_err());
    }
}
