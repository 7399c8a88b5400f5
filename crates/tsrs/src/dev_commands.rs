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
    print!("{g}");
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
    print!("{out}");
    Ok(())
}
