//! Random sampling operators beyond `rand`/`randn`/`randint` and the in-place `uniform_` and
//! `normal_`: the other distributions (`random_`, `cauchy_`, `log_normal_`, `geometric_`,
//! `bernoulli` with a probability, `normal` with tensor parameters, `multinomial`, `poisson`,
//! `binomial`, `_standard_gamma`, `_sample_dirichlet`), `randperm`, `randint_like`,
//! `native_dropout`, `rrelu_with_noise`, the functional forms of the in-place samplers and the
//! `generator=` overloads of the factories.
//!
//! Draws come from the `generator=` argument's stream, or the default generator when it is
//! None (the same Mersenne Twister stream as the existing samplers). Transformations follow PyTorch's CPU definitions (e.g. Cauchy is
//! `median + sigma * tan(pi * (u - 0.5))`, geometric is `ceil(log(u) / log1p(-p))`), so
//! distributions agree; the exact sample streams of the rejection samplers do not.

use std::f64::consts::PI;

use ts_tensor::ops::factory;
use ts_tensor::ops::random::{rand, randn};
use ts_tensor::ops::special::lgamma;
use ts_tensor::{DType, Error, Generator, Operand, Scalar, Tensor};

use super::generators::generator_arg;
use super::{def, Args};
use crate::registry::Registry;

/// The generator a sampler draws from (None: the default generator).
type Gen<'g> = Option<&'g Generator>;

fn not_for(kernel: &str, dt: DType) -> Error {
    Error::runtime(format!(
        "\"{kernel}\" not implemented for '{}'",
        dt.scalar_type_name()
    ))
}

fn check_floating(kernel: &str, t: &Tensor) -> Result<(), Error> {
    if t.dtype().is_floating_point() {
        Ok(())
    } else {
        Err(not_for(kernel, t.dtype()))
    }
}

/// Uniform doubles in `[0, 1)` from the default generator, drawn in batches (for samplers
/// that need a data-dependent number of draws).
struct Uniforms<'g> {
    g: Gen<'g>,
    buf: Vec<f64>,
    pos: usize,
}

