//! Values written with `save_torch_save_bytes` read back identically with `load_torch_save_bytes`:
//! every dtype, views with offsets and strides, storages shared between tensors, nested
//! containers and scalars.

mod support;

use std::sync::Arc;

use indexmap::IndexMap;
use parking_lot::RwLock;
use support::{digest, tensor_fnv};
use ts_core::{Dict, DictKey, IValue, List, Tuple, Type, TypeRef};
use ts_serialize::{load_torch_save_bytes, save_torch_save_bytes, Archive};
use ts_tensor::{DType, Device, Storage, Tensor};

fn list(elem: Type, items: Vec<IValue>) -> IValue {
    IValue::List(Arc::new(List {
        elem_type: Arc::new(elem),
        items: RwLock::new(items),
    }))
}

fn tuple(items: Vec<IValue>) -> IValue {
    IValue::Tuple(Arc::new(Tuple {
        elements: items,
        named_type: None,
    }))
}

fn dict(key: Type, value: Type, entries: Vec<(IValue, IValue)>) -> IValue {
    let map: IndexMap<DictKey, IValue> =
        entries.into_iter().map(|(k, v)| (DictKey(k), v)).collect();
    IValue::Dict(Arc::new(Dict {
        key_type: Arc::new(key),
        value_type: Arc::new(value),
        entries: RwLock::new(map),
    }))
}

fn s(text: &str) -> IValue {
    IValue::String(Arc::new(text.to_owned()))
}

/// A tensor of `dtype` over a storage of distinct bytes.
fn tensor(dtype: DType, sizes: &[i64]) -> Tensor {
    let numel: i64 = sizes.iter().product();
    let bytes: Vec<u8> = (0..numel as usize * dtype.size())
        .map(|i| {
            if dtype == DType::Bool {
                (i % 2) as u8
            } else {
                (i * 7 + 3) as u8
            }
        })
        .collect();
    let storage = Storage::from_bytes(&bytes).unwrap();
    let strides = ts_tensor::tensor::contiguous_strides(sizes);
    Tensor::from_parts(storage, sizes, &strides, 0, dtype).unwrap()
}

fn round_trip(v: &IValue) -> IValue {
    let bytes = save_torch_save_bytes(v, "archive").unwrap();
    load_torch_save_bytes(&bytes).unwrap()
}

#[test]
fn scalars_and_containers() {
    let v = tuple(vec![
        IValue::None,
        IValue::Bool(true),
        IValue::Bool(false),
        IValue::Int(0),
        IValue::Int(255),
        IValue::Int(65535),
        IValue::Int(-5),
        IValue::Int(i64::MAX),
        IValue::Int(i64::MIN),
        IValue::Double(-0.0),
        IValue::Double(f64::INFINITY),
        IValue::Double(1e-300),
        s(""),
        s("héllo"),
        list(Type::Int, vec![IValue::Int(1), IValue::Int(2)]),
        list(Type::Any, vec![]),
        dict(
            Type::Str,
            Type::Float,
            vec![(s("b"), IValue::Double(1.5)), (s("a"), IValue::Double(2.0))],
        ),
        dict(Type::Int, Type::Str, vec![(IValue::Int(3), s("x"))]),
        tuple(vec![]),
        tuple(vec![
            tuple(vec![IValue::Int(1)]),
            list(Type::Str, vec![s("p"), s("q")]),
        ]),
    ]);
    let back = round_trip(&v);
    assert_eq!(digest(&back), digest(&v));
}

#[test]
fn long_lists_and_dicts_use_several_batches() {
    let items: Vec<IValue> = (0..2500).map(IValue::Int).collect();
    let entries: Vec<(IValue, IValue)> = (0..1001)
        .map(|i| (IValue::Int(i), IValue::Bool(i % 2 == 0)))
        .collect();
    let v = tuple(vec![
        list(Type::Int, items),
        dict(Type::Int, Type::Bool, entries),
    ]);
    assert_eq!(digest(&round_trip(&v)), digest(&v));
}

#[test]
fn element_types_are_inferred_on_load() {
    let v = tuple(vec![
        list(Type::Int, vec![IValue::Int(1)]),
        list(Type::Any, vec![IValue::Int(1), IValue::Double(2.0)]),
        list(Type::Any, vec![]),
    ]);
    let IValue::Tuple(t) = round_trip(&v) else {
        panic!()
    };
    let types: Vec<TypeRef> = t
        .elements
        .iter()
        .map(|e| match e {
            IValue::List(l) => l.elem_type.clone(),
            _ => panic!(),
        })
        .collect();
    assert!(matches!(*types[0], Type::Int));
    assert!(matches!(*types[1], Type::Any));
    assert!(matches!(*types[2], Type::Any));
}

#[test]
fn tensors_of_every_dtype() {
    let tensors: Vec<IValue> = DType::ALL
        .iter()
        .map(|&d| IValue::Tensor(tensor(d, &[2, 3])))
        .collect();
    let v = list(Type::Any, tensors.clone());
    let back = round_trip(&v);
    let IValue::List(l) = &back else { panic!() };
    for (orig, got) in tensors.iter().zip(l.items.read().iter()) {
        let (IValue::Tensor(a), IValue::Tensor(b)) = (orig, got) else {
            panic!()
        };
        assert_eq!(a.dtype(), b.dtype());
        assert_eq!(a.sizes(), b.sizes());
        assert_eq!(a.meta().storage.to_bytes(), b.meta().storage.to_bytes());
    }
    assert_eq!(digest(&back), digest(&v));
}

