//! `repr(tensor)` as PyTorch prints it (torch/_tensor_str.py with default print options):
//! precision 4, scientific notation when the magnitudes span more than 1000x or leave
//! `[1e-4, 1e8]`, integer-valued floats printed as `1.`, summarization with `...` above 1000
//! elements (3 edge items), 80-column line wrapping, and `dtype=`/`size=` suffixes.

use std::fmt;

use crate::config::default_dtype;
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::Tensor;

const PRECISION: usize = 4;
const THRESHOLD: usize = 1000;
const EDGEITEMS: usize = 3;
const LINEWIDTH: usize = 80;

/// Row-major element values read once for printing (i128 holds every int64 and uint64).
enum Values {
    Float(Vec<f64>),
    Int(Vec<i128>),
    Bool(Vec<bool>),
    /// Real and imaginary parts, each formatted like a float tensor (`tensor.real`/`.imag`).
    Complex(Vec<f64>, Vec<f64>),
}

impl Values {
    /// The values at the given flat indices.
    fn pick(&self, idx: &[usize]) -> Values {
        match self {
            Values::Float(v) => Values::Float(idx.iter().map(|&i| v[i]).collect()),
            Values::Int(v) => Values::Int(idx.iter().map(|&i| v[i]).collect()),
            Values::Bool(v) => Values::Bool(idx.iter().map(|&i| v[i]).collect()),
            Values::Complex(r, im) => Values::Complex(
                idx.iter().map(|&i| r[i]).collect(),
                idx.iter().map(|&i| im[i]).collect(),
            ),
        }
    }
}

/// A read-only, row-major copy of a tensor's data with its shape.
struct Data {
    sizes: Vec<usize>,
    values: Values,
}

impl Data {
    fn read(t: &Tensor) -> Result<Data> {
        let dt = t.dtype();
        let values = if dt.is_floating_point() {
            Values::Float(t.contiguous_vec::<f64>()?)
        } else if dt.is_complex() {
            let v = t.contiguous_vec::<crate::complex::Complex64>()?;
            Values::Complex(
                v.iter().map(|z| z.re).collect(),
                v.iter().map(|z| z.im).collect(),
            )
        } else if dt == DType::UInt64 {
            Values::Int(
                t.contiguous_vec::<u64>()?
                    .into_iter()
                    .map(i128::from)
                    .collect(),
            )
        } else if dt == DType::Bool {
            Values::Bool(t.contiguous_vec::<bool>()?)
        } else {
            Values::Int(
                t.contiguous_vec::<i64>()?
                    .into_iter()
                    .map(i128::from)
                    .collect(),
            )
        };
        Ok(Data {
            sizes: t.sizes().iter().map(|&s| s as usize).collect(),
            values,
        })
    }
}

/// Python's `"{:.Ne}"` (two-digit, signed exponent).
fn python_exp(v: f64, precision: usize) -> String {
    if !v.is_finite() {
        return python_special(v);
    }
    let s = format!("{v:.precision$e}");
    match s.split_once('e') {
        Some((mant, exp)) => {
            let e: i32 = exp.parse().unwrap_or(0);
            let sign = if e < 0 { '-' } else { '+' };
            format!("{mant}e{sign}{:02}", e.abs())
        }
        None => s,
    }
}

fn python_special(v: f64) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else if v > 0.0 {
        "inf".to_string()
    } else {
        "-inf".to_string()
    }
}

/// Python's `"{:.Nf}"`.
fn python_fixed(v: f64, precision: usize) -> String {
    if !v.is_finite() {
        return python_special(v);
    }
    format!("{v:.precision$}")
}

/// The `_Formatter` of torch/_tensor_str.py: decides the number style and width from the
/// (summarized) values. Complex tensors get one for the real parts and one (`imag`) for the
/// imaginary parts, as PyTorch formats `tensor.real` and `tensor.imag` separately.
struct Formatter {
    floating: bool,
    int_mode: bool,
    sci_mode: bool,
    max_width: usize,
    imag: Option<Box<Formatter>>,
}

