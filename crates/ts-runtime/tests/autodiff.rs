//! Symbolic autodiff in the executor (`prim::DifferentiableGraph`): gradients through
//! differentiable graphs equal the autograd engine's (the same functions run with the pass
//! disabled), the spec's "Test Autodiff" checks (the differentiated graph has a
//! `prim::DifferentiableGraph` holding the expected nodes), and the cases where nothing of it
//! runs (no_grad, no input requiring grad).

use std::sync::{Arc, Mutex};

use ts_core::{prim, IValue, Source, Symbol};
use ts_ir::{CompilationUnit, Function, Graph};
use ts_ops::autograd::engine::{run_backward, BackwardRequest};
use ts_passes::executor_pipeline::{executor_options, set_executor_options};
use ts_runtime::{call_function, executor_of};
use ts_tensor::autograd::GradModeGuard;
use ts_tensor::Tensor;

/// The executor options are global: tests that change them run one at a time.
static OPTIONS: Mutex<()> = Mutex::new(());

fn compile(src: &str) -> Arc<CompilationUnit> {
    ts_frontend::compile_source(&Source::new(src.to_string(), Some("prog.py".into()), 1))
        .unwrap_or_else(|e| panic!("compile: {e}"))
}

/// A float64 tensor of deterministic, non-trivial values in [0.5, 1.5].
fn data(sizes: &[i64], seed: u64) -> Tensor {
    let n: i64 = sizes.iter().product();
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let v: Vec<f64> = (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            0.5 + ((s >> 33) as f64) / ((1u64 << 31) as f64)
        })
        .collect();
    Tensor::from_vec(v, sizes).unwrap()
}

struct Call {
    /// The function's outputs (tuples flattened).
    outputs: Vec<Tensor>,
    /// The optimized graph the executor ran.
    graph: Arc<Graph>,
}

fn call(f: &Function, args: &[Tensor]) -> Call {
    let ivs: Vec<IValue> = args.iter().cloned().map(IValue::Tensor).collect();
    let graph = executor_of(f)
        .unwrap()
        .execution_plan(&ivs)
        .unwrap()
        .graph
        .clone();
    let out = call_function(f, ivs).unwrap_or_else(|e| panic!("{}", e.into_error()));
    let outputs = match out {
        IValue::Tuple(t) => t
            .elements
            .iter()
            .map(|v| v.as_tensor().unwrap().clone())
            .collect(),
        IValue::Tensor(t) => vec![t],
        other => panic!("unexpected output {other:?}"),
    };
    Call { outputs, graph }
}

/// Fresh leaves requiring grad with the same values as `base`.
fn leaves(base: &[Tensor]) -> Vec<Tensor> {
    base.iter()
        .map(|t| {
            let l = t.detach();
            l.set_requires_grad(true);
            l
        })
        .collect()
}

/// The gradients of sum_i <outputs_i, w_i> (fixed weights) with respect to `inputs`.
fn grads(outputs: &[Tensor], inputs: &[Tensor], create_graph: bool) -> Vec<Option<Tensor>> {
    let roots: Vec<(Tensor, Tensor)> = outputs
        .iter()
        .enumerate()
        .filter(|(_, o)| o.requires_grad())
        .map(|(i, o)| (o.clone(), data(&o.sizes(), 100 + i as u64)))
        .collect();
    run_backward(&BackwardRequest {
        roots: &roots,
        inputs: Some(inputs),
        retain_graph: false,
        create_graph,
        allow_unused: true,
    })
    .unwrap()
}

fn close(a: &Tensor, b: &Tensor) -> bool {
    a.sizes() == b.sizes()
        && a.to_vec::<f64>()
            .iter()
            .zip(b.to_vec::<f64>())
            .all(|(x, y)| (x - y).abs() <= 1e-9 * (1.0 + y.abs()))
}

fn same_grads(what: &str, a: &[Option<Tensor>], b: &[Option<Tensor>]) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        match (x, y) {
            (Some(x), Some(y)) => assert!(
                close(x, y),
                "{what}: gradient {i} differs:\n{:?}\nengine:\n{:?}",
                x.to_vec::<f64>(),
                y.to_vec::<f64>()
            ),
            (None, None) => {}
            _ => panic!("{what}: gradient {i} defined on one side only"),
        }
    }
}

/// Every node kind inside the graph's differentiable graphs.
fn differentiated_kinds(g: &Graph) -> Vec<String> {
    let mut v = Vec::new();
    for n in g.all_nodes() {
        if g.node(n).kind() == prim::DifferentiableGraph {
            let f = g.node(n).g(Symbol::attr("Subgraph")).unwrap();
            for m in f.all_nodes() {
                v.push(f.node(m).kind().to_string());
            }
        }
    }
    v
}

fn count_differentiable(g: &Graph) -> usize {
    g.all_nodes()
        .into_iter()
        .filter(|&n| g.node(n).kind() == prim::DifferentiableGraph)
        .count()
}

