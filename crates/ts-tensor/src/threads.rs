//! The intra-op thread pool: one rayon global pool sized once, lazily, from the environment
//! variable `TSRS_NUM_THREADS` (default: the available cores), and the parallelism the kernels
//! ask for, adjustable at run time with [`set_num_threads`] (as `torch.set_num_threads`).
//!
//! A worker whose pool has no work sleeps after a few dozen yields, and waking it takes a
//! futex call and, on a virtual machine, an inter-processor interrupt: tens of microseconds,
//! paid by every parallel kernel of a model whose operators are short (a transformer layer
//! runs a dozen products in 2 ms). As OpenMP's workers spin for a while after a parallel
//! region, [`parallel_region`] keeps one worker looking for work until no kernel has split its
//! work for [`spin_time`] (`TSRS_WORKER_SPIN_US`, default 1000; 0 turns it off). Kernels call
//! it only when they do split: a model whose operators all stay serial (ShuffleNet v2 on
//! 32 x 32 images) ran 3-25% slower at 2 threads than at 1 while a worker spun beside it.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};

static INIT: Once = Once::new();
static NUM_THREADS: AtomicUsize = AtomicUsize::new(0);

/// The thread count asked for by `TSRS_NUM_THREADS`, or the available cores.
fn configured_threads() -> usize {
    std::env::var("TSRS_NUM_THREADS")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
}

/// Builds the global pool once. Kernels call this (through tensor allocation) before their first
/// parallel loop so that the pool has the configured size rather than rayon's default.
pub fn init_pool() {
    build_pool(false);
}

/// Builds the global pool (if nothing built it yet) with the calling thread as one of its
/// workers, and tells whether it did. A process whose operators all run on one long-lived
/// thread (the `tsrs` CLI's interpreter thread) calls this first: the kernels' parallel loops
/// then split work with the caller itself (rayon's `join` fast path) instead of handing every
/// operator to the pool and putting the caller to sleep until it finishes, which cost two
/// thread wake-ups per operator and made 2 threads slower than 1 on small tensors. The
/// thread counts as one of the configured threads. With one thread nothing is built here
/// (the caller would be the pool's only worker and `rayon::spawn`ed tasks, such as forked
/// TorchScript functions, would never run), so the ordinary pool is built instead.
pub fn init_pool_on_current_thread() -> bool {
    build_pool(true)
}

fn build_pool(join_current: bool) -> bool {
    let mut joined = false;
    INIT.call_once(|| {
        let requested = NUM_THREADS.load(Ordering::Relaxed);
        let n = if requested > 0 {
            requested
        } else {
            configured_threads()
        };
        let mut builder = rayon::ThreadPoolBuilder::new().num_threads(n);
        if join_current && n >= 2 {
            builder = builder.use_current_thread();
            joined = true;
        }
        // Building fails only when another library already built the global pool; then that pool
        // is used as it is.
        if builder.build_global().is_err() {
            joined = false;
        }
        NUM_THREADS.store(n.min(rayon::current_num_threads()), Ordering::Relaxed);
    });
    joined
}

/// The number of threads the kernels use (`torch.get_num_threads`).
pub fn num_threads() -> usize {
    init_pool();
    NUM_THREADS.load(Ordering::Relaxed).max(1)
}

/// Called by a kernel that is about to split its work across threads: with more than one,
/// keeps a pool worker spinning for the parallel kernels that follow (see the module comment).
pub fn parallel_region() {
    if num_threads() > 1 {
        keep_a_worker_warm();
    }
}

/// Elements a kernel loop reads or writes below which [`min_piece_for`] keeps it on one
/// thread: a fork-join costs a few microseconds, and splitting the squeeze-and-excite pools of
/// MobileNetV3 (`[2, 576, 1, 1]` planes) kept a worker spinning for nothing.
pub const SPLIT_ELEMS: usize = 1 << 15;

/// Whether a kernel loop that is `worth_splitting` runs on several threads now: only when the
/// kernels have more than one, and then, as [`parallel_region`], a worker is kept warm for it.
/// A parallel iterator called from outside a one-thread pool would otherwise be handed to that
/// pool's only worker while the caller sleeps: two thread wake-ups per operator, a third of
/// EfficientNet-B0's time at one thread.
pub fn should_split(worth_splitting: bool) -> bool {
    if worth_splitting && num_threads() > 1 {
        keep_a_worker_warm();
        true
    } else {
        false
    }
}

/// The smallest piece a kernel's parallel iterator may be cut into (rayon's `with_min_len`):
/// 1 where [`should_split`] says to split, else `usize::MAX`, which keeps the whole loop on the
/// calling thread (rayon then never enters its pool).
pub fn min_piece(worth_splitting: bool) -> usize {
    if should_split(worth_splitting) {
        1
    } else {
        usize::MAX
    }
}

/// [`min_piece`] for a loop over `elems` elements, worth splitting from [`SPLIT_ELEMS`].
pub fn min_piece_for(elems: usize) -> usize {
    min_piece(elems >= SPLIT_ELEMS)
}

