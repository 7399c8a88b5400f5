//! `tsrs`: the torchscript-rs command-line tool.

mod bench;
mod cli;
mod dev_commands;
mod freeze_command;
mod graph_command;
mod model;
mod program;
mod run_command;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run(std::env::args_os()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
