//! Neural-network kernel throughput: float32 GEMM (`mm`) at 512/1024/2048, 3x3 convolutions
//! 64 -> 64 channels on 56x56 and ResNet-18's deeper 3x3 layers (batch 1, padding 1) and
//! depthwise 3x3 convolutions, with 1 thread and with all threads. Prints GFLOP/s (2 flops per
//! multiply-add, best of several runs). Run with `cargo bench -p ts-tensor --bench nn`;
//! `NN_SIZES=256,1000` picks the square sizes, `BENCH_CPU_TIME=1` times by thread CPU time
//! (for 1-thread numbers on a loaded machine).

use std::time::{Duration, Instant};

use ts_tensor::{conv2d, ConvPadding, Tensor};

/// This thread's CPU time in nanoseconds (`/proc/thread-self/schedstat`), 0 where unknown.
/// Unlike wall time it does not count time spent waiting for a core, so single-thread numbers
/// stay meaningful while other processes load the machine.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Best time of `reps` runs of `f` after a warm-up run: wall time, or this thread's CPU time
/// when `BENCH_CPU_TIME` is set (meaningful for one thread only).
fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    let cpu = std::env::var_os("BENCH_CPU_TIME").is_some();
    (0..reps)
        .map(|_| {
            let (t, c) = (Instant::now(), thread_cpu_ns());
            f();
            if cpu {
                Duration::from_nanos(thread_cpu_ns() - c)
            } else {
                t.elapsed()
            }
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
        let sizes: Vec<i64> = std::env::var("NN_SIZES")
            .ok()
            .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
            .unwrap_or_else(|| vec![512, 1024, 2048]);
        for &n in &sizes {
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
        // ResNet-18's deeper 3x3 layers: few output columns, megabytes of weights.
        for (ch, hw) in [(128i64, 28i64), (256, 14), (512, 7)] {
            let x = filled(&[1, ch, hw, hw])?;
            let w = filled(&[ch, ch, 3, 3])?;
            let d = best(10, || {
                let _ = conv2d(&x, &w, None, &[1], &pad, &[1], 1);
            });
            let flops = 2.0 * (ch * hw * hw * ch * 9) as f64;
            println!(
                "{:<32} {:>8} {:>10.3} {:>10.1}",
                format!("conv2d 3x3 {ch}->{ch} {hw}x{hw}"),
                threads,
                d.as_secs_f64() * 1e3,
                flops / d.as_secs_f64() / 1e9
            );
        }
        // Depthwise 3x3 (MobileNet's blocks): stride 1 and stride 2, 96 channels.
        for (stride, hw) in [(1i64, 56i64), (2, 56)] {
            let x = filled(&[1, 96, hw, hw])?;
            let w = filled(&[96, 1, 3, 3])?;
            let d = best(20, || {
                let _ = conv2d(&x, &w, None, &[stride], &pad, &[1], 96);
            });
            let o = (hw - 1) / stride + 1;
            let flops = 2.0 * (96 * o * o * 9) as f64;
            println!(
                "{:<32} {:>8} {:>10.3} {:>10.1}",
                format!("depthwise 3x3 s{stride} 96ch {hw}x{hw}"),
                threads,
                d.as_secs_f64() * 1e3,
                flops / d.as_secs_f64() / 1e9
            );
        }
    }
    ts_tensor::set_num_threads(all);
    Ok(())
}
