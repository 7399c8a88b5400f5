//! Writes sample `torch.save` files into a folder, for checking them with real PyTorch:
//!
//! ```sh
//! cargo run -p ts-serialize --example write_torch_save_samples -- /tmp/samples
//! python3 crates/ts-serialize/tests/fixtures/check_samples_with_torch.py /tmp/samples
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use indexmap::IndexMap;
use parking_lot::RwLock;
use ts_core::{Dict, DictKey, IValue, List, Tuple, Type};
use ts_serialize::save_torch_save;
use ts_tensor::{DType, Device, Storage, Tensor};

fn list(items: Vec<IValue>) -> IValue {
    IValue::List(Arc::new(List {
        elem_type: Arc::new(Type::Any),
        items: RwLock::new(items),
    }))
}

fn tuple(items: Vec<IValue>) -> IValue {
    IValue::Tuple(Arc::new(Tuple {
        elements: items,
        named_type: None,
    }))
}

fn s(text: &str) -> IValue {
    IValue::String(Arc::new(text.to_owned()))
}

/// A contiguous tensor whose byte `i` is `(7 * i + 3) % 256` (bools: `i % 2`), which the Python
/// checker recomputes.
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
    let storage = Storage::from_bytes(&bytes).expect("storage");
    let strides = ts_tensor::tensor::contiguous_strides(sizes);
    Tensor::from_parts(storage, sizes, &strides, 0, dtype).expect("tensor")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: write_torch_save_samples DIR")?,
    );
    std::fs::create_dir_all(&dir)?;

    let mut entries = IndexMap::new();
    entries.insert(DictKey(s("b")), IValue::Double(1.5));
    entries.insert(DictKey(s("a")), IValue::Double(-2.0));
    let scalars = tuple(vec![
        IValue::None,
        IValue::Bool(true),
        IValue::Int(255),
        IValue::Int(65536),
        IValue::Int(-5),
        IValue::Int(i64::MAX),
        IValue::Int(i64::MIN),
        IValue::Double(0.1),
        s("héllo"),
        list(vec![IValue::Int(1), s("two"), list(vec![])]),
        IValue::Dict(Arc::new(Dict {
            key_type: Arc::new(Type::Str),
            value_type: Arc::new(Type::Float),
            entries: RwLock::new(entries),
        })),
        tuple(vec![]),
        IValue::Complex(Arc::new((1.5, -2.0))),
        list((0..2500).map(IValue::Int).collect()),
    ]);
    save_torch_save(&scalars, &dir.join("scalars.pt"))?;
    // torchsave.py has no torch.device on its allow-list, so devices get a file of their own.
    save_torch_save(&IValue::Device(Device::Cpu), &dir.join("device.pt"))?;

    let dtypes = list(
        DType::ALL
            .iter()
            .map(|&d| IValue::Tensor(tensor(d, &[2, 3])))
            .collect(),
    );
    save_torch_save(&dtypes, &dir.join("dtypes.pt"))?;

    let base = tensor(DType::Float32, &[4, 5]);
    let view = Tensor::from_parts(base.storage(), &[3, 3], &[2, 5], 5, DType::Float32)?;
    let row = Tensor::from_parts(base.storage(), &[5], &[1], 15, DType::Float32)?;
    row.set_requires_grad(true);
    let scalar = Tensor::from_parts(base.storage(), &[], &[], 19, DType::Float32)?;
    let views = tuple(vec![
        IValue::Tensor(view.clone()),
        IValue::Tensor(base),
        IValue::Tensor(row),
        IValue::Tensor(view),
        IValue::Tensor(scalar),
        IValue::Tensor(tensor(DType::Int64, &[0])),
    ]);
    save_torch_save(&views, &dir.join("views.pt"))?;
    println!(
        "wrote scalars.pt, device.pt, dtypes.pt and views.pt to {}",
        dir.display()
    );
    Ok(())
}
