//! NumPy's `.npy` (one array) and `.npz` (a zip of `.npy` files) formats.
//!
//! The format is a magic string, a version, a Python-literal header
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` and the raw elements.
//! Plain numeric and bool dtypes are supported in either byte order and either memory order;
//! structured and object arrays are refused with a clear error.

use std::io::{Read, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::tensor::{DType, Tensor};

const MAGIC: &[u8] = b"\x93NUMPY";

/// The header dtype string of a dtype (little-endian), or `None` when NumPy has no such type.
fn descr_of(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Bool => "|b1",
        DType::UInt8 => "|u1",
        DType::Int8 => "|i1",
        DType::Int16 => "<i2",
        DType::Int32 => "<i4",
        DType::Int64 => "<i8",
        DType::Float16 => "<f2",
        DType::Float32 => "<f4",
        DType::Float64 => "<f8",
        _ => return None,
    })
}

/// The dtype and whether bytes must be swapped, from a header dtype string.
fn dtype_of(descr: &str) -> Result<(DType, bool)> {
    let (order, kind) = descr.split_at(descr.len().min(1));
    let swap = match order {
        "<" | "|" | "=" => false,
        ">" => true,
        _ => return Err(Error::format(format!("unsupported .npy dtype '{descr}'"))),
    };
    let d = match kind {
        "b1" => DType::Bool,
        "u1" => DType::UInt8,
        "i1" => DType::Int8,
        "i2" => DType::Int16,
        "i4" => DType::Int32,
        "i8" => DType::Int64,
        "f2" => DType::Float16,
        "f4" => DType::Float32,
        "f8" => DType::Float64,
        _ => return Err(Error::format(format!("unsupported .npy dtype '{descr}'"))),
    };
    Ok((d, swap && d.size() > 1))
}

/// The value after `'key':` in a header dict, up to the next top-level comma or brace.
fn header_field<'a>(header: &'a str, key: &str) -> Result<&'a str> {
    let pat = format!("'{key}'");
    let at = header
        .find(&pat)
        .ok_or_else(|| Error::format(format!("the .npy header has no '{key}'")))?;
    let rest = header[at + pat.len()..].trim_start();
    let rest = rest
        .strip_prefix(':')
        .ok_or_else(|| Error::format("malformed .npy header"))?
        .trim_start();
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Ok(rest[..i].trim()),
            _ => {}
        }
    }
    Err(Error::format("malformed .npy header"))
}

/// Reads an array from `.npy` bytes.
pub fn npy_from_bytes(bytes: &[u8]) -> Result<Tensor> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(Error::format("not a .npy file (bad magic)"));
    }
    let (header_len, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(Error::format(format!("unsupported .npy version {v}"))),
    };
    let end = start
        .checked_add(header_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| Error::format("truncated .npy header"))?;
    let header = std::str::from_utf8(&bytes[start..end])
        .map_err(|_| Error::format("the .npy header is not text"))?;
    let descr = header_field(header, "descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.strip_suffix('\''))
        .ok_or_else(|| Error::format(format!("unsupported .npy dtype {descr}")))?;
    let (dtype, swap) = dtype_of(descr)?;
    let fortran = match header_field(header, "fortran_order")? {
        "True" => true,
        "False" => false,
        other => return Err(Error::format(format!("bad fortran_order '{other}'"))),
    };
    let shape_text = header_field(header, "shape")?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| Error::format(format!("bad .npy shape '{shape_text}'")))?;
    let shape: Vec<i64> = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<i64>()
                .ok()
                .filter(|&n| n >= 0)
                .ok_or_else(|| Error::format(format!("bad .npy shape '{shape_text}'")))
        })
        .collect::<Result<_>>()?;
    let numel = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n as usize))
        .ok_or_else(|| Error::format("the .npy shape is too large"))?;
    let nbytes = numel
        .checked_mul(dtype.size())
        .ok_or_else(|| Error::format("the .npy shape is too large"))?;
    let data = bytes
        .get(end..end + nbytes)
        .ok_or_else(|| Error::format(format!("truncated .npy data: {nbytes} bytes expected")))?;
    let mut data = data.to_vec();
    if swap {
        for chunk in data.chunks_mut(dtype.size()) {
            chunk.reverse();
        }
    }
    if dtype == DType::Bool && data.iter().any(|&b| b > 1) {
        return Err(Error::format(
            "a .npy bool array holds values other than 0 and 1",
        ));
    }
    let storage = ts_tensor::Storage::from_bytes(&data)?;
    let t = if fortran {
        // Column-major: the reversed shape is row-major; transpose it back.
        let mut strides = vec![0i64; shape.len()];
        let mut s = 1i64;
        for (i, &n) in shape.iter().enumerate() {
            strides[i] = s;
            s *= n.max(1);
        }
        ts_tensor::Tensor::from_parts(storage, &shape, &strides, 0, dtype)?.contiguous()?
    } else {
        let strides = ts_tensor::tensor::contiguous_strides(&shape);
        ts_tensor::Tensor::from_parts(storage, &shape, &strides, 0, dtype)?
    };
    Ok(Tensor(t))
}

/// The `.npy` bytes of a tensor (version 1.0, C order, little-endian).
pub fn npy_bytes(t: &Tensor) -> Result<Vec<u8>> {
    let descr = descr_of(t.dtype()).ok_or_else(|| {
        Error::new(
            crate::ErrorKind::Unsupported,
            format!(
                "NumPy has no dtype for {}; convert the tensor first (to_dtype)",
                t.dtype().name()
            ),
        )
    })?;
    let shape: Vec<String> = t.shape().iter().map(|n| n.to_string()).collect();
    let shape = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so the data starts at a multiple of 64 bytes, ending the header with a newline.
    let total = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let c = t.0.contiguous()?;
    let m = c.meta_snapshot();
    let size = m.dtype.size();
    let all = m.storage.to_bytes();
    let data = &all[m.offset * size..(m.offset + m.numel()) * size];
    let header_len =
        u16::try_from(header.len()).map_err(|_| Error::format("the .npy header is too long"))?;
    let mut out = Vec::with_capacity(total + data.len() + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    Ok(out)
}

/// Reads a `.npy` file.
pub fn load_npy(path: impl AsRef<Path>) -> Result<Tensor> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    npy_from_bytes(&bytes)
        .map_err(|e| Error::format(format!("{}: {}", path.display(), e.message())))
}

/// Writes a tensor as a `.npy` file (`numpy.load` reads it).
pub fn save_npy(path: impl AsRef<Path>, t: &Tensor) -> Result<()> {
    let path = path.as_ref();
    std::fs::write(path, npy_bytes(t)?).map_err(|e| Error::io(path, e))
}

/// Reads every array of `.npz` bytes, in archive order, named without the `.npy` suffix.
pub fn npz_from_bytes(bytes: &[u8]) -> Result<Vec<(String, Tensor)>> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| Error::format(format!("not a .npz file: {e}")))?;
    let mut out = Vec::with_capacity(z.len());
    for i in 0..z.len() {
        let mut f = z
            .by_index(i)
            .map_err(|e| Error::format(format!("bad .npz entry {i}: {e}")))?;
        let name = f
            .name()
            .map_err(|e| Error::format(format!("bad .npz entry {i}: {e}")))?
            .trim_end_matches(".npy")
            .to_string();
        let mut data = Vec::new();
        f.read_to_end(&mut data)
            .map_err(|e| Error::format(format!("bad .npz entry '{name}': {e}")))?;
        let t = npy_from_bytes(&data)
            .map_err(|e| Error::format(format!("'{name}' in the .npz: {}", e.message())))?;
        out.push((name, t));
    }
    Ok(out)
}

/// Reads a `.npz` file.
pub fn load_npz(path: impl AsRef<Path>) -> Result<Vec<(String, Tensor)>> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    npz_from_bytes(&bytes)
        .map_err(|e| Error::format(format!("{}: {}", path.display(), e.message())))
}

/// Writes named tensors as an uncompressed `.npz` file (`numpy.load` reads it).
pub fn save_npz(path: impl AsRef<Path>, arrays: &[(String, Tensor)]) -> Result<()> {
    let path = path.as_ref();
    let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut z = zip::ZipWriter::new(file);
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, t) in arrays {
        let bytes = npy_bytes(t)?;
        z.start_file(format!("{name}.npy"), opts)
            .and_then(|_| z.write_all(&bytes).map_err(Into::into))
            .map_err(|e| Error::format(format!("cannot write {}: {e}", path.display())))?;
    }
    z.finish()
        .map_err(|e| Error::format(format!("cannot write {}: {e}", path.display())))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_layouts() {
        let t = Tensor::from_data(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
        let bytes = npy_bytes(&t).unwrap();
        assert_eq!((bytes.len() - 24) % 64, 0);
        let back = npy_from_bytes(&bytes).unwrap();
        assert!(back.bit_equal(&t));
        // A transposed (non-contiguous) tensor is written in its logical order.
        let tt = t.transpose(0, 1).unwrap();
        let back = npy_from_bytes(&npy_bytes(&tt).unwrap()).unwrap();
        assert_eq!(back.to_vec::<f32>(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        // Fortran order and big-endian data, as NumPy can write them.
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        let h = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }\n";
        f.extend_from_slice(&(h.len() as u16).to_le_bytes());
        f.extend_from_slice(h.as_bytes());
        for v in [1i16, 3, 2, 4] {
            f.extend_from_slice(&v.to_be_bytes());
        }
        let t = npy_from_bytes(&f).unwrap();
        assert_eq!(t.to_vec::<i16>(), vec![1, 2, 3, 4]);
        let s = npy_from_bytes(&npy_bytes(&Tensor::scalar(5i64)).unwrap()).unwrap();
        assert_eq!((s.dim(), s.item::<i64>().unwrap()), (0, 5));
    }

    #[test]
    fn malformed_files_are_errors() {
        assert!(npy_from_bytes(b"not numpy").is_err());
        let t = Tensor::from_data(&[1.0f64, 2.0], &[2]).unwrap();
        let bytes = npy_bytes(&t).unwrap();
        assert!(npy_from_bytes(&bytes[..bytes.len() - 1]).is_err());
        let text = String::from_utf8_lossy(&bytes).replace("<f8", "<c8");
        assert!(npy_from_bytes(text.as_bytes()).is_err());
        let mut huge = b"\x93NUMPY\x01\x00".to_vec();
        let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }";
        huge.extend_from_slice(&(h.len() as u16).to_le_bytes());
        huge.extend_from_slice(h.as_bytes());
        assert!(npy_from_bytes(&huge).is_err());
        assert!(npz_from_bytes(b"PK junk").is_err());
    }

    #[test]
    fn npz_keeps_names_and_order() {
        let dir = std::env::temp_dir().join(format!("tsrs-npz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.npz");
        let a = Tensor::from_slice(&[1i32, 2]);
        let b = Tensor::from_slice(&[true, false]);
        save_npz(&p, &[("z".into(), a.clone()), ("a".into(), b.clone())]).unwrap();
        let back = load_npz(&p).unwrap();
        assert_eq!(back[0].0, "z");
        assert!(back[0].1.bit_equal(&a));
        assert!(back[1].1.bit_equal(&b));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
