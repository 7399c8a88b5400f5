//! The Python printer of `torch.jit.save`: turns graph functions and named types into the
//! TorchScript source files an archive holds under `code/` (PyTorch's `python_print.cpp`).
//!
//! A [`PythonPrinter`] collects one text per qualifier (`__torch__.torch.nn.functional` →
//! `code/__torch__/torch/nn/functional.py`). Functions and classes are appended to the file
//! of their qualifier in the order they are added; temporaries are numbered across the whole
//! file (`_0`, `_1`, ...), as PyTorch does. Values the source cannot spell (tensors, objects,
//! non-ASCII strings) go to a constant table shared by all files, printed as `CONSTANTS.cN`
//! and saved as `constants.pkl`.

pub mod annotation;
pub mod class;
pub mod constant;
pub mod deps;
mod export;
mod function;
pub mod names;
pub mod op_schemas;
#[cfg(test)]
mod tests;

use indexmap::IndexMap;
use ts_core::{Argument, FunctionSchema, IValue, TypeRef};
use ts_ir::Graph;

pub use class::MethodSource;
pub use constant::ConstantTable;
pub use deps::Deps;
pub use function::op_name;

use function::Emitter;
use names::{debug_name_base, is_unnamed, NameGen};
use op_schemas::OpSchemas;

/// A value or graph the printer cannot write as importable source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot print as TorchScript source: {message}")]
pub struct PrintError {
    /// What cannot be printed and why.
    pub message: String,
}

impl PrintError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> PrintError {
        PrintError {
            message: message.into(),
        }
    }
}

/// The text of one `code/` file and its name counters.
#[derive(Default)]
struct FileText {
    text: String,
    names: NameGen,
}

/// Prints functions and types into per-qualifier source files with a shared constant table.
#[derive(Default)]
pub struct PythonPrinter {
    files: IndexMap<String, FileText>,
    constants: ConstantTable,
    deps: Deps,
    schemas: OpSchemas,
    printed_types: std::collections::HashSet<String>,
}

/// Splits `a.b.C` into the qualifier `a.b` and the name `C`.
pub fn split_qualified(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(i) => (&name[..i], &name[i + 1..]),
        None => ("", name),
    }
}

/// The archive record holding the code of a qualifier (`__torch__.foo` →
/// `code/__torch__/foo.py`).
pub fn code_file_path(qualifier: &str) -> String {
    format!("code/{}.py", qualifier.replace('.', "/"))
}

/// A schema for a graph function whose declaration is not at hand: argument names are the
/// inputs' debug names without their `.N` suffix, no defaults, and the graph's single output
/// (or a tuple of its outputs) is the return type.
pub fn schema_from_graph(name: &str, g: &Graph) -> FunctionSchema {
    let arguments = g
        .inputs()
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let name = match g.value(v).debug_name() {
                Some(n) if !is_unnamed(n) => debug_name_base(n).to_string(),
                _ => format!("argument_{i}"),
            };
            plain_argument(name, g.value(v).ty().clone())
        })
        .collect();
    let ret = match g.outputs() {
        [v] => g.value(*v).ty().clone(),
        vs => ts_core::Type::tuple(vs.iter().map(|&v| g.value(v).ty().clone()).collect()),
    };
    FunctionSchema {
        name: name.to_string(),
        overload_name: String::new(),
        arguments,
        returns: vec![plain_argument(String::new(), ret)],
        is_vararg: false,
        is_varret: false,
    }
}

fn plain_argument(name: String, ty: TypeRef) -> Argument {
    Argument {
        name,
        ty,
        real_ty: None,
        n: None,
        default: None,
        kwarg_only: false,
        alias_info: None,
    }
}

impl PythonPrinter {
    /// An empty printer.
    pub fn new() -> PythonPrinter {
        PythonPrinter::default()
    }

    fn emitter<'a>(&'a mut self, qualifier: &str, level: usize) -> Emitter<'a> {
        let file = self.files.entry(qualifier.to_string()).or_default();
        Emitter::new(
            &mut file.text,
            &mut file.names,
            &mut self.constants,
            &mut self.deps,
            &mut self.schemas,
            level,
        )
    }

    /// Appends the free function `qualified_name` (`__torch__.foo.bar`) to its qualifier's
    /// file: `def bar(args) -> ret:` and its body. Nothing is appended when printing fails.
    pub fn add_function(
        &mut self,
        qualified_name: &str,
        g: &Graph,
        schema: &FunctionSchema,
    ) -> Result<(), PrintError> {
        let (qualifier, name) = split_qualified(qualified_name);
        self.transactional(qualifier, |p| {
            p.emitter(qualifier, 0).function(name, g, schema, true)
        })
    }

    /// Runs `f` on the file of `qualifier`, restoring its text when `f` fails.
    fn transactional(
        &mut self,
        qualifier: &str,
        f: impl FnOnce(&mut PythonPrinter) -> Result<(), PrintError>,
    ) -> Result<(), PrintError> {
        let len = self.files.get(qualifier).map(|f| f.text.len()).unwrap_or(0);
        let r = f(self);
        if r.is_err() {
            if let Some(file) = self.files.get_mut(qualifier) {
                file.text.truncate(len);
            }
        }
        r
    }

    /// The source of a qualifier's file, if anything was printed into it.
    pub fn file(&self, qualifier: &str) -> Option<&str> {
        self.files.get(qualifier).map(|f| f.text.as_str())
    }

    /// Every file as (archive record path relative to the archive root, text), in the order
    /// the qualifiers were first used.
    pub fn files(&self) -> Vec<(String, &str)> {
        self.files
            .iter()
            .map(|(q, f)| (code_file_path(q), f.text.as_str()))
            .collect()
    }

    /// The constant table (`CONSTANTS.cN` is entry N), to be written as `constants.pkl`.
    pub fn constants(&self) -> &[IValue] {
        self.constants.values()
    }

    /// Takes the constant table out.
    pub fn into_constants(self) -> Vec<IValue> {
        self.constants.into_values()
    }

    /// The named types the printed code refers to.
    pub fn dependencies(&self) -> &Deps {
        &self.deps
    }
}

/// A method as a module's `code` property shows it (PyTorch's `printMethod`): like a file's
/// `def`, but at the top level and without the type of `self`.
pub fn print_method_code(
    name: &str,
    g: &Graph,
    schema: &FunctionSchema,
) -> Result<(String, Vec<IValue>), PrintError> {
    let mut p = PythonPrinter::new();
    p.emitter("", 0).function(name, g, schema, false)?;
    let text = p.file("").unwrap_or_default().to_string();
    Ok((text, p.into_constants()))
}

/// Prints a single free function as a file of its own would hold it (a convenience for tests
/// and tools): the text and the constants it needed.
pub fn print_function(
    name: &str,
    g: &Graph,
    schema: &FunctionSchema,
) -> Result<(String, Vec<IValue>), PrintError> {
    let mut p = PythonPrinter::new();
    p.add_function(name, g, schema)?;
    let (qualifier, _) = split_qualified(name);
    let text = p.file(qualifier).unwrap_or_default().to_string();
    Ok((text, p.into_constants()))
}