impl<'g> Uniforms<'g> {
    fn new(g: Gen<'g>) -> Uniforms<'g> {
        Uniforms {
            g,
            buf: Vec::new(),
            pos: 0,
        }
    }

    fn next(&mut self) -> Result<f64, Error> {
        if self.pos == self.buf.len() {
            self.buf = rand(&[256], Some(DType::Float64), self.g)?.to_vec::<f64>();
            self.pos = 0;
        }
        self.pos += 1;
        Ok(self.buf[self.pos - 1])
    }

    /// A standard normal (Box-Muller on two uniforms).
    fn normal(&mut self) -> Result<f64, Error> {
        let u1 = 1.0 - self.next()?;
        let u2 = self.next()?;
        Ok((-2.0 * u1.ln()).sqrt() * (2.0 * PI * u2).cos())
    }
}

/// Maps every element of `t` (as f64) through `f`, giving a tensor of `t`'s shape and dtype.
fn map_elements(t: &Tensor, mut f: impl FnMut(f64) -> Result<f64, Error>) -> Result<Tensor, Error> {
    let vals: Vec<f64> = t
        .to_vec::<f64>()
        .into_iter()
        .map(&mut f)
        .collect::<Result<_, _>>()?;
    Tensor::from_vec(vals, &t.sizes())?.to_dtype(t.dtype(), false)
}

/// The bounds of `random_()` without arguments: `[0, 2^mantissa]` for floating dtypes, the
/// non-negative range of integer ones.
fn default_random_to(dt: DType) -> Result<i64, Error> {
    Ok(match dt {
        DType::Float64 => (1 << 53) + 1,
        DType::Float32 => (1 << 24) + 1,
        DType::Float16 => (1 << 11) + 1,
        DType::BFloat16 => (1 << 8) + 1,
        DType::Bool => 2,
        DType::UInt8 => 256,
        DType::Int8 => 128,
        DType::Int16 => 1 << 15,
        DType::Int32 => 1 << 31,
        DType::Int64 | DType::UInt64 => i64::MAX,
        DType::UInt16 => 1 << 16,
        DType::UInt32 => 1 << 32,
        d => return Err(not_for("random_", d)),
    })
}

fn random_from(t: &Tensor, from: i64, to: Option<i64>, g: Gen) -> Result<(), Error> {
    let to = match to {
        Some(to) => to,
        None => default_random_to(t.dtype())?,
    };
    t.random_(from, to, g)
}

fn cauchy_(t: &Tensor, median: f64, sigma: f64, g: Gen) -> Result<(), Error> {
    check_floating("cauchy_cpu", t)?;
    if sigma <= 0.0 {
        return Err(Error::runtime(format!(
            "cauchy_ expects sigma > 0.0, but found sigma={sigma}"
        )));
    }
    let u = rand(&t.sizes(), Some(DType::Float64), g)?;
    let v = u
        .sub_scalar(Scalar::Float(0.5), Scalar::Int(1))?
        .mul_scalar(Scalar::Float(PI))?
        .tan()?
        .mul_scalar(Scalar::Float(sigma))?
        .add_scalar(Scalar::Float(median), Scalar::Int(1))?;
    t.copy_(&v)
}

fn log_normal_(t: &Tensor, mean: f64, std: f64, g: Gen) -> Result<(), Error> {
    check_floating("log_normal_cpu", t)?;
    if std <= 0.0 {
        return Err(Error::runtime(format!(
            "log_normal_ expects std > 0.0, but found std={std}"
        )));
    }
    let n = randn(&t.sizes(), Some(DType::Float64), g)?;
    let v = n
        .mul_scalar(Scalar::Float(std))?
        .add_scalar(Scalar::Float(mean), Scalar::Int(1))?
        .exp()?;
    t.copy_(&v)
}

fn geometric_(t: &Tensor, p: f64, g: Gen) -> Result<(), Error> {
    if !(p > 0.0 && p < 1.0) {
        return Err(Error::runtime(format!(
            "geometric_ expects p to be in (0, 1), got p = {p}"
        )));
    }
    let u = rand(&t.sizes(), Some(DType::Float64), g)?;
    let v = u.log()?.div_scalar(Scalar::Float((-p).ln_1p()))?.ceil()?;
    t.copy_(&v)
}

fn exponential_(t: &Tensor, lambd: f64, g: Gen) -> Result<(), Error> {
    check_floating("exponential_cpu", t)?;
    if lambd <= 0.0 {
        return Err(Error::runtime(format!(
            "exponential_ expects lambda > 0.0, but found lambda={lambd}"
        )));
    }
    let u = rand(&t.sizes(), Some(DType::Float64), g)?;
    let v = u.neg()?.log1p()?.neg()?.div_scalar(Scalar::Float(lambd))?;
    t.copy_(&v)
}

/// `bernoulli` with per-element probabilities `p` broadcast to `t`'s shape, written into `t`.
fn bernoulli_tensor_(t: &Tensor, p: &Tensor, g: Gen) -> Result<(), Error> {
    let probs = p
        .to_dtype(DType::Float64, false)?
        .expand(&t.sizes(), false)?
        .contiguous()?;
    t.copy_(&probs.bernoulli(g)?)
}

fn check_std(std: &Tensor) -> Result<(), Error> {
    if std.to_vec::<f64>().iter().any(|&s| s < 0.0) {
        return Err(Error::runtime("normal expects all elements of std >= 0.0"));
    }
    Ok(())
}

/// `mean + std * N(0, 1)` with the result's shape and dtype taken from `like`.
fn normal_like(
    like: &Tensor,
    mean: &dyn Fn(&Tensor) -> Result<Tensor, Error>,
    g: Gen,
) -> Result<Tensor, Error> {
    let out = factory::empty_like(like, None)?;
    out.normal_(0.0, 1.0, g)?;
    mean(&out)
}

/// `torch.multinomial`: `n` category indices per row of `probs`.
fn multinomial(probs: &Tensor, n: i64, replacement: bool, g: Gen) -> Result<Tensor, Error> {
    let dim = probs.dim();
    if !(1..=2).contains(&dim) {
        return Err(Error::runtime("prob_dist must be 1 or 2 dim"));
    }
    if !probs.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "multinomial only supports floating-point dtypes for input, got: {}",
            probs.dtype().scalar_type_name()
        )));
    }
    if n <= 0 {
        return Err(Error::runtime("cannot sample n_sample <= 0 samples"));
    }
    let sizes = probs.sizes();
    let cats = sizes[dim - 1] as usize;
    let rows = if dim == 2 { sizes[0] as usize } else { 1 };
    if !replacement && n as usize > cats {
        return Err(Error::runtime(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
        ));
    }
    let p = probs.to_vec::<f64>();
    let mut u = Uniforms::new(g);
    let mut out = Vec::with_capacity(rows * n as usize);
    for r in 0..rows {
        let row = &p[r * cats..(r + 1) * cats];
        if row.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return Err(Error::runtime(
                "probability tensor contains either `inf`, `nan` or element < 0",
            ));
        }
        let total: f64 = row.iter().sum();
        if total <= 0.0 {
            return Err(Error::runtime(
                "invalid multinomial distribution (sum of probabilities <= 0)",
            ));
        }
        if replacement {
            let mut cum = Vec::with_capacity(cats);
            let mut acc = 0.0;
            for x in row {
                acc += x / total;
                cum.push(acc);
            }
            for _ in 0..n {
                let v = u.next()?;
                let k = cum.partition_point(|&c| c <= v).min(cats - 1);
                // Never pick a zero-probability category at the upper edge.
                let k = (0..=k).rev().find(|&j| row[j] > 0.0).unwrap_or(k);
                out.push(k as i64);
            }
        } else {
            if row.iter().filter(|x| **x > 0.0).count() < n as usize {
                return Err(Error::runtime(
                    "invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)",
                ));
            }
            // Sampling without replacement: the n largest p_i / E_i with E_i ~ Exp(1).
            let mut keys: Vec<(f64, usize)> = Vec::with_capacity(cats);
            for (j, x) in row.iter().enumerate() {
                let e = -(1.0 - u.next()?).ln();
                keys.push((x / e, j));
            }
            keys.sort_by(|a, b| b.0.total_cmp(&a.0));
            out.extend(keys.iter().take(n as usize).map(|k| k.1 as i64));
        }
    }
    let shape: Vec<i64> = if dim == 2 {
        vec![rows as i64, n]
    } else {
        vec![n]
    };
    Tensor::from_vec(out, &shape)
}

