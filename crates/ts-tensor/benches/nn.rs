//! Neural-network kernel throughput: float32 GEMM (`mm`) at 512/1024/2048 and a 3x3 convolution
//! 64 -> 64 channels on 56x56 (batch 1, padding 1), with 1 thread and with all threads. Prints
//! GFLOP/s (2 flops per multiply-add, best of several runs). Run with
//! `cargo bench -p ts-tensor --bench nn`.

use std::time::{Duration, Instant};

use ts_tensor::{conv2d, ConvPadding, Tensor};

/// Best time of `reps` runs of `f` after a warm-up run.
fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn filled(shape: &[i64]) -> ts_tensor::Result<Tensor> {
    let n: i64 = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5)
        .collect();
    Tensor::from_vec(v, shape)
}

fn main() -> ts_tensor::Result<()> {
    let all = ts_tensor::num_threads();
    let mut counts = vec![1];
    if all > 1 {
        counts.push(all);
    }
    println!(
        "{:<32} {:>8} {:>10} {:>10}",
        "kernel", "threads", "ms", "GFLOP/s"
    );
    for &threads in &counts {
        ts_tensor::set_num_threads(threads);
        for n in [512i64, 1024, 2048] {
            let a = filled(&[n, n])?;
            let b = filled(&[n, n])?;
            let reps = if n >= 2048 { 3 } else { 10 };
            let d = best(reps, || {
                let _ = a.mm(&b);
            });
            let flops = 2.0 * (n * n * n) as f64;
            println!(
                "{:<32} {:>8} {:>10.2} {:>10.1}",
                format!("sgemm {n}x{n}x{n}"),
                threads,
                d.as_secs_f64() * 1e3,
                flops / d.as_secs_f64() / 1e9
            );
        }
        // The GEMM inside the convolution below: [64, 576] @ [576, 3136].
        let wm = filled(&[64, 576])?;
        let cols = filled(&[576, 3136])?;
        let d = best(10, || {
            let _ = wm.mm(&cols);
        });
        println!(
            "{:<32} {:>8} {:>10.2} {:>10.1}",
            "sgemm 64x576x3136 (conv-shaped)",
            threads,
            d.as_secs_f64() * 1e3,
            2.0 * (64 * 576 * 3136) as f64 / d.as_secs_f64() / 1e9
        );
        let x = filled(&[1, 64, 56, 56])?;
        let w = filled(&[64, 64, 3, 3])?;
        let pad = ConvPadding::Explicit(vec![1]);
        let d = best(10, || {
            let _ = conv2d(&x, &w, None, &[1], &pad, &[1], 1);
        });
        let flops = 2.0 * (64 * 56 * 56 * 64 * 9) as f64;
        println!(
            "{:<32} {:>8} {:>10.2} {:>10.1}",
            "conv2d 3x3 64->64 56x56",
            threads,
            d.as_secs_f64() * 1e3,
            flops / d.as_secs_f64() / 1e9
        );
    }
    ts_tensor::set_num_threads(all);
    Ok(())
}
