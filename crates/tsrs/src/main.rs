//! `tsrs`: the torchscript-rs command-line tool, a thin layer over the `torchscript` crate
//! (the library API users embed), so that everything it does is also available there.

mod bench;
mod cli;
mod dev_commands;
mod freeze_command;
mod graph_command;
mod model;
mod program;
mod run_command;

use std::process::ExitCode;

/// Stack of the thread the commands run on. Every recursion over input is bounded (nesting
/// limits of 200 levels, long chains walked iteratively), but a bounded depth times large
/// frames (debug builds) can still exceed the 8 MB main stack; the reservation is virtual
/// memory, only touched pages count.
const STACK_BYTES: usize = 256 << 20;

fn main() -> ExitCode {
    let worker = std::thread::Builder::new()
        .name("tsrs".into())
        .stack_size(STACK_BYTES)
        .spawn(|| {
            // Every command runs its operators on this thread: make it one of the kernels'
            // workers, so parallel kernels do not wake the pool and sleep per operator.
            torchscript::use_current_thread_for_kernels();
            torchscript::warm_up_operators_in_background();
            cli::run(std::env::args_os())
        });
    let result = match worker {
        Ok(handle) => handle.join().unwrap_or_else(|_| {
            Err(cli::CliError(
                "error: internal error (a panic; please report it)".into(),
            ))
        }),
        Err(_) => cli::run(std::env::args_os()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