/// A Poisson sample of rate `lambda` (Knuth below 10, Hörmann's PTRS above, as ATen).
fn poisson_sample(u: &mut Uniforms, lambda: f64) -> Result<f64, Error> {
    if lambda <= 0.0 {
        return Ok(0.0);
    }
    if lambda < 10.0 {
        let enlam = (-lambda).exp();
        let (mut x, mut prod) = (0.0, 1.0);
        loop {
            prod *= u.next()?;
            if prod > enlam {
                x += 1.0;
            } else {
                return Ok(x);
            }
        }
    }
    let slam = lambda.sqrt();
    let loglam = lambda.ln();
    let b = 0.931 + 2.53 * slam;
    let a = -0.059 + 0.02483 * b;
    let invalpha = 1.1239 + 1.1328 / (b - 3.4);
    let vr = 0.9277 - 3.6224 / (b - 2.0);
    loop {
        let uu = u.next()? - 0.5;
        let v = u.next()?;
        let us = 0.5 - uu.abs();
        let k = ((2.0 * a / us + b) * uu + lambda + 0.43).floor();
        if us >= 0.07 && v <= vr {
            return Ok(k);
        }
        if k < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        if v.ln() + invalpha.ln() - (a / (us * us) + b).ln()
            <= -lambda + k * loglam - lgamma(k + 1.0)
        {
            return Ok(k);
        }
    }
}

/// A binomial sample (inversion for small means, BTRS otherwise).
fn binomial_sample(u: &mut Uniforms, n: f64, p: f64) -> Result<f64, Error> {
    if n <= 0.0 || p <= 0.0 {
        return Ok(0.0);
    }
    if p >= 1.0 {
        return Ok(n);
    }
    if p > 0.5 {
        return Ok(n - binomial_sample(u, n, 1.0 - p)?);
    }
    let q = 1.0 - p;
    if n * p < 10.0 {
        // Inversion: walk the probability mass function.
        let s = p / q;
        let a = (n + 1.0) * s;
        let mut r = q.powf(n);
        let mut v = u.next()?;
        let mut x = 0.0;
        while v > r && x < n {
            v -= r;
            x += 1.0;
            r *= a / x - s;
        }
        return Ok(x);
    }
    let spq = (n * p * q).sqrt();
    let b = 1.15 + 2.53 * spq;
    let a = -0.0873 + 0.0248 * b + 0.01 * p;
    let c = n * p + 0.5;
    let vr = 0.92 - 4.2 / b;
    let alpha = (2.83 + 5.1 / b) * spq;
    let lpq = (p / q).ln();
    let m = ((n + 1.0) * p).floor();
    let h = lgamma(m + 1.0) + lgamma(n - m + 1.0);
    loop {
        let uu = u.next()? - 0.5;
        let mut v = u.next()?;
        let us = 0.5 - uu.abs();
        let k = ((2.0 * a / us + b) * uu + c).floor();
        if k < 0.0 || k > n {
            continue;
        }
        if us >= 0.07 && v <= vr {
            return Ok(k);
        }
        v = (v * alpha / (a / (us * us) + b)).ln();
        if v <= h - lgamma(k + 1.0) - lgamma(n - k + 1.0) + (k - m) * lpq {
            return Ok(k);
        }
    }
}

