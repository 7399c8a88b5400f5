//! The legacy (PyTorch 1.0–1.2) archive format of the spec's serialization chapter:
//! `model.json` + `tensors/` + `attributes.pkl` + `code/`. The archives are built here from the
//! spec's description: its `model.json` field names, its tensor table entry, and the exact
//! `attributes.pkl` opcode listing it gives for a module with a float, a tuple, a tensor and an
//! int list attribute.

use ts_core::IValue;
use ts_serialize::{load_script_module_bytes, ArchiveWriter, SerializeError};
use ts_tensor::Tensor;

/// `attributes.pkl` as the spec lists it (offsets 0 to 115), with extra float attributes
/// appended before the final APPENDS.
fn attributes_pkl(extra_floats: &[f64]) -> Vec<u8> {
    let mut b = vec![0x80, 2, b']', b'('];
    b.push(b'G');
    b.extend_from_slice(&2.3f64.to_be_bytes());
    b.push(b'(');
    for i in 1..=4i32 {
        b.push(b'J');
        b.extend_from_slice(&i.to_le_bytes());
    }
    b.extend_from_slice(b"tq\x00");
    b.extend_from_slice(b"c__main__\nTensorID\nq\x01)\x81");
    b.push(b'J');
    b.extend_from_slice(&0i32.to_le_bytes());
    b.push(b'b');
    b.extend_from_slice(b"c__main__\nIntList\nq\x02)\x81]q\x03(");
    for i in 1..=4i32 {
        b.push(b'J');
        b.extend_from_slice(&i.to_le_bytes());
    }
    b.extend_from_slice(b"eb");
    assert_eq!(
        b.len(),
        114,
        "the spec's listing ends its attributes at offset 114"
    );
    for f in extra_floats {
        b.push(b'G');
        b.extend_from_slice(&f.to_be_bytes());
    }
    b.extend_from_slice(b"e.");
    b
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The spec's module `M` (float, tuple, tensor, int_list attributes) with a linear submodule
/// `fc`, a `scale` attribute, and a forward that uses a tensor constant (`CONSTANTS.c3`, the
/// tensor table's entry 3, a view into `fc.weight`'s storage).
fn model_json(attribute_tensor_id: i64) -> String {
    format!(
        r#"{{
  "protoVersion": "3",
  "producerName": "pytorch",
  "producerVersion": "1.1",
  "mainModule": {{
    "name": "M",
    "torchscriptArena": {{"key": "code/M.py"}},
    "submodules": [
      {{
        "name": "fc",
        "torchscriptArena": {{"key": "code/M.fc.py"}},
        "parameters": [
          {{"isBuffer": false, "tensorId": "1", "name": "weight"}},
          {{"isBuffer": false, "tensorId": "2", "name": "bias"}}
        ]
      }}
    ],
    "attributes": [
      {{"type": "float", "name": "float", "id": 0}},
      {{"type": "Tuple[int, int, int, int]", "name": "tuple", "id": 1}},
      {{"type": "Tensor", "name": "tensor", "id": 2}},
      {{"type": "List[int]", "name": "int_list", "id": 3}},
      {{"type": "float", "name": "scale", "id": 4}}
    ]
  }},
  "tensors": [
    {{"dims": ["2", "2"], "offset": "0", "strides": ["1", "2"], "requiresGrad": false,
      "dataType": "DOUBLE", "data": {{"key": "tensors/{attribute_tensor_id}"}}, "device": "cpu"}},
    {{"dims": ["2", "3"], "offset": "0", "strides": ["3", "1"], "requiresGrad": true,
      "dataType": "FLOAT", "data": {{"key": "tensors/1"}}, "device": "cpu"}},
    {{"dims": ["2"], "offset": "0", "strides": ["1"], "requiresGrad": true,
      "dataType": "FLOAT", "data": {{"key": "tensors/2"}}, "device": "cpu"}},
    {{"dims": ["2"], "offset": "4", "strides": ["1"], "requiresGrad": false,
      "dataType": "FLOAT", "data": {{"key": "tensors/1"}}, "device": "cpu"}}
  ]
}}"#
    )
}

const ROOT_CODE: &str = "op_version_set = 0
def forward(self,
    x: Tensor) -> Tensor:
  _0 = self.fc.forward(x)
  _1 = torch.mul(_0, self.scale)
  return torch.add(_1, CONSTANTS.c3, alpha=1)
def attributes(self) -> Tuple[float, Tuple[int, int, int, int], Tensor, List[int]]:
  return (self.float, self.tuple, self.tensor, self.int_list)
def int_div(self, a: Tensor, b: Tensor) -> Tensor:
  return torch.div(a, b)
def filled(self) -> Tensor:
  return torch.full([2], 3)
";

