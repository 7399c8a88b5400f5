//! Command-line parsing and dispatch.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// torchscript-rs: TorchScript without libtorch.
#[derive(Parser, Debug)]
#[command(name = "tsrs", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse a textual graph, verify it and print it back.
    Ir {
        /// The IR file.
        file: PathBuf,
    },
    /// Parse one operator schema per line and print each back.
    Schema {
        /// The schema file.
        file: PathBuf,
    },
    /// Run a function of a program (or a method of a saved model) on saved inputs.
    Run {
        /// A TorchScript source file or a `torch.jit.save` archive (`.pt`).
        program: PathBuf,
        /// The function (or method) to call.
        #[arg(long)]
        entry: String,
        /// The positional arguments: `torch.save(tuple_of_arguments)` (`.pt`), one NumPy
        /// array (`.npy`), every array of an `.npz`, or every tensor of a `.safetensors` file
        /// (sorted by name); no arguments when absent.
        #[arg(long)]
        inputs: Option<PathBuf>,
        /// A random float32 (standard normal) tensor argument of this shape, e.g.
        /// `1x3x224x224`, after the `--inputs` ones; repeat for more arguments.
        #[arg(long, value_name = "SHAPE")]
        random: Vec<String>,
        /// Seed of the `--random` tensors.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Where to write the result: `.npy` (a tensor), `.npz` (tensors) or a `torch.save`
        /// file (anything else); printed to stdout when absent.
        #[arg(long)]
        output: Option<PathBuf>,
        /// Run with gradients disabled (`torch.no_grad()`): no autograd history is recorded
        /// even for tensors that require grad. Gradients are enabled by default, as in PyTorch.
        #[arg(long)]
        no_grad: bool,
    },
    /// Save a program's function (as a module's `forward`) or re-save a loaded archive, as
    /// `torch.jit.save` would write it.
    Save {
        /// A TorchScript source file or a `torch.jit.save` archive.
        program: PathBuf,
        /// The archive to write.
        output: PathBuf,
        /// The function of a source program to save as `forward`.
        #[arg(long)]
        entry: Option<String>,
    },
    /// Time calls of a function (or a saved model's method) after a warm-up.
    Bench {
        /// A TorchScript source file or a `torch.jit.save` archive.
        program: PathBuf,
        /// The function (or method) to call.
        #[arg(long)]
        entry: String,
        /// `torch.save(tuple_of_positional_arguments)`; no arguments when absent.
        #[arg(long)]
        inputs: Option<PathBuf>,
        /// Timed calls.
        #[arg(long, default_value_t = 100)]
        iters: usize,
        /// Untimed calls first.
        #[arg(long, default_value_t = 10)]
        warmup: usize,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Time with gradients disabled (`torch.no_grad()`), as inference benchmarks of PyTorch
        /// run; by default parameters that require grad make every call record history.
        #[arg(long)]
        no_grad: bool,
    },
    /// Measure this CPU's peak f32 FMA throughput on the kernels' threads (`TSRS_NUM_THREADS`),
    /// the reference for GEMM efficiency in benchmark reports.
    Peak {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Describe a saved module: submodules, parameters, buffers, attributes, methods, version.
    Info {
        /// A `torch.jit.save` archive.
        model: PathBuf,
    },
    /// Print a saved module's code as `torch.jit.save` writes it.
    Code {
        /// A `torch.jit.save` archive.
        model: PathBuf,
    },
    /// List the operator schemas torchscript-rs implements.
    Ops {
        /// Only schemas containing this text.
        #[arg(long)]
        filter: Option<String>,
        /// Also count PyTorch's schemas that are not implemented.
        #[arg(long)]
        missing: bool,
    },
    /// Freeze a saved module (`torch.jit.freeze`) and save the result.
    Freeze {
        /// A `torch.jit.save` archive of a module in eval mode.
        input: PathBuf,
        /// The frozen archive to write.
        output: PathBuf,
        /// Methods and attributes to keep (repeatable).
        #[arg(long = "preserve")]
        preserve: Vec<String>,
        /// Also apply `torch.jit.optimize_for_inference`'s rewrites (pre-transposed linears).
        #[arg(long)]
        optimize_for_inference: bool,
        /// Skip the foldings that change results in the last bits (conv/linear + batch norm,
        /// add, mul).
        #[arg(long)]
        no_numerics: bool,
    },
    /// Print the graph of a function (as PyTorch's `fn.graph` shows it), or as optimized.
    Graph {
        /// A TorchScript source file or a `torch.jit.save` archive.
        program: PathBuf,
        /// The function to print.
        #[arg(long)]
        entry: String,
        /// Print the interpreter code instead of the graph.
        #[arg(long)]
        code: bool,
        /// Skip the cleanup passes PyTorch runs after compilation.
        #[arg(long)]
        raw: bool,
        /// `torch.save(tuple_of_positional_arguments)` to specialize the graph for.
        #[arg(long)]
        inputs: Option<PathBuf>,
        /// Print the graph the executor runs for the inputs (after its optimization passes).
        #[arg(long)]
        optimized: bool,
        /// Mark the floating-point tensors of `--inputs` as requiring grad, so that the
        /// executor takes the autodiff path (`prim::DifferentiableGraph`).
        #[arg(long)]
        requires_grad: bool,
        /// Output format (`html` shows the graph after every optimization pass).
        #[arg(long, value_enum, default_value_t = crate::graph_command::GraphFormat::Text)]
        format: crate::graph_command::GraphFormat,
    },
}

