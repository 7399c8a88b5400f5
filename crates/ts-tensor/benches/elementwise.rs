//! Elementwise kernel bandwidth: contiguous float32 `add` and `tanh` on 4M elements with 1 and
//! 2 threads, next to a plain memory copy of the same size. Prints GB/s (bytes read + written
//! per second, best of several runs). Run with `cargo bench -p ts-tensor`.

use std::time::{Duration, Instant};

use ts_tensor::{DType, Scalar, Tensor};

const N: usize = 4 << 20;
const REPS: usize = 20;

/// This thread's CPU time in nanoseconds (`/proc/thread-self/schedstat`), 0 where unknown.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Best time of `REPS` runs of `f` after a warm-up run: wall time, or this thread's CPU time
/// when `BENCH_CPU_TIME` is set (meaningful for one thread on a loaded machine).
fn best(mut f: impl FnMut()) -> Duration {
    f();
    let cpu = std::env::var_os("BENCH_CPU_TIME").is_some();
    (0..REPS)
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

fn gbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

fn main() -> ts_tensor::Result<()> {
    let src: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.001).collect();
    let a = Tensor::from_vec(src.clone(), &[N as i64])?;
    let b = Tensor::from_vec(src.clone(), &[N as i64])?;
    let out = Tensor::zeros(&[N as i64], DType::Float32)?;
    let bytes4 = N * 4;
    println!(
        "elementwise float32, {N} elements ({} MiB per tensor)",
        bytes4 >> 20
    );
    println!(
        "{:<34} {:>8} {:>10} {:>10}",
        "kernel", "threads", "ms", "GB/s"
    );
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| ts_tensor::Error::runtime(e.to_string()))?;
        pool.install(|| -> ts_tensor::Result<()> {
            let mut dst = vec![0f32; N];
            let plain = best(|| dst.copy_from_slice(&src));
            let copy = best(|| {
                let _ = out.copy_(&a);
            });
            let add_out = best(|| {
                let _ = a.add_out(&b, Scalar::Int(1), &out);
            });
            let add_new = best(|| {
                let _ = a.add(&b, Scalar::Int(1));
            });
            let tanh_out = best(|| {
                let _ = out.copy_(&a).and_then(|_| out.tanh_());
            });
            let tanh_new = best(|| {
                let _ = a.tanh();
            });
            let sigmoid_new = best(|| {
                let _ = a.sigmoid();
            });
            let exp_new = best(|| {
                let _ = a.exp();
            });
            let log_new = best(|| {
                let _ = a.log();
            });
            let gelu_new = best(|| {
                let _ = a.gelu("none");
            });
            let add_scalar = best(|| {
                let _ = a.add_scalar(Scalar::Float(0.5), Scalar::Int(1));
            });
            let row = |name: &str, bytes: usize, d: Duration| {
                println!(
                    "{name:<34} {threads:>8} {:>10.3} {:>10.2}",
                    d.as_secs_f64() * 1e3,
                    gbps(bytes, d)
                );
            };
            row("plain copy (slice copy_from_slice)", 2 * bytes4, plain);
            row("tensor copy_ (same dtype)", 2 * bytes4, copy);
            row("add, out= preallocated", 3 * bytes4, add_out);
            row("add, new output", 3 * bytes4, add_new);
            row("copy_ + tanh_ in place", 4 * bytes4, tanh_out);
            row("tanh, new output", 2 * bytes4, tanh_new);
            row("sigmoid, new output", 2 * bytes4, sigmoid_new);
            row("exp, new output", 2 * bytes4, exp_new);
            row("log, new output", 2 * bytes4, log_new);
            row("gelu (erf), new output", 2 * bytes4, gelu_new);
            row("add scalar, new output", 2 * bytes4, add_scalar);
            println!(
                "{:<34} {threads:>8} {:>10} {:>9.0}%",
                "add(out=) / plain copy bandwidth",
                "",
                100.0 * gbps(3 * bytes4, add_out) / gbps(2 * bytes4, plain)
            );
            Ok(())
        })?;
    }
    Ok(())
}
