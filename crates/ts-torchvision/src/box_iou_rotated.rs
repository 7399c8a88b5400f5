//! `torchvision::box_iou_rotated`: IoU of rotated boxes `(x_center, y_center, w, h, angle°)`.
//!
//! The intersection polygon is found as torchvision (after Detectron2) does: edge
//! intersections and contained corners with a small tolerance, ordered by a Graham scan, and
//! its area summed as a triangle fan. Coordinates are first shifted by the two centres' mean
//! for precision. Computed in the boxes' dtype; the result is always float32.

use ts_tensor::{DType, Error, Tensor};

use crate::real::{check, d, not_floating, r, Real};

/// The `[N, M]` matrix of IoUs between `boxes1` (`[N, 5]`) and `boxes2` (`[M, 5]`).
pub fn box_iou_rotated(boxes1: &Tensor, boxes2: &Tensor) -> Result<Tensor, Error> {
    for (name, b) in [("boxes1", boxes1), ("boxes2", boxes2)] {
        let s = b.sizes();
        check(b.dim() == 2 && s[1] == 5, || {
            let letter = if name == "boxes1" { "N" } else { "M" };
            format!("{name} should have shape ({letter}, 5), got {:?}", &s[..])
        })?;
    }
    check(boxes1.dtype() == boxes2.dtype(), || {
        "boxes1 and boxes2 must have the same dtype".to_string()
    })?;
    let (n, m) = (boxes1.sizes()[0], boxes2.sizes()[0]);
    if n == 0 || m == 0 {
        return Tensor::zeros(&[n, m], DType::Float32);
    }
    let ious: Vec<f32> = match boxes1.dtype() {
        DType::Float32 => all_pairs::<f32>(boxes1, boxes2),
        DType::Float64 => all_pairs::<f64>(boxes1, boxes2),
        _ => return Err(not_floating("box_iou_rotated_cpu", boxes1)),
    };
    Tensor::from_vec(ious, &[n, m])
}

fn all_pairs<T: Real>(boxes1: &Tensor, boxes2: &Tensor) -> Vec<f32> {
    let a = boxes1.to_vec::<T>();
    let b = boxes2.to_vec::<T>();
    let mut out = Vec::with_capacity(a.len() / 5 * (b.len() / 5));
    for x in a.chunks_exact(5) {
        for y in b.chunks_exact(5) {
            out.push(d(single_iou(x, y)) as f32);
        }
    }
    out
}

#[derive(Clone, Copy, Debug, Default)]
struct Point<T> {
    x: T,
    y: T,
}

impl<T: Real> Point<T> {
    fn new(x: T, y: T) -> Self {
        Point { x, y }
    }
    fn add(self, o: Self) -> Self {
        Point::new(self.x + o.x, self.y + o.y)
    }
    fn sub(self, o: Self) -> Self {
        Point::new(self.x - o.x, self.y - o.y)
    }
    fn scale(self, c: T) -> Self {
        Point::new(self.x * c, self.y * c)
    }
}

fn dot<T: Real>(a: Point<T>, b: Point<T>) -> T {
    a.x * b.x + a.y * b.y
}

fn cross<T: Real>(a: Point<T>, b: Point<T>) -> T {
    a.x * b.y - b.x * a.y
}

struct RotatedBox<T> {
    x: T,
    y: T,
    w: T,
    h: T,
    a: T,
}

fn vertices<T: Real>(b: &RotatedBox<T>) -> [Point<T>; 4] {
    let theta = d(b.a) * 0.01745329251;
    let half = r::<T>(0.5);
    let cos2 = r::<T>(theta.cos()) * half;
    let sin2 = r::<T>(theta.sin()) * half;
    let two = r::<T>(2.0);
    let p0 = Point::new(b.x + sin2 * b.h + cos2 * b.w, b.y + cos2 * b.h - sin2 * b.w);
    let p1 = Point::new(b.x - sin2 * b.h + cos2 * b.w, b.y - cos2 * b.h - sin2 * b.w);
    let p2 = Point::new(two * b.x - p0.x, two * b.y - p0.y);
    let p3 = Point::new(two * b.x - p1.x, two * b.y - p1.y);
    [p0, p1, p2, p3]
}

const EPS: f64 = 1e-5;