/// A Gamma(alpha, 1) sample (Marsaglia and Tsang, boosted below alpha = 1).
fn gamma_sample(u: &mut Uniforms, alpha: f64) -> Result<f64, Error> {
    if alpha <= 0.0 || alpha.is_nan() {
        return Ok(f64::NAN);
    }
    let (alpha, boost) = if alpha < 1.0 {
        (alpha + 1.0, (1.0 - u.next()?).powf(1.0 / alpha))
    } else {
        (alpha, 1.0)
    };
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let (mut x, mut v);
        loop {
            x = u.normal()?;
            v = 1.0 + c * x;
            if v > 0.0 {
                break;
            }
        }
        v = v * v * v;
        let w = 1.0 - u.next()?;
        if w < 1.0 - 0.0331 * x.powi(4) || w.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return Ok((d * v * boost).max(f64::MIN_POSITIVE));
        }
    }
}

/// Registers an in-place sampler `name_` and its functional form `name` (same arguments).
fn sampler(
    r: &Registry,
    in_place: &str,
    functional: Option<&str>,
    gen: usize,
    f: fn(&Tensor, &Args, Gen) -> Result<(), Error>,
) {
    def(r, in_place, move |a| {
        let g = generator_arg(a, gen)?;
        let t = a.t(0)?;
        f(t, a, g)?;
        Ok(t.clone())
    });
    if let Some(name) = functional {
        def(r, name, move |a| {
            let g = generator_arg(a, gen)?;
            let t = factory::empty_like(a.t(0)?, None)?;
            f(&t, a, g)?;
            Ok(t)
        });
    }
}

