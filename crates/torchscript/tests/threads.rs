//! One module serving many threads: every output is bit-identical to a single-threaded run.

use std::sync::Arc;

use torchscript::{Module, Tensor};

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run_threads(
    model: &Arc<Module>,
    inputs: &Arc<Vec<Tensor>>,
    expected: &Arc<Vec<Tensor>>,
    calls: usize,
) {
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let (model, inputs, expected) = (model.clone(), inputs.clone(), expected.clone());
            std::thread::spawn(move || {
                for c in 0..calls {
                    let i = (c * 7 + w) % inputs.len();
                    let y: Tensor = model
                        .forward((inputs[i].clone(),))
                        .unwrap()
                        .try_into()
                        .unwrap();
                    assert!(
                        y.bit_equal(&expected[i]),
                        "thread {w}, call {c}: output differs"
                    );
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a worker panicked");
    }
}

#[test]
fn eight_threads_share_one_module() {
    let model = Arc::new(Module::load(data("add_relu.pt")).unwrap());
    let inputs: Vec<Tensor> = (0..64)
        .map(|s| Tensor::randn(&[4, 2], s).unwrap())
        .collect();
    let expected: Vec<Tensor> = inputs
        .iter()
        .map(|x| model.forward((x.clone(),)).unwrap().try_into().unwrap())
        .collect();
    run_threads(&model, &Arc::new(inputs), &Arc::new(expected), 3000);
}

#[test]
fn eight_threads_share_one_cnn() {
    let model = Arc::new(Module::load(data("tiny_cnn.pt")).unwrap());
    let inputs: Vec<Tensor> = (0..16)
        .map(|s| Tensor::randn(&[1, 3, 16, 16], s).unwrap())
        .collect();
    let expected: Vec<Tensor> = inputs
        .iter()
        .map(|x| model.forward((x.clone(),)).unwrap().try_into().unwrap())
        .collect();
    run_threads(&model, &Arc::new(inputs), &Arc::new(expected), 250);
}
