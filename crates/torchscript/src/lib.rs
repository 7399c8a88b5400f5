//! TorchScript in pure Rust: load and run models saved with `torch.jit.save`, compile
//! TorchScript source, trace Rust tensor code into graphs, and save archives that PyTorch's
//! `torch.jit.load` reads. No libtorch, no Python.
//!
//! # Load and run a model
//!
//! ```
//! use torchscript::{Module, Tensor};
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/add_relu.pt");
//! let model = Module::load(path)?;                       // or Module::load_bytes(&bytes)
//! let x = Tensor::from_data(&[-1.0f32, 1.0], &[1, 2])?;
//! let y = model.forward((x,))?;                           // an IValue
//! let y: Tensor = y.try_into()?;
//! println!("{y}");                                        // printed as PyTorch prints it
//! for (name, p) in model.parameters() {
//!     println!("{name}: {:?}", p.shape());
//! }
//! # Ok::<(), torchscript::Error>(())
//! ```
//!
//! Other methods are called by name (`model.method("encode")?.call(args)`), submodules'
//! methods by path (`"encoder.forward"`). Arguments are anything [`IntoArgs`]: a tuple of
//! values, an array or a `Vec`. Results are [`IValue`]s, which convert with `TryFrom` to
//! Rust numbers, strings, tensors, `Vec`s, tuples and `HashMap`s.
//!
//! # Compile and call a function
//!
//! ```
//! let cu = torchscript::compile(r#"
//! def fib(n: int) -> int:
//!     a, b = 0, 1
//!     for _ in range(n):
//!         a, b = b, a + b
//!     return a
//! "#)?;
//! let fib = cu.function("fib")?;
//! assert_eq!(i64::try_from(fib.call((10i64,))?)?, 55);
//! println!("{}", fib.graph()?);   // the IR, as PyTorch prints `fib.graph`
//! # Ok::<(), torchscript::Error>(())
//! ```
//!
//! # Serve one model from many threads
//!
//! [`Module`] is `Send + Sync`: share one loaded model between worker threads (each call has
//! its own interpreter state; the graph executor's plans are shared).
//!
//! ```
//! use std::sync::Arc;
//! use torchscript::{Module, Tensor};
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/add_relu.pt");
//! let model = Arc::new(Module::load(path)?);
//! let workers: Vec<_> = (0..4)
//!     .map(|i| {
//!         let model = Arc::clone(&model);
//!         std::thread::spawn(move || -> torchscript::Result<Vec<f32>> {
//!             let x = Tensor::from_data(&[i as f32, -1.0], &[1, 2])?;
//!             let y: Tensor = model.forward((x,))?.try_into()?;
//!             Ok(y.to_vec::<f32>())
//!         })
//!     })
//!     .collect();
//! for w in workers {
//!     println!("{:?}", w.join().expect("worker panicked")?);
//! }
//! # Ok::<(), torchscript::Error>(())
//! ```
//!
//! # Trace Rust code into a module
//!
//! [`trace`] runs a closure on example tensors and records the operators it calls (the
//! [`Tensor`] methods and [`ops::call`]) as a graph that prints like PyTorch's traced graphs;
//! the result is a [`Module`] that runs on new inputs and saves as an archive PyTorch loads.
//! [`Tracer`] names the module's parameters so they are saved as parameters.
//!
//! ```
//! use torchscript::{Tensor, Tracer};
//!
//! let w1 = Tensor::randn(&[8, 4], 0)?;
//! let w2 = Tensor::randn(&[2, 8], 1)?;
//! let trace = Tracer::new()
//!     .class_name("MLP")
//!     .parameter("fc1.weight", &w1)
//!     .parameter("fc2.weight", &w2)
//!     .input_names(&["x"])
//!     .trace(|xs| xs[0].linear(&w1, None)?.relu()?.linear(&w2, None), &[Tensor::randn(&[3, 4], 2)?])?;
//! let mlp = trace.module;
//! println!("{}", mlp.method("forward")?.graph()?);
//! let bytes = mlp.save_bytes()?;   // or mlp.save("mlp.pt"): torch.jit.load reads it
//! # Ok::<(), torchscript::Error>(())
//! ```
//!
//! # Errors
//!
//! Every fallible function returns [`Result`] with one [`Error`] type; an exception raised
//! inside TorchScript code prints PyTorch's `Traceback of TorchScript` with the failing
//! source lines. Bad inputs (malformed archives, wrong argument types, shape mismatches)
//! are errors, never panics.
//!
//! # Files
//!
//! [`data_files::read_inputs`] reads arguments from `.pt` (`torch.save`), `.npy`, `.npz` and
//! `.safetensors` files; [`data_files::write_output`] writes `.npy`, `.npz` or `.pt`.
//!
//! # Features
//!
//! * `ndarray`: `Tensor::from_ndarray`, `Tensor::to_ndarray` and zero-copy
//!   `Tensor::with_ndarray_view`.

