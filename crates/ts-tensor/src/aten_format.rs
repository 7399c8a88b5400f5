//! ATen's C++ tensor printing (`std::cout << tensor`), which TorchScript's `print` and `str`
//! use, and which graph constants show: values in a column or matrix, then
//! `[ CPUFloatType{2,3} ]`.

use std::fmt::Write;

use crate::dtype::DType;
use crate::tensor::Tensor;

/// Formats `d` like C's `printf("%.{prec}g")`.
pub fn format_g(d: f64, prec: usize) -> String {
    if d.is_nan() {
        return "nan".to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let prec = prec.max(1);
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let sci = format!("{:.*e}", prec - 1, d);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= prec as i32 {
        let m = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (prec as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{:.*}", decimals, d)).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C++ `std::scientific` with `prec` decimals (`1.0000e+10`).
pub fn format_scientific(d: f64, prec: usize) -> String {
    if !d.is_finite() {
        return format_g(d, 6);
    }
    let s = format!("{:.*e}", prec, d);
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// The ATen type name (`CPUFloatType`).
pub fn aten_type_name(dtype: DType) -> String {
    format!("CPU{}Type", dtype.scalar_type_name())
}

#[derive(Clone, Copy)]
enum Style {
    Default,
    Fixed,
    Scientific,
}

fn fmt_num(v: f64, style: Style) -> String {
    match style {
        Style::Default => format_g(v, 6),
        Style::Fixed => {
            if v.is_finite() {
                format!("{v:.4}")
            } else {
                format_g(v, 6)
            }
        }
        Style::Scientific => format_scientific(v, 4),
    }
}

fn print_format(values: &[f64]) -> (f64, usize, Style) {
    if values.is_empty() {
        return (1.0, 0, Style::Default);
    }
    let int_mode = values.iter().all(|z| !z.is_finite() || *z == z.ceil());
    let offset = values.iter().position(|z| z.is_finite());
    let (mut exp_min, mut exp_max) = (1.0f64, 1.0f64);
    if let Some(off) = offset {
        exp_min = values[off].abs();
        exp_max = values[off].abs();
        for &v in &values[off..] {
            let z = v.abs();
            if z.is_finite() {
                if z < exp_min {
                    exp_min = z;
                }
                // ATen compares the signed value here.
                if v > exp_max {
                    exp_max = z;
                }
            }
        }
        exp_min = if exp_min != 0.0 {
            exp_min.log10().floor() + 1.0
        } else {
            1.0
        };
        exp_max = if exp_max != 0.0 {
            exp_max.log10().floor() + 1.0
        } else {
            1.0
        };
    }
    if int_mode {
        if exp_max > 9.0 {
            (1.0, 11, Style::Scientific)
        } else {
            (1.0, exp_max as usize + 1, Style::Default)
        }
    } else if exp_max - exp_min > 4.0 {
        let sz = if exp_max.abs() > 99.0 || exp_min.abs() > 99.0 {
            12
        } else {
            11
        };
        (1.0, sz, Style::Scientific)
    } else if !(0.0..=5.0).contains(&exp_max) {
        (10f64.powf(exp_max - 1.0), 7, Style::Fixed)
    } else {
        let sz = if exp_max == 0.0 {
            7
        } else {
            exp_max as usize + 6
        };
        (1.0, sz, Style::Fixed)
    }
}

fn print_scale(out: &mut String, scale: f64) {
    let _ = writeln!(out, "{} *", format_g(scale, 6));
}

fn print_matrix(
    out: &mut String,
    rows: usize,
    cols: usize,
    data: &[f64],
    linesize: usize,
    indent: usize,
) {
    let (scale, sz, style) = print_format(data);
    let per_line = ((linesize - indent) / (sz + 1)).max(1);
    let mut first = 0;
    while first < cols {
        let last = if first + per_line <= cols {
            first + per_line - 1
        } else {
            cols - 1
        };
        if per_line < cols {
            if first != 0 {
                out.push('\n');
            }
            let _ = write!(out, "Columns {} to {}", first + 1, last + 1);
            out.push_str(&" ".repeat(indent));
        }
        if scale != 1.0 {
            print_scale(out, scale);
            out.push_str(&" ".repeat(indent));
        }
        for l in 0..rows {
            for c in first..=last {
                let _ = write!(
                    out,
                    "{:>w$}",
                    fmt_num(data[l * cols + c] / scale, style),
                    w = sz
                );
                if c == last {
                    out.push('\n');
                    if l != rows - 1 {
                        out.push_str(&" ".repeat(indent));
                        if scale != 1.0 {
                            out.push(' ');
                        }
                    }
                } else {
                    out.push(' ');
                }
            }
        }
        first = last + 1;
    }
}

/// The tensor as `std::cout << tensor` prints it (linesize 80).
pub fn aten_string(t: &Tensor) -> String {
    let sizes: Vec<usize> = t.sizes().iter().map(|&s| s as usize).collect();
    let data = t.to_vec::<f64>();
    let tn = aten_type_name(t.dtype());
    let mut out = String::new();
    match sizes.len() {
        0 => {
            let _ = write!(
                out,
                "{}\n[ {tn}{{}}",
                format_g(data.first().copied().unwrap_or(0.0), 6)
            );
        }
        1 => {
            if !data.is_empty() {
                let (scale, sz, style) = print_format(&data);
                if scale != 1.0 {
                    print_scale(&mut out, scale);
                }
                for v in &data {
                    let _ = writeln!(out, "{:>w$}", fmt_num(v / scale, style), w = sz);
                }
            }
            let _ = write!(out, "[ {tn}{{{}}}", sizes[0]);
        }
        2 => {
            if !data.is_empty() {
                print_matrix(&mut out, sizes[0], sizes[1], &data, 80, 0);
            }
            let _ = write!(out, "[ {tn}{{{},{}}}", sizes[0], sizes[1]);
        }
        nd => {
            if !data.is_empty() {
                let (rows, cols) = (sizes[nd - 2], sizes[nd - 1]);
                let outer: Vec<usize> = sizes[..nd - 2].to_vec();
                let mat = rows * cols;
                let count: usize = outer.iter().product();
                let mut counter = vec![0usize; outer.len()];
                for k in 0..count {
                    if k > 0 {
                        out.push('\n');
                    }
                    out.push('(');
                    for c in &counter {
                        let _ = write!(out, "{},", c + 1);
                    }
                    out.push_str(".,.) = \n");
                    print_matrix(&mut out, rows, cols, &data[k * mat..(k + 1) * mat], 80, 1);
                    for d in (0..counter.len()).rev() {
                        counter[d] += 1;
                        if counter[d] < outer[d] {
                            break;
                        }
                        counter[d] = 0;
                    }
                }
            }
            let dims: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
            let _ = write!(out, "[ {tn}{{{}}}", dims.join(","));
        }
    }
    out.push_str(" ]");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_aten_output() {
        // Expected strings printed by PyTorch 2.15 (`print(x)` inside a scripted function, and
        // tensor constants in corpus/ir_optimized).
        let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        assert_eq!(aten_string(&t), " 1\n 2\n[ CPUFloatType{2} ]");
        let t = Tensor::from_vec(vec![0i64, 1, 2], &[3]).unwrap();
        assert_eq!(
            aten_string(&t).replace('\n', " "),
            " 0  1  2 [ CPULongType{3} ]"
        );
        let t = Tensor::from_vec(vec![0.0f32, 0.25, 0.5, 0.75, 1.0], &[5]).unwrap();
        assert_eq!(
            aten_string(&t).replace('\n', " "),
            " 0.0000  0.2500  0.5000  0.7500  1.0000 [ CPUFloatType{5} ]"
        );
        let t = Tensor::from_vec(vec![1.0f32, 0., 0., 0., 1., 0.], &[2, 3]).unwrap();
        assert_eq!(
            aten_string(&t).replace('\n', " "),
            " 1  0  0  0  1  0 [ CPUFloatType{2,3} ]"
        );
        let v: Vec<f32> = (0..12).map(|x| x as f32).collect();
        let t = Tensor::from_vec(v, &[2, 2, 3]).unwrap();
        assert_eq!(
            aten_string(&t),
            "(1,.,.) = \n 0  1  2\n  3  4  5\n\n(2,.,.) = \n  6   7   8\n   9  10  11\n[ CPUFloatType{2,2,3} ]"
        );
        let t = Tensor::from_vec(vec![1.5f32, 200000.0, 3.0, 4.0], &[2, 2]).unwrap();
        assert_eq!(
            aten_string(&t),
            " 1.5000e+00  2.0000e+05\n 3.0000e+00  4.0000e+00\n[ CPUFloatType{2,2} ]"
        );
        let t = Tensor::from_vec(vec![3.5f32], &[]).unwrap();
        assert_eq!(aten_string(&t), "3.5\n[ CPUFloatType{} ]");
        let v: Vec<f32> = (0..30).map(|x| x as f32).collect();
        let t = Tensor::from_vec(v, &[1, 30]).unwrap();
        let s = aten_string(&t);
        assert!(s.starts_with("Columns 1 to 20  0   1"), "{s}");
        assert!(s.contains("\n\nColumns 21 to 30 20  21"), "{s}");
    }
}
