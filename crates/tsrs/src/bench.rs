//! `tsrs bench`: times calls of a function or method after a warm-up (median, min, max);
//! `tsrs peak`: the FMA peak those times are compared against.

use std::path::Path;
use std::time::Instant;

use crate::cli::CliError;
use crate::program::Program;

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
    let args = crate::run_command::read_optional_inputs(inputs)?;
    let call = Program::open(program, true)?
        .entry(entry, program)?
        .prepare(args)?;
    for _ in 0..warmup {
        call.run()?;
    }
    let mut times: Vec<u128> = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        let r = call.run()?;
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

/// `tsrs peak [--json]`: the measured FMA peak ([`torchscript::fma_peak`]).
pub fn peak(json: bool) -> Result<(), CliError> {
    let p = torchscript::fma_peak().ok_or_else(|| {
        CliError("error: this CPU has no AVX2 + FMA path to measure a peak for".into())
    })?;
    let text = if json {
        format!(
            "{{\"gflops\": {:.1}, \"threads\": {}, \"isa\": \"{}\"}}\n",
            p.gflops, p.threads, p.isa
        )
    } else {
        format!(
            "f32 FMA peak: {:.1} GFLOP/s on {} thread(s), {}\n",
            p.gflops, p.threads, p.isa
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
