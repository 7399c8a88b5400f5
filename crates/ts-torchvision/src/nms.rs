//! `torchvision::nms`: greedy non-maximum suppression of `(x1, y1, x2, y2)` boxes.

use std::cmp::Ordering;

use ts_tensor::{DType, Error, Tensor};

use crate::real::{check, d, not_floating, Real};

/// The indices of the boxes kept, by decreasing score: each box suppresses every later one
/// whose IoU with it exceeds `iou_threshold`. Areas and overlaps are computed in the boxes'
/// dtype, as torchvision's CPU kernel does.
pub fn nms(dets: &Tensor, scores: &Tensor, iou_threshold: f64) -> Result<Tensor, Error> {
    check(dets.dim() == 2, || {
        format!("boxes should be a 2d tensor, got {}D", dets.dim())
    })?;
    let ds = dets.sizes();
    check(ds[1] == 4, || {
        format!("boxes should have 4 elements in dimension 1, got {}", ds[1])
    })?;
    check(scores.dim() == 1, || {
        format!("scores should be a 1d tensor, got {}D", scores.dim())
    })?;
    let n = scores.sizes()[0];
    check(ds[0] == n, || {
        format!(
            "boxes and scores should have same number of elements in dimension 0, got {} and {n}",
            ds[0]
        )
    })?;
    let keep = match dets.dtype() {
        DType::Float32 => keep_of::<f32>(dets, scores, iou_threshold)?,
        DType::Float64 => keep_of::<f64>(dets, scores, iou_threshold)?,
        _ => return Err(not_floating("nms_kernel", dets)),
    };
    let len = keep.len() as i64;
    Tensor::from_vec(keep, &[len])
}

fn keep_of<T: Real>(dets: &Tensor, scores: &Tensor, iou_threshold: f64) -> Result<Vec<i64>, Error> {
    check(dets.dtype() == scores.dtype(), || {
        "dets should have the same type as scores".to_string()
    })?;
    if dets.numel() == 0 {
        return Ok(Vec::new());
    }
    Ok(suppress(
        &dets.to_vec::<T>(),
        &scores.to_vec::<T>(),
        iou_threshold,
    ))
}

/// Indices sorted by descending score; NaN sorts first (as the largest), ties keep index order.
pub(crate) fn order_descending<T: Real>(scores: &[T]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (scores[a], scores[b]);
        match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => y.partial_cmp(&x).unwrap_or(Ordering::Equal),
        }
    });
    order
}

fn suppress<T: Real>(boxes: &[T], scores: &[T], iou_threshold: f64) -> Vec<i64> {
    let n = scores.len();
    let coord = |i: usize, k: usize| boxes[i * 4 + k];
    let areas: Vec<T> = (0..n)
        .map(|i| (coord(i, 2) - coord(i, 0)) * (coord(i, 3) - coord(i, 1)))
        .collect();
    let order = order_descending(scores);
    let mut suppressed = vec![false; n];
    let mut keep = Vec::new();
    let zero = T::zero();
    for (pos, &i) in order.iter().enumerate() {
        if suppressed[i] {
            continue;
        }
        keep.push(i as i64);
        let (ix1, iy1, ix2, iy2) = (coord(i, 0), coord(i, 1), coord(i, 2), coord(i, 3));
        for &j in &order[pos + 1..] {
            if suppressed[j] {
                continue;
            }
            let xx1 = max(ix1, coord(j, 0));
            let yy1 = max(iy1, coord(j, 1));
            let xx2 = min(ix2, coord(j, 2));
            let yy2 = min(iy2, coord(j, 3));
            let w = max(zero, xx2 - xx1);
            let h = max(zero, yy2 - yy1);
            let inter = w * h;
            let ovr = inter / (areas[i] + areas[j] - inter);
            if d(ovr) > iou_threshold {
                suppressed[j] = true;
            }
        }
    }
    keep
}

/// `std::max(a, b)`: `a` unless `a < b` (so a NaN first argument is kept).
pub(crate) fn max<T: Real>(a: T, b: T) -> T {
    if a < b {
        b
    } else {
        a
    }
}

/// `std::min(a, b)`: `a` unless `b < a`.
pub(crate) fn min<T: Real>(a: T, b: T) -> T {
    if b < a {
        b
    } else {
        a
    }
}