/// Registers the random sampling operators.
pub fn register(r: &Registry) {
    sampler(r, "aten::random_", Some("aten::random"), 1, |t, _, g| {
        random_from(t, 0, None, g)
    });
    sampler(
        r,
        "aten::random_.to",
        Some("aten::random.to"),
        2,
        |t, a, g| random_from(t, 0, Some(a.int(1)?), g),
    );
    sampler(
        r,
        "aten::random_.from",
        Some("aten::random.from"),
        3,
        |t, a, g| random_from(t, a.int(1)?, a.oint(2)?, g),
    );
    sampler(r, "aten::cauchy_", Some("aten::cauchy"), 3, |t, a, g| {
        cauchy_(t, a.f(1)?, a.f(2)?, g)
    });
    sampler(
        r,
        "aten::log_normal_",
        Some("aten::log_normal"),
        3,
        |t, a, g| log_normal_(t, a.f(1)?, a.f(2)?, g),
    );
    sampler(
        r,
        "aten::geometric_",
        Some("aten::geometric"),
        2,
        |t, a, g| geometric_(t, a.f(1)?, g),
    );
    def(r, "aten::exponential", |a| {
        let g = generator_arg(a, 2)?;
        let t = factory::empty_like(a.t(0)?, None)?;
        exponential_(&t, a.f(1)?, g)?;
        Ok(t)
    });
    def(r, "aten::uniform", |a| {
        let g = generator_arg(a, 3)?;
        let t = factory::empty_like(a.t(0)?, None)?;
        t.uniform_(a.f(1)?, a.f(2)?, g)?;
        Ok(t)
    });
    def(r, "aten::normal.out", |a| {
        let g = generator_arg(a, 3)?;
        let (x, out) = (a.t(0)?, a.t(4)?);
        if out.sizes() != x.sizes() {
            crate::tensor_ops::resize_set::resize_(out, &x.sizes())?;
        }
        out.normal_(a.f(1)?, a.f(2)?, g)?;
        Ok(out.clone())
    });
    def(r, "aten::normal_functional", |a| {
        let g = generator_arg(a, 3)?;
        let t = factory::empty_like(a.t(0)?, None)?;
        t.normal_(a.f(1)?, a.f(2)?, g)?;
        Ok(t)
    });
    sampler(
        r,
        "aten::bernoulli_.float",
        Some("aten::bernoulli.p"),
        2,
        |t, a, g| t.bernoulli_(a.f(1)?, g),
    );
    sampler(
        r,
        "aten::bernoulli_.Tensor",
        Some("aten::bernoulli.Tensor"),
        2,
        |t, a, g| bernoulli_tensor_(t, a.t(1)?, g),
    );
    def(r, "aten::normal.Tensor_float", |a| {
        let g = generator_arg(a, 2)?;
        let (mean, std) = (a.t(0)?, a.f(1)?);
        if std < 0.0 {
            return Err(Error::runtime(format!(
                "normal expects std >= 0.0, but found std {std}"
            )));
        }
        normal_like(
            mean,
            &|z| z.mul_scalar(Scalar::Float(std))?.add(mean, Scalar::Int(1)),
            g,
        )
    });
    def(r, "aten::normal.float_Tensor", |a| {
        let g = generator_arg(a, 2)?;
        let (mean, std) = (a.f(0)?, a.t(1)?);
        check_std(std)?;
        normal_like(
            std,
            &|z| z.mul(std)?.add_scalar(Scalar::Float(mean), Scalar::Int(1)),
            g,
        )
    });
    def(r, "aten::normal.Tensor_Tensor", |a| {
        let g = generator_arg(a, 2)?;
        let (mean, std) = (a.t(0)?, a.t(1)?);
        check_std(std)?;
        let shape = ts_tensor::shape::broadcast_shapes(&mean.sizes(), &std.sizes())?;
        let like = factory::empty(&shape, Some(mean.dtype()))?;
        normal_like(&like, &|z| z.mul(std)?.add(mean, Scalar::Int(1)), g)
    });
    def(r, "aten::normal.float_float", |a| {
        let g = generator_arg(a, 3)?;
        a.check_device(6)?;
        let (mean, std) = (a.f(0)?, a.f(1)?);
        let t = factory::empty(&a.ints(2)?, a.dtype(4)?)?;
        t.normal_(mean, std, g)?;
        Ok(t)
    });
    def(r, "aten::multinomial", |a| {
        let g = generator_arg(a, 3)?;
        multinomial(a.t(0)?, a.int(1)?, a.b(2)?, g)
    });
    def(r, "aten::poisson", |a| {
        let g = generator_arg(a, 1)?;
        let rates = a.t(0)?;
        check_floating("poisson_cpu", rates)?;
        let mut u = Uniforms::new(g);
        map_elements(rates, |l| {
            if l < 0.0 || l.is_nan() {
                return Err(Error::runtime(
                    "invalid Poisson rate, expected rate to be non-negative",
                ));
            }
            poisson_sample(&mut u, l)
        })
    });
    def(r, "aten::binomial", |a| {
        let g = generator_arg(a, 2)?;
        let (count, prob) = (a.t(0)?, a.t(1)?);
        check_floating("binomial_cpu", count)?;
        let shape = ts_tensor::shape::broadcast_shapes(&count.sizes(), &prob.sizes())?;
        let c = count.expand(&shape, false)?.to_vec::<f64>();
        let p = prob.expand(&shape, false)?.to_vec::<f64>();
        let mut u = Uniforms::new(g);
        let vals: Vec<f64> = c
            .iter()
            .zip(&p)
            .map(|(&n, &p)| binomial_sample(&mut u, n, p))
            .collect::<Result<_, _>>()?;
        Tensor::from_vec(vals, &shape)?.to_dtype(count.dtype(), false)
    });
    def(r, "aten::_standard_gamma", |a| {
        let g = generator_arg(a, 1)?;
        let alpha = a.t(0)?;
        check_floating("gamma_cpu", alpha)?;
        let mut u = Uniforms::new(g);
        map_elements(alpha, |x| gamma_sample(&mut u, x))
    });
    def(r, "aten::_sample_dirichlet", |a| {
        let g = generator_arg(a, 1)?;
        let alpha = a.t(0)?;
        check_floating("dirichlet", alpha)?;
        let mut u = Uniforms::new(g);
        let g = map_elements(alpha, |x| gamma_sample(&mut u, x))?;
        let last = alpha.dim().max(1) as i64 - 1;
        let sums = g.sum(Some(&[last]), true, None)?;
        g.div(&sums)
    });
    def(r, "aten::randperm", |a| {
        a.check_device(3)?;
        randperm(a.int(0)?, a.dtype(1)?, None)
    });
    def(r, "aten::randperm.generator", |a| {
        let g = generator_arg(a, 1)?;
        a.check_device(4)?;
        randperm(a.int(0)?, a.dtype(2)?, g)
    });
    def(r, "aten::rand.generator", |a| {
        let g = generator_arg(a, 1)?;
        a.check_device(4)?;
        rand(&a.ints(0)?, a.dtype(2)?, g)
    });
    def(r, "aten::randn.generator", |a| {
        let g = generator_arg(a, 1)?;
        a.check_device(4)?;
        randn(&a.ints(0)?, a.dtype(2)?, g)
    });
    def(r, "aten::randint.generator", |a| {
        let g = generator_arg(a, 2)?;
        a.check_device(5)?;
        ts_tensor::ops::random::randint(0, a.int(0)?, &a.ints(1)?, a.dtype(3)?, g)
    });
    def(r, "aten::randint.low_generator", |a| {
        let g = generator_arg(a, 3)?;
        a.check_device(6)?;
        ts_tensor::ops::random::randint(a.int(0)?, a.int(1)?, &a.ints(2)?, a.dtype(4)?, g)
    });
    def(r, "aten::rand_like.generator", |a| {
        let g = generator_arg(a, 1)?;
        ts_tensor::ops::random::rand_like(a.t(0)?, a.dtype(2)?, g)
    });
    def(r, "aten::randn_like.generator", |a| {
        let g = generator_arg(a, 1)?;
        ts_tensor::ops::random::randn_like(a.t(0)?, a.dtype(2)?, g)
    });
    register_randint_like(r);
    def(r, "aten::native_dropout", |a| {
        native_dropout(a.t(0)?, a.f(1)?, a.ob(2)?.unwrap_or(true))
    });
    def(r, "aten::rrelu_with_noise", |a| {
        let g = generator_arg(a, 5)?;
        rrelu_with_noise(
            a.t(0)?,
            a.t(1)?,
            a.s(2)?.to_f64(),
            a.s(3)?.to_f64(),
            a.b(4)?,
            g,
        )
    });
    def(r, "aten::rrelu_with_noise_", |a| {
        let g = generator_arg(a, 5)?;
        let x = a.t(0)?;
        let y = rrelu_with_noise(x, a.t(1)?, a.s(2)?.to_f64(), a.s(3)?.to_f64(), a.b(4)?, g)?;
        x.copy_(&y)?;
        Ok(x.clone())
    });
    def(r, "aten::rrelu_with_noise.out", |a| {
        // In training mode `noise` is rewritten with the sampled slopes, as in the functional
        // overload.
        let g = generator_arg(a, 5)?;
        let y = rrelu_with_noise(
            a.t(0)?,
            a.t(1)?,
            a.s(2)?.to_f64(),
            a.s(3)?.to_f64(),
            a.b(4)?,
            g,
        )?;
        ts_tensor::resize_out_and_copy(a.t(6)?, &y)
    });
    def(r, "aten::rrelu_with_noise_functional", |a| {
        let g = generator_arg(a, 5)?;
        let noise = a.t(1)?.clone_tensor()?;
        let y = rrelu_with_noise(
            a.t(0)?,
            &noise,
            a.s(2)?.to_f64(),
            a.s(3)?.to_f64(),
            a.b(4)?,
            g,
        )?;
        Ok((y, noise))
    });
}