/// A command failure: the message printed to stderr before exiting non-zero.
#[derive(Debug)]
pub struct CliError(pub String);

/// A library error as the CLI prints it: exceptions raised by TorchScript code (and argument
/// mismatches) as PyTorch prints them — traceback, then `Class: message`; compilation errors
/// as the `RuntimeError` PyTorch raises; anything else after `error:`.
impl From<torchscript::Error> for CliError {
    fn from(e: torchscript::Error) -> Self {
        use torchscript::ErrorKind;
        CliError(match e.kind() {
            ErrorKind::Runtime | ErrorKind::Argument => e.to_string(),
            ErrorKind::Compile => format!("RuntimeError: {}", e.message()),
            _ => format!("error: {}", e.message()),
        })
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses the arguments and runs the command.
pub fn run(args: impl IntoIterator<Item = OsString>) -> Result<(), CliError> {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // --help and --version print and succeed; usage errors are failures.
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) {
                emit(&e.to_string());
                return Ok(());
            }
            return Err(CliError(e.to_string().trim_end().to_string()));
        }
    };
    match cli.command {
        Command::Ir { file } => crate::dev_commands::ir(&file),
        Command::Schema { file } => crate::dev_commands::schema(&file),
        Command::Run {
            program,
            entry,
            inputs,
            random,
            seed,
            output,
            no_grad,
        } => {
            let _mode = no_grad.then(torchscript::autograd::no_grad);
            // One call: no later call reuses freed buffers, so they go back to the system.
            torchscript::set_keep_freed_buffers(false);
            let mut args = crate::run_command::read_optional_inputs(inputs.as_deref())?;
            args.extend(crate::run_command::random_inputs(&random, seed)?);
            crate::run_command::run(&program, &entry, args, output.as_deref())
        }
        Command::Save {
            program,
            output,
            entry,
        } => crate::model::save(&program, &output, entry.as_deref()),
        Command::Bench {
            program,
            entry,
            inputs,
            iters,
            warmup,
            json,
            no_grad,
        } => {
            let _mode = no_grad.then(torchscript::autograd::no_grad);
            crate::bench::bench(&program, &entry, inputs.as_deref(), iters, warmup, json)
        }
        Command::Peak { json } => crate::bench::peak(json),
        Command::Info { model } => crate::model::info(&model),
        Command::Code { model } => crate::model::code(&model),
        Command::Ops { filter, missing } => crate::dev_commands::ops(filter.as_deref(), missing),
        Command::Freeze {
            input,
            output,
            preserve,
            optimize_for_inference,
            no_numerics,
        } => crate::freeze_command::freeze(crate::freeze_command::FreezeRequest {
            input: &input,
            output: &output,
            preserve: &preserve,
            optimize_for_inference,
            no_numerics,
        }),
        Command::Graph {
            program,
            entry,
            code,
            raw,
            inputs,
            optimized,
            requires_grad,
            format,
        } => crate::graph_command::graph(crate::graph_command::GraphRequest {
            program: &program,
            entry: &entry,
            code,
            raw,
            inputs: inputs.as_deref(),
            optimized,
            requires_grad,
            format,
        }),
    }
}

/// Reads a file, naming it in the error.
pub fn read_text(path: &std::path::Path) -> Result<String, CliError> {
    std::fs::read_to_string(path)
        .map_err(|e| CliError(format!("error: cannot read {}: {e}", path.display())))
}

/// Writes command output to stdout; a closed pipe (`tsrs code m.pt | head`) is not an error.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}
