//! A pool worker spins for the next parallel kernel only once a kernel has split its work:
//! operators too small to split leave the second core idle (its own process: the spinning
//! flag and the spin time are global).

use ts_tensor::ops::conv::{conv2d, ConvPadding};
use ts_tensor::{threads, Tensor};

fn filled(shape: &[i64]) -> Tensor {
    let vals: Vec<f32> = (0..shape.iter().product::<i64>())
        .map(|i| (i % 7) as f32 * 0.25)
        .collect();
    Tensor::from_vec(vals, shape).unwrap()
}

#[test]
fn only_kernels_that_split_keep_a_worker_spinning() {
    // A hold far longer than the test, so that the flag cannot drop back before it is read.
    std::env::set_var("TSRS_WORKER_SPIN_US", "60000000");
    threads::set_num_threads(2);
    if threads::num_threads() < 2 || rayon::current_num_threads() < 2 {
        return; // one core: nothing splits
    }
    let (small, x) = (filled(&[8, 8]), filled(&[1, 4, 6, 6]));
    let w = filled(&[4, 4, 3, 3]);
    // Grouped: 16 tasks of a few hundred multiply-adds, which once ran split.
    let (xg, wg) = (filled(&[2, 16, 6, 6]), filled(&[16, 2, 3, 3]));
    let pad = ConvPadding::Explicit(vec![1]);
    for _ in 0..50 {
        small.mm(&small).unwrap();
        conv2d(&x, &w, None, &[1, 1], &pad, &[1, 1], 1).unwrap();
        conv2d(&xg, &wg, None, &[1, 1], &pad, &[1, 1], 8).unwrap();
    }
    assert!(
        !threads::worker_spinning(),
        "small serial kernels started a spinning worker"
    );
    // 2M multiply-adds: worth splitting for a spinning worker, not worth waking a sleeping one.
    let (mid_a, mid_b) = (filled(&[128, 128]), filled(&[128, 128]));
    mid_a.mm(&mid_b).unwrap();
    assert!(
        !threads::worker_spinning(),
        "a mid-sized product woke a sleeping worker"
    );
    let big = filled(&[256, 256]);
    let c = big.mm(&big).unwrap();
    assert_eq!(c.sizes().as_slice(), &[256, 256]);
    assert!(
        threads::worker_spinning(),
        "a split product left no worker spinning"
    );
}
