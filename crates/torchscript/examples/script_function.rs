//! Compiles TorchScript source and calls its functions from Rust: numbers, lists, tensors,
//! keyword arguments, the graph and a TorchScript exception with its traceback.
//!
//! ```sh
//! cargo run -p torchscript --example script_function
//! ```

use torchscript::{compile, IValue, Tensor};

const SOURCE: &str = r#"
def normalize(x: Tensor, eps: float = 1e-5) -> Tensor:
    mean = x.mean()
    std = x.std()
    return (x - mean) / (std + eps)

def histogram(xs: List[int], buckets: int) -> Dict[int, int]:
    counts: Dict[int, int] = {}
    for x in xs:
        b = x % buckets
        counts[b] = counts.get(b, 0) + 1
    return counts

def checked_sqrt(x: float) -> float:
    if x < 0:
        raise ValueError("negative input: " + str(x))
    return x ** 0.5
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cu = compile(SOURCE)?;
    println!("functions: {:?}", cu.function_names());

    let normalize = cu.function("normalize")?;
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]);
    let y = normalize.call_with_kwargs((x,), &[("eps", IValue::from(0.0))])?;
    println!("normalize -> {y}");
    println!("graph of normalize:\n{}", normalize.graph()?);

    let counts = cu
        .function("histogram")?
        .call((vec![1i64, 2, 3, 4, 5, 6, 7], 3i64))?;
    let counts: std::collections::HashMap<i64, i64> = counts.try_into()?;
    let mut sorted: Vec<_> = counts.into_iter().collect();
    sorted.sort();
    println!("histogram -> {sorted:?}");

    let sqrt = cu.function("checked_sqrt")?;
    println!("checked_sqrt(2.0) -> {}", sqrt.call((2.0,))?);
    match sqrt.call((-1.0,)) {
        Ok(v) => println!("unexpected: {v}"),
        Err(e) => println!("checked_sqrt(-1.0) raised ({}):\n{e}", e.exception_class()),
    }
    Ok(())
}
