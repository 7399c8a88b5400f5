//! JIT logging (PyTorch's `jit_log.h`), as the spec's "JIT Logging" section describes.
//!
//! `PYTORCH_JIT_LOG_LEVEL` names the source files (passes) to log, separated by `:`; a name may
//! carry its extension (`dead_code_elimination.rs`) or not. A plain name enables `GRAPH_DUMP`
//! (whole graphs after a pass) and `GRAPH_UPDATE` (each transformation); a `>` prefix (`>>` and
//! `>>>` mean the same today) also enables `GRAPH_DEBUG` (pass internals). Each line of a
//! message is printed with a `[LEVEL file:line] ` prefix, as PyTorch prints it.
//! `PYTORCH_JIT_TYPE_VERBOSITY` (0-3) sets how much of each tensor type logged graphs show.
//!
//! Messages are `tracing` events (target `jit_log`, fields `level`, `file`, `line`, `message`),
//! so an application can route them through its own subscriber; when none is installed, the
//! first message installs [`JitLogSubscriber`], which writes PyTorch's format to stderr.
//! Pass authors use the [`graph_dump!`](crate::graph_dump), [`graph_update!`](crate::graph_update)
//! and [`graph_debug!`](crate::graph_debug) macros; the file is the calling source file, so the
//! name to enable is the pass's file name.

use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use parking_lot::RwLock;
use ts_ir::Graph;

/// The detail level of a log message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JitLogLevel {
    /// Whole graphs after a pass.
    Dump = 0,
    /// Individual transformations.
    Update = 1,
    /// Internals of a pass or analysis.
    Debug = 2,
}

impl fmt::Display for JitLogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JitLogLevel::Dump => "DUMP",
            JitLogLevel::Update => "UPDATE",
            JitLogLevel::Debug => "DEBUG",
        })
    }
}

/// Parsed `PYTORCH_JIT_LOG_LEVEL`: file stem -> highest enabled level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JitLogConfig {
    files: HashMap<String, JitLogLevel>,
}

impl JitLogConfig {
    /// Parses a `PYTORCH_JIT_LOG_LEVEL` value (`dead_code_elimination:>alias_analysis.rs`).
    pub fn parse(spec: &str) -> JitLogConfig {
        let mut files = HashMap::new();
        for part in spec.split(':').map(str::trim).filter(|p| !p.is_empty()) {
            let arrows = part.len() - part.trim_start_matches('>').len();
            let name = part.trim_start_matches('>');
            let stem = strip_extension(basename(name));
            if stem.is_empty() {
                continue;
            }
            let level = if arrows == 0 {
                JitLogLevel::Update
            } else {
                JitLogLevel::Debug
            };
            files.insert(stem.to_string(), level);
        }
        JitLogConfig { files }
    }

    /// True when messages of `level` from source file `file` are printed.
    pub fn is_enabled(&self, file: &str, level: JitLogLevel) -> bool {
        let stem = strip_extension(basename(file));
        self.files.get(stem).is_some_and(|&l| level <= l)
    }

    /// True when nothing is enabled.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

fn basename(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn strip_extension(name: &str) -> &str {
    match name.rfind('.') {
        Some(i) => &name[..i],
        None => name,
    }
}

static ANY_ENABLED: AtomicBool = AtomicBool::new(false);

fn config() -> &'static RwLock<JitLogConfig> {
    static CONFIG: OnceLock<RwLock<JitLogConfig>> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let c = JitLogConfig::parse(&std::env::var("PYTORCH_JIT_LOG_LEVEL").unwrap_or_default());
        ANY_ENABLED.store(!c.is_empty(), Ordering::Relaxed);
        RwLock::new(c)
    })
}

/// Replaces the logging configuration (what `PYTORCH_JIT_LOG_LEVEL` would set), e.g. from a
/// command-line flag or a test.
pub fn set_jit_log_levels(spec: &str) {
    let c = JitLogConfig::parse(spec);
    let any = !c.is_empty();
    *config().write() = c;
    ANY_ENABLED.store(any, Ordering::Relaxed);
}

/// True when messages of `level` from source file `file` are printed (cheap when logging is
/// off).
pub fn is_enabled(file: &str, level: JitLogLevel) -> bool {
    let c = config();
    ANY_ENABLED.load(Ordering::Relaxed) && c.read().is_enabled(file, level)
}

/// A graph printed for a log message (tensor types as verbose as `PYTORCH_JIT_TYPE_VERBOSITY`
/// says; the type printer reads it).
pub fn graph_text(g: &Graph) -> String {
    g.to_string()
}

