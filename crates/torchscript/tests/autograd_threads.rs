//! One module's forward and backward from many threads at once: each thread records its own
//! graph (grad mode is per thread), and every thread's parameter gradients are bit-identical
//! to a single-threaded run.

use std::sync::Arc;

use torchscript::{autograd, Module, Tensor};

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The gradients of `forward(x).sum()` with respect to every parameter.
fn param_grads(model: &Module, x: &Tensor) -> Vec<Tensor> {
    let params: Vec<Tensor> = model.parameters().into_iter().map(|(_, p)| p).collect();
    let y: Tensor = model.forward((x.clone(),)).unwrap().try_into().unwrap();
    let loss = y.sum().unwrap();
    autograd::grad(&[loss], &params, None, false, false)
        .unwrap()
        .into_iter()
        .map(|g| g.expect("every parameter reaches the loss"))
        .collect()
}

#[test]
fn forward_and_backward_from_eight_threads() {
    let model = Arc::new(Module::load(data("tiny_cnn.pt")).unwrap());
    assert!(model.parameters().iter().all(|(_, p)| p.requires_grad()));
    let inputs: Vec<Tensor> = (0..8)
        .map(|s| Tensor::randn(&[1, 3, 16, 16], s).unwrap())
        .collect();
    let expected: Vec<Vec<Tensor>> = inputs.iter().map(|x| param_grads(&model, x)).collect();
    let (inputs, expected) = (Arc::new(inputs), Arc::new(expected));
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let (model, inputs, expected) = (model.clone(), inputs.clone(), expected.clone());
            std::thread::spawn(move || {
                for c in 0..12 {
                    let i = (c * 3 + w) % inputs.len();
                    let got = param_grads(&model, &inputs[i]);
                    for (k, (g, e)) in got.iter().zip(expected[i].iter()).enumerate() {
                        assert!(g.bit_equal(e), "thread {w}, call {c}: gradient {k} differs");
                    }
                    // A thread's no_grad scope does not leak into the others.
                    if c % 4 == 0 {
                        let _off = autograd::no_grad();
                        let y: Tensor = model
                            .forward((inputs[i].clone(),))
                            .unwrap()
                            .try_into()
                            .unwrap();
                        assert!(!y.requires_grad());
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a worker panicked");
    }
    // Nothing accumulated into `.grad`: autograd.grad returns the gradients instead.
    assert!(model.parameters().iter().all(|(_, p)| p.grad().is_none()));
}
