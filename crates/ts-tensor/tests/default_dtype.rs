//! The global default dtype changes what float literals, true division and factories produce.
//! This lives in its own test binary because the setting is process-wide.

use ts_tensor::{default_dtype, factory, set_default_dtype, DType, Scalar, Tensor};

#[test]
fn default_dtype_drives_inference() {
    assert_eq!(default_dtype(), DType::Float32);
    set_default_dtype(DType::Float64).unwrap();
    let i = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
    // torch.set_default_dtype(torch.float64): int / int -> float64, int + 0.5 -> float64
    assert_eq!(i.div(&i).unwrap().dtype(), DType::Float64);
    assert_eq!(
        i.add_scalar(Scalar::Float(0.5), Scalar::Int(1))
            .unwrap()
            .dtype(),
        DType::Float64
    );
    assert_eq!(factory::ones(&[2], None).unwrap().dtype(), DType::Float64);
    assert_eq!(
        factory::full(&[1], Scalar::Float(1.5), None)
            .unwrap()
            .dtype(),
        DType::Float64
    );
    // A float64 tensor now prints without a dtype suffix; float32 gets one.
    assert_eq!(
        factory::ones(&[2], None).unwrap().to_string(),
        "tensor([1., 1.])"
    );
    assert_eq!(
        factory::ones(&[2], Some(DType::Float32))
            .unwrap()
            .to_string(),
        "tensor([1., 1.], dtype=torch.float32)"
    );
    assert!(set_default_dtype(DType::Int32).is_err());
    set_default_dtype(DType::Float32).unwrap();
    assert_eq!(i.div(&i).unwrap().dtype(), DType::Float32);
}