fn randperm(n: i64, dtype: Option<DType>, g: Gen) -> Result<Tensor, Error> {
    if n < 0 {
        return Err(Error::runtime(format!(
            "randperm expects n >= 0, but got n={n}"
        )));
    }
    let keys = rand(&[n], Some(DType::Float64), g)?;
    let (_, idx) = keys.sort(0, false)?;
    idx.to_dtype(dtype.unwrap_or(DType::Int64), false)
}

fn register_randint_like(r: &Registry) {
    fn like(
        t: &Tensor,
        low: i64,
        high: i64,
        dtype: Option<DType>,
        g: Gen,
    ) -> Result<Tensor, Error> {
        let out = factory::empty_like(t, dtype)?;
        out.random_(low, high, g)?;
        Ok(out)
    }
    fn int_of(t: &Tensor) -> Result<i64, Error> {
        if t.numel() != 1 {
            return Err(Error::runtime(
                "high must be a scalar tensor (a tensor with exactly one element)",
            ));
        }
        Ok(t.item()?.to_f64() as i64)
    }
    def(r, "aten::randint_like.Tensor", |a| {
        like(a.t(0)?, 0, int_of(a.t(1)?)?, a.dtype(2)?, None)
    });
    def(r, "aten::randint_like.low_dtype", |a| {
        like(a.t(0)?, a.int(1)?, a.int(2)?, a.dtype(3)?, None)
    });
    def(r, "aten::randint_like.generator", |a| {
        let g = generator_arg(a, 2)?;
        like(a.t(0)?, 0, a.int(1)?, a.dtype(3)?, g)
    });
    def(r, "aten::randint_like.Tensor_generator", |a| {
        let g = generator_arg(a, 2)?;
        like(a.t(0)?, 0, int_of(a.t(1)?)?, a.dtype(3)?, g)
    });
    def(r, "aten::randint_like.low_generator_dtype", |a| {
        let g = generator_arg(a, 3)?;
        like(a.t(0)?, a.int(1)?, a.int(2)?, a.dtype(4)?, g)
    });
}

