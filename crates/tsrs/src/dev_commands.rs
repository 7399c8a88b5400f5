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

/// `tsrs ops`: the implemented schemas (the coverage table), optionally with every PyTorch
/// schema that has no kernel, each with its reason category, and a count per category.
pub fn ops(filter: Option<&str>, missing: bool) -> Result<(), CliError> {
    let implemented = ts_ops::implemented_schemas();
    let keep = |s: &str| filter.is_none_or(|f| s.contains(f));
    let mut out = String::new();
    if !missing {
        for s in implemented.iter().filter(|s| keep(s)) {
            out.push_str(s);
            out.push('\n');
        }
    }
    let total = ts_ops::schema_table::total_schemas();
    let not_done = ts_ops::coverage::missing_schemas();
    if missing {
        let mut by_reason: std::collections::BTreeMap<&str, usize> = Default::default();
        for (line, reason) in not_done.iter().filter(|(l, _)| keep(l)) {
            out.push_str(&format!("MISSING [{reason}] {line}\n"));
            *by_reason.entry(reason).or_default() += 1;
        }
        for (reason, n) in &by_reason {
            out.push_str(&format!("{n:6} {reason}\n"));
        }
    }
    out.push_str(&format!(
        "{} operators implemented; {} of PyTorch's {total} schemas are not ({} not yet implemented)\n",
        implemented.len(),
        not_done.len(),
        not_done
            .iter()
            .filter(|(_, r)| *r == ts_ops::coverage::NOT_YET_IMPLEMENTED)
            .count()
    ));
    crate::cli::emit(&out);
    Ok(())
}
