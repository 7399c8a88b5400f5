//! Source text and ranges into it, with PyTorch-style highlighting of a range
//! (`~~~~ <--- HERE`) for compile errors and tracebacks.

use std::fmt;
use std::sync::Arc;

/// A whole source text (a program, or one file of an archive's `code/`).
#[derive(Debug)]
pub struct Source {
    text: String,
    /// The file name shown in messages (`<string>` when unknown).
    filename: Option<String>,
    /// Line number of the first line of `text` in the file (1-based).
    starting_line: usize,
    line_starts: Vec<usize>,
    /// For code printed by `torch.jit.save`: which original source each piece came from
    /// (the archive's `.debug_pkl`), sorted by offset.
    generated_from: Vec<DebugSegment>,
}

/// A piece of generated code (from `offset` to the next segment) and the original source range
/// it was printed from; `None` when the code has no original (PyTorch prints `:0:0`).
#[derive(Clone, Debug)]
pub struct DebugSegment {
    pub offset: usize,
    pub original: Option<SourceRange>,
}

impl Source {
    /// Wraps `text`, optionally naming its file and first line number.
    pub fn new(
        text: impl Into<String>,
        filename: Option<String>,
        starting_line: usize,
    ) -> Arc<Source> {
        let text = text.into();
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        Arc::new(Source {
            text,
            filename,
            starting_line: starting_line.max(1),
            line_starts,
            generated_from: Vec::new(),
        })
    }

    /// Like [`Source::new`], for generated code with the map back to its original sources.
    pub fn with_debug_info(
        text: impl Into<String>,
        filename: Option<String>,
        mut segments: Vec<DebugSegment>,
    ) -> Arc<Source> {
        let base = Source::new(text, filename, 1);
        segments.sort_by_key(|s| s.offset);
        Arc::new(Source {
            text: base.text.clone(),
            filename: base.filename.clone(),
            starting_line: base.starting_line,
            line_starts: base.line_starts.clone(),
            generated_from: segments,
        })
    }

    /// The debug segment covering byte `offset`, when the source has debug info.
    pub fn segment_at(&self, offset: usize) -> Option<&DebugSegment> {
        let i = self.generated_from.partition_point(|s| s.offset <= offset);
        i.checked_sub(1).map(|i| &self.generated_from[i])
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The file name, if known.
    pub fn filename(&self) -> Option<&str> {
        self.filename.as_deref()
    }

    /// The 0-based line index of byte offset `offset` within the text.
    pub fn line_index(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// (1-based line number in the file, 0-based column) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let li = self.line_index(offset.min(self.text.len()));
        (li + self.starting_line, offset - self.line_starts[li])
    }

    /// The text of 0-based line `li` without its newline.
    pub fn line_text(&self, li: usize) -> &str {
        let start = self.line_starts[li];
        let end = self
            .line_starts
            .get(li + 1)
            .map(|&e| e - 1)
            .unwrap_or(self.text.len());
        &self.text[start..end.max(start)]
    }

    /// Number of lines.
    pub fn num_lines(&self) -> usize {
        self.line_starts.len()
    }
}

/// A byte range `[start, end)` in a [`Source`].
#[derive(Clone)]
pub struct SourceRange {
    pub source: Arc<Source>,
    pub start: usize,
    pub end: usize,
}

impl SourceRange {
    /// A range in `source`.
    pub fn new(source: Arc<Source>, start: usize, end: usize) -> SourceRange {
        let end = end.min(source.text.len());
        SourceRange {
            source,
            start: start.min(end),
            end,
        }
    }

    /// The text covered.
    pub fn text(&self) -> &str {
        &self.source.text[self.start..self.end]
    }

    /// The smallest range covering both.
    pub fn join(&self, other: &SourceRange) -> SourceRange {
        SourceRange::new(
            self.source.clone(),
            self.start.min(other.start),
            self.end.max(other.end),
        )
    }

    /// The original range this generated code was printed from (through the archive's debug
    /// info); `Some(None)` when it has none, `None` when the source carries no debug info.
    pub fn original(&self) -> Option<Option<&SourceRange>> {
        self.source
            .segment_at(self.start)
            .map(|s| s.original.as_ref())
    }

    /// `(file, line, column)` of the start: the `# file:line:col` IR comment. Generated code
    /// with debug info reports its original location (`("", 0, 0)` when it has none).
    pub fn file_line_col(&self) -> (String, usize, usize) {
        match self.original() {
            Some(Some(orig)) => return orig.file_line_col(),
            Some(None) => return (String::new(), 0, 0),
            None => {}
        }
        let (line, col) = self.source.line_col(self.start);
        (
            self.source.filename().unwrap_or("<string>").to_string(),
            line,
            col,
        )
    }

    /// Writes the highlighted excerpt the way PyTorch does:
    ///
    /// ```text
    ///   File "<string>", line 3
    ///     return x
    ///            ~ <--- HERE
    /// ```
    ///
    /// Two lines of context are shown before the range and two after it (a blank last one
    /// shows as nothing, as PyTorch's printer leaves it); on each line of the range the marker
    /// starts at the first non-blank character.
    pub fn highlight(&self, out: &mut String) {
        const CONTEXT: usize = 2;
        let src = &self.source;
        let first = src.line_index(self.start);
        let last = src.line_index(self.end.saturating_sub(1).max(self.start));
        let (line_no, _) = src.line_col(self.start);
        out.push_str(&format!(
            "  File \"{}\", line {}\n",
            src.filename().unwrap_or("<string>"),
            line_no
        ));
        for li in first.saturating_sub(CONTEXT)..first {
            out.push_str(src.line_text(li));
            out.push('\n');
        }
        for li in first..=last {
            let line = src.line_text(li);
            out.push_str(line);
            out.push('\n');
            let ls = src.line_starts[li];
            let from = if li == first { self.start - ls } else { 0 };
            let to = if li == last {
                (self.end - ls).min(line.len())
            } else {
                line.len()
            };
            // Blanks (and, on the first line, what precedes the range) are not underlined.
            let lead = if li == first {
                from
            } else {
                line.len() - line.trim_start_matches(' ').len()
            };
            if to > lead {
                out.push_str(&" ".repeat(lead));
                out.push_str(&"~".repeat(to - lead));
                out.push_str(if li == last { " <--- HERE\n" } else { "\n" });
            } else if li == last {
                out.push_str(&" ".repeat(lead));
                out.push_str("~ <--- HERE\n");
            }
        }
        let after: Vec<&str> = (last + 1..(last + 1 + CONTEXT).min(src.num_lines()))
            .map(|li| src.line_text(li))
            .collect();
        let after = after.join("\n");
        if !after.is_empty() {
            out.push_str(&after);
            if !after.ends_with('\n') {
                out.push('\n');
            }
        }
    }

    /// The highlighted excerpt as a string.
    pub fn highlighted(&self) -> String {
        let mut s = String::new();
        self.highlight(&mut s);
        s
    }
}

impl fmt::Debug for SourceRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SourceRange({}..{} {:?})",
            self.start,
            self.end,
            self.text()
        )
    }
}

impl PartialEq for SourceRange {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.source, &other.source)
            && self.start == other.start
            && self.end == other.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlight_marks_range() {
        let src = Source::new("def f():\n    return x\n", None, 1);
        let r = SourceRange::new(src, 20, 21);
        assert_eq!(r.text(), "x");
        let h = r.highlighted();
        assert!(h.contains("line 2"), "{h}");
        assert!(h.contains("    return x\n           ~ <--- HERE\n"), "{h}");
    }
}
