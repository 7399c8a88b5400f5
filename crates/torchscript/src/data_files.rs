//! Reading a model's inputs from files and writing its outputs: `torch.save` files (`.pt`),
//! NumPy (`.npy`, `.npz`), safetensors, and random inputs of a given shape — so that a model
//! can be tried without Python.

use std::path::Path;

use crate::error::{Error, ErrorKind, Result};
use crate::ivalue::IValue;
use crate::tensor::{DType, Tensor};

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Reads positional arguments from a file, chosen by extension:
///
/// * `.npy`: one array;
/// * `.npz`: every array, in archive order (the order given to `numpy.savez`);
/// * `.safetensors`: every tensor, by name order;
/// * anything else: a `torch.save` file of a tuple or list of arguments (or one value).
pub fn read_inputs(path: impl AsRef<Path>) -> Result<Vec<IValue>> {
    let path = path.as_ref();
    let tensors =
        |v: Vec<(String, Tensor)>| v.into_iter().map(|(_, t)| IValue::Tensor(t)).collect();
    match extension(path).as_str() {
        "npy" => Ok(vec![IValue::Tensor(crate::npy::load_npy(path)?)]),
        "npz" => Ok(tensors(crate::npy::load_npz(path)?)),
        "safetensors" => Ok(tensors(load_safetensors(path)?)),
        _ => match load_torch_save(path)? {
            IValue::Tuple(items) | IValue::List(items) => Ok(items),
            other => Ok(vec![other]),
        },
    }
}

/// Writes a result, chosen by extension: `.npy` (a tensor), `.npz` (a tensor, or a tuple or
/// list of tensors as `arr_0`, `arr_1`, ...), anything else a `torch.save` file.
pub fn write_output(path: impl AsRef<Path>, value: &IValue) -> Result<()> {
    let path = path.as_ref();
    let not_tensors = || {
        Error::new(
            ErrorKind::Unsupported,
            format!(
                "{} holds tensors only, but the result is a {}; write a .pt file instead",
                path.display(),
                value.type_name()
            ),
        )
    };
    match extension(path).as_str() {
        "npy" => match value {
            IValue::Tensor(t) => crate::npy::save_npy(path, t),
            _ => Err(not_tensors()),
        },
        "npz" => {
            let items: Vec<&IValue> = match value {
                IValue::Tuple(v) | IValue::List(v) => v.iter().collect(),
                v => vec![v],
            };
            let arrays = items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    IValue::Tensor(t) => Ok((format!("arr_{i}"), t.clone())),
                    _ => Err(not_tensors()),
                })
                .collect::<Result<Vec<_>>>()?;
            crate::npy::save_npz(path, &arrays)
        }
        _ => save_torch_save(path, value),
    }
}

/// Reads a `torch.save` file (as `torch.load` does, without running code).
pub fn load_torch_save(path: impl AsRef<Path>) -> Result<IValue> {
    let path = path.as_ref();
    let v = ts_serialize::load_torch_save(path)
        .map_err(|e| Error::format(format!("cannot load {}: {e}", path.display())))?;
    Ok(IValue::from_core(v))
}

/// Writes a value as a `torch.save` file that `torch.load` reads.
pub fn save_torch_save(path: impl AsRef<Path>, value: &IValue) -> Result<()> {
    let path = path.as_ref();
    ts_serialize::save_torch_save(&value.clone().into_core(), path)
        .map_err(|e| Error::format(format!("cannot write {}: {e}", path.display())))
}

/// Reads every tensor of a safetensors file, sorted by name.
pub fn load_safetensors(path: impl AsRef<Path>) -> Result<Vec<(String, Tensor)>> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    safetensors_from_bytes(&bytes)
        .map_err(|e| Error::format(format!("{}: {}", path.display(), e.message())))
}

/// Reads every tensor of safetensors bytes, sorted by name.
pub fn safetensors_from_bytes(bytes: &[u8]) -> Result<Vec<(String, Tensor)>> {
    use safetensors::Dtype as S;
    let st = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| Error::format(format!("not a safetensors file: {e}")))?;
    let mut out = Vec::new();
    for (name, view) in st.tensors() {
        let dtype = match view.dtype() {
            S::BOOL => DType::Bool,
            S::U8 => DType::UInt8,
            S::I8 => DType::Int8,
            S::I16 => DType::Int16,
            S::I32 => DType::Int32,
            S::I64 => DType::Int64,
            S::F16 => DType::Float16,
            S::BF16 => DType::BFloat16,
            S::F32 => DType::Float32,
            S::F64 => DType::Float64,
            other => {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!("tensor '{name}' has dtype {other:?}, which tsrs does not support"),
                ))
            }
        };
        let shape: Vec<i64> = view
            .shape()
            .iter()
            .map(|&n| i64::try_from(n).map_err(|_| Error::format("tensor too large")))
            .collect::<Result<_>>()?;
        let storage = ts_tensor::Storage::from_bytes(view.data())?;
        let strides = ts_tensor::tensor::contiguous_strides(&shape);
        let t = ts_tensor::Tensor::from_parts(storage, &shape, &strides, 0, dtype)?;
        out.push((name, Tensor(t)));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Parses a shape written `1x3x224x224` (or `1,3,224,224`).
pub fn parse_shape(text: &str) -> Result<Vec<i64>> {
    let parts: Vec<&str> = text.split(['x', 'X', ',']).map(str::trim).collect();
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    parts
        .iter()
        .map(|p| {
            p.parse::<i64>().ok().filter(|&n| n >= 0).ok_or_else(|| {
                Error::new(
                    ErrorKind::Argument,
                    format!("bad shape '{text}': expected sizes like 1x3x224x224"),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse() {
        assert_eq!(parse_shape("1x3x224x224").unwrap(), vec![1, 3, 224, 224]);
        assert_eq!(parse_shape("2,5").unwrap(), vec![2, 5]);
        assert!(parse_shape("2xa").is_err());
        assert!(parse_shape("-1").is_err());
    }

    #[test]
    fn safetensors_are_read_by_name() {
        // A hand-made file: header length, JSON header, data.
        let header = r#"{"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"I64","shape":[],"data_offsets":[8,16]}}"#;
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&1.5f32.to_le_bytes());
        bytes.extend_from_slice(&2.5f32.to_le_bytes());
        bytes.extend_from_slice(&7i64.to_le_bytes());
        let ts = safetensors_from_bytes(&bytes).unwrap();
        assert_eq!(ts[0].0, "a");
        assert_eq!(ts[0].1.item::<i64>().unwrap(), 7);
        assert_eq!(ts[1].1.to_vec::<f32>(), vec![1.5, 2.5]);
        assert!(safetensors_from_bytes(&bytes[..20]).is_err());
    }
}
