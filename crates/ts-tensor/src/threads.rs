//! The intra-op thread pool: one rayon global pool sized once, lazily, from the environment
//! variable `TSRS_NUM_THREADS` (default: the available cores), and the parallelism the kernels
//! ask for, adjustable at run time with [`set_num_threads`] (as `torch.set_num_threads`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

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
    fn thread_count_is_positive_and_settable() {
        let n = num_threads();
        assert!(n >= 1);
        set_num_threads(1);
        assert_eq!(num_threads(), 1);
        set_num_threads(0);
        assert_eq!(num_threads(), 1);
        set_num_threads(n);
        assert_eq!(num_threads(), n);
    }
}