impl Formatter {
    fn new(values: &Values, dtype: DType) -> Formatter {
        if let Values::Complex(re, im) = values {
            let part = dtype.to_real();
            let mut f = Formatter::new(&Values::Float(re.clone()), part);
            f.imag = Some(Box::new(Formatter::new(&Values::Float(im.clone()), part)));
            return f;
        }
        let mut f = Formatter {
            imag: None,
            floating: dtype.is_floating_point(),
            int_mode: true,
            sci_mode: false,
            max_width: 1,
        };
        match values {
            Values::Int(v) => {
                for x in v {
                    f.max_width = f.max_width.max(x.to_string().len());
                }
            }
            Values::Bool(v) => {
                for &x in v {
                    f.max_width = f.max_width.max(if x { 4 } else { 5 });
                }
            }
            Values::Complex(..) => {}
            Values::Float(v) => {
                let nz: Vec<f64> = v
                    .iter()
                    .copied()
                    .filter(|x| x.is_finite() && *x != 0.0)
                    .collect();
                if nz.is_empty() {
                    return f;
                }
                let min = nz.iter().map(|x| x.abs()).fold(f64::INFINITY, f64::min);
                let max = nz.iter().map(|x| x.abs()).fold(0.0, f64::max);
                f.int_mode = nz.iter().all(|x| *x == x.ceil());
                f.sci_mode = max / min > 1000.0 || max > 1.0e8 || min < 1.0e-4;
                for &x in &nz {
                    let w = if f.sci_mode {
                        python_exp(x, PRECISION).len()
                    } else if f.int_mode {
                        python_fixed(x, 0).len() + 1
                    } else {
                        python_fixed(x, PRECISION).len()
                    };
                    f.max_width = f.max_width.max(w);
                }
            }
        }
        f
    }

    fn format_float(&self, v: f64) -> String {
        let s = if self.sci_mode {
            python_exp(v, PRECISION)
        } else if self.int_mode {
            let mut s = python_fixed(v, 0);
            if v.is_finite() {
                s.push('.');
            }
            s
        } else {
            python_fixed(v, PRECISION)
        };
        self.pad(s)
    }

    fn pad(&self, s: String) -> String {
        let n = s.chars().count();
        if n >= self.max_width {
            s
        } else {
            format!("{}{s}", " ".repeat(self.max_width - n))
        }
    }

    fn format(&self, values: &Values, i: usize) -> String {
        match values {
            Values::Float(v) => {
                if self.floating {
                    self.format_float(v[i])
                } else {
                    self.pad(v[i].to_string())
                }
            }
            Values::Int(v) => self.pad(v[i].to_string()),
            Values::Bool(v) => self.pad(if v[i] { "True" } else { "False" }.to_string()),
            Values::Complex(re, im) => {
                let real = self.format_float(re[i]);
                let fi = self.imag.as_deref().unwrap_or(self);
                let imag = format!("{}j", fi.format_float(im[i]));
                let imag = imag.trim_start();
                if imag.starts_with('+') || imag.starts_with('-') {
                    format!("{real}{imag}")
                } else {
                    format!("{real}+{imag}")
                }
            }
        }
    }

    /// Characters one element takes in a row, with the `, ` separator (a complex element adds
    /// the imaginary width and the `j`).
    fn element_length(&self) -> usize {
        self.max_width + 2 + self.imag.as_ref().map_or(0, |f| f.max_width + 1)
    }
}

/// Indices (along dimension 0) that are shown: all, or the first and last edge items.
fn shown(size: usize, summarize: bool) -> (Vec<usize>, bool) {
    if summarize && size > 2 * EDGEITEMS {
        let mut v: Vec<usize> = (0..EDGEITEMS).collect();
        v.extend(size - EDGEITEMS..size);
        (v, true)
    } else {
        ((0..size).collect(), false)
    }
}

/// Collects the flat indices of the elements the formatter looks at (`get_summarized_data`).
fn summarized_indices(sizes: &[usize], base: usize, summarize: bool, out: &mut Vec<usize>) {
    if sizes.is_empty() {
        out.push(base);
        return;
    }
    let inner: usize = sizes[1..].iter().product();
    let (idx, _) = shown(sizes[0], summarize);
    for i in idx {
        summarized_indices(&sizes[1..], base + i * inner, summarize, out);
    }
}

