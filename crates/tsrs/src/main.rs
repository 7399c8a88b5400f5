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
    // Operator libraries that saved models may call (`ops.torchvision.nms(...)`).
    ts_torchvision::register_global();
    match cli::run(std::env::args_os()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
