//! Symbolic autodiff for a loaded module: parameters that require grad (reached through
//! `prim::GetAttr`, not passed as inputs) put the method's plan on the autodiff path, so the
//! optimized graph holds `prim::DifferentiableGraph` nodes, and the parameter gradients equal
//! the autograd engine's (the same module run with the pass turned off).

use torchscript::{autograd, Module, Tensor};
use ts_passes::executor_pipeline::{executor_options, set_executor_options};

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn param_grads(model: &Module, x: &Tensor) -> Vec<Tensor> {
    let params: Vec<Tensor> = model.parameters().into_iter().map(|(_, p)| p).collect();
    let y: Tensor = model.forward((x.clone(),)).unwrap().try_into().unwrap();
    let loss = y.mul(&y).unwrap().sum().unwrap();
    autograd::grad(&[loss], &params, None, false, false)
        .unwrap()
        .into_iter()
        .map(|g| g.expect("every parameter reaches the loss"))
        .collect()
}

#[test]
fn module_parameters_that_require_grad_take_the_autodiff_path() {
    let saved = executor_options();
    let x = Tensor::randn(&[4, 8], 3).unwrap();

    let model = Module::load(data("mlp.pt")).unwrap();
    assert!(model.parameters().iter().all(|(_, p)| p.requires_grad()));
    let g = model
        .method("forward")
        .unwrap()
        .optimized_graph((x.clone(),))
        .unwrap()
        .to_string();
    assert!(g.contains("prim::DifferentiableGraph"), "{g}");
    let with_graphs = param_grads(&model, &x);

    // Under no_grad the same module takes the inference plan.
    {
        let _off = autograd::no_grad();
        let g = model
            .method("forward")
            .unwrap()
            .optimized_graph((x.clone(),))
            .unwrap()
            .to_string();
        assert!(!g.contains("DifferentiableGraph"), "{g}");
    }

    // The engine alone (a fresh load: plans are cached per executor).
    set_executor_options(ts_passes::OptimizeOptions {
        autodiff: false,
        ..saved
    });
    let engine_model = Module::load(data("mlp.pt")).unwrap();
    let engine = param_grads(&engine_model, &x);
    set_executor_options(saved);

    assert_eq!(with_graphs.len(), engine.len());
    for (k, (a, b)) in with_graphs.iter().zip(&engine).enumerate() {
        let (a, b) = (a.to_vec::<f32>(), b.to_vec::<f32>());
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert!(
                (x - y).abs() <= 1e-5 + 1e-4 * y.abs(),
                "parameter {k}: {x} vs {y}"
            );
        }
    }
}