fn tensor_str_rec(
    d: &Data,
    f: &Formatter,
    sizes: &[usize],
    base: usize,
    indent: usize,
    summarize: bool,
) -> String {
    if sizes.is_empty() {
        return f.format(&d.values, base);
    }
    let inner: usize = sizes[1..].iter().product();
    let (idx, cut) = shown(sizes[0], summarize);
    if sizes.len() == 1 {
        let element_length = f.element_length();
        let per_line = ((LINEWIDTH.saturating_sub(indent)) / element_length).max(1);
        let mut data: Vec<String> = Vec::new();
        for (k, &i) in idx.iter().enumerate() {
            if cut && k == EDGEITEMS {
                data.push(" ...".to_string());
            }
            data.push(f.format(&d.values, base + i));
        }
        let lines: Vec<String> = data.chunks(per_line).map(|c| c.join(", ")).collect();
        return format!(
            "[{}]",
            lines.join(&format!(",\n{}", " ".repeat(indent + 1)))
        );
    }
    let mut slices: Vec<String> = Vec::new();
    for (k, &i) in idx.iter().enumerate() {
        if cut && k == EDGEITEMS {
            slices.push("...".to_string());
        }
        slices.push(tensor_str_rec(
            d,
            f,
            &sizes[1..],
            base + i * inner,
            indent + 1,
            summarize,
        ));
    }
    let sep = format!(
        ",{}{}",
        "\n".repeat(sizes.len() - 1),
        " ".repeat(indent + 1)
    );
    format!("[{}]", slices.join(&sep))
}

fn add_suffixes(tensor_str: &str, suffixes: &[String], indent: usize) -> String {
    let mut out = String::from(tensor_str);
    let mut last_line_len = match tensor_str.rfind('\n') {
        Some(p) => tensor_str.len() - p + 1,
        None => tensor_str.len() + 2,
    };
    for s in suffixes {
        if last_line_len + s.len() + 2 > LINEWIDTH {
            out.push_str(&format!(",\n{}{s}", " ".repeat(indent)));
            last_line_len = indent + s.len();
        } else {
            out.push_str(&format!(", {s}"));
            last_line_len += s.len() + 2;
        }
    }
    out.push(')');
    out
}

