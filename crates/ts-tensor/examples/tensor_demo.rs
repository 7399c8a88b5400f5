//! A small tour of the tensor library: construction, views that alias, in-place writes seen
//! through every view, broadcasting with type promotion, reductions and PyTorch-style printing.

use ts_tensor::{factory, DType, Result, Scalar, Tensor, TensorIndex};

fn main() -> Result<()> {
    let x = factory::arange(
        Scalar::Int(0),
        Scalar::Int(6),
        Scalar::Int(1),
        Some(DType::Float32),
    )?
    .view(&[2, 3])?;
    println!("x =\n{x}");

    // Views share storage: writing through a transposed column changes `x`.
    let col = x.t()?.select(0, 1)?;
    col.mul_scalar_(Scalar::Int(10))?;
    println!("after x.t()[1] *= 10:\n{x}");

    // Python-style indexing: x[:, ::2] is a view, x[x > 5] a copy.
    let every_other = x.index(&[
        TensorIndex::full(),
        TensorIndex::Slice {
            start: None,
            stop: None,
            step: 2,
        },
    ])?;
    every_other.fill_(Scalar::Float(-1.0))?;
    println!("after x[:, ::2] = -1:\n{x}");
    let mask = x.gt_scalar(Scalar::Int(5))?;
    println!("x[x > 5] = {}", x.index(&[TensorIndex::Tensor(mask)])?);

    // Broadcasting and promotion: int64 column + float32 row -> float32 matrix.
    let col = Tensor::from_vec(vec![1i64, 2], &[2, 1])?;
    let row = Tensor::from_vec(vec![0.5f32, 0.25, 0.125], &[3])?;
    let y = col.add(&row, Scalar::Int(1))?;
    println!("int64[2,1] + float32[3] =\n{y}");

    // Reductions and printing rules (scientific notation, dtype suffixes, summarization).
    println!("sum over dim 0: {}", y.sum(Some(&[0]), false, None)?);
    println!("softmax: {}", y.softmax(1, None)?);
    println!("{}", Tensor::from_vec(vec![1e-5f64, 1.0, 1e3], &[3])?);
    println!(
        "{}",
        factory::arange(Scalar::Int(0), Scalar::Int(2000), Scalar::Int(1), None)?
    );

    // Errors are values with PyTorch's messages.
    if let Err(e) = x.add(&row.view(&[3, 1])?.expand(&[3, 4], false)?, Scalar::Int(1)) {
        println!("error: {e}");
    }
    Ok(())
}
