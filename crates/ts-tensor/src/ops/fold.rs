//! `im2col` (`F.unfold`: sliding 2-d blocks as columns) and `col2im` (`F.fold`: columns summed
//! back into an image), on the convolution's patch kernels, with ATen's checks.

use crate::cpu::im2col::{col2im, im2col, Window};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The four 2-element window parameters, checked as ATen's `im2col_shape_check` does.
fn params(
    kernel: &[i64],
    dilation: &[i64],
    padding: &[i64],
    stride: &[i64],
) -> Result<[[i64; 2]; 4]> {
    let two = |v: &[i64], what: &str| -> Result<[i64; 2]> {
        if v.len() != 2 {
            return Err(Error::runtime(format!(
                "It is expected {what} equals to 2, but got size {}",
                v.len()
            )));
        }
        Ok([v[0], v[1]])
    };
    let k = two(kernel, "kernel_size")?;
    let d = two(dilation, "dilation")?;
    let p = two(padding, "padding")?;
    let s = two(stride, "stride")?;
    if k[0] <= 0 || k[1] <= 0 {
        return Err(Error::runtime(format!(
            "kernel size should be greater than zero, but got kernel_height: {} kernel_width: {}",
            k[0], k[1]
        )));
    }
    if d[0] <= 0 || d[1] <= 0 {
        return Err(Error::runtime(format!(
            "dilation should be greater than zero, but got dilation_height: {} dilation_width: {}",
            d[0], d[1]
        )));
    }
    if p[0] < 0 || p[1] < 0 {
        return Err(Error::runtime(format!(
            "padding should be non-negative, but got pad_height: {} pad_width: {}",
            p[0], p[1]
        )));
    }
    if s[0] <= 0 || s[1] <= 0 {
        return Err(Error::runtime(format!(
            "stride should be greater than zero, but got stride_height: {} stride_width: {}",
            s[0], s[1]
        )));
    }
    Ok([k, d, p, s])
}

/// Number of block positions along one axis.
fn blocks(len: i64, k: i64, d: i64, p: i64, s: i64) -> i64 {
    (len + 2 * p - (d * (k - 1) + 1)).div_euclid(s) + 1
}

/// Element type the fold kernels run in for `dt`.
fn work_dtype(dt: DType) -> Result<DType> {
    match dt {
        DType::Float32 | DType::Float64 => Ok(dt),
        DType::Float16 | DType::BFloat16 => Ok(DType::Float32),
        DType::Bool => Err(crate::cpu::dispatch::not_implemented("im2col", dt)),
        _ => Ok(DType::Int64),
    }
}

impl Tensor {
    /// `im2col(kernel_size, dilation, padding, stride)`: `[N, C, H, W]` (or `[C, H, W]`) to
    /// `[N, C * kh * kw, L]` columns, one per block position.
    pub fn im2col(
        &self,
        kernel_size: &[i64],
        dilation: &[i64],
        padding: &[i64],
        stride: &[i64],
    ) -> Result<Tensor> {
        let [k, d, p, s] = params(kernel_size, dilation, padding, stride)?;
        let nd = self.dim();
        let sz = self.sizes();
        if (nd != 3 && nd != 4) || sz[nd - 3..].contains(&0) {
            return Err(Error::runtime(format!(
                "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {:?}",
                sz.as_slice()
            )));
        }
        let batched = nd == 4;
        let x = if batched {
            self.clone()
        } else {
            self.unsqueeze(0)?
        };
        let xs = x.sizes();
        let (n, c, h, w) = (xs[0], xs[1], xs[2], xs[3]);
        let (oh, ow) = (
            blocks(h, k[0], d[0], p[0], s[0]),
            blocks(w, k[1], d[1], p[1], s[1]),
        );
        if oh < 1 || ow < 1 {
            return Err(Error::runtime(format!(
                "Given input with spatial size ({h}, {w}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), calculated shape of the array of sliding blocks as ({oh}, {ow}), but its components must be at least one.",
                k[0], k[1], d[0], d[1], p[0], p[1]
            )));
        }
        let win = Window {
            h: h as usize,
            w: w as usize,
            kh: k[0] as usize,
            kw: k[1] as usize,
            sh: s[0] as usize,
            sw: s[1] as usize,
            ph: p[0] as usize,
            pw: p[1] as usize,
            dh: d[0] as usize,
            dw: d[1] as usize,
            oh: oh as usize,
            ow: ow as usize,
        };
        let shape = [n, c * k[0] * k[1], oh * ow];
        let dt = self.dtype();
        let wt = work_dtype(dt)?;
        let (nu, cu) = (n as usize, c as usize);
        macro_rules! run {
            ($T:ty) => {{
                let v = x.contiguous_vec::<$T>()?;
                let mut out = vec![<$T>::default(); (shape[0] * shape[1] * shape[2]) as usize];
                im2col(&v, nu, cu, 0, cu, &win, &mut out);
                Tensor::from_vec(out, &shape)?
            }};
        }
        let out = match wt {
            DType::Float32 => run!(f32),
            DType::Float64 => run!(f64),
            _ => run!(i64),
        };
        let out = out.to_dtype(dt, false)?;
        if batched {
            Ok(out)
        } else {
            out.squeeze_dim(0)
        }
    }

