//! Window functions for spectral analysis: `hann_window`, `hamming_window`, `blackman_window`,
//! `bartlett_window` and `kaiser_window`, with PyTorch's definitions.
//!
//! A periodic window of length N is the symmetric window of length N + 1 without its last
//! sample; lengths 0 and 1 give an empty tensor and `[1.]`. Values are computed in f64 and
//! cast to the requested floating dtype (the default dtype when none is given).

use std::f64::consts::PI;

use ts_tensor::{default_dtype, DType, Error, Tensor};

use super::{def, Args};
use crate::registry::Registry;

/// The modified Bessel function of the first kind of order zero (power series).
fn bessel_i0(x: f64) -> f64 {
    let q = x * x / 4.0;
    let (mut term, mut sum, mut k) = (1.0, 1.0, 1.0);
    while term > sum * 1e-17 && k < 500.0 {
        term *= q / (k * k);
        sum += term;
        k += 1.0;
    }
    sum
}

/// Builds a window of `n` samples from `w(i, m)`, where `m` is the symmetric length minus one.
fn window(
    name: &str,
    n: i64,
    periodic: bool,
    dtype: Option<DType>,
    w: impl Fn(f64, f64) -> f64,
) -> Result<Tensor, Error> {
    let dtype = dtype.unwrap_or_else(default_dtype);
    if !dtype.is_floating_point() {
        return Err(Error::runtime(format!(
            "{name} expects floating point dtypes, got: TensorOptions(dtype={}, device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))",
            dtype.cpp_name()
        )));
    }
    if n < 0 {
        return Err(Error::runtime(format!(
            "{name} requires non-negative window_length, got window_length={n}"
        )));
    }
    let values: Vec<f64> = if n <= 1 {
        vec![1.0; n as usize]
    } else {
        let len = if periodic { n + 1 } else { n };
        let m = (len - 1) as f64;
        (0..n).map(|i| w(i as f64, m)).collect()
    };
    Tensor::from_vec(values, &[n])?.to_dtype(dtype, false)
}

fn hamming(
    n: i64,
    periodic: bool,
    alpha: f64,
    beta: f64,
    dt: Option<DType>,
    name: &str,
) -> Result<Tensor, Error> {
    window(name, n, periodic, dt, |i, m| {
        alpha - beta * (2.0 * PI * i / m).cos()
    })
}

fn blackman(n: i64, periodic: bool, dt: Option<DType>) -> Result<Tensor, Error> {
    window("blackman_window", n, periodic, dt, |i, m| {
        0.42 - 0.5 * (2.0 * PI * i / m).cos() + 0.08 * (4.0 * PI * i / m).cos()
    })
}

fn bartlett(n: i64, periodic: bool, dt: Option<DType>) -> Result<Tensor, Error> {
    window("bartlett_window", n, periodic, dt, |i, m| {
        1.0 - (2.0 * i / m - 1.0).abs()
    })
}

fn kaiser(n: i64, periodic: bool, beta: f64, dt: Option<DType>) -> Result<Tensor, Error> {
    let i0_beta = bessel_i0(beta);
    window("kaiser_window", n, periodic, dt, |i, m| {
        let alpha = m / 2.0;
        let r = (i - alpha) / alpha;
        bessel_i0(beta * (1.0 - r * r).max(0.0).sqrt()) / i0_beta
    })
}

/// The dtype at `i`, after checking the device at `i + 2`.
fn opts(a: &Args, i: usize) -> Result<Option<DType>, Error> {
    a.check_device(i + 2)?;
    a.dtype(i)
}

/// Registers the window functions.
pub fn register(r: &Registry) {
    def(r, "aten::hann_window", |a| {
        hamming(a.int(0)?, true, 0.5, 0.5, opts(a, 1)?, "hann_window")
    });
    def(r, "aten::hann_window.periodic", |a| {
        hamming(a.int(0)?, a.b(1)?, 0.5, 0.5, opts(a, 2)?, "hann_window")
    });
    def(r, "aten::hamming_window", |a| {
        hamming(a.int(0)?, true, 0.54, 0.46, opts(a, 1)?, "hamming_window")
    });
    def(r, "aten::hamming_window.periodic", |a| {
        hamming(
            a.int(0)?,
            a.b(1)?,
            0.54,
            0.46,
            opts(a, 2)?,
            "hamming_window",
        )
    });
    def(r, "aten::hamming_window.periodic_alpha", |a| {
        hamming(
            a.int(0)?,
            a.b(1)?,
            a.f(2)?,
            0.46,
            opts(a, 3)?,
            "hamming_window",
        )
    });
    def(r, "aten::hamming_window.periodic_alpha_beta", |a| {
        hamming(
            a.int(0)?,
            a.b(1)?,
            a.f(2)?,
            a.f(3)?,
            opts(a, 4)?,
            "hamming_window",
        )
    });
    def(r, "aten::blackman_window", |a| {
        blackman(a.int(0)?, true, opts(a, 1)?)
    });
    def(r, "aten::blackman_window.periodic", |a| {
        blackman(a.int(0)?, a.b(1)?, opts(a, 2)?)
    });
    def(r, "aten::bartlett_window", |a| {
        bartlett(a.int(0)?, true, opts(a, 1)?)
    });
    def(r, "aten::bartlett_window.periodic", |a| {
        bartlett(a.int(0)?, a.b(1)?, opts(a, 2)?)
    });
    def(r, "aten::kaiser_window", |a| {
        kaiser(a.int(0)?, true, 12.0, opts(a, 1)?)
    });
    def(r, "aten::kaiser_window.periodic", |a| {
        kaiser(a.int(0)?, a.b(1)?, 12.0, opts(a, 2)?)
    });
    def(r, "aten::kaiser_window.beta", |a| {
        kaiser(a.int(0)?, a.b(1)?, a.f(2)?, opts(a, 3)?)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(t: &Tensor) -> Vec<f64> {
        let t = t.to_dtype(DType::Float64, false).unwrap();
        (0..t.sizes()[0])
            .map(|i| t.select(0, i).unwrap().item().unwrap().to_f64())
            .collect()
    }

    #[test]
    fn windows_match_pytorch() {
        // torch.hann_window(4), torch.hann_window(4, periodic=False)
        let close = |a: Vec<f64>, b: &[f64]| {
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(b) {
                assert!((x - y).abs() < 1e-6, "{a:?} vs {b:?}");
            }
        };
        close(
            values(&hamming(4, true, 0.5, 0.5, None, "hann_window").unwrap()),
            &[0.0, 0.5, 1.0, 0.5],
        );
        close(
            values(&hamming(4, false, 0.5, 0.5, None, "hann_window").unwrap()),
            &[0.0, 0.75, 0.75, 0.0],
        );
        close(
            values(&bartlett(5, false, None).unwrap()),
            &[0.0, 0.5, 1.0, 0.5, 0.0],
        );
        // torch.kaiser_window(4, periodic=False, beta=5.0)
        close(
            values(&kaiser(4, false, 5.0, None).unwrap()),
            &[
                0.036_710_892_271_286_68,
                0.775_322_104_445_406_7,
                0.775_322_104_445_406_7,
                0.036_710_892_271_286_68,
            ],
        );
        close(values(&blackman(1, true, None).unwrap()), &[1.0]);
        assert_eq!(values(&blackman(0, true, None).unwrap()).len(), 0);
        let e = hamming(3, true, 0.5, 0.5, Some(DType::Int64), "hann_window").unwrap_err();
        assert!(
            e.message.starts_with(
                "hann_window expects floating point dtypes, got: TensorOptions(dtype=long int"
            ),
            "{}",
            e.message
        );
    }
}
