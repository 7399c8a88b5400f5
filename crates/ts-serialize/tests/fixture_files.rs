//! Files written by real PyTorch 2.15 (`tests/fixtures/generate_fixtures.py`): the torch.save
//! and torch.jit.save features beyond what the conformance cases use.

mod support;

use std::sync::Arc;

use parking_lot::RwLock;
use support::fixture;
use ts_core::types::{ClassType, EnumType};
use ts_core::{IValue, Type, TypeRef};
use ts_serialize::{load_torch_save, ArchiveTypes, InferredClasses, ScriptArchive};
use ts_tensor::{DType, Device, Storage, Tensor};

fn load(name: &str) -> IValue {
    load_torch_save(&fixture(&format!("torch/{name}"))).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn load_err(name: &str) -> String {
    load_torch_save(&fixture(&format!("torch/{name}")))
        .map(|v| panic!("{name} loaded: {v:?}"))
        .unwrap_err()
        .to_string()
}

fn tensor(v: &IValue) -> Tensor {
    match v {
        IValue::Tensor(t) => t.clone(),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn dict_get(v: &IValue, key: &str) -> IValue {
    let IValue::Dict(d) = v else {
        panic!("not a dict: {v:?}")
    };
    let k = ts_core::DictKey(IValue::String(Arc::new(key.to_owned())));
    d.entries
        .read()
        .get(&k)
        .cloned()
        .unwrap_or_else(|| panic!("no key {key}"))
}

fn elements(v: &IValue) -> Vec<IValue> {
    match v {
        IValue::Tuple(t) => t.elements.clone(),
        IValue::List(l) => l.items.read().clone(),
        other => panic!("not a sequence: {other:?}"),
    }
}

#[test]
fn state_dicts_parameters_and_requires_grad() {
    let v = load("save_state_dict.pt");
    let state = dict_get(&v, "state");
    let IValue::Dict(d) = &state else { panic!() };
    let keys: Vec<String> = d
        .entries
        .read()
        .keys()
        .map(|k| format!("{:?}", k.0))
        .collect();
    assert_eq!(keys, [r#"String("weight")"#, r#"String("bias")"#]);
    assert!(matches!(*d.value_type, Type::Tensor(_)));
    assert_eq!(
        tensor(&dict_get(&state, "weight")).sizes().as_slice(),
        &[3, 2]
    );
    let param = tensor(&dict_get(&v, "param"));
    assert!(param.requires_grad());
    assert_eq!(param.to_vec::<f32>(), [0.0, 1.0, 2.0]);
    assert!(tensor(&dict_get(&v, "grad")).requires_grad());
    assert!(!tensor(&dict_get(&state, "bias")).requires_grad());
}

#[test]
fn half_precision() {
    let v = elements(&load("save_half.pt"));
    let bf = tensor(&v[0]);
    assert_eq!(bf.dtype(), DType::BFloat16);
    assert_eq!(bf.to_vec::<f64>(), [1.5, -2.25, 3.0]);
    let h = tensor(&v[1]);
    assert_eq!(h.dtype(), DType::Float16);
    assert_eq!(h.to_vec::<f64>(), [0.5, 65504.0]);
}

#[test]
fn python_views_share_their_storage() {
    // [base[1:, ::2], base, base[3], base[1:, ::2] (same object), base[2, 2]]
    let v = elements(&load("save_views.pt"));
    let t: Vec<Tensor> = v.iter().map(tensor).collect();
    assert_eq!(t[0].storage_offset(), 5);
    assert_eq!(t[0].strides().as_slice(), &[5, 2]);
    assert_eq!(
        t[0].to_vec::<f64>(),
        [5.0, 7.0, 9.0, 10.0, 12.0, 14.0, 15.0, 17.0, 19.0]
    );
    assert_eq!(t[2].to_vec::<f64>(), [15.0, 16.0, 17.0, 18.0, 19.0]);
    assert!(Tensor::is_same(&t[0], &t[3]));
    assert_eq!(t[4].dim(), 0);
    assert_eq!(t[4].to_vec::<f64>(), [12.0]);
    for x in &t[1..] {
        assert!(Storage::ptr_eq(&t[0].storage(), &x.storage()));
    }
}

#[test]
fn protocol_4_pickles() {
    let v = load("save_protocol4.pt");
    let x = tensor(&dict_get(&v, "x"));
    assert_eq!(x.dtype(), DType::Int32);
    assert_eq!(x.to_vec::<i64>(), [1, 2, 3, 4]);
    assert!(matches!(dict_get(&v, "s"), IValue::String(s) if *s == "text"));
    let IValue::List(n) = dict_get(&v, "n") else {
        panic!()
    };
    assert!(matches!(*n.elem_type, Type::Any), "mixed list is List[Any]");
    assert_eq!(n.items.read().len(), 3);
}

#[test]
fn sizes_dtypes_complex_and_ordered_dicts() {
    let v = elements(&load("save_misc.pt"));
    assert_eq!(format!("{:?}", elements(&v[0])), "[Int(2), Int(3)]");
    // torch.float32 and torch.int64 load as their ScalarType numbers.
    assert!(matches!(v[1], IValue::Int(6)));
    assert!(matches!(v[2], IValue::Int(4)));
    assert!(matches!(&v[3], IValue::Complex(c) if **c == (1.0, -2.0)));
    let IValue::Dict(d) = &v[4] else { panic!() };
    assert!(matches!(*d.key_type, Type::Str) && matches!(*d.value_type, Type::Int));
}

#[test]
fn big_endian_storages_are_swapped() {
    let t = tensor(&load("save_big_endian.pt"));
    let want: Vec<f64> = (0..20).map(f64::from).collect();
    assert_eq!(t.to_vec::<f64>(), want);
}

#[test]
fn uint16_and_complex_tensors() {
    // torch.tensor([1, 2, 3, 4]).to(torch.uint16): `_rebuild_tensor_v3` over an UntypedStorage.
    let u = tensor(&load("save_uint16.pt"));
    assert_eq!(u.dtype(), DType::UInt16);
    assert_eq!(u.to_vec::<i64>(), [1, 2, 3, 4]);
    // torch.tensor([1 + 2j]): a ComplexFloatStorage.
    let c = tensor(&load("save_complex_tensor.pt"));
    assert_eq!(c.dtype(), DType::Complex64);
    let z = c.to_vec::<ts_tensor::Complex64>();
    assert_eq!((z[0].re, z[0].im), (1.0, 2.0));
}

#[test]
fn unsupported_formats_are_named() {
    let legacy = load_err("save_legacy.pt");
    assert!(
        legacy.contains("legacy") && legacy.contains("1.6"),
        "{legacy}"
    );
}

#[test]
fn tensor_constants() {
    let mut a = ScriptArchive::open(&fixture("torch/script_constants.pt")).unwrap();
    let constants = a.load_constants().unwrap();
    assert_eq!(constants.len(), 1);
    assert_eq!(tensor(&constants[0]).to_vec::<f32>(), [1.0, 2.0, 3.0, 4.0]);
    a.load_data(&mut InferredClasses::default()).unwrap();
}

/// Classes from the saved state, plus the `Color` enum the archive's code defines.
#[derive(Default)]
struct TestTypes {
    inferred: InferredClasses,
}

impl ArchiveTypes for TestTypes {
    fn resolve_type(&mut self, name: &str) -> ts_serialize::Result<TypeRef> {
        if name == "__torch__.Color" {
            return Ok(Arc::new(Type::Enum(Arc::new(EnumType {
                name: name.into(),
                value_type: Arc::new(Type::Int),
                members: vec![
                    ("RED".into(), IValue::Int(1)),
                    ("GREEN".into(), IValue::Int(2)),
                ],
            }))));
        }
        self.inferred.resolve_type(name)
    }

    fn build_object(
        &mut self,
        class: &Arc<ClassType>,
        state: IValue,
    ) -> ts_serialize::Result<IValue> {
        self.inferred.build_object(class, state)
    }
}

fn attr(obj: &IValue, name: &str) -> IValue {
    let IValue::Object(o) = obj else {
        panic!("not an object: {obj:?}")
    };
    let members = o.class.members.read();
    let i = members
        .attributes
        .iter()
        .position(|a| a.name == name)
        .unwrap_or_else(|| panic!("no attribute {name}"));
    o.slots.read()[i].clone()
}

#[test]
fn typed_attributes_objects_enums_and_devices() {
    let mut a = ScriptArchive::open(&fixture("torch/script_attrs.pt")).unwrap();
    assert_eq!(a.version(), 3);
    assert_eq!(a.extra_files(), ["meta.txt"]);
    assert_eq!(a.read_extra("meta.txt").unwrap(), b"hello");
    assert!(a
        .read_code_for("__torch__")
        .unwrap()
        .unwrap()
        .contains("class Attrs(Module):"));
    assert_eq!(a.read_code_for("__torch__.nothing").unwrap(), None);
    let mut types = TestTypes::default();
    let m = a.load_data(&mut types).unwrap();

    let IValue::Dict(table) = attr(&m, "table") else {
        panic!()
    };
    assert!(matches!(*table.key_type, Type::Str));
    assert!(matches!(&*table.value_type, Type::List(e) if matches!(**e, Type::Int)));
    let b = table.entries.read().values().nth(1).cloned().unwrap();
    // The empty list gets its type from build_intlist, not from its (absent) contents.
    assert!(matches!(b, IValue::List(l) if matches!(*l.elem_type, Type::Int)));

    let IValue::List(pairs) = attr(&m, "pairs") else {
        panic!()
    };
    assert!(matches!(&*pairs.elem_type, Type::Tuple(t) if t.elements.len() == 2));
    let IValue::List(floats) = attr(&m, "floats") else {
        panic!()
    };
    assert!(matches!(*floats.elem_type, Type::Float));
    let IValue::List(flags) = attr(&m, "flags") else {
        panic!()
    };
    assert!(matches!(*flags.elem_type, Type::Bool));
    let IValue::List(ts) = attr(&m, "tensors") else {
        panic!()
    };
    assert!(matches!(*ts.elem_type, Type::Tensor(_)));
    let ts: Vec<Tensor> = ts.items.read().iter().map(tensor).collect();
    assert!(Storage::ptr_eq(&ts[0].storage(), &ts[1].storage()));
    assert_eq!(ts[1].to_vec::<f32>(), [3.0, 4.0, 5.0]);

    assert!(matches!(attr(&m, "maybe"), IValue::None));
    assert!(tensor(&attr(&m, "weight")).requires_grad());
    assert_eq!(tensor(&attr(&m, "steps")).to_vec::<i64>(), [7]);
    assert!(matches!(attr(&m, "dev"), IValue::Device(Device::Cpu)));
    let point = attr(&m, "point");
    assert!(matches!(attr(&point, "x"), IValue::Int(3)));
    assert!(matches!(attr(&point, "y"), IValue::Double(y) if y == 4.5));
    let IValue::Enum(color) = attr(&m, "color") else {
        panic!()
    };
    assert_eq!(color.name, "GREEN");
}

#[test]
fn getstate_objects_need_setstate() {
    let path = fixture("torch/script_getstate.pt");
    let m = ScriptArchive::open(&path)
        .unwrap()
        .load_data(&mut InferredClasses::default())
        .unwrap();
    let state = elements(&attr(&m, "__getstate__"));
    assert_eq!(tensor(&state[0]).to_vec::<f32>(), [1.0, 1.0]);
    assert!(matches!(state[1], IValue::Int(3)));

    /// Classes with no attributes and the default (dict-only) object builder.
    struct Plain;
    impl ArchiveTypes for Plain {
        fn resolve_type(&mut self, name: &str) -> ts_serialize::Result<TypeRef> {
            Ok(Arc::new(Type::Class(Arc::new(ClassType {
                name: name.into(),
                is_module: true,
                members: RwLock::new(Default::default()),
            }))))
        }
    }
    let err = ScriptArchive::open(&path)
        .unwrap()
        .load_data(&mut Plain)
        .unwrap_err();
    assert!(err.to_string().contains("__setstate__"), "{err}");
}

#[test]
fn quantized_tensors_load() {
    // `Quantized` holds `q = torch.quantize_per_tensor(..., 0.1, 0, torch.quint8)` of 2 elements.
    let v = ScriptArchive::open(&fixture("torch/script_quantized.pt"))
        .unwrap()
        .load_data(&mut InferredClasses::default())
        .unwrap();
    let IValue::Object(o) = v else {
        panic!("expected a module object")
    };
    let slots = o.slots.read();
    let q = slots
        .iter()
        .find_map(|s| match s {
            IValue::Tensor(t) if t.is_quantized() => Some(t.clone()),
            _ => None,
        })
        .expect("a quantized tensor attribute");
    let quantizer = q.quantizer().unwrap();
    assert_eq!(quantizer.dtype, ts_tensor::quantized::QDType::QUInt8);
    assert_eq!(
        quantizer.per_tensor("test").unwrap(),
        (0.1, 0),
        "per-tensor parameters"
    );
    assert_eq!(q.sizes().to_vec(), vec![2]);
}

#[test]
fn the_two_formats_are_not_confused() {
    let err = ScriptArchive::open(&fixture("torch/save_views.pt")).unwrap_err();
    assert!(err.to_string().contains("torch.save file"), "{err}");
    let err = load_torch_save(&fixture("torch/script_attrs.pt")).unwrap_err();
    assert!(err.to_string().contains("__torch__.Attrs"), "{err}");
    let err = ScriptArchive::open(&fixture("torch/save_legacy.pt")).unwrap_err();
    assert!(err.to_string().contains("legacy"), "{err}");
}
