//! Tensor-level tests against values torch 2.15 computed (hard-coded; torch is not needed to
//! run them): batch dimensions, empty and singular inputs, non-square shapes, error messages.

use crate::dtype::DType;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

use super::functions::{linalg_multi_dot, MatrixNormOrd};

fn t(v: &[f32], s: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), s).unwrap()
}

fn close(a: &Tensor, want: &[f64]) {
    let got = a.to_vec::<f64>();
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (x, y) in got.iter().zip(want) {
        assert!(
            (x - y).abs() <= 1e-5 + 1e-4 * y.abs(),
            "{got:?} vs {want:?}"
        );
    }
}

fn batch() -> Tensor {
    t(
        &[
            4., 1., 2., 1., 3., 0., 2., 0., 5., 2., -1., 0., -1., 2., -1., 0., -1., 2.,
        ],
        &[2, 3, 3],
    )
}

#[test]
fn determinants_inverses_and_solves() {
    let a = batch();
    close(&a.linalg_det().unwrap(), &[43.0, 4.0]);
    let (s, l) = t(&[0., 1., 1., 0.], &[2, 2]).linalg_slogdet().unwrap();
    close(&s, &[-1.0]);
    close(&l, &[0.0]);
    let inv = a.select(0, 1).unwrap().linalg_inv().unwrap();
    close(&inv, &[0.75, 0.5, 0.25, 0.5, 1.0, 0.5, 0.25, 0.5, 0.75]);
    let b = t(&[1., 2., 3.], &[3, 1]);
    let x = a.linalg_solve(&b, true).unwrap();
    assert_eq!(x.sizes().as_slice(), &[2, 3, 1]);
    close(&x, &[-0.3023256, 0.7674419, 0.7209302, 2.5, 4.0, 3.5]);
    let xr = a
        .select(0, 0)
        .unwrap()
        .linalg_solve(&t(&[1., 2., 3.], &[1, 3]), false)
        .unwrap();
    close(&xr, &[-0.3023256, 0.7674419, 0.7209302]);
    // Empty batches and 0x0 matrices.
    let e = Tensor::zeros(&[0, 0], DType::Float32).unwrap();
    close(&e.linalg_det().unwrap(), &[1.0]);
    assert_eq!(
        Tensor::zeros(&[0, 5, 5], DType::Float32)
            .unwrap()
            .linalg_inv()
            .unwrap()
            .sizes()
            .as_slice(),
        &[0, 5, 5]
    );
    // Singular and ill-shaped inputs raise ATen's messages; the _ex variants report info.
    let z = Tensor::zeros(&[2, 2], DType::Float32).unwrap();
    assert_eq!(
        z.linalg_solve(&t(&[1., 1.], &[2]), true)
            .unwrap_err()
            .message,
        "torch.linalg.solve: The solver failed because the input matrix is singular."
    );
    let sing = t(&[1., 2., 2., 4.], &[2, 2]);
    assert_eq!(
        sing.linalg_inv().unwrap_err().message,
        "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is singular."
    );
    assert_eq!(
        sing.linalg_inv_ex(false).unwrap().1.to_vec::<i32>(),
        vec![2]
    );
    assert_eq!(
        z.expand(&[3, 2, 2], false).unwrap().linalg_inv().unwrap_err().message,
        "linalg.inv: (Batch element 0): The diagonal element 1 is zero, the inversion could not be completed because the input matrix is singular."
    );
    assert_eq!(
        t(&[1.; 6], &[2, 3]).linalg_inv().unwrap_err().message,
        "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"
    );
    let ints = Tensor::from_vec(vec![1i64, 0, 0, 1], &[2, 2]).unwrap();
    assert_eq!(
        ints.linalg_inv().unwrap_err().message,
        "linalg.inv: Expected a floating point or complex tensor as input. Got Long"
    );
}

