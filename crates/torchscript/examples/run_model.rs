//! Loads a `torch.jit.save` model, runs it on a random image-sized input and prints the top-5
//! classes.
//!
//! ```sh
//! cargo run --release -p torchscript --example run_model -- [MODEL.pt] [1x3x224x224]
//! ```
//!
//! Without arguments it runs the small CNN of the crate's test data.

use std::time::Instant;

use torchscript::{data_files, Module, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny_cnn.pt").to_string()
    });
    let shape = data_files::parse_shape(&args.next().unwrap_or_else(|| "1x3x224x224".into()))?;

    let model = Module::load(&path)?;
    println!(
        "{path}: {} with {} parameters",
        model.class_name(),
        model.parameters().len()
    );
    let x = Tensor::randn(&shape, 0)?;
    let start = Instant::now();
    let logits: Tensor = model.forward((x,))?.try_into()?;
    println!("forward: {:?} in {:.2?}", logits.shape(), start.elapsed());

    let probs = logits.softmax(-1)?;
    let (values, indices) = probs.topk(5.min(probs.size(-1)?))?;
    let (values, indices) = (values.to_vec::<f32>(), indices.to_vec::<i64>());
    println!("top-5 of the first image:");
    for (p, i) in values.iter().zip(&indices) {
        println!("  class {i:4}  p = {p:.4}");
    }
    Ok(())
}
