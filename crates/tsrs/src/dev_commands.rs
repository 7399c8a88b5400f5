//! Developer commands: `tsrs ir`, `tsrs schema` and `tsrs ops`.

use std::path::Path;

use torchscript::{dev, ops};

use crate::cli::{emit, read_text, CliError};

/// `tsrs ir FILE`: parse, verify and print a graph.
pub fn ir(path: &Path) -> Result<(), CliError> {
    let text = read_text(path)?;
    emit(&dev::check_ir(&text, &path.display().to_string())?);
    Ok(())
}

/// `tsrs schema FILE`: parse and print one schema per line.
pub fn schema(path: &Path) -> Result<(), CliError> {
    let text = read_text(path)?;
    emit(&dev::check_schemas(&text, &path.display().to_string())?);
    Ok(())
}

/// `tsrs ops`: the implemented schemas (the coverage table), optionally with every PyTorch
/// schema that has no kernel, each with its reason category, and a count per category.
pub fn ops(filter: Option<&str>, missing: bool) -> Result<(), CliError> {
    let implemented = ops::implemented_schemas();
    let keep = |s: &str| filter.is_none_or(|f| s.contains(f));
    let mut out = String::new();
    if !missing {
        for s in implemented.iter().filter(|s| keep(s)) {
            out.push_str(s);
            out.push('\n');
        }
    }
    let not_done = ops::missing_schemas();
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
        "{} operators implemented; {} of PyTorch's {} schemas are not ({} not yet implemented)\n",
        implemented.len(),
        not_done.len(),
        ops::total_schemas(),
        not_done
            .iter()
            .filter(|(_, r)| *r == ops::NOT_YET_IMPLEMENTED)
            .count()
    ));
    emit(&out);
    Ok(())
}