/// How long a worker keeps looking for work after the last kernel that asked for threads.
pub fn spin_time() -> Duration {
    static SPIN: OnceLock<Duration> = OnceLock::new();
    *SPIN.get_or_init(|| {
        let us = std::env::var("TSRS_WORKER_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(1000);
        Duration::from_micros(us)
    })
}

/// Whether a worker is spinning now.
static SPINNING: AtomicBool = AtomicBool::new(false);

/// Whether a pool worker is spinning for the next parallel kernel now (see the module
/// comment): for diagnostics and tests of which kernels split their work.
pub fn worker_spinning() -> bool {
    SPINNING.load(Ordering::Relaxed)
}
/// Parallel regions so far: the spinning worker keeps going while this moves.
static REQUESTS: AtomicU64 = AtomicU64::new(0);
/// The pool index of the thread that asks for kernels, when it is a pool worker (the CLI's
/// thread is): it must not spin, which it would if it picked the job up while waiting inside
/// a kernel of its own.
static ISSUER: AtomicUsize = AtomicUsize::new(usize::MAX);

fn keep_a_worker_warm() {
    // Parallel regions are large by construction (a fork-join costs microseconds), so one
    // shared write each is noise.
    REQUESTS.fetch_add(1, Ordering::Relaxed);
    if SPINNING.load(Ordering::Relaxed) || spin_time().is_zero() {
        return;
    }
    if SPINNING.swap(true, Ordering::Acquire) {
        return;
    }
    ISSUER.store(
        rayon::current_thread_index().unwrap_or(usize::MAX),
        Ordering::Relaxed,
    );
    rayon::spawn(|| {
        if rayon::current_thread_index().unwrap_or(usize::MAX) != ISSUER.load(Ordering::Relaxed) {
            spin_for_work(spin_time());
        }
        SPINNING.store(false, Ordering::Release);
    });
}

/// Runs the pool's jobs as they arrive until `hold` passes with neither a job nor a new
/// parallel region.
fn spin_for_work(hold: Duration) {
    let mut last = Instant::now();
    let mut seen = REQUESTS.load(Ordering::Relaxed);
    loop {
        if let Some(rayon::Yield::Executed) = rayon::yield_now() {
            last = Instant::now();
            continue;
        }
        let now = REQUESTS.load(Ordering::Relaxed);
        if now != seen {
            seen = now;
            last = Instant::now();
        } else if last.elapsed() >= hold {
            return;
        }
        // About a microsecond between looks at the other threads' queues.
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }
}

/// Sets the number of threads the kernels use (`torch.set_num_threads`). Before the pool exists
/// this sizes it; afterwards it caps the parallelism of the kernels at `n` (at most the pool size).
/// Zero is ignored.
pub fn set_num_threads(n: usize) {
    if n == 0 {
        return;
    }
    if !INIT.is_completed() {
        NUM_THREADS.store(n, Ordering::Relaxed);
        init_pool();
    }
    NUM_THREADS.store(n.min(rayon::current_num_threads()), Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warm_worker_runs_the_kernels_that_follow() {
        use rayon::prelude::*;
        for _ in 0..20 {
            parallel_region();
            let s: u64 = (0..10_000u64).into_par_iter().map(|v| v * 2).sum();
            assert_eq!(s, 9_999 * 10_000);
        }
    }

    #[test]
    fn spinning_stops_once_the_hold_passes_without_work() {
        // Off the pool `yield_now` finds no work, so only parallel regions (from other tests)
        // can extend the hold.
        let hold = Duration::from_millis(3);
        let t = Instant::now();
        spin_for_work(hold);
        assert!(t.elapsed() >= hold);
    }

    /// With the kernels' thread count at one, a large elementwise loop runs on the calling
    /// thread only (it once read the pool's size and split anyway). Called by the test that
    /// sets the count, so no other test changes it meanwhile.
    fn one_thread_runs_elementwise_loops_serially() {
        use crate::cpu::loops::{LoopOperand, Plan, SendPtr};
        let mut buf = vec![0f32; 1 << 20];
        let op = LoopOperand {
            ptr: SendPtr(buf.as_mut_ptr() as *mut u8),
            strides: smallvec::SmallVec::from_slice(&[4]),
        };
        let plan = Plan::<1>::new(&[buf.len() as i64], &[0], [op]);
        let seen = std::sync::Mutex::new(Vec::new());
        plan.run_indexed(1, |_, _, _, _| {
            seen.lock().unwrap().push(rayon::current_thread_index())
        });
        let seen = seen.into_inner().unwrap();
        assert!(!seen.is_empty());
        assert!(
            seen.iter().all(|&t| t == rayon::current_thread_index()),
            "{seen:?}"
        );
    }

    /// With one kernel thread, loops cut with [`min_piece`] stay on the calling thread even
    /// when worth splitting (rayon would otherwise hand them to the pool's worker), and
    /// [`should_split`] says no.
    fn one_thread_keeps_split_loops_on_the_caller() {
        use rayon::prelude::*;
        assert!(!should_split(true));
        let mut buf = vec![0u32; 1 << 16];
        let seen = std::sync::Mutex::new(Vec::new());
        buf.par_chunks_mut(64)
            .with_min_len(min_piece(true))
            .for_each(|c| {
                c.fill(1);
                seen.lock().unwrap().push(std::thread::current().id());
            });
        assert!(buf.iter().all(|&v| v == 1));
        let me = std::thread::current().id();
        assert!(seen.into_inner().unwrap().iter().all(|&t| t == me));
    }

    #[test]
    fn thread_count_is_positive_and_settable() {
        let n = num_threads();
        assert!(n >= 1);
        set_num_threads(1);
        assert_eq!(num_threads(), 1);
        one_thread_runs_elementwise_loops_serially();
        one_thread_keeps_split_loops_on_the_caller();
        set_num_threads(0);
        assert_eq!(num_threads(), 1);
        set_num_threads(n);
        assert_eq!(num_threads(), n);
    }
}
