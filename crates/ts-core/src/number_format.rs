//! Number formatting as PyTorch prints IValues (`2.`, `0.10000000000000001`, `1e-05`, `inf`).

pub use ts_tensor::aten_format::format_g;

/// A float as TorchScript prints it (`str(2.0) == "2."`, `0.10000000000000001`, `1e+20`):
/// 17 significant digits, and a trailing `.` when the text would otherwise read as an int.
pub fn format_double(d: f64) -> String {
    let mut s = format_g(d, 17);
    if s.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        s.push('.');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_pytorch_printing() {
        // Expected values printed by PyTorch 2.15 (`print` in a scripted function and the
        // defaults in corpus/schemas.txt).
        assert_eq!(format_double(2.0), "2.");
        assert_eq!(format_double(-0.0), "-0.");
        assert_eq!(format_double(0.1), "0.10000000000000001");
        assert_eq!(format_double(1e-5), "1.0000000000000001e-05");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(0.16), "0.16");
        assert_eq!(format_double(1e-8), "1e-08");
        assert_eq!(format_double(1.0 / 3.0), "0.33333333333333331");
        assert_eq!(format_double(f64::INFINITY), "inf");
        assert_eq!(format_double(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_double(f64::NAN), "nan");
        assert_eq!(format_double(1e-6), "9.9999999999999995e-07");
        assert_eq!(format_double(1e10), "10000000000.");
        assert_eq!(format_double(123456789012.0), "123456789012.");
        assert_eq!(format_double(0.0001234), "0.00012339999999999999");
        assert_eq!(format_g(123456.0, 6), "123456");
        assert_eq!(format_g(1234567.0, 6), "1.23457e+06");
    }
}
