//! `tsrs bench`: times calls of a function or method after a warm-up (median, min, max).

use std::path::Path;
use std::time::Instant;

use ts_core::IValue;

use crate::cli::CliError;

/// Something callable repeatedly with the same arguments.
type Call = Box<dyn Fn() -> Result<IValue, CliError>>;

fn prepare(program: &Path, entry: &str, args: Vec<IValue>) -> Result<Call, CliError> {
    if crate::model::is_archive(program) {
        let m = crate::model::load(program)?;
        let (obj, method) = crate::model::resolve_method_path(&m.module, entry)?;
        let mm = obj
            .class
            .find_method(&method)
            .ok_or_else(|| CliError(format!("error: no method '{method}'")))?;
        let f = ts_ir::as_function(&mm)
            .ok_or_else(|| CliError(format!("error: '{method}' is not a TorchScript method")))?;
        let schema = f
            .try_schema()
            .ok_or_else(|| CliError(format!("error: '{method}' has no schema")))?;
        let args = ts_runtime::bind_arguments(&schema, args, true)
            .map_err(|e| CliError(format!("{}: {}", e.kind.name(), e.message)))?;
        return Ok(Box::new(move || {
            ts_runtime::call_method(&obj, &method, args.clone())
                .map_err(|e| CliError(e.to_string()))
        }));
    }
    let f = crate::program::find_entry(program, entry)?;
    let schema = f
        .try_schema()
        .ok_or_else(|| CliError(format!("error: '{entry}' has no schema")))?;
    let args = ts_runtime::bind_arguments(&schema, args, false)
        .map_err(|e| CliError(format!("{}: {}", e.kind.name(), e.message)))?;
    Ok(Box::new(move || {
        ts_runtime::call_function(&f, args.clone()).map_err(|e| CliError(e.to_string()))
    }))
}

/// `tsrs bench PROGRAM --entry NAME [--inputs IN.pt] [--iters N] [--warmup N] [--json]`.
pub fn bench(
    program: &Path,
    entry: &str,
    inputs: Option<&Path>,
    iters: usize,
    warmup: usize,
    json: bool,
) -> Result<(), CliError> {
    if iters == 0 {
        return Err(CliError("error: --iters must be at least 1".into()));
    }
    let args = match inputs {
        Some(p) => crate::run_command::read_inputs(p)?,
        None => Vec::new(),
    };
    let call = prepare(program, entry, args)?;
    for _ in 0..warmup {
        call()?;
    }
    let mut times: Vec<u128> = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        let r = call()?;
        times.push(t.elapsed().as_nanos());
        drop(r);
    }
    times.sort_unstable();
    let median = times[times.len() / 2];
    let (min, max) = (times[0], times[times.len() - 1]);
    let text = if json {
        format!(
            "{{\"median_ns\": {median}, \"min_ns\": {min}, \"max_ns\": {max}, \"iters\": {iters}, \"warmup\": {warmup}}}\n"
        )
    } else {
        format!(
            "{entry}: median {} min {} max {} ({iters} calls after {warmup} warm-up)\n",
            human(median),
            human(min),
            human(max)
        )
    };
    crate::cli::emit(&text);
    Ok(())
}

fn human(ns: u128) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{:.3} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.3} ms", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.3} µs", n as f64 / 1e3),
        n => format!("{n} ns"),
    }
}