/// Runs `name` of `src` on `inputs` (float64 values; those at `grad_at` require grad) with
/// symbolic autodiff and with the engine alone; asserts equal outputs and gradients, and
/// that the autodiff graph has a differentiable graph holding `nonfusible` (the spec's
/// `check_ad`). Returns the autodiff graph.
fn check_ad(
    src: &str,
    name: &str,
    inputs: &[Tensor],
    grad_at: &[usize],
    nonfusible: &[&str],
) -> Arc<Graph> {
    let _lock = OPTIONS.lock().unwrap_or_else(|e| e.into_inner());
    let saved = executor_options();
    let run = |autodiff: bool| {
        set_executor_options(ts_passes::OptimizeOptions { autodiff, ..saved });
        let cu = compile(src);
        let f = cu.find_function(name).unwrap();
        let args: Vec<Tensor> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let l = t.detach();
                l.set_requires_grad(grad_at.contains(&i));
                l
            })
            .collect();
        let c = call(&f, &args);
        let wanted: Vec<Tensor> = grad_at.iter().map(|&i| args[i].clone()).collect();
        let g = grads(&c.outputs, &wanted, false);
        (c, g)
    };
    let (ad, ad_grads) = run(true);
    let (engine, engine_grads) = run(false);
    set_executor_options(saved);
    assert_eq!(count_differentiable(&engine.graph), 0, "{}", engine.graph);
    assert!(
        count_differentiable(&ad.graph) > 0,
        "no prim::DifferentiableGraph in\n{}",
        ad.graph
    );
    let kinds = differentiated_kinds(&ad.graph);
    for k in nonfusible {
        assert!(
            kinds.iter().any(|x| x == k),
            "{k} is not differentiated symbolically in\n{}",
            ad.graph
        );
    }
    for (a, e) in ad.outputs.iter().zip(&engine.outputs) {
        assert!(close(a, e), "{name}: outputs differ");
        assert_eq!(a.requires_grad(), e.requires_grad());
    }
    same_grads(name, &ad_grads, &engine_grads);
    ad.graph
}

#[test]
fn a_layer_with_broadcasting() {
    let src = "def f(x, w, b):\n    return torch.tanh(torch.mm(x, w) + b) * 2.0\n";
    let ins = [data(&[3, 4], 1), data(&[4, 5], 2), data(&[5], 3)];
    check_ad(
        src,
        "f",
        &ins,
        &[0, 1, 2],
        &["aten::mm", "aten::add", "aten::tanh", "aten::mul"],
    );
    // Only some inputs require grad.
    check_ad(src, "f", &ins, &[1], &["aten::mm"]);
}

#[test]
fn softmax_log_softmax_and_gelu() {
    let src = "def f(x, w):\n    h = torch.nn.functional.gelu(torch.mm(x, w))\n    p = torch.softmax(h * 2.0, 1)\n    q = torch.log_softmax(h + p, 0)\n    return (q * p).sum()\n";
    let ins = [data(&[3, 4], 11), data(&[4, 5], 12)];
    check_ad(
        src,
        "f",
        &ins,
        &[0, 1],
        &["aten::gelu", "aten::softmax", "aten::log_softmax"],
    );
}

#[test]
fn non_differentiable_op_in_the_middle_falls_back_to_the_engine() {
    let src = "def f(x, y):\n    a = x * y + x\n    s = torch.cumsum(a, 0)\n    return torch.sigmoid(s) * y - s / y\n";
    let ins = [data(&[4, 3], 4), data(&[4, 3], 5)];
    let g = check_ad(src, "f", &ins, &[0, 1], &["aten::sigmoid", "aten::div"]);
    assert_eq!(count_differentiable(&g), 2, "{g}");
    assert!(g
        .all_nodes()
        .iter()
        .any(|&n| g.node(n).kind().to_string() == "aten::cumsum"));
}

#[test]
fn multiple_outputs() {
    let src = "def f(x, y):\n    a = x * y\n    b = torch.relu(a - y)\n    return a.sum(), b * b, torch.exp(b).mean()\n";
    let ins = [data(&[2, 3], 6), data(&[2, 3], 7)];
    check_ad(
        src,
        "f",
        &ins,
        &[0, 1],
        &["aten::relu", "aten::sum", "aten::mean", "aten::exp"],
    );
}

#[test]
fn reused_inputs() {
    let src = "def f(x):\n    return x * x + torch.exp(x) / x\ndef g(a, b):\n    return (a * b).sum() + torch.log(a / b).mean()\n";
    let x = data(&[3, 2], 8);
    check_ad(src, "f", std::slice::from_ref(&x), &[0], &["aten::exp"]);
    // The same tensor passed twice.
    let _lock = OPTIONS.lock().unwrap_or_else(|e| e.into_inner());
    let cu = compile(src);
    let g = cu.find_function("g").unwrap();
    let l = leaves(&[x])[0].clone();
    let c = call(&g, &[l.clone(), l.clone()]);
    assert!(count_differentiable(&c.graph) > 0, "{}", c.graph);
    let gr = grads(&c.outputs, std::slice::from_ref(&l), false);
    // d/dx [sum(x*x) * w + mean(log 1) * w] = 2 x w
    let w = data(&[], 100).to_vec::<f64>()[0];
    let expect: Vec<f64> = l.to_vec::<f64>().iter().map(|v| 2.0 * v * w).collect();
    let got = gr[0].as_ref().unwrap().to_vec::<f64>();
    for (a, b) in got.iter().zip(expect) {
        assert!((a - b).abs() < 1e-9, "{got:?}");
    }
}

