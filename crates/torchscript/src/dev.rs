//! Developer tools on the text formats: the IR's textual form and operator schemas, parsed,
//! checked and printed back (what `tsrs ir` and `tsrs schema` do).

use crate::error::{Error, ErrorKind, Result};

/// Parses a graph in PyTorch's textual IR, verifies it and prints it back. Errors name
/// `file_name:line:column` and show the line with a caret.
pub fn check_ir(text: &str, file_name: &str) -> Result<String> {
    let g = ts_ir::parse_ir(text)
        .map_err(|e| located(file_name, e.line, e.column, &e.message, &e.line_text))?;
    ts_ir::verify(&g).map_err(|e| Error::new(ErrorKind::Format, format!("{file_name}: {e}")))?;
    Ok(g.to_string())
}

/// Parses one operator schema per non-blank line and prints each back as PyTorch does.
pub fn check_schemas(text: &str, file_name: &str) -> Result<String> {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let s = ts_core::FunctionSchema::parse(line)
            .map_err(|e| located(file_name, i + 1, e.column, &e.message, &e.line_text))?;
        out.push_str(&s.to_string());
        out.push('\n');
    }
    Ok(out)
}

fn located(file: &str, line: usize, column: usize, message: &str, text: &str) -> Error {
    Error::new(
        ErrorKind::Format,
        format!(
            "{file}:{line}:{column}: {message}\n{text}\n{}^",
            " ".repeat(column.saturating_sub(1))
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_locates_errors() {
        let g = "graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n";
        assert!(check_ir(g, "g.ir").unwrap().contains("aten::relu(%x)"));
        let e = check_ir("graph(%x : Tensor):\n  return (%q)\n", "g.ir").unwrap_err();
        assert!(
            e.message().starts_with("g.ir:") && e.message().contains("%q"),
            "{e}"
        );
        let s = check_schemas("aten::relu(Tensor self) -> Tensor\n\n", "s.txt").unwrap();
        assert_eq!(s, "aten::relu(Tensor self) -> Tensor\n");
        let e = check_schemas("aten::relu(Tensor self -> Tensor\n", "s.txt").unwrap_err();
        assert!(e.message().starts_with("s.txt:1:"), "{e}");
    }
}