#[test]
fn factorizations() {
    let a = batch().select(0, 0).unwrap();
    close(
        &a.linalg_cholesky(false).unwrap(),
        &[
            2.0,
            0.0,
            0.0,
            0.5,
            1.6583124,
            0.0,
            1.0,
            -0.30151135,
            1.9771421,
        ],
    );
    close(
        &a.linalg_cholesky(true).unwrap(),
        &[
            2.0,
            0.5,
            1.0,
            0.0,
            1.6583124,
            -0.30151135,
            0.0,
            0.0,
            1.9771421,
        ],
    );
    assert_eq!(
        t(&[1., 2., 2., 4.], &[2, 2]).linalg_cholesky(false).unwrap_err().message,
        "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order 2 is not positive-definite)."
    );
    let (p, l, u) = t(&[1., 2., 3., 4., 5., 6.], &[3, 2])
        .linalg_lu(true)
        .unwrap();
    close(&p, &[0., 1., 0., 0., 0., 1., 1., 0., 0.]);
    close(&l, &[1.0, 0.0, 0.2, 1.0, 0.6, 0.5]);
    close(&u, &[5.0, 6.0, 0.0, 0.8]);
    // Q R reproduces the input for every mode's shapes.
    let m = t(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
    let (q, r) = m.linalg_qr("complete").unwrap();
    assert_eq!(
        (q.sizes().to_vec(), r.sizes().to_vec()),
        (vec![3, 3], vec![3, 2])
    );
    close(&q.matmul(&r).unwrap(), &[1., 2., 3., 4., 5., 6.]);
    let (q, _) = m.linalg_qr("r").unwrap();
    assert_eq!(q.sizes().as_slice(), &[0]);
    let (w, v) = a.linalg_eigh("L").unwrap();
    let back = v
        .mul(&w.unsqueeze(-2).unwrap())
        .unwrap()
        .matmul(&v.transpose(-2, -1).unwrap())
        .unwrap();
    close(&back, &a.to_vec::<f64>());
}

#[test]
fn spectral_functions() {
    let a = batch().select(0, 0).unwrap();
    close(
        &t(&[1., 2., 2., 4., 0., 1.], &[3, 2])
            .linalg_pinv_f(None, None, false)
            .unwrap(),
        &[0.2, 0.4, -2.0, 0.0, 0.0, 1.0],
    );
    close(
        &t(&[1., 2., 2., 4.], &[2, 2])
            .linalg_matrix_rank(None, None, false)
            .unwrap(),
        &[1.0],
    );
    close(&a.linalg_cond(None).unwrap(), &[3.5953901]);
    close(
        &a.linalg_cond(Some(MatrixNormOrd::Fro)).unwrap(),
        &[4.873744],
    );
    close(
        &a.linalg_matrix_norm(MatrixNormOrd::Nuc, &[-2, -1], false, None)
            .unwrap(),
        &[12.0],
    );
    close(
        &a.linalg_matrix_norm(MatrixNormOrd::Num(2.0), &[-2, -1], true, None)
            .unwrap(),
        &[6.6690793],
    );
    close(
        &t(&[0., 1., 0., 0.], &[2, 2]).linalg_matrix_exp().unwrap(),
        &[1.0, 1.0, 0.0, 1.0],
    );
    close(
        &t(&[1., 1., 1., 0.], &[2, 2])
            .linalg_matrix_power(5)
            .unwrap(),
        &[8.0, 5.0, 5.0, 3.0],
    );
    close(
        &t(&[2., 0., 0., 4.], &[2, 2])
            .linalg_matrix_power(-2)
            .unwrap(),
        &[0.25, 0.0, 0.0, 0.0625],
    );
    let (sol, res, rank, sv) = t(&[1., 0., 1., 1., 1., 2.], &[3, 2])
        .linalg_lstsq(&t(&[1., 2., 2.], &[3, 1]), None, Some("gels"))
        .unwrap();
    close(&sol, &[1.1666666, 0.5]);
    close(&res, &[0.16666667]);
    assert_eq!((rank.numel(), sv.numel()), (0, 0));
}

#[test]
fn products() {
    let k = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2])
        .unwrap()
        .kron(&Tensor::from_vec(vec![0i64, 1, 1, 0], &[2, 2]).unwrap())
        .unwrap();
    assert_eq!(
        k.to_vec::<i64>(),
        vec![0, 1, 0, 2, 1, 0, 2, 0, 0, 3, 0, 4, 3, 0, 4, 0]
    );
    close(
        &t(&[1., 0., 0.], &[3])
            .linalg_cross(&t(&[0., 1., 0.], &[3]), -1)
            .unwrap(),
        &[0.0, 0.0, 1.0],
    );
    close(
        &t(&[2., 3.], &[2]).linalg_vander(None).unwrap(),
        &[1., 2., 1., 3.],
    );
    let md = linalg_multi_dot(
        &[
            t(&[1., 2.], &[2]),
            t(&[1., 0., 0., 2.], &[2, 2]),
            t(&[3., 4.], &[2]),
        ],
        "multi_dot",
    )
    .unwrap();
    assert_eq!(md.dim(), 0);
    close(&md, &[19.0]);
    let a = t(&[0., 1., 2., 3., 4., 5.], &[2, 3]);
    close(
        &a.tensordot(&a.reshape(&[3, 2]).unwrap(), &[1], &[0])
            .unwrap(),
        &[10., 13., 28., 40.],
    );
    // A contracted size-1 dim broadcasts against the other side (summed there), as in torch:
    // tensordot(ones[1, 2], b[3, 2], dims=([0], [0]))  sums b over its rows.
    let b = t(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
    let o = t(&[1., 1.], &[1, 2]);
    close(&o.tensordot(&b, &[0], &[0]).unwrap(), &[9., 12., 9., 12.]);
    assert!(t(&[1., 2.], &[2])
        .tensordot(&b, &[0], &[0])
        .unwrap_err()
        .message
        .contains("first has size 2 in dim 0 and second has size 3 in dim 0"));
    let r = Tensor::scalar_tensor(Scalar::Float(1.0), DType::Float32)
        .unwrap()
        .addr(
            &t(&[1., 2.], &[2]),
            &t(&[3., 4.], &[2]),
            Scalar::Float(0.5),
            Scalar::Int(2),
        )
        .unwrap();
    close(&r, &[6.5, 8.5, 12.5, 16.5]);
}