#[test]
fn linear_algebra_views_and_reductions() {
    let src = "def f(x, w, b, m):\n    y = torch.nn.functional.linear(x, w, b)\n    z = torch.addmm(b, x.view(6, 4)[0:1].view(1, 4).reshape(1, 4), w.t(), beta=0.5, alpha=2.0)\n    p = torch.matmul(m, m.transpose(0, 1)).pow(3)\n    return torch.sigmoid(y).sum(1).mean(), (z - 1).sum(0, keepdim=True), p.unsqueeze(0).sum(), (y * y).log().mean(0)\n";
    let ins = [
        data(&[2, 3, 4], 9),
        data(&[5, 4], 10),
        data(&[5], 11),
        data(&[3, 3], 12),
    ];
    check_ad(
        src,
        "f",
        &ins,
        &[0, 1, 2, 3],
        &[
            "aten::linear",
            "aten::sigmoid",
            "aten::matmul",
            "aten::pow",
            "aten::transpose",
        ],
    );
}

#[test]
fn double_backward_is_the_engines() {
    let src = "def f(x, y):\n    return (x * x * y + torch.tanh(x)).sum()\n";
    let _lock = OPTIONS.lock().unwrap_or_else(|e| e.into_inner());
    let saved = executor_options();
    let run = |autodiff: bool| {
        set_executor_options(ts_passes::OptimizeOptions { autodiff, ..saved });
        let cu = compile(src);
        let f = cu.find_function("f").unwrap();
        let args = leaves(&[data(&[3], 13), data(&[3], 14)]);
        let c = call(&f, &args);
        let first = grads(&c.outputs, &args, true);
        let gx = first[0].clone().unwrap();
        assert!(
            gx.requires_grad(),
            "create_graph=True gives a differentiable gradient"
        );
        let second = grads(&[gx], &args, false);
        (c.graph, first, second)
    };
    let (graph, ad1, ad2) = run(true);
    let (_, e1, e2) = run(false);
    set_executor_options(saved);
    assert!(count_differentiable(&graph) > 0, "{graph}");
    let detach = |v: Vec<Option<Tensor>>| {
        v.into_iter()
            .map(|t| t.map(|t| t.detach()))
            .collect::<Vec<_>>()
    };
    same_grads("first", &detach(ad1), &detach(e1));
    same_grads("second", &ad2, &e2);
}

#[test]
fn nothing_runs_without_gradients() {
    let _lock = OPTIONS.lock().unwrap_or_else(|e| e.into_inner());
    let src = "def f(x, y):\n    return torch.sigmoid(x * y + x) * y\n";
    let cu = compile(src);
    let f = cu.find_function("f").unwrap();
    // No input requires grad.
    let c = call(&f, &[data(&[2], 15), data(&[2], 16)]);
    assert_eq!(count_differentiable(&c.graph), 0, "{}", c.graph);
    // Under no_grad the spec does not record requires_grad: no differentiable graph, and the
    // outputs have no history.
    let args = leaves(&[data(&[2], 15), data(&[2], 16)]);
    {
        let _off = GradModeGuard::no_grad();
        let c = call(&f, &args);
        assert_eq!(count_differentiable(&c.graph), 0, "{}", c.graph);
        assert!(!c.outputs[0].requires_grad());
    }
    let c = call(&f, &args);
    assert_eq!(count_differentiable(&c.graph), 1, "{}", c.graph);
    assert!(c.outputs[0].requires_grad());
    // The no_grad call shares the plan of inputs that do not require grad.
    assert_eq!(executor_of(&f).unwrap().plan_count(), 2);
}

#[test]
fn in_place_write_to_a_captured_input_is_reported() {
    let _lock = OPTIONS.lock().unwrap_or_else(|e| e.into_inner());
    let src = "def f(x, y):\n    return torch.sigmoid(x * y + x) * y\n";
    let cu = compile(src);
    let f = cu.find_function("f").unwrap();
    let x = leaves(&[data(&[2], 17)])[0].clone();
    let y = data(&[2], 18);
    let c = call(&f, &[x.clone(), y.clone()]);
    assert_eq!(count_differentiable(&c.graph), 1, "{}", c.graph);
    y.bump_version();
    let roots = [(c.outputs[0].clone(), data(&[2], 19))];
    let result = run_backward(&BackwardRequest {
        roots: &roots,
        inputs: Some(&[x]),
        retain_graph: false,
        create_graph: false,
        allow_unused: false,
    });
    let Err(err) = result else {
        panic!("a modified saved tensor is an error");
    };
    assert!(
        err.to_string().contains("modified by an inplace operation"),
        "{err}"
    );
}
