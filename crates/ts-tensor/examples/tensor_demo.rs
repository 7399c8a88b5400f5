//! A small tour of the tensor library: construction, views and aliasing.

use ts_tensor::{Result, Tensor};

fn main() -> Result<()> {
    let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    println!("{t:?}");
    println!("values: {:?}", t.to_vec::<f32>());
    Ok(())
}
