//! `torch.nn.functional` end to end (source → frontend → runtime); expected values are the ones
//! PyTorch 2.15 gives for the same calls.

use ts_core::{IValue, Source};

/// Compiles `src` and calls `f()`, which returns a `List[float]`.
fn floats(src: &str) -> Vec<f64> {
    let cu = ts_frontend::compile_source(&Source::new(src.to_string(), None, 1))
        .unwrap_or_else(|e| panic!("compile: {e}"));
    let f = cu.find_function("f").expect("no function f");
    let v = ts_runtime::call_function(&f, vec![]).unwrap_or_else(|e| panic!("run: {e}"));
    match v {
        IValue::List(l) => l
            .items
            .read()
            .iter()
            .map(|x| x.as_double().unwrap())
            .collect(),
        other => panic!("expected a list, got {}", other.to_display_string()),
    }
}

fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-4, "{got:?} vs {want:?}");
    }
}

/// The body of `f` applied to `x = arange(16).reshape(1, 1, 4, 4)`, flattened to a list.
fn on_grid(expr: &str) -> Vec<f64> {
    floats(&format!(
        "def f() -> List[float]:\n    x = torch.arange(16.).reshape(1, 1, 4, 4)\n    y = {expr}\n    r: List[float] = y.flatten().tolist()\n    return r\n"
    ))
}

#[test]
fn max_pool_with_indices_returns_a_tuple() {
    let src = "def f() -> List[float]:\n    x = torch.arange(16.).reshape(1, 1, 4, 4)\n    o, i = torch.nn.functional.max_pool2d(x, 2, return_indices=True)\n    r: List[float] = torch.cat([o.flatten(), i.flatten().float()]).tolist()\n    return r\n";
    close(&floats(src), &[5., 7., 13., 15., 5., 7., 13., 15.]);
    // Without the flag it is one tensor.
    close(
        &on_grid("torch.nn.functional.max_pool2d(x, 2)"),
        &[5., 7., 13., 15.],
    );
}

#[test]
fn interpolate_modes_match_pytorch() {
    let first8 = |expr: &str| on_grid(expr)[..8].to_vec();
    close(
        &first8("torch.nn.functional.interpolate(x, scale_factor=1.5, mode='nearest')"),
        &[0., 0., 1., 2., 2., 3., 0., 0.],
    );
    close(
        &first8("torch.nn.functional.interpolate(x, scale_factor=1.5, mode='nearest-exact')"),
        &[0., 1., 1., 2., 3., 3., 4., 5.],
    );
    close(
        &first8("torch.nn.functional.interpolate(x, scale_factor=1.5, mode='bilinear', align_corners=False)"),
        &[0.0, 0.5, 1.166_666_7, 1.833_333_3, 2.5, 3.0, 2.0, 2.5],
    );
    close(
        &first8("torch.nn.functional.interpolate(x, scale_factor=1.5, mode='bilinear', align_corners=True)"),
        &[0.0, 0.6, 1.2, 1.8, 2.4, 3.0, 2.4, 3.0],
    );
    let bicubic = on_grid(
        "torch.nn.functional.interpolate(x, scale_factor=1.5, mode='bicubic', align_corners=False)",
    );
    assert_eq!(bicubic.len(), 36);
    assert!((bicubic[0] + 0.434).abs() < 1e-3 && (bicubic[2] - 0.8657).abs() < 1e-3);
    close(
        &first8("torch.nn.functional.interpolate(x, scale_factor=1.5, mode='area')"),
        &[0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 2.0, 2.5],
    );
    close(
        &on_grid(
            "torch.nn.functional.interpolate(x, size=(3, 3), mode='bilinear', antialias=True, align_corners=False)",
        ),
        &[1.5, 2.7, 3.9, 6.3, 7.5, 8.7, 11.1, 12.3, 13.5],
    );
}

#[test]
fn pad_modes_match_pytorch() {
    let pad = |mode: &str| {
        floats(&format!(
            "def f() -> List[float]:\n    z = torch.arange(6.).reshape(1, 2, 3)\n    r: List[float] = torch.nn.functional.pad(z, (2, 1), mode='{mode}').flatten().tolist()\n    return r\n"
        ))
    };
    close(
        &pad("reflect"),
        &[2., 1., 0., 1., 2., 1., 5., 4., 3., 4., 5., 4.],
    );
    close(
        &pad("replicate"),
        &[0., 0., 0., 1., 2., 2., 3., 3., 3., 4., 5., 5.],
    );
    close(
        &pad("circular"),
        &[1., 2., 0., 1., 2., 0., 4., 5., 3., 4., 5., 3.],
    );
}

#[test]
fn losses_and_unfold_match_pytorch() {
    let loss = |expr: &str| {
        floats(&format!(
            "def f() -> List[float]:\n    a = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])\n    t = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])\n    return [float({expr})]\n"
        ))
    };
    close(
        &loss("torch.nn.functional.binary_cross_entropy_with_logits(a, t)"),
        &[0.630_484_04],
    );
    close(
        &loss("torch.nn.functional.smooth_l1_loss(a, t, beta=0.5)"),
        &[0.666_666_7],
    );
    close(
        &loss("torch.nn.functional.cross_entropy(a, torch.tensor([2, 0]), label_smoothing=0.1)"),
        &[0.407_166_9],
    );
    close(
        &on_grid("torch.nn.functional.unfold(x, 2, stride=2)"),
        &[
            0., 2., 8., 10., 1., 3., 9., 11., 4., 6., 12., 14., 5., 7., 13., 15.,
        ],
    );
}

#[test]
fn bad_arguments_are_errors() {
    let cu = ts_frontend::compile_source(&Source::new(
        "def f():\n    z = torch.arange(6.).reshape(1, 2, 3)\n    return torch.nn.functional.pad(z, (5, 5), mode='reflect')\n".to_string(),
        None,
        1,
    ))
    .unwrap();
    let f = cu.find_function("f").unwrap();
    assert!(ts_runtime::call_function(&f, vec![]).is_err());
    // A non-constant `return_indices` cannot pick the overload.
    let e = ts_frontend::compile_source(&Source::new(
        "def f(x: Tensor, b: bool):\n    return torch.nn.functional.max_pool2d(x, 2, return_indices=b)\n".to_string(),
        None,
        1,
    ))
    .map(|_| ())
    .unwrap_err();
    assert!(e.to_string().contains("not constant"), "{e}");
}
