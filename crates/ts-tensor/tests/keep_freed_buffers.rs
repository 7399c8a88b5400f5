//! `set_keep_freed_buffers`: freed large tensors stay resident for reuse by default, and go
//! back to the system when a program turns that off (its own process: the switch is global).

use ts_tensor::{DType, Scalar, Tensor};

/// This process's resident memory in bytes (Linux `/proc/self/statm`, in pages).
#[cfg(target_os = "linux")]
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// A 64 MiB tensor with every page written.
fn touched() -> Tensor {
    let t = Tensor::zeros(&[16 << 20], DType::Float32).unwrap();
    t.fill_(Scalar::Float(1.0)).unwrap();
    t
}

#[cfg(target_os = "linux")]
#[test]
fn freed_buffers_are_kept_until_the_switch_releases_them() {
    const MB: usize = 1 << 20;
    let before = resident();
    let t = touched();
    let live = resident();
    assert!(live >= before + 60 * MB, "{before} -> {live}");
    drop(t);
    // Kept by default: the memory stays resident for the next tensor of its size...
    assert!(
        resident() + 8 * MB >= live,
        "kept: {live} -> {}",
        resident()
    );
    let again = touched();
    assert!(
        resident() < live + 8 * MB,
        "reused: {live} -> {}",
        resident()
    );
    drop(again);
    // ...until the program says no later call will reuse it.
    ts_tensor::set_keep_freed_buffers(false);
    let released = resident();
    assert!(released + 48 * MB <= live, "released: {live} -> {released}");
    // From now on a freed tensor goes back at once.
    let t = touched();
    assert!(resident() >= released + 60 * MB);
    drop(t);
    assert!(
        resident() < released + 8 * MB,
        "freed: {released} -> {}",
        resident()
    );
    ts_tensor::set_keep_freed_buffers(true);
}
