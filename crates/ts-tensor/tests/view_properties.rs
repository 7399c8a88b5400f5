//! Property tests: after any in-place write through a chain of views, the base and every other
//! view agree with a copy-based model; broadcasting agrees with explicit index arithmetic.

use proptest::prelude::*;
use ts_tensor::{Scalar, Tensor};

/// Model of a view: for every element (row-major), the index of the base element it aliases.
#[derive(Clone, Debug)]
struct Model {
    shape: Vec<usize>,
    base_idx: Vec<usize>,
}

impl Model {
    fn base(shape: &[usize]) -> Model {
        let n = shape.iter().product();
        Model {
            shape: shape.to_vec(),
            base_idx: (0..n).collect(),
        }
    }

    fn strides(shape: &[usize]) -> Vec<usize> {
        let mut s = vec![1; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1];
        }
        s
    }

    /// Builds a new view whose element at coordinates `c` is the old element at `f(c)`.
    fn remap(&self, shape: Vec<usize>, f: impl Fn(&[usize]) -> Vec<usize>) -> Model {
        let n: usize = shape.iter().product();
        let old = Self::strides(&self.shape);
        let new = Self::strides(&shape);
        let mut base_idx = Vec::with_capacity(n);
        for flat in 0..n {
            let c: Vec<usize> = new
                .iter()
                .zip(&shape)
                .map(|(&st, &sz)| (flat / st) % sz)
                .collect();
            let oc = f(&c);
            let of: usize = oc.iter().zip(&old).map(|(a, b)| a * b).sum();
            base_idx.push(self.base_idx[of]);
        }
        Model { shape, base_idx }
    }
}

/// A view operation applied both to a tensor and to the model.
#[derive(Clone, Debug)]
enum ViewOp {
    Transpose(usize, usize),
    Slice {
        dim: usize,
        start: usize,
        len: usize,
        step: usize,
    },
    Select {
        dim: usize,
        index: usize,
    },
    Unsqueeze(usize),
    Flip2,
    Diagonal,
}

fn apply(t: &Tensor, m: &Model, op: &ViewOp) -> Option<(Tensor, Model)> {
    let nd = m.shape.len();
    match *op {
        ViewOp::Transpose(a, b) => {
            if nd == 0 {
                return None;
            }
            let (a, b) = (a % nd, b % nd);
            let mut shape = m.shape.clone();
            shape.swap(a, b);
            let mm = m.remap(shape, |c| {
                let mut o = c.to_vec();
                o.swap(a, b);
                o
            });
            Some((t.transpose(a as i64, b as i64).ok()?, mm))
        }
        ViewOp::Slice {
            dim,
            start,
            len,
            step,
        } => {
            if nd == 0 {
                return None;
            }
            let d = dim % nd;
            let size = m.shape[d];
            let start = start.min(size);
            let end = (start + len).min(size);
            let step = step.max(1);
            let n = (end - start).div_ceil(step);
            let mut shape = m.shape.clone();
            shape[d] = n;
            let mm = m.remap(shape, |c| {
                let mut o = c.to_vec();
                o[d] = start + c[d] * step;
                o
            });
            Some((
                t.slice(d as i64, Some(start as i64), Some(end as i64), step as i64)
                    .ok()?,
                mm,
            ))
        }
        ViewOp::Select { dim, index } => {
            if nd == 0 {
                return None;
            }
            let d = dim % nd;
            if m.shape[d] == 0 {
                return None;
            }
            let i = index % m.shape[d];
            let mut shape = m.shape.clone();
            shape.remove(d);
            let mm = m.remap(shape, |c| {
                let mut o = c.to_vec();
                o.insert(d, i);
                o
            });
            Some((t.select(d as i64, i as i64).ok()?, mm))
        }
        ViewOp::Unsqueeze(d) => {
            if nd >= 4 {
                return None;
            }
            let d = d % (nd + 1);
            let mut shape = m.shape.clone();
            shape.insert(d, 1);
            let mm = m.remap(shape, |c| {
                let mut o = c.to_vec();
                o.remove(d);
                o
            });
            Some((t.unsqueeze(d as i64).ok()?, mm))
        }
        ViewOp::Flip2 => {
            // permute reversing all dimensions
            let perm: Vec<i64> = (0..nd as i64).rev().collect();
            let shape: Vec<usize> = m.shape.iter().rev().copied().collect();
            let mm = m.remap(shape, |c| c.iter().rev().copied().collect());
            Some((t.permute(&perm).ok()?, mm))
        }
        ViewOp::Diagonal => {
            if nd < 2 {
                return None;
            }
            let n = m.shape[0].min(m.shape[1]);
            let mut shape: Vec<usize> = m.shape[2..].to_vec();
            shape.push(n);
            let mm = m.remap(shape, |c| {
                let k = c[c.len() - 1];
                let mut o = vec![k, k];
                o.extend_from_slice(&c[..c.len() - 1]);
                o
            });
            Some((t.diagonal(0, 0, 1).ok()?, mm))
        }
    }
}