impl Tensor {
    /// The tensor as PyTorch's `repr` prints it, e.g. `tensor([[1., 2.],\n        [3., 4.]])`.
    pub fn repr(&self) -> Result<String> {
        let prefix = "tensor(";
        let indent = prefix.len();
        let m = self.meta_snapshot();
        let dtype = m.dtype;
        let mut suffixes: Vec<String> = Vec::new();
        let device = m.storage.device();
        if device != crate::Device::Cpu {
            suffixes.push(format!("device='{device}'"));
        }
        let tensor_str = if m.numel() == 0 {
            if m.dim() != 1 {
                let sz: Vec<String> = m.sizes.iter().map(|s| s.to_string()).collect();
                let tuple = if sz.len() == 1 {
                    format!("({},)", sz[0])
                } else {
                    format!("({})", sz.join(", "))
                };
                suffixes.push(format!("size={tuple}"));
            }
            if dtype != default_dtype() {
                suffixes.push(format!("dtype={dtype}"));
            }
            "[]".to_string()
        } else {
            let default_complex = default_dtype().to_complex();
            if !(dtype == default_dtype()
                || Some(dtype) == default_complex
                || dtype == DType::Int64
                || dtype == DType::Bool)
            {
                suffixes.push(format!("dtype={dtype}"));
            }
            let d = Data::read(self)?;
            let summarize = m.numel() > THRESHOLD;
            let mut idx = Vec::new();
            summarized_indices(&d.sizes, 0, summarize, &mut idx);
            let fmt_values = d.values.pick(&idx);
            let f = Formatter::new(&fmt_values, dtype);
            tensor_str_rec(&d, &f, &d.sizes, 0, indent, summarize)
        };
        if m.requires_grad {
            suffixes.push("requires_grad=True".to_string());
        }
        Ok(add_suffixes(
            &format!("{prefix}{tensor_str}"),
            &suffixes,
            indent,
        ))
    }
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.repr() {
            Ok(s) => f.write_str(&s),
            Err(e) => write!(f, "<tensor: {e}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32t(v: Vec<f32>, s: &[i64]) -> Tensor {
        Tensor::from_vec(v, s).unwrap()
    }

    // Expected strings are `repr(...)` output of torch 2.15 for the same data.
    #[test]
    fn float_modes() {
        assert_eq!(
            f32t(vec![1., 2., 3., 4.], &[2, 2]).to_string(),
            "tensor([[1., 2.],\n        [3., 4.]])"
        );
        assert_eq!(
            f32t(vec![1.5, -2.25], &[2]).to_string(),
            "tensor([ 1.5000, -2.2500])"
        );
        assert_eq!(
            f32t(vec![1e-5, 1.0], &[2]).to_string(),
            "tensor([1.0000e-05, 1.0000e+00])"
        );
        assert_eq!(f32t(vec![3.5], &[]).to_string(), "tensor(3.5000)");
        assert_eq!(
            f32t(vec![f32::NAN, 1.0, f32::INFINITY], &[3]).to_string(),
            "tensor([nan, 1., inf])"
        );
        assert_eq!(f32t(vec![0.0, 0.0], &[2]).to_string(), "tensor([0., 0.])");
        assert_eq!(
            f32t(vec![1e10, 1.0], &[2]).to_string(),
            "tensor([1.0000e+10, 1.0000e+00])"
        );
        let d = Tensor::from_vec(vec![1.0f64, 2.5], &[2]).unwrap();
        assert_eq!(
            d.to_string(),
            "tensor([1.0000, 2.5000], dtype=torch.float64)"
        );
    }

    #[test]
    fn nesting_suffixes_and_wrapped_rows() {
        let ones = f32t(vec![1.; 8], &[2, 2, 2]);
        assert_eq!(
            ones.to_string(),
            "tensor([[[1., 1.],\n         [1., 1.]],\n\n        [[1., 1.],\n         [1., 1.]]])"
        );
        let h = Tensor::zeros(&[2, 3], DType::Float16).unwrap();
        assert_eq!(
            h.to_string(),
            "tensor([[0., 0., 0.],\n        [0., 0., 0.]], dtype=torch.float16)"
        );
        let g = f32t(vec![1.; 3], &[3]);
        g.set_requires_grad(true);
        assert_eq!(g.to_string(), "tensor([1., 1., 1.], requires_grad=True)");
        let d = Tensor::from_vec(vec![1e-8f64, 2., 3., 4.], &[2, 2]).unwrap();
        assert_eq!(d.to_string(), "tensor([[1.0000e-08, 2.0000e+00],\n        [3.0000e+00, 4.0000e+00]], dtype=torch.float64)");
        // torch: torch.arange(100.).view(4, 25) / 7 (first row block)
        let t = f32t((0..100).map(|i| i as f32 / 7.0).collect(), &[4, 25]).to_string();
        assert!(t.starts_with("tensor([[ 0.0000,  0.1429,  0.2857,  0.4286,  0.5714,  0.7143,  0.8571,  1.0000,\n          1.1429,"));
        assert!(t.contains("          3.4286],\n        [ 3.5714,"));
        assert!(t.ends_with("         14.1429]])"));
    }

    #[test]
    fn ints_bools_and_empty() {
        assert_eq!(
            Tensor::from_vec(vec![1i64, -2, 3], &[3])
                .unwrap()
                .to_string(),
            "tensor([ 1, -2,  3])"
        );
        assert_eq!(
            Tensor::from_vec(vec![1i32], &[1]).unwrap().to_string(),
            "tensor([1], dtype=torch.int32)"
        );
        assert_eq!(
            Tensor::from_vec(vec![true, false], &[2])
                .unwrap()
                .to_string(),
            "tensor([ True, False])"
        );
        assert_eq!(
            Tensor::zeros(&[0], DType::Float32).unwrap().to_string(),
            "tensor([])"
        );
        assert_eq!(
            Tensor::zeros(&[0, 3], DType::Float32).unwrap().to_string(),
            "tensor([], size=(0, 3))"
        );
        assert_eq!(
            Tensor::zeros(&[0], DType::Int64).unwrap().to_string(),
            "tensor([], dtype=torch.int64)"
        );
    }

    #[test]
    fn wrapping_and_summarization() {
        let v: Vec<f32> = (0..30).map(|i| i as f32 * 1.5).collect();
        // torch: torch.arange(30) * 1.5
        let expect = "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])";
        assert_eq!(f32t(v, &[30]).to_string(), expect);
        let big = Tensor::from_vec((0..2000i64).collect::<Vec<_>>(), &[2000]).unwrap();
        assert_eq!(
            big.to_string(),
            "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
        );
        let m = Tensor::from_vec((0..2000i64).collect::<Vec<_>>(), &[100, 20]).unwrap();
        let expect = "tensor([[   0,    1,    2,  ...,   17,   18,   19],\n        [  20,   21,   22,  ...,   37,   38,   39],\n        [  40,   41,   42,  ...,   57,   58,   59],\n        ...,\n        [1940, 1941, 1942,  ..., 1957, 1958, 1959],\n        [1960, 1961, 1962,  ..., 1977, 1978, 1979],\n        [1980, 1981, 1982,  ..., 1997, 1998, 1999]])";
        assert_eq!(m.to_string(), expect);
    }

    #[test]
    fn complex_and_unsigned() {
        use crate::complex::{Complex32, Complex64};
        let c = |v: Vec<(f32, f32)>, s: &[i64]| {
            Tensor::from_vec(
                v.into_iter().map(|(r, i)| Complex32::new(r, i)).collect(),
                s,
            )
            .unwrap()
            .to_string()
        };
        assert_eq!(
            c(vec![(1.0, 2.0), (-3.5, -0.25)], &[2]),
            "tensor([ 1.0000+2.0000j, -3.5000-0.2500j])"
        );
        assert_eq!(c(vec![(1.5, 0.0)], &[]), "tensor(1.5000+0.j)");
        assert_eq!(
            c(vec![(1e-5, 1.0), (2.0, 0.0), (3.0, 1e6), (-0.0, 0.0)], &[2, 2]),
            "tensor([[1.0000e-05+1.0000e+00j, 2.0000e+00+0.0000e+00j],\n        [3.0000e+00+1.0000e+06j, -0.0000e+00+0.0000e+00j]])"
        );
        let d = Tensor::from_vec(
            vec![Complex64::new(1.0, 2.0), Complex64::new(3.0, -4.0)],
            &[2],
        );
        assert_eq!(
            d.unwrap().to_string(),
            "tensor([1.+2.j, 3.-4.j], dtype=torch.complex128)"
        );
        assert_eq!(
            Tensor::zeros(&[0], DType::Complex64).unwrap().to_string(),
            "tensor([], dtype=torch.complex64)"
        );
        let wide = c((0..30).map(|i| (i as f32, i as f32)).collect(), &[30]);
        assert_eq!(wide, "tensor([ 0.+0.j,  1.+1.j,  2.+2.j,  3.+3.j,  4.+4.j,  5.+5.j,  6.+6.j,  7.+7.j,\n         8.+8.j,  9.+9.j, 10.+10.j, 11.+11.j, 12.+12.j, 13.+13.j, 14.+14.j, 15.+15.j,\n        16.+16.j, 17.+17.j, 18.+18.j, 19.+19.j, 20.+20.j, 21.+21.j, 22.+22.j, 23.+23.j,\n        24.+24.j, 25.+25.j, 26.+26.j, 27.+27.j, 28.+28.j, 29.+29.j])");
        assert_eq!(
            Tensor::from_vec(vec![0u16, 65535, 7], &[3])
                .unwrap()
                .to_string(),
            "tensor([    0, 65535,     7], dtype=torch.uint16)"
        );
        assert_eq!(
            Tensor::from_vec(vec![u64::MAX], &[1]).unwrap().to_string(),
            "tensor([18446744073709551615], dtype=torch.uint64)"
        );
    }
}