/// `native_dropout(input, p, train)`: the output and the keep mask.
fn native_dropout(x: &Tensor, p: f64, train: bool) -> Result<(Tensor, Tensor), Error> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::runtime(format!(
            "dropout probability has to be between 0 and 1, but got {p}"
        )));
    }
    if !train {
        let mask = factory::full_like(x, Scalar::Bool(true), Some(DType::Bool))?;
        return Ok((x.clone_tensor()?, mask));
    }
    let keep = factory::empty_like(x, Some(DType::Float64))?;
    keep.bernoulli_(1.0 - p, None)?;
    let scale = if p == 1.0 { 0.0 } else { 1.0 / (1.0 - p) };
    let out = x
        .mul(&keep.to_dtype(x.dtype(), false)?)?
        .mul_scalar(Scalar::Float(scale))?;
    Ok((out, keep.to_dtype(DType::Bool, false)?))
}

/// `rrelu_with_noise`: in training, negative elements are scaled by a uniform sample from
/// `[lower, upper]` (recorded in `noise`, 1 elsewhere); in evaluation by `(lower + upper) / 2`.
fn rrelu_with_noise(
    x: &Tensor,
    noise: &Tensor,
    lower: f64,
    upper: f64,
    training: bool,
    g: Gen,
) -> Result<Tensor, Error> {
    if !training {
        return x.leaky_relu(Scalar::Float((lower + upper) / 2.0));
    }
    check_floating("rrelu_with_noise_out_cpu", x)?;
    if noise.sizes() != x.sizes() {
        return Err(Error::runtime(format!(
            "noise must have the shape of the input {:?}, got {:?}",
            x.sizes().as_slice(),
            noise.sizes().as_slice()
        )));
    }
    let r = rand(&x.sizes(), Some(DType::Float64), g)?
        .mul_scalar(Scalar::Float(upper - lower))?
        .add_scalar(Scalar::Float(lower), Scalar::Int(1))?;
    let neg = x.lt_scalar(Scalar::Int(0))?;
    let slopes = ts_tensor::where_(
        &neg,
        Operand::Tensor(&r),
        Operand::Scalar(Scalar::Float(1.0)),
    )?;
    noise.copy_(&slopes)?;
    x.mul(&slopes.to_dtype(x.dtype(), false)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len() as f64
    }

    #[test]
    fn samplers_have_the_right_moments() {
        let mut u = Uniforms::new(None);
        let n = 20_000;
        let p: Vec<f64> = (0..n)
            .map(|_| poisson_sample(&mut u, 3.5).unwrap())
            .collect();
        assert!((mean(&p) - 3.5).abs() < 0.1, "poisson small {}", mean(&p));
        let p: Vec<f64> = (0..n)
            .map(|_| poisson_sample(&mut u, 40.0).unwrap())
            .collect();
        assert!((mean(&p) - 40.0).abs() < 0.3, "poisson large {}", mean(&p));
        let b: Vec<f64> = (0..n)
            .map(|_| binomial_sample(&mut u, 10.0, 0.3).unwrap())
            .collect();
        assert!((mean(&b) - 3.0).abs() < 0.1, "binomial small {}", mean(&b));
        let b: Vec<f64> = (0..n)
            .map(|_| binomial_sample(&mut u, 200.0, 0.7).unwrap())
            .collect();
        assert!(
            (mean(&b) - 140.0).abs() < 0.5,
            "binomial large {}",
            mean(&b)
        );
        assert!(b
            .iter()
            .all(|&k| (0.0..=200.0).contains(&k) && k.fract() == 0.0));
        let g: Vec<f64> = (0..n).map(|_| gamma_sample(&mut u, 2.5).unwrap()).collect();
        assert!((mean(&g) - 2.5).abs() < 0.1, "gamma {}", mean(&g));
        let g: Vec<f64> = (0..n).map(|_| gamma_sample(&mut u, 0.3).unwrap()).collect();
        assert!((mean(&g) - 0.3).abs() < 0.03, "gamma < 1 {}", mean(&g));
    }

    #[test]
    fn distributions_in_place() {
        let t = factory::empty(&[20_000], Some(DType::Float64)).unwrap();
        geometric_(&t, 0.25, None).unwrap();
        let v = t.to_vec::<f64>();
        assert!(v.iter().all(|&k| k >= 1.0 && k.fract() == 0.0));
        assert!((mean(&v) - 4.0).abs() < 0.15, "geometric {}", mean(&v));
        log_normal_(&t, 0.0, 0.5, None).unwrap();
        let v = t.to_vec::<f64>();
        assert!(
            (mean(&v) - (0.125f64).exp()).abs() < 0.03,
            "log-normal {}",
            mean(&v)
        );
        cauchy_(&t, 1.0, 2.0, None).unwrap();
        let mut v = t.to_vec::<f64>();
        v.sort_by(f64::total_cmp);
        assert!(
            (v[v.len() / 2] - 1.0).abs() < 0.1,
            "cauchy median {}",
            v[v.len() / 2]
        );
        let i = factory::empty(&[1000], Some(DType::Int64)).unwrap();
        random_from(&i, -3, Some(4), None).unwrap();
        assert!(i.to_vec::<i64>().iter().all(|k| (-3..4).contains(k)));
        assert_eq!(
            cauchy_(&i, 0.0, 1.0, None).unwrap_err().message,
            "\"cauchy_cpu\" not implemented for 'Long'"
        );
        assert!(geometric_(&t, 1.5, None).is_err());
    }

    #[test]
    fn multinomial_and_randperm() {
        let probs = Tensor::from_vec(vec![0.0, 1.0, 2.0, 0.0, 3.0], &[5]).unwrap();
        let s = multinomial(&probs, 3, false, None).unwrap().to_vec::<i64>();
        let mut sorted = s.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![1, 2, 4]);
        assert!(multinomial(&probs, 4, false, None).is_err());
        let w = multinomial(&probs, 3000, true, None)
            .unwrap()
            .to_vec::<i64>();
        assert!(w.iter().all(|&k| k == 1 || k == 2 || k == 4));
        let fours = w.iter().filter(|&&k| k == 4).count() as f64 / 3000.0;
        assert!((fours - 0.5).abs() < 0.05, "{fours}");
        let mut p = randperm(50, None, None).unwrap().to_vec::<i64>();
        p.sort_unstable();
        assert_eq!(p, (0..50).collect::<Vec<i64>>());
    }

    #[test]
    fn dropout_masks_and_scales() {
        let x = factory::full(&[1000], Scalar::Float(2.0), Some(DType::Float32)).unwrap();
        let (y, mask) = native_dropout(&x, 0.25, true).unwrap();
        let (y, m) = (y.to_vec::<f64>(), mask.to_vec::<bool>());
        for (v, k) in y.iter().zip(&m) {
            assert!((if *k { (v - 2.0 / 0.75).abs() } else { v.abs() }) < 1e-6);
        }
        let (same, all) = native_dropout(&x, 0.25, false).unwrap();
        assert_eq!(same.to_vec::<f64>(), x.to_vec::<f64>());
        assert!(all.to_vec::<bool>().iter().all(|k| *k));
    }
}