pub mod autograd;
mod calling;
mod compile;
pub mod data_files;
pub mod dev;
mod error;
mod freeze;
mod graph_view;
mod ivalue;
mod libraries;
mod module;
#[cfg(feature = "ndarray")]
mod ndarray_interop;
pub mod npy;
pub mod ops;
mod tensor;
mod trace;

pub use compile::{compile, compile_named, compile_with, CompilationUnit, Function};
pub use error::{Error, ErrorKind, Result};
pub use freeze::FreezeOptions;
pub use graph_view::{Graph, GraphFormat};
pub use ivalue::{IValue, IntoArgs, Object, Opaque};
pub use module::{Method, Module, PreparedCall};
pub use tensor::{DType, DataView, Device, Element, Tensor};
pub use trace::{is_tracing, trace, Trace, Tracer};
pub use ts_tensor::FmaPeak;

/// Sets the number of threads tensor kernels use (default: the number of cores).
pub fn set_num_threads(n: usize) {
    ts_tensor::set_num_threads(n);
}

/// Makes the calling thread one of the kernels' worker threads (when nothing has run a kernel
/// yet and more than one thread is configured), so that operators run from it split their
/// parallel loops with it instead of waking the pool and sleeping. For an application that
/// runs its models on one long-lived thread; returns whether the thread joined.
pub fn use_current_thread_for_kernels() -> bool {
    ts_tensor::init_pool_on_current_thread()
}

/// Starts building the operator registry on a background thread, so that a program that is
/// about to load a model overlaps the registry's construction (every builtin's schema parsed,
/// ~10 ms) with reading the archive. Anything that needs the registry meanwhile waits for
/// this build rather than starting another.
pub fn warm_up_operators_in_background() {
    let _ = std::thread::Builder::new()
        .name("tsrs-warm-up".into())
        .spawn(|| {
            let _ = ts_ops::registry();
        });
}

/// Sets whether freed large tensor buffers are kept for reuse by later tensors (the default)
/// or returned to the system at once. Keeping them spares a model called again the page
/// faults of fresh memory; a program that calls its model once (as `tsrs run` does) turns it
/// off to hold less memory.
pub fn set_keep_freed_buffers(keep: bool) {
    ts_tensor::set_keep_freed_buffers(keep);
}

/// Measures this machine's peak f32 FMA throughput on the kernels' threads
/// ([`set_num_threads`]) in the widest vector instruction set they use: the reference a GEMM's
/// efficiency is quoted against (`tsrs peak`). `None` on a CPU without AVX2 + FMA.
pub fn fma_peak() -> Option<FmaPeak> {
    ts_tensor::fma_peak(ts_tensor::threads::num_threads())
}

/// Seeds the default random generator (as `torch.manual_seed`).
pub fn manual_seed(seed: u64) {
    ts_tensor::manual_seed(seed);
}
