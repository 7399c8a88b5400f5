//! Developer commands: `tsrs ir` and `tsrs schema`.

use std::path::Path;

use crate::cli::{read_text, CliError};

/// `tsrs ir FILE`: parse, verify and print a graph.
pub fn ir(path: &Path) -> Result<(), CliError> {
    let text = read_text(path)?;
    let g = ts_ir::parse_ir(&text).map_err(|e| {
        CliError(format!(
            "error: {}:{}:{}: {}\n{}\n{}^",
            path.display(),
            e.line,
            e.column,
            e.message,
            e.line_text,
            " ".repeat(e.column.saturating_sub(1))
        ))
    })?;
    ts_ir::verify(&g).map_err(|e| CliError(format!("error: {}: {e}", path.display())))?;
    crate::cli::emit(&g.to_string());
    Ok(())
}

/// `tsrs schema FILE`: parse and print one schema per line.
pub fn schema(path: &Path) -> Result<(), CliError> {
    let text = read_text(path)?;
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let s = ts_core::FunctionSchema::parse(line).map_err(|e| {
            CliError(format!(
                "error: {}:{}:{}: {}\n{}\n{}^",
                path.display(),
                i + 1,
                e.column,
                e.message,
                e.line_text,
                " ".repeat(e.column.saturating_sub(1))
            ))
        })?;
        out.push_str(&s.to_string());
        out.push('\n');
    }
    crate::cli::emit(&out);
    Ok(())
}

/// `tsrs ops`: the implemented schemas (the coverage table), optionally with what is missing.
pub fn ops(filter: Option<&str>, missing: bool) -> Result<(), CliError> {
    let implemented = ts_ops::implemented_schemas();
    let keep = |s: &str| filter.is_none_or(|f| s.contains(f));
    let mut out = String::new();
    for s in implemented.iter().filter(|s| keep(s)) {
        out.push_str(s);
        out.push('\n');
    }
    let total = ts_ops::schema_table::total_schemas();
    let have: std::collections::HashSet<&str> = implemented.iter().map(String::as_str).collect();
    let not_done: Vec<&str> = ts_ops::schema_table::all_lines()
        .filter(|l| !have.contains(l) && keep(l))
        .collect();
    if missing {
        for s in &not_done {
            out.push_str("MISSING ");
            out.push_str(s);
            out.push('\n');
        }
    }
    out.push_str(&format!(
        "{} operators implemented; {} of PyTorch's {total} schemas are not\n",
        implemented.len(),
        ts_ops::schema_table::all_lines()
            .filter(|l| !have.contains(l))
            .count()
    ));
    crate::cli::emit(&out);
    Ok(())
}
