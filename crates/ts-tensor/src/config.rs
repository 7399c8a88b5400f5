//! Process-wide tensor settings: the default floating dtype (`torch.get_default_dtype`).

use std::sync::atomic::{AtomicU8, Ordering};

use crate::dtype::DType;
use crate::error::{Error, Result};

static DEFAULT_DTYPE: AtomicU8 = AtomicU8::new(DType::Float32 as u8);

/// The dtype that float literals, `torch.tensor(1.5)`, true division of integers and the factory
/// functions use when none is given. Starts as float32.
pub fn default_dtype() -> DType {
    let v = DEFAULT_DTYPE.load(Ordering::Relaxed);
    DType::from_scalar_type_index(v as i64).unwrap_or(DType::Float32)
}

/// Sets the default dtype, as `torch.set_default_dtype` does: only floating dtypes are accepted.
pub fn set_default_dtype(dtype: DType) -> Result<()> {
    if !dtype.is_floating_point() {
        return Err(Error::new(
            crate::ErrorKind::TypeError,
            format!("only floating-point types are supported as the default type, got {dtype}"),
        ));
    }
    DEFAULT_DTYPE.store(dtype as u8, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_float32_and_rejects_ints() {
        assert_eq!(default_dtype(), DType::Float32);
        assert!(set_default_dtype(DType::Int64).is_err());
        assert_eq!(default_dtype(), DType::Float32);
    }
}