const FC_CODE: &str = "op_version_set = 0
def forward(self,
    input: Tensor) -> Tensor:
  return torch.addmm(self.bias, input, torch.t(self.weight), beta=1, alpha=1)
";

struct Parts {
    version: &'static str,
    json: String,
    attributes: Vec<u8>,
    tensors: Vec<(String, Vec<u8>)>,
    root_code: String,
}

fn parts() -> Parts {
    // The attribute tensor: a 2x2 double tensor stored column-major (strides [1, 2]).
    let attr: Vec<u8> = [1.0f64, 3.0, 2.0, 4.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    Parts {
        version: "1",
        json: model_json(0),
        attributes: attributes_pkl(&[0.5]),
        tensors: vec![
            ("tensors/0".into(), attr),
            ("tensors/1".into(), f32_bytes(&[1., 2., 3., 4., 5., 6.])),
            ("tensors/2".into(), f32_bytes(&[0.5, -0.5])),
        ],
        root_code: ROOT_CODE.into(),
    }
}

fn build(p: &Parts) -> Vec<u8> {
    let mut w = ArchiveWriter::new("legacy").unwrap();
    w.write_record("version", p.version.as_bytes()).unwrap();
    w.write_record("model.json", p.json.as_bytes()).unwrap();
    for (name, bytes) in &p.tensors {
        w.write_record(name, bytes).unwrap();
    }
    w.write_record("attributes.pkl", &p.attributes).unwrap();
    w.write_record("code/M.py", p.root_code.as_bytes()).unwrap();
    w.write_record("code/M.fc.py", FC_CODE.as_bytes()).unwrap();
    w.finish().unwrap()
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>()
}

#[test]
fn the_spec_module_loads_and_runs() {
    let m = load_script_module_bytes(build(&parts())).expect("legacy archive loads");
    assert_eq!(m.version, 1);
    let x = Tensor::from_vec(vec![1.0f32, 0.0, -1.0], &[1, 3]).unwrap();
    let out = ts_runtime::call_method(&m.module, "forward", vec![IValue::Tensor(x)]).unwrap();
    let IValue::Tensor(out) = out else {
        panic!("forward returned {out:?}")
    };
    // fc: [1,0,-1] @ [[1,2,3],[4,5,6]].T + [0.5,-0.5] = [-1.5, -2.5]; * scale 0.5 =
    // [-0.75, -1.25]; + CONSTANTS.c3 (elements 4 and 5 of fc.weight's storage: [5, 6]).
    assert_eq!(out.sizes().to_vec(), vec![1, 2]);
    assert_eq!(values(&out), vec![4.25, 4.75]);

    let attrs = ts_runtime::call_method(&m.module, "attributes", vec![]).unwrap();
    let IValue::Tuple(t) = attrs else {
        panic!("attributes returned {attrs:?}")
    };
    assert_eq!(t.elements[0].as_double(), Some(2.3));
    assert_eq!(
        format!("{:?}", t.elements[1]),
        format!("{:?}", {
            let ints: Vec<IValue> = (1..=4).map(IValue::Int).collect();
            IValue::tuple(ints)
        })
    );
    let IValue::Tensor(tensor) = &t.elements[2] else {
        panic!("not a tensor")
    };
    assert_eq!(tensor.dtype(), ts_tensor::DType::Float64);
    assert_eq!(tensor.strides().to_vec(), vec![1, 2]);
    assert_eq!(values(tensor), vec![1.0, 2.0, 3.0, 4.0]);
    let IValue::List(l) = &t.elements[3] else {
        panic!("not a list")
    };
    let ints: Vec<i64> = l.items.read().iter().filter_map(IValue::as_int).collect();
    assert_eq!(ints, vec![1, 2, 3, 4]);
}

#[test]
fn tensors_naming_one_record_share_its_storage() {
    let m = load_script_module_bytes(build(&parts())).unwrap();
    let IValue::Object(fc) =
        m.module.slots.read()[m.module.class.attribute_index("fc").unwrap()].clone()
    else {
        panic!("fc is not a module")
    };
    let weight = fc.slots.read()[fc.class.attribute_index("weight").unwrap()].clone();
    let IValue::Tensor(weight) = weight else {
        panic!()
    };
    assert!(weight.requires_grad());
    // Writing through the parameter changes the constant that views the same record.
    weight.fill_(ts_tensor::Scalar::Float(0.0)).unwrap();
    let x = Tensor::from_vec(vec![1.0f32, 0.0, -1.0], &[1, 3]).unwrap();
    let out = ts_runtime::call_method(&m.module, "forward", vec![IValue::Tensor(x)]).unwrap();
    let IValue::Tensor(out) = out else { panic!() };
    assert_eq!(values(&out), vec![0.25, -0.25]);
}

fn ints(v: &[i64]) -> IValue {
    IValue::Tensor(Tensor::from_vec(v.to_vec(), &[v.len() as i64]).unwrap())
}

#[test]
fn old_versions_keep_integer_division_and_float_full() {
    // File format 1 to 3: torch.div of integer tensors truncated; before 5, torch.full with an
    // int fill value made a float tensor.
    let m = load_script_module_bytes(build(&parts())).unwrap();
    let q =
        ts_runtime::call_method(&m.module, "int_div", vec![ints(&[-7, 7]), ints(&[2, 2])]).unwrap();
    let IValue::Tensor(q) = q else { panic!() };
    assert_eq!(q.dtype(), ts_tensor::DType::Int64);
    assert_eq!(q.to_vec::<i64>(), vec![-3, 3]);
    let f = ts_runtime::call_method(&m.module, "filled", vec![]).unwrap();
    let IValue::Tensor(f) = f else { panic!() };
    assert_eq!(f.dtype(), ts_tensor::DType::Float32);

    // The same code in a version 5 file has today's meaning.
    let mut p = parts();
    p.version = "5";
    let m = load_script_module_bytes(build(&p)).unwrap();
    let q =
        ts_runtime::call_method(&m.module, "int_div", vec![ints(&[-7, 7]), ints(&[2, 2])]).unwrap();
    let IValue::Tensor(q) = q else { panic!() };
    assert_eq!(q.to_vec::<f64>(), vec![-3.5, 3.5]);
    let f = ts_runtime::call_method(&m.module, "filled", vec![]).unwrap();
    let IValue::Tensor(f) = f else { panic!() };
    assert_eq!(f.dtype(), ts_tensor::DType::Int64);
}

fn load_err(p: &Parts) -> String {
    match load_script_module_bytes(build(p)) {
        Ok(_) => panic!("a bad legacy archive loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_legacy_archives_are_clear_errors() {
    // A tensor that reaches past its record.
    let mut p = parts();
    p.json = p
        .json
        .replace(r#""dims": ["2", "3"]"#, r#""dims": ["4", "3"]"#);
    let e = load_err(&p);
    assert!(e.contains("tensor 1"), "{e}");

    // A storage record missing from the zip.
    let mut p = parts();
    p.json = model_json(7);
    let e = load_err(&p);
    assert!(e.contains("tensors/7"), "{e}");

    // A TensorID outside the table.
    let mut p = parts();
    let at = p
        .attributes
        .windows(5)
        .position(|w| w == [b'J', 0, 0, 0, 0])
        .unwrap();
    p.attributes[at + 1] = 9;
    let e = load_err(&p);
    assert!(e.contains("TensorID 9"), "{e}");

    // An attribute id past the end of attributes.pkl.
    let mut p = parts();
    p.attributes = attributes_pkl(&[]);
    let e = load_err(&p);
    assert!(e.contains("scale") && e.contains("attributes.pkl"), "{e}");

    // A type string that is not a type.
    let mut p = parts();
    p.json = p.json.replace(
        r#""type": "List[int]""#,
        r#""type": "List[int]\n  def f(self): pass""#,
    );
    let e = load_err(&p);
    assert!(e.contains("bad type"), "{e}");

    // Not JSON, or JSON of the wrong shape.
    let mut p = parts();
    p.json = "{\"mainModule\": 3}".into();
    let e = load_err(&p);
    assert!(e.contains("model.json"), "{e}");

    // Unknown data types and other devices are named.
    let mut p = parts();
    p.json = p.json.replacen("\"DOUBLE\"", "\"STRING\"", 1);
    assert!(load_err(&p).contains("STRING"));
    let mut p = parts();
    p.json = p
        .json
        .replacen("\"device\": \"cpu\"", "\"device\": \"cuda:0\"", 1);
    assert!(load_err(&p).contains("cuda:0"));

    // A hostile pickle global in attributes.pkl is refused by name.
    let mut p = parts();
    let pat: &[u8] = b"__main__\nTensorID\n";
    let at = p
        .attributes
        .windows(pat.len())
        .position(|w| w == pat)
        .unwrap();
    p.attributes
        .splice(at..at + pat.len(), b"os\nsystem\n".iter().copied());
    let e = load_err(&p);
    assert!(e.contains("system"), "{e}");

    // Code that does not compile.
    let mut p = parts();
    p.root_code = p.root_code.replace("self.scale", "self.nope");
    let e = load_err(&p);
    assert!(e.contains("nope"), "{e}");
}

#[test]
fn modern_loader_errors_are_unchanged_for_non_legacy_zips() {
    let mut w = ArchiveWriter::new("x").unwrap();
    w.write_record("data.pkl", b"\x80\x02N.").unwrap();
    let e = load_script_module_bytes(w.finish().unwrap()).err().unwrap();
    assert!(matches!(e, SerializeError::MissingRecord(_)), "{e}");
}