/// Corners of one box inside the other (by projection onto two of its edges).
fn push_contained<T: Real>(inner: &[Point<T>; 4], outer: &[Point<T>; 4], out: &mut Vec<Point<T>>) {
    let ab = outer[1].sub(outer[0]);
    let da = outer[0].sub(outer[3]);
    let ab_ab = d(dot(ab, ab));
    let ad_ad = d(dot(da, da));
    for p in inner {
        let ap = p.sub(outer[0]);
        let ap_ab = d(dot(ap, ab));
        let ap_ad = -d(dot(ap, da));
        if ap_ab > -EPS && ap_ad > -EPS && ap_ab < ab_ab + EPS && ap_ad < ad_ad + EPS {
            out.push(*p);
        }
    }
}

fn intersection_points<T: Real>(p1: &[Point<T>; 4], p2: &[Point<T>; 4]) -> Vec<Point<T>> {
    let v1: Vec<Point<T>> = (0..4).map(|i| p1[(i + 1) % 4].sub(p1[i])).collect();
    let v2: Vec<Point<T>> = (0..4).map(|i| p2[(i + 1) % 4].sub(p2[i])).collect();
    let mut out = Vec::with_capacity(24);
    for i in 0..4 {
        for j in 0..4 {
            let det = cross(v2[j], v1[i]);
            if d(det).abs() <= 1e-14 {
                continue;
            }
            let v12 = p2[j].sub(p1[i]);
            let t1 = cross(v2[j], v12) / det;
            let t2 = cross(v1[i], v12) / det;
            let (t1d, t2d) = (d(t1), d(t2));
            if t1d > -EPS && t1d < 1.0 + EPS && t2d > -EPS && t2d < 1.0 + EPS {
                out.push(p1[i].add(v1[i].scale(t1)));
            }
        }
    }
    push_contained(p1, p2, &mut out);
    push_contained(p2, p1, &mut out);
    out
}

/// The convex hull of `p` (Graham scan), shifted so that its lowest point is the origin.
fn convex_hull<T: Real>(p: &[Point<T>]) -> Vec<Point<T>> {
    let n = p.len();
    let mut t = 0;
    for i in 1..n {
        if p[i].y < p[t].y || (p[i].y == p[t].y && p[i].x < p[t].x) {
            t = i;
        }
    }
    let start = p[t];
    let mut q: Vec<Point<T>> = p.iter().map(|&v| v.sub(start)).collect();
    q.swap(0, t);
    let mut dist: Vec<T> = q.iter().map(|&v| dot(v, v)).collect();
    for i in 1..n.saturating_sub(1) {
        for j in i + 1..n {
            let c = d(cross(q[i], q[j]));
            if c < -1e-6 || (c.abs() < 1e-6 && dist[i] > dist[j]) {
                q.swap(i, j);
                dist.swap(i, j);
            }
        }
    }
    for i in 0..n {
        dist[i] = dot(q[i], q[i]);
    }
    let Some(k) = (1..n).find(|&k| d(dist[k]) > 1e-8) else {
        return vec![start];
    };
    q[1] = q[k];
    let mut m = 2;
    for i in k + 1..n {
        while m > 1 {
            let q1 = q[i].sub(q[m - 2]);
            let q2 = q[m - 1].sub(q[m - 2]);
            if q1.x * q2.y >= q2.x * q1.y {
                m -= 1;
            } else {
                break;
            }
        }
        q[m] = q[i];
        m += 1;
    }
    q.truncate(m);
    q
}

fn polygon_area<T: Real>(q: &[Point<T>]) -> T {
    if q.len() <= 2 {
        return T::zero();
    }
    let mut area = T::zero();
    for i in 1..q.len() - 1 {
        area += cross(q[i].sub(q[0]), q[i + 1].sub(q[0])).abs();
    }
    r(d(area) / 2.0)
}

fn single_iou<T: Real>(a: &[T], b: &[T]) -> T {
    let shift_x = d(a[0] + b[0]) / 2.0;
    let shift_y = d(a[1] + b[1]) / 2.0;
    let make = |v: &[T]| RotatedBox {
        x: r::<T>(d(v[0]) - shift_x),
        y: r::<T>(d(v[1]) - shift_y),
        w: v[2],
        h: v[3],
        a: v[4],
    };
    let (b1, b2) = (make(a), make(b));
    let area1 = b1.w * b1.h;
    let area2 = b2.w * b2.h;
    if d(area1) < 1e-14 || d(area2) < 1e-14 {
        return T::zero();
    }
    let pts = intersection_points(&vertices(&b1), &vertices(&b2));
    let inter = if pts.len() <= 2 {
        T::zero()
    } else {
        polygon_area(&convex_hull(&pts))
    };
    inter / (area1 + area2 - inter)
}
