//! The public API end to end: loading, calling, introspection, saving, errors.

use torchscript::{compile, ErrorKind, IValue, Module, Tensor};

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn load_call_and_inspect() {
    let bytes = std::fs::read(data("add_relu.pt")).unwrap();
    let m = Module::load_bytes(&bytes).unwrap();
    assert_eq!(m.class_name(), "__torch__.AddRelu");
    assert!(m.method_names().contains(&"forward".to_string()));
    let x = Tensor::from_data(&[-1.0f32, 1.0], &[1, 2]).unwrap();
    let y: Tensor = m.forward((x.clone(),)).unwrap().try_into().unwrap();
    assert_eq!(y.to_vec::<f32>(), vec![0.0, 0.5]);
    let via_method: Tensor = m
        .method("forward")
        .unwrap()
        .call([x])
        .unwrap()
        .try_into()
        .unwrap();
    assert!(via_method.bit_equal(&y));
    let params = m.parameters();
    assert_eq!(params.len(), 1);
    assert_eq!(params[0].0, "bias");
    assert!(matches!(m.attribute("training").unwrap(), IValue::Bool(_)));
    m.set_attribute("training", false).unwrap();
    assert!(m.set_attribute("training", "yes").is_err());
    assert_eq!(m.attribute("nope").unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(
        m.code().unwrap(),
        "def forward(self,\n    x: Tensor) -> Tensor:\n  bias = self.bias\n  return torch.relu(torch.add(x, bias))\n"
    );
    assert!(m
        .method("forward")
        .unwrap()
        .graph()
        .unwrap()
        .contains("aten::relu"));
    assert!(m.summary().contains("parameter bias: float32[2]"));
}

#[test]
fn submodules_and_round_trip() {
    let m = Module::load(data("tiny_cnn.pt")).unwrap();
    let names: Vec<String> = m.submodules().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, vec!["conv", "bn", "pool", "fc"]);
    assert!(m.buffers().iter().any(|(n, _)| n == "bn.running_mean"));
    let conv = m.submodule("conv").unwrap();
    assert!(conv.attribute("weight").unwrap().as_tensor().is_some());
    let x = Tensor::randn(&[2, 3, 8, 8], 3).unwrap();
    let y: Tensor = m.forward((x.clone(),)).unwrap().try_into().unwrap();
    assert_eq!(y.shape(), vec![2, 10]);
    let sub: Tensor = m
        .method("conv.forward")
        .unwrap()
        .call((x.clone(),))
        .unwrap()
        .try_into()
        .unwrap();
    assert_eq!(sub.shape(), vec![2, 8, 4, 4]);
    let back = Module::load_bytes(&m.save_bytes().unwrap()).unwrap();
    let y2: Tensor = back.forward((x,)).unwrap().try_into().unwrap();
    assert!(y2.bit_equal(&y));
}

#[test]
fn errors_are_clear() {
    let m = Module::load(data("raises.pt")).unwrap();
    let e = m.forward((Tensor::from_slice(&[-1.0f32]),)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Runtime);
    let shown = e.to_string();
    assert!(shown.contains("Traceback of TorchScript"), "{shown}");
    assert!(shown.contains("RaiseException"), "{shown}");
    assert!(shown.ends_with("ValueError: negative input"), "{shown}");
    assert!(e.traceback().is_some());
    // Wrong argument types and counts.
    let e = m.forward(("x",)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Argument);
    assert!(m.forward(()).is_err());
    assert_eq!(m.method("nope").unwrap_err().kind(), ErrorKind::NotFound);
    // Corrupt archives and missing files.
    assert_eq!(
        Module::load_bytes(b"PK\x03\x04 junk").unwrap_err().kind(),
        ErrorKind::Format
    );
    assert!(Module::load("/no/such/file.pt").is_err());
    // Compile errors point at the source.
    let e = compile("def f(x: int) -> int:\n    return x +\n").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Compile);
    let e = compile("def f(x: int) -> int:\n    return y\n").unwrap_err();
    assert!(e.to_string().contains("return y"), "{e}");
}

#[test]
fn functions_keywords_and_modules() {
    let cu =
        compile("def scale(x: Tensor, k: float = 2.0) -> Tensor:\n    return x * k\n").unwrap();
    let f = cu.function("scale").unwrap();
    let x = Tensor::from_slice(&[1.0f32, 2.0]);
    let y: Tensor = f
        .call_with_kwargs((x.clone(),), &[("k", IValue::Double(3.0))])
        .unwrap()
        .try_into()
        .unwrap();
    assert_eq!(y.to_vec::<f32>(), vec![3.0, 6.0]);
    assert!(f.schema().unwrap().contains("float k=2."));
    assert!(f.code().unwrap().contains("def scale"));
    let m = f.to_module("Scale").unwrap();
    let back = Module::load_bytes(&m.save_bytes().unwrap()).unwrap();
    let y2: Tensor = back.forward((x,)).unwrap().try_into().unwrap();
    assert_eq!(y2.to_vec::<f32>(), vec![2.0, 4.0]);
    assert_eq!(cu.function("nope").unwrap_err().kind(), ErrorKind::NotFound);
}
