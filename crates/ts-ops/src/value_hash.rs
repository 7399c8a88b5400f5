//! `aten::hash.generic` (`hash(x)` in TorchScript): the value ATen's `IValue::hash` computes,
//! bit for bit, so scripted programs that print or branch on a hash agree with PyTorch.
//!
//! ATen hashes through `std::hash` of libstdc++: integers and bools hash to themselves,
//! strings and doubles through `_Hash_bytes` (a 64-bit Murmur variant, seed `0xc70f6907`;
//! `±0.0` hash to 0), tuples fold their elements' hashes with boost's `hash_combine`, devices
//! pack `(type << 16) | index`, tensors hash by identity. Lists, dicts and objects are refused
//! as in ATen.

use ts_core::IValue;
use ts_tensor::{Device, Error};

use crate::registry::{op, Registry};
use crate::schema_table::schema_line;
use crate::stack::pop;

/// libstdc++'s `_Hash_bytes` multiplier.
const MUL: u64 = (0xc6a4_a793_u64 << 32) + 0x5bd1_e995;
/// The seed `std::hash<std::string>` and `std::hash<double>` pass to `_Hash_bytes`.
const SEED: u64 = 0xc70f_6907;

fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

/// libstdc++'s `_Hash_bytes(bytes, len, seed)` for a 64-bit `size_t`.
fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    let mut h = seed ^ (bytes.len() as u64).wrapping_mul(MUL);
    let mut chunks = bytes.chunks_exact(8);
    for c in chunks.by_ref() {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let data = shift_mix(u64::from_le_bytes(w).wrapping_mul(MUL)).wrapping_mul(MUL);
        h ^= data;
        h = h.wrapping_mul(MUL);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h ^= u64::from_le_bytes(w);
        h = h.wrapping_mul(MUL);
    }
    shift_mix(shift_mix(h).wrapping_mul(MUL))
}

/// boost/c10's `hash_combine`.
fn combine(seed: u64, v: u64) -> u64 {
    seed ^ v
        .wrapping_add(0x9e37_79b9)
        .wrapping_add(seed << 6)
        .wrapping_add(seed >> 2)
}

/// ATen's `IValue::hash(v)` as the unsigned `size_t` it computes.
pub fn ivalue_hash(v: &IValue) -> Result<u64, Error> {
    Ok(match v {
        IValue::None => 0,
        IValue::Bool(b) => *b as u64,
        IValue::Int(i) => *i as u64,
        IValue::Double(d) => {
            if *d == 0.0 {
                0
            } else {
                hash_bytes(&d.to_le_bytes(), SEED)
            }
        }
        IValue::String(s) => hash_bytes(s.as_bytes(), SEED),
        IValue::Tuple(t) => {
            let mut seed = 0;
            for e in &t.elements {
                seed = combine(seed, ivalue_hash(e)?);
            }
            seed
        }
        IValue::Device(d) => match d {
            Device::Cpu => 0xff,
            Device::Cuda(i) => (1 << 16) | i.map_or(0xff, u64::from),
        },
        // By identity, as ATen hashes the TensorImpl pointer.
        IValue::Tensor(t) => t.id() as u64,
        other => {
            return Err(Error::runtime(format!(
                "Can't hash IValues with tag '{}'",
                other.tag_name()
            )))
        }
    })
}

/// Registers `aten::hash.generic`.
pub fn register(r: &Registry) {
    if let Some(line) = schema_line("aten::hash.generic") {
        let _ = r.register(
            line,
            op(|s| {
                let v = pop(s)?;
                s.push(IValue::Int(ivalue_hash(&v)? as i64));
                Ok(())
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn h(v: IValue) -> i64 {
        ivalue_hash(&v).unwrap() as i64
    }

    fn s(x: &str) -> IValue {
        IValue::String(Arc::new(x.to_string()))
    }

    #[test]
    fn matches_torch() {
        // Values torch.jit.script printed for `hash(...)`.
        assert_eq!(h(IValue::Int(-5)), -5);
        assert_eq!(h(s("ab")), 5498234120169091963);
        assert_eq!(h(s("hello world, long string")), 4180743170449533566);
        assert_eq!(h(s("")), 6142509188972423790);
        assert_eq!(h(IValue::Double(1.5)), 4982507072649106663);
        assert_eq!(h(IValue::Double(-0.0)), 0);
        assert_eq!(h(IValue::Bool(true)), 1);
        assert_eq!(h(IValue::None), 0);
        assert_eq!(h(IValue::Device(Device::Cpu)), 255);
        let tup = |v: Vec<IValue>| {
            IValue::Tuple(Arc::new(ts_core::ivalue::Tuple {
                elements: v,
                named_type: None,
            }))
        };
        assert_eq!(h(tup(vec![IValue::Int(3)])), 2654435772);
        assert_eq!(h(tup(vec![IValue::Int(3), s("ab")])), 5498234295085908767);
        assert_eq!(
            h(tup(vec![
                IValue::Int(3),
                tup(vec![s("hello world, long string"), IValue::Double(2.25)])
            ])),
            1568442553698061262
        );
    }
}
