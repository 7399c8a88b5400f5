//! What a command runs on: a TorchScript source file (compiled to a unit of functions) or a
//! `torch.jit.save` archive (loaded as a module), and the function or method `--entry` names.

use std::path::Path;

use torchscript::{CompilationUnit, Function, Graph, IValue, Method, Module, PreparedCall};

use crate::cli::{read_text, CliError};

/// True when `path` names a saved archive rather than a source program.
pub fn is_archive(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "pt" || e == "pth" || e == "zip")
}

/// Loads the archive at `path`.
pub fn load_module(path: &Path) -> Result<Module, CliError> {
    Ok(Module::load(path)?)
}

/// A loaded program: a saved module or a compiled source file.
pub enum Program {
    Module(Module),
    Source(CompilationUnit),
}

impl Program {
    /// Opens `path`; `clean` runs PyTorch's cleanup passes on a source file's graphs (saved
    /// graphs are already clean: the passes are not idempotent).
    pub fn open(path: &Path, clean: bool) -> Result<Program, CliError> {
        if is_archive(path) {
            return Ok(Program::Module(load_module(path)?));
        }
        let text = read_text(path)?;
        let name = path
            .file_name()
            .map_or_else(|| "<file>".to_string(), |n| n.to_string_lossy().to_string());
        let cu = torchscript::compile_with(&text, &name, clean)?;
        Ok(Program::Source(cu))
    }

    /// The function `entry` names: a function of a source program, or a method of a saved
    /// module's root (`forward`) or of a submodule (`encoder.layer0.forward`).
    pub fn entry(&self, entry: &str, path: &Path) -> Result<Entry, CliError> {
        match self {
            Program::Module(m) => Ok(Entry::Method(m.method(entry)?)),
            Program::Source(cu) => cu.function(entry).map(Entry::Function).map_err(|_| {
                CliError(format!(
                    "error: no function named '{entry}' in {}",
                    path.display()
                ))
            }),
        }
    }
}

/// A callable entry point: a module's method (called with its `self`) or a function.
pub enum Entry {
    Method(Method),
    Function(Function),
}

impl Entry {
    /// Calls it with positional arguments.
    pub fn call(&self, args: Vec<IValue>) -> Result<IValue, CliError> {
        Ok(match self {
            Entry::Method(m) => m.call(args)?,
            Entry::Function(f) => f.call(args)?,
        })
    }

    /// Binds the arguments once for repeated calls.
    pub fn prepare(&self, args: Vec<IValue>) -> Result<PreparedCall, CliError> {
        Ok(match self {
            Entry::Method(m) => m.prepare(args)?,
            Entry::Function(f) => f.prepare(args)?,
        })
    }

    /// A module whose `forward` is this function (a method is already in one).
    pub fn into_module(self, class_name: &str) -> Result<Module, CliError> {
        match self {
            Entry::Function(f) => Ok(f.to_module(class_name)?),
            Entry::Method(m) => Err(CliError(format!(
                "error: '{}' is a method of a saved module: save the module itself",
                m.name()
            ))),
        }
    }

    /// The stored graph.
    pub fn ir_graph(&self) -> Result<Graph, CliError> {
        Ok(match self {
            Entry::Method(m) => m.ir_graph()?,
            Entry::Function(f) => f.ir_graph()?,
        })
    }

    /// The graph the executor runs for `args`.
    pub fn optimized_graph(&self, args: Vec<IValue>) -> Result<Graph, CliError> {
        Ok(match self {
            Entry::Method(m) => m.optimized_graph(args)?,
            Entry::Function(f) => f.optimized_graph(args)?,
        })
    }

    /// The HTML report of every optimization pass for `args`.
    pub fn pass_report(&self, args: Vec<IValue>, title: &str) -> Result<String, CliError> {
        Ok(match self {
            Entry::Method(m) => m.pass_report(args, title)?,
            Entry::Function(f) => f.pass_report(args, title)?,
        })
    }
}