fn view_op() -> impl Strategy<Value = ViewOp> {
    prop_oneof![
        (0usize..4, 0usize..4).prop_map(|(a, b)| ViewOp::Transpose(a, b)),
        (0usize..4, 0usize..5, 0usize..5, 1usize..3).prop_map(|(dim, start, len, step)| {
            ViewOp::Slice {
                dim,
                start,
                len,
                step,
            }
        }),
        (0usize..4, 0usize..5).prop_map(|(dim, index)| ViewOp::Select { dim, index }),
        (0usize..4).prop_map(ViewOp::Unsqueeze),
        Just(ViewOp::Flip2),
        Just(ViewOp::Diagonal),
    ]
}

/// An in-place write through a view.
#[derive(Clone, Debug)]
enum Write {
    Fill(i32),
    AddScalar(i32),
    MulScalar(i32),
    AddSelf,
    Neg,
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        (-5i32..5).prop_map(Write::Fill),
        (-5i32..5).prop_map(Write::AddScalar),
        (-3i32..3).prop_map(Write::MulScalar),
        Just(Write::AddSelf),
        Just(Write::Neg),
    ]
}

fn build(shape: &[usize], ops: &[ViewOp]) -> (Tensor, Tensor, Model) {
    let n: usize = shape.iter().product();
    let dims: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
    let base = Tensor::from_vec((0..n).map(|i| i as f64).collect::<Vec<_>>(), &dims).unwrap();
    let mut t = base.clone();
    let mut m = Model::base(shape);
    for op in ops {
        if let Some((t2, m2)) = apply(&t, &m, op) {
            t = t2;
            m = m2;
        }
    }
    (base, t, m)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn writes_through_views_match_model(
        shape in prop::collection::vec(1usize..5, 1..4),
        ops in prop::collection::vec(view_op(), 0..5),
        other_ops in prop::collection::vec(view_op(), 0..4),
        w in write(),
    ) {
        let (base, view, model) = build(&shape, &ops);
        // The view reads what the model says.
        let n: usize = shape.iter().product();
        let mut vals: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let got = view.to_vec::<f64>();
        let want: Vec<f64> = model.base_idx.iter().map(|&i| vals[i]).collect();
        prop_assert_eq!(&got, &want);
        // Apply the write to the tensor and to the model (elements are distinct base positions
        // unless a view repeats them, which these ops never do).
        let r = match &w {
            Write::Fill(v) => view.fill_(Scalar::Int(*v as i64)),
            Write::AddScalar(v) => view.add_scalar_(Scalar::Int(*v as i64), Scalar::Int(1)),
            Write::MulScalar(v) => view.mul_scalar_(Scalar::Int(*v as i64)),
            Write::AddSelf => view.add_(&view, Scalar::Int(1)),
            Write::Neg => view.neg_(),
        };
        prop_assert!(r.is_ok(), "write failed: {:?}", r);
        for &i in &model.base_idx {
            vals[i] = match &w {
                Write::Fill(v) => *v as f64,
                Write::AddScalar(v) => vals[i] + *v as f64,
                Write::MulScalar(v) => vals[i] * *v as f64,
                Write::AddSelf => vals[i] * 2.0,
                Write::Neg => -vals[i],
            };
        }
        prop_assert_eq!(base.to_vec::<f64>(), vals.clone());
        // Another view of the same base sees the update.
        let mut t2 = base.clone();
        let mut m2 = Model::base(&shape);
        for op in &other_ops {
            if let Some((a, b)) = apply(&t2, &m2, op) {
                t2 = a;
                m2 = b;
            }
        }
        let want2: Vec<f64> = m2.base_idx.iter().map(|&i| vals[i]).collect();
        prop_assert_eq!(t2.to_vec::<f64>(), want2);
    }

    #[test]
    fn copy_between_views_matches_model(
        shape in prop::collection::vec(1usize..5, 1..4),
        ops in prop::collection::vec(view_op(), 0..5),
    ) {
        let (base, view, model) = build(&shape, &ops);
        let src_vals: Vec<f64> = (0..model.base_idx.len()).map(|i| 100.0 + i as f64).collect();
        let dims: Vec<i64> = model.shape.iter().map(|&s| s as i64).collect();
        let src = Tensor::from_vec(src_vals.clone(), &dims).unwrap().to_dtype(ts_tensor::DType::Float32, false).unwrap();
        view.copy_(&src).unwrap();
        let n: usize = shape.iter().product();
        let mut vals: Vec<f64> = (0..n).map(|i| i as f64).collect();
        for (k, &i) in model.base_idx.iter().enumerate() {
            vals[i] = src_vals[k];
        }
        prop_assert_eq!(base.to_vec::<f64>(), vals);
    }

    #[test]
    fn broadcasting_matches_index_arithmetic(
        out in prop::collection::vec(1usize..4, 0..4),
        mask_a in prop::collection::vec(any::<bool>(), 4),
        mask_b in prop::collection::vec(any::<bool>(), 4),
        drop_a in 0usize..3,
        drop_b in 0usize..3,
    ) {
        // Derive two shapes that broadcast to `out`.
        let derive = |mask: &[bool], drop: usize| -> Vec<usize> {
            let s: Vec<usize> = out.iter().enumerate().map(|(i, &d)| if mask[i] { 1 } else { d }).collect();
            s[drop.min(s.len())..].to_vec()
        };
        let sa = derive(&mask_a, drop_a);
        let sb = derive(&mask_b, drop_b);
        let mk = |s: &[usize], off: f64| {
            let n: usize = s.iter().product();
            let d: Vec<i64> = s.iter().map(|&x| x as i64).collect();
            Tensor::from_vec((0..n).map(|i| off + i as f64).collect::<Vec<_>>(), &d).unwrap()
        };
        let a = mk(&sa, 0.0);
        let b = mk(&sb, 1000.0);
        let r = a.add(&b, Scalar::Int(1)).unwrap();
        // Expected shape: the broadcast of sa and sb.
        let nd = sa.len().max(sb.len());
        let mut shape = vec![1usize; nd];
        for i in 0..nd {
            let x = if i + sa.len() >= nd { sa[i + sa.len() - nd] } else { 1 };
            let y = if i + sb.len() >= nd { sb[i + sb.len() - nd] } else { 1 };
            shape[i] = x.max(y);
        }
        prop_assert_eq!(r.sizes().iter().map(|&x| x as usize).collect::<Vec<_>>(), shape.clone());
        let n: usize = shape.iter().product();
        let st = Model::strides(&shape);
        let flat = |s: &[usize], c: &[usize]| -> usize {
            let ss = Model::strides(s);
            let off = c.len() - s.len();
            s.iter().enumerate().map(|(i, &d)| if d == 1 { 0 } else { c[i + off] * ss[i] }).sum()
        };
        let want: Vec<f64> = (0..n).map(|k| {
            let c: Vec<usize> = st.iter().zip(&shape).map(|(&s, &d)| (k / s) % d).collect();
            flat(&sa, &c) as f64 + 1000.0 + flat(&sb, &c) as f64
        }).collect();
        prop_assert_eq!(r.to_vec::<f64>(), want);
    }

    #[test]
    fn incompatible_shapes_report_the_dimension(x in 2i64..6, y in 2i64..6, lead in 0usize..3) {
        prop_assume!(x != y);
        let mut sa = vec![1i64; lead];
        sa.push(x);
        let a = Tensor::zeros(&sa, ts_tensor::DType::Float32).unwrap();
        let b = Tensor::zeros(&[y], ts_tensor::DType::Float32).unwrap();
        let e = a.mul(&b).unwrap_err();
        prop_assert_eq!(
            e.message,
            format!("The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {lead}")
        );
    }

    #[test]
    fn reshape_is_a_view_exactly_when_strides_allow(
        shape in prop::collection::vec(1usize..4, 1..4),
        ops in prop::collection::vec(view_op(), 0..3),
    ) {
        let (_, view, model) = build(&shape, &ops);
        let n = model.base_idx.len() as i64;
        let flat = view.reshape(&[n]).unwrap();
        let vals: Vec<f64> = model.base_idx.iter().map(|&i| i as f64).collect();
        prop_assert_eq!(flat.to_vec::<f64>(), vals);
        match view.view(&[n]) {
            Ok(v) => prop_assert!(ts_tensor::Storage::ptr_eq(&v.storage(), &view.storage())),
            Err(e) => {
                prop_assert!(e.message.starts_with("view size is not compatible"));
                prop_assert!(!view.is_contiguous());
            }
        }
    }
}