    /// `col2im(output_size, kernel_size, dilation, padding, stride)`: `[N, C * kh * kw, L]` (or
    /// unbatched) columns summed into `[N, C, *output_size]`.
    pub fn col2im(
        &self,
        output_size: &[i64],
        kernel_size: &[i64],
        dilation: &[i64],
        padding: &[i64],
        stride: &[i64],
    ) -> Result<Tensor> {
        let [k, d, p, s] = params(kernel_size, dilation, padding, stride)?;
        if output_size.len() != 2 {
            return Err(Error::runtime(format!(
                "It is expected output_size equals to 2, but got size {}",
                output_size.len()
            )));
        }
        let (oh, ow) = (output_size[0], output_size[1]);
        if oh <= 0 || ow <= 0 {
            return Err(Error::runtime(format!(
                "Expected output spatial size to be positive, but got: output_size=({oh}, {ow})"
            )));
        }
        let nd = self.dim();
        let sz = self.sizes();
        if (nd != 2 && nd != 3) || sz[nd - 2..].contains(&0) {
            return Err(Error::runtime(format!(
                "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: {:?}",
                sz.as_slice()
            )));
        }
        let batched = nd == 3;
        let x = if batched {
            self.clone()
        } else {
            self.unsqueeze(0)?
        };
        let xs = x.sizes();
        let kk = k[0] * k[1];
        if xs[1] % kk != 0 {
            return Err(Error::runtime(format!(
                "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={} and kernel_size=({}, {})",
                xs[1], k[0], k[1]
            )));
        }
        let (bh, bw) = (
            blocks(oh, k[0], d[0], p[0], s[0]),
            blocks(ow, k[1], d[1], p[1], s[1]),
        );
        if bh < 1 || bw < 1 || xs[2] != bh * bw {
            return Err(Error::runtime(format!(
                "Given output_size=({oh}, {ow}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), stride=({}, {}), expected size of input's dimension 2 to match the calculated number of sliding blocks {bh} * {bw} = {}, but got input.size(2)={}.",
                k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], bh * bw, xs[2]
            )));
        }
        let (n, c) = (xs[0], xs[1] / kk);
        // The transposed-convolution fold: "input" positions are the blocks.
        let win = Window {
            h: bh as usize,
            w: bw as usize,
            kh: k[0] as usize,
            kw: k[1] as usize,
            sh: s[0] as usize,
            sw: s[1] as usize,
            ph: p[0] as usize,
            pw: p[1] as usize,
            dh: d[0] as usize,
            dw: d[1] as usize,
            oh: oh as usize,
            ow: ow as usize,
        };
        let shape = [n, c, oh, ow];
        let dt = self.dtype();
        let wt = work_dtype(dt)?;
        macro_rules! run {
            ($T:ty) => {{
                let v = x.contiguous_vec::<$T>()?;
                Tensor::from_vec(col2im(&v, n as usize, c as usize, &win), &shape)?
            }};
        }
        let out = match wt {
            DType::Float32 => run!(f32),
            DType::Float64 => run!(f64),
            _ => run!(i64),
        };
        let out = out.to_dtype(dt, false)?;
        if batched {
            Ok(out)
        } else {
            out.squeeze_dim(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfold_then_fold_counts_overlaps() {
        let x = Tensor::from_vec(vec![1f32; 9], &[1, 1, 3, 3]).unwrap();
        let cols = x.im2col(&[2, 2], &[1, 1], &[0, 0], &[1, 1]).unwrap();
        assert_eq!(cols.sizes().as_slice(), &[1, 4, 4]);
        let back = cols
            .col2im(&[3, 3], &[2, 2], &[1, 1], &[0, 0], &[1, 1])
            .unwrap();
        assert_eq!(
            back.to_vec::<f32>(),
            vec![1., 2., 1., 2., 4., 2., 1., 2., 1.]
        );
        assert!(cols
            .col2im(&[4, 4], &[2, 2], &[1, 1], &[0, 0], &[1, 1])
            .is_err());
    }
}