#[test]
fn views_keep_offsets_strides_and_one_shared_storage() {
    let base = tensor(DType::Float32, &[4, 5]);
    let storage = base.storage();
    // base[1:, ::2].t() : offset 5, sizes [3, 3], strides [2, 5]
    let view = Tensor::from_parts(storage.clone(), &[3, 3], &[2, 5], 5, DType::Float32).unwrap();
    let row = Tensor::from_parts(storage, &[5], &[1], 15, DType::Float32).unwrap();
    row.set_requires_grad(true);
    let v = tuple(vec![
        IValue::Tensor(view.clone()),
        IValue::Tensor(base.clone()),
        IValue::Tensor(row.clone()),
        IValue::Tensor(view.clone()),
    ]);
    let bytes = save_torch_save_bytes(&v, "archive").unwrap();
    let mut archive = Archive::from_bytes(bytes.clone()).unwrap();
    let storage_records: Vec<&String> = archive
        .records()
        .iter()
        .filter(|r| r.starts_with("data/"))
        .collect();
    assert_eq!(
        storage_records,
        ["data/0"],
        "one storage record for three tensors"
    );
    assert_eq!(archive.read_record("data/0").unwrap().len(), 80);

    let back = load_torch_save_bytes(&bytes).unwrap();
    let IValue::Tuple(t) = &back else { panic!() };
    let ts: Vec<Tensor> = t
        .elements
        .iter()
        .map(|e| match e {
            IValue::Tensor(t) => t.clone(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(ts[0].storage_offset(), 5);
    assert_eq!(ts[0].strides().as_slice(), &[2, 5]);
    assert_eq!(ts[2].storage_offset(), 15);
    assert!(ts[2].requires_grad());
    assert!(!ts[0].requires_grad());
    assert!(Storage::ptr_eq(&ts[0].storage(), &ts[1].storage()));
    assert!(Storage::ptr_eq(&ts[0].storage(), &ts[2].storage()));
    // The same tensor twice stays one tensor.
    assert!(Tensor::is_same(&ts[0], &ts[3]));
    assert_eq!(tensor_fnv(&ts[0]), tensor_fnv(&view));
    assert_eq!(tensor_fnv(&ts[2]), tensor_fnv(&row));
    // Element 15 of the shared storage is both base[3, 0] and row[0].
    assert_eq!(ts[2].to_vec::<f32>()[0], ts[1].to_vec::<f32>()[15]);
}

#[test]
fn shared_lists_stay_shared() {
    let inner = list(Type::Int, vec![IValue::Int(7)]);
    let v = tuple(vec![inner.clone(), inner]);
    let back = round_trip(&v);
    let IValue::Tuple(t) = &back else { panic!() };
    let (IValue::List(a), IValue::List(b)) = (&t.elements[0], &t.elements[1]) else {
        panic!()
    };
    assert!(Arc::ptr_eq(a, b));
}

#[test]
fn complex_and_device_values() {
    let v = tuple(vec![
        IValue::Complex(Arc::new((1.5, -2.0))),
        IValue::Device(Device::Cpu),
    ]);
    let back = round_trip(&v);
    let IValue::Tuple(t) = &back else { panic!() };
    assert!(matches!(&t.elements[0], IValue::Complex(c) if **c == (1.5, -2.0)));
    assert!(matches!(t.elements[1], IValue::Device(Device::Cpu)));
}

#[test]
fn layout_matches_torch_save() {
    let v = tuple(vec![IValue::Tensor(tensor(DType::Int64, &[3]))]);
    let bytes = save_torch_save_bytes(&v, "inputs").unwrap();
    let mut a = Archive::from_bytes(bytes).unwrap();
    assert_eq!(a.name(), "inputs");
    assert_eq!(
        a.records(),
        [
            "data.pkl",
            ".format_version",
            ".storage_alignment",
            "byteorder",
            "data/0",
            "version",
            ".data/serialization_id"
        ]
    );
    assert_eq!(a.read_text("version").unwrap(), "3\n");
    assert_eq!(a.read_text("byteorder").unwrap(), "little");
    assert_eq!(a.read_text(".format_version").unwrap(), "1");
    assert_eq!(a.read_text(".storage_alignment").unwrap(), "64");
}

#[test]
fn unsupported_values_are_errors() {
    let cyclic = Arc::new(List {
        elem_type: Arc::new(Type::Any),
        items: RwLock::new(vec![]),
    });
    cyclic.items.write().push(IValue::List(cyclic.clone()));
    // Writing a cycle works (the memo refers back), reading it is refused.
    let bytes = save_torch_save_bytes(&IValue::List(cyclic.clone()), "archive").unwrap();
    let err = load_torch_save_bytes(&bytes).unwrap_err().to_string();
    assert!(err.contains("recursive"), "{err}");
    cyclic.items.write().clear();

    assert!(save_torch_save_bytes(&IValue::Uninitialized, "archive").is_err());
    let mut deep = IValue::Int(1);
    for _ in 0..1000 {
        deep = list(Type::Any, vec![deep]);
    }
    let err = save_torch_save_bytes(&deep, "archive")
        .unwrap_err()
        .to_string();
    assert!(err.contains("nested"), "{err}");
}