/// `text` with every line prefixed by `[LEVEL file:line] `, as PyTorch's `jit_log_prefix`.
pub fn prefix_lines(level: JitLogLevel, file: &str, line: u32, text: &str) -> String {
    let prefix = format!("[{level} {}:{line:03}] ", basename(file));
    let mut out = String::new();
    for l in text.lines() {
        out.push_str(&prefix);
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Emits one message (already known to be enabled) as a `tracing` event.
pub fn emit(level: JitLogLevel, file: &str, line: u32, message: &str) {
    install_default_subscriber();
    let level_name = level.to_string();
    let file = basename(file);
    tracing::event!(
        target: "jit_log",
        tracing::Level::INFO,
        level = level_name.as_str(),
        file = file,
        line = line,
        message = message
    );
}

fn install_default_subscriber() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        if !tracing::dispatcher::has_been_set() {
            let _ = tracing::subscriber::set_global_default(JitLogSubscriber);
        }
    });
}

/// The subscriber used when the application installs none: prints `jit_log` events to stderr
/// in PyTorch's format and ignores everything else.
pub struct JitLogSubscriber;

#[derive(Default)]
struct JitLogFields {
    level: String,
    file: String,
    line: u32,
    message: String,
}

impl tracing::field::Visit for JitLogFields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "level" => self.level = value.to_string(),
            "file" => self.file = value.to_string(),
            "message" => self.message = value.to_string(),
            _ => {}
        }
    }

    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        if field.name() == "line" {
            self.line = value as u32;
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for JitLogSubscriber {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.target() == "jit_log"
    }

    fn new_span(&self, _span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _span: &tracing::span::Id, _values: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _span: &tracing::span::Id, _follows: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut f = JitLogFields::default();
        event.record(&mut f);
        let level = match f.level.as_str() {
            "DUMP" => JitLogLevel::Dump,
            "UPDATE" => JitLogLevel::Update,
            _ => JitLogLevel::Debug,
        };
        let text = prefix_lines(level, &f.file, f.line, &f.message);
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
    }

    fn enter(&self, _span: &tracing::span::Id) {}

    fn exit(&self, _span: &tracing::span::Id) {}
}

/// Logs a whole graph after a transformation (`GRAPH_DUMP`): a message, then the graph.
#[macro_export]
macro_rules! graph_dump {
    ($msg:expr, $g:expr) => {
        if $crate::jit_log::is_enabled(file!(), $crate::jit_log::JitLogLevel::Dump) {
            let text = format!("{}\n{}", $msg, $crate::jit_log::graph_text($g));
            $crate::jit_log::emit($crate::jit_log::JitLogLevel::Dump, file!(), line!(), &text);
        }
    };
}

/// Logs one transformation (`GRAPH_UPDATE`); the arguments are `format!` arguments, evaluated
/// only when enabled.
#[macro_export]
macro_rules! graph_update {
    ($($arg:tt)*) => {
        if $crate::jit_log::is_enabled(file!(), $crate::jit_log::JitLogLevel::Update) {
            let text = format!($($arg)*);
            $crate::jit_log::emit($crate::jit_log::JitLogLevel::Update, file!(), line!(), &text);
        }
    };
}

/// Logs pass internals (`GRAPH_DEBUG`); the arguments are `format!` arguments, evaluated only
/// when enabled.
#[macro_export]
macro_rules! graph_debug {
    ($($arg:tt)*) => {
        if $crate::jit_log::is_enabled(file!(), $crate::jit_log::JitLogLevel::Debug) {
            let text = format!($($arg)*);
            $crate::jit_log::emit($crate::jit_log::JitLogLevel::Debug, file!(), line!(), &text);
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_files_and_levels_as_the_spec_says() {
        let c = JitLogConfig::parse("dead_code_elimination:>guard_elimination.cpp:>>>x.rs::");
        assert!(c.is_enabled("src/dead_code_elimination.rs", JitLogLevel::Dump));
        assert!(c.is_enabled("dead_code_elimination.rs", JitLogLevel::Update));
        assert!(!c.is_enabled("dead_code_elimination.rs", JitLogLevel::Debug));
        assert!(c.is_enabled("guard_elimination.rs", JitLogLevel::Debug));
        assert!(c.is_enabled("a/b/x.rs", JitLogLevel::Debug));
        assert!(!c.is_enabled("peephole.rs", JitLogLevel::Dump));
        assert!(JitLogConfig::parse("").is_empty());
        assert!(JitLogConfig::parse(":::").is_empty());
    }

    #[test]
    fn prefixes_every_line() {
        assert_eq!(
            prefix_lines(JitLogLevel::Dump, "crates/x/src/peephole.rs", 7, "a\nb\n"),
            "[DUMP peephole.rs:007] a\n[DUMP peephole.rs:007] b\n"
        );
        assert_eq!(
            prefix_lines(JitLogLevel::Update, "p.rs", 1234, "x"),
            "[UPDATE p.rs:1234] x\n"
        );
    }
}
