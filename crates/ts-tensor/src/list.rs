//! Conversion between tensors and nested Python lists (`tolist()`, `torch.tensor(data)`).

use crate::config::default_dtype;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// A nested list of Python numbers, as `tolist()` returns and `torch.tensor` accepts.
#[derive(Clone, Debug, PartialEq)]
pub enum ListValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    List(Vec<ListValue>),
}

impl From<Scalar> for ListValue {
    fn from(s: Scalar) -> Self {
        match s {
            Scalar::Bool(b) => ListValue::Bool(b),
            Scalar::Int(i) => ListValue::Int(i),
            Scalar::Float(f) => ListValue::Float(f),
        }
    }
}

impl Tensor {
    /// `tolist()`: nested lists of `bool`/`int`/`float` (a plain number for a 0-dim tensor).
    pub fn tolist(&self) -> Result<ListValue> {
        let sizes: Vec<usize> = self.sizes().iter().map(|&s| s as usize).collect();
        let dt = self.dtype();
        let leaves: Vec<ListValue> = if dt.is_floating_point() {
            self.contiguous_vec::<f64>()?
                .into_iter()
                .map(ListValue::Float)
                .collect()
        } else if dt == DType::Bool {
            self.contiguous_vec::<bool>()?
                .into_iter()
                .map(ListValue::Bool)
                .collect()
        } else {
            self.contiguous_vec::<i64>()?
                .into_iter()
                .map(ListValue::Int)
                .collect()
        };
        fn build(sizes: &[usize], leaves: &mut std::vec::IntoIter<ListValue>) -> ListValue {
            match sizes.split_first() {
                None => leaves.next().unwrap_or(ListValue::Int(0)),
                Some((&n, rest)) => ListValue::List((0..n).map(|_| build(rest, leaves)).collect()),
            }
        }
        Ok(build(&sizes, &mut leaves.into_iter()))
    }

    /// `torch.tensor(data, dtype)`: a new tensor from nested lists. Without `dtype` the type is
    /// inferred: any float gives the default dtype, else any int gives int64, else bool.
    pub fn from_list(data: &ListValue, dtype: Option<DType>) -> Result<Tensor> {
        let mut sizes: Vec<i64> = Vec::new();
        let mut cur = data;
        while let ListValue::List(items) = cur {
            sizes.push(items.len() as i64);
            match items.first() {
                Some(first) => cur = first,
                None => break,
            }
        }
        let mut flat: Vec<f64> = Vec::new();
        let mut ints: Vec<i64> = Vec::new();
        let mut kind = 0u8; // 0 bool, 1 int, 2 float
        flatten(data, &sizes, 0, &mut flat, &mut ints, &mut kind)?;
        let inferred = match kind {
            2 => default_dtype(),
            1 => DType::Int64,
            _ => DType::Bool,
        };
        let dtype = dtype.unwrap_or(inferred);
        let t = if kind == 2 {
            Tensor::from_vec(flat, &sizes)?
        } else {
            Tensor::from_vec(ints, &sizes)?
        };
        t.to_dtype(dtype, false)
    }
}

fn flatten(
    v: &ListValue,
    sizes: &[i64],
    depth: usize,
    flat: &mut Vec<f64>,
    ints: &mut Vec<i64>,
    kind: &mut u8,
) -> Result<()> {
    match v {
        ListValue::List(items) => {
            let want = sizes.get(depth).copied();
            if want != Some(items.len() as i64) {
                return Err(Error::new(
                    ErrorKind::ValueError,
                    format!(
                        "expected sequence of length {} at dim {depth} (got {})",
                        want.unwrap_or(0),
                        items.len()
                    ),
                ));
            }
            for it in items {
                flatten(it, sizes, depth + 1, flat, ints, kind)?;
            }
            Ok(())
        }
        leaf => {
            if depth != sizes.len() {
                return Err(Error::new(ErrorKind::TypeError, "not a sequence"));
            }
            let (f, i, k) = match leaf {
                ListValue::Bool(b) => (*b as i64 as f64, *b as i64, 0),
                ListValue::Int(x) => (*x as f64, *x, 1),
                ListValue::Float(x) => (*x, *x as i64, 2),
                ListValue::List(_) => (0.0, 0, 0),
            };
            *kind = (*kind).max(k);
            flat.push(f);
            ints.push(i);
            if *kind == 2 && flat.len() != ints.len() {
                return Err(Error::runtime("internal error: list flattening"));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let l = ListValue::List(vec![
            ListValue::List(vec![ListValue::Int(1), ListValue::Int(2)]),
            ListValue::List(vec![ListValue::Int(3), ListValue::Int(4)]),
        ]);
        let t = Tensor::from_list(&l, None).unwrap();
        assert_eq!((t.dtype(), t.sizes().to_vec()), (DType::Int64, vec![2, 2]));
        assert_eq!(t.tolist().unwrap(), l);
        let f = Tensor::from_list(
            &ListValue::List(vec![ListValue::Int(1), ListValue::Float(2.5)]),
            None,
        )
        .unwrap();
        assert_eq!(f.to_vec::<f32>(), vec![1.0, 2.5]);
        assert_eq!(
            Tensor::from_list(&ListValue::Float(3.5), None)
                .unwrap()
                .dim(),
            0
        );
        let bad = ListValue::List(vec![
            ListValue::List(vec![ListValue::Int(1)]),
            ListValue::List(vec![]),
        ]);
        assert_eq!(
            Tensor::from_list(&bad, None).unwrap_err().message,
            "expected sequence of length 1 at dim 1 (got 0)"
        );
        let b = Tensor::from_vec(vec![true], &[]).unwrap();
        assert_eq!(b.tolist().unwrap(), ListValue::Bool(true));
    }
}