#[test]
fn legacy_helpers() {
    // torch.vander: decreasing powers by default, int64 for integer input, N = 0 and 1.
    let x = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
    let v = x.vander(Some(4), true).unwrap();
    assert_eq!(v.dtype(), DType::Int64);
    assert_eq!(v.to_vec::<i64>(), vec![1, 1, 1, 1, 1, 2, 4, 8, 1, 3, 9, 27]);
    close(
        &t(&[1., 2.], &[2]).vander(None, false).unwrap(),
        &[1., 1., 2., 1.],
    );
    assert_eq!(
        t(&[1., 2.], &[2])
            .vander(Some(0), false)
            .unwrap()
            .sizes()
            .as_slice(),
        &[2, 0]
    );
    close(
        &t(&[2., 3.], &[2]).vander(Some(1), false).unwrap(),
        &[1., 1.],
    );
    assert_eq!(
        t(&[1.; 4], &[2, 2])
            .vander(None, false)
            .unwrap_err()
            .message,
        "x must be a one-dimensional tensor."
    );
    assert_eq!(
        t(&[1., 2.], &[2])
            .vander(Some(-1), false)
            .unwrap_err()
            .message,
        "N must be non-negative."
    );
    // norm_except_dim: torch gives [[3.7417], [8.7750]] / [[4.1231, 5.3852, 6.7082]] / 9.5394.
    let m = t(&[1., -2., 3., 4., 5., -6.], &[2, 3]);
    let r = m.norm_except_dim(2, 0).unwrap();
    assert_eq!(r.sizes().as_slice(), &[2, 1]);
    close(&r, &[3.7416575, 8.774964]);
    let r = m.norm_except_dim(2, 1).unwrap();
    assert_eq!(r.sizes().as_slice(), &[1, 3]);
    close(&r, &[4.1231055, 5.3851648, 6.7082039]);
    close(&m.norm_except_dim(2, -1).unwrap(), &[9.539392]);
    close(
        &t(&[3., -4.], &[2]).norm_except_dim(2, 0).unwrap(),
        &[3., 4.],
    );
    // linalg__powsum: sum(|x| ** ord); 0 ** 0 counts as 1.
    let z = t(&[1., -2., 0., 4., 5., -6.], &[2, 3]);
    close(
        &z.linalg_powsum(Scalar::Int(0), None, false, None).unwrap(),
        &[6.],
    );
    close(
        &z.linalg_powsum(Scalar::Int(3), Some(&[1]), true, None)
            .unwrap(),
        &[9., 405.],
    );
    // Tensor.H and _linalg_check_errors.
    assert_eq!(m.matrix_h().unwrap().sizes().as_slice(), &[3, 2]);
    assert_eq!(
        t(&[1.; 3], &[3]).matrix_h().unwrap_err().message,
        "tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor."
    );
    let info = Tensor::from_vec(vec![0i32, 3], &[2]).unwrap();
    assert_eq!(
        super::functions::linalg_check_errors(&info, "linalg.cholesky", false)
            .unwrap_err()
            .message,
        "linalg.cholesky: (Batch element 1): The factorization could not be completed because the input is not positive-definite (the leading minor of order 3 is not positive-definite)."
    );
    let ok = Tensor::from_vec(vec![0i32], &[]).unwrap();
    assert!(super::functions::linalg_check_errors(&ok, "linalg.inv", true).is_ok());
}
