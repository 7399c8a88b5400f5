//! The IR emitter: lowers the AST of a compilation unit into graphs (PyTorch's `ir_emitter`),
//! then converts them to SSA and applies the exit transform.

pub mod annotations;
pub mod builtins;
pub mod call;
pub mod classes;
pub mod environment;
pub mod expr;
pub mod function;
pub mod grad_mode;
pub mod library;
pub mod statements;
pub mod sugared;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ts_core::{ClassType, Source, SourceRange, TypeRef};
use ts_ir::{CompilationUnit, Function};

use crate::ast::{ClassDef, Def, Expr, Stmt, StmtKind};
use crate::error::{CResult, CompileError};
use crate::parser::parse_program;
use annotations::TypeNames;

/// A function definition waiting to be compiled (compiled on first use or at the end).
struct PendingDef {
    def: Def,
    /// The class it is a method of.
    class: Option<Arc<ClassType>>,
}

/// The state of compiling one unit: the functions and classes it defines.
pub struct CompileCtx {
    pub cu: Arc<CompilationUnit>,
    pending: HashMap<String, PendingDef>,
    /// Functions being compiled (for recursion detection), innermost last.
    in_progress: Vec<String>,
    /// Global sugared bindings from top-level assignments (`F = torch.nn.functional`).
    pub globals: HashMap<String, Expr>,
    /// Names of top-level definitions, in source order.
    order: Vec<String>,
    /// Qualified-name prefix for classes (`__torch__`).
    pub prefix: String,
    /// Class definitions not yet processed.
    class_defs: HashMap<String, ClassDef>,
    /// Compiling the `code/` of a saved archive: qualified names, `ops.*`, `CONSTANTS.cN`,
    /// module classes declared by their attribute annotations.
    pub archive: bool,
    /// The archive's constants table (`CONSTANTS.c<N>`).
    pub constants: Vec<ts_core::IValue>,
    /// Classes already set up.
    classes_done: HashSet<String>,
}

impl TypeNames for CompileCtx {
    fn lookup_type(&self, name: &str) -> Option<TypeRef> {
        self.cu
            .find_type(name)
            .or_else(|| self.cu.find_type(&format!("{}.{name}", self.prefix)))
    }
}

impl CompileCtx {
    fn new(cu: Arc<CompilationUnit>) -> CompileCtx {
        CompileCtx {
            cu,
            pending: HashMap::new(),
            in_progress: Vec::new(),
            globals: HashMap::new(),
            order: Vec::new(),
            prefix: "__torch__".to_string(),
            class_defs: HashMap::new(),
            classes_done: HashSet::new(),
            archive: false,
            constants: Vec::new(),
        }
    }

    /// The function named `name` of this unit, compiling it now if needed. `call_range` is
    /// where it is called from (for recursion errors).
    pub fn get_function(
        &mut self,
        name: &str,
        call_range: &SourceRange,
    ) -> CResult<Option<Arc<Function>>> {
        if let Some(f) = self.cu.find_function(name) {
            if f.is_defined() {
                return Ok(Some(f));
            }
        }
        if self.in_progress.iter().any(|n| n == name) {
            return Err(CompileError::new(
                format!(
                    "function '{name}' is called recursively. Recursive calls are not supported"
                ),
                call_range,
            ));
        }
        let Some(p) = self.pending.remove(name) else {
            return Ok(self.cu.find_function(name));
        };
        self.compile_def(name, p)?;
        Ok(self.cu.find_function(name))
    }

    fn compile_def(&mut self, name: &str, p: PendingDef) -> CResult<Arc<Function>> {
        self.in_progress.push(name.to_string());
        let result = function::FunctionEmitter::compile(self, &p.def, p.class.clone(), name);
        self.in_progress.pop();
        let (graph, schema) = result?;
        let f = match self.cu.find_function(name) {
            Some(f) => {
                f.define(graph, schema);
                f
            }
            None => {
                let f = Function::new(name, graph, schema);
                self.cu.register_function(f.clone());
                f
            }
        };
        if let Some(c) = &p.class {
            c.add_method(f.clone());
        }
        Ok(f)
    }

    /// Makes sure the class named `name` has its attributes and methods set up.
    pub fn ensure_class(&mut self, name: &str) -> CResult<()> {
        if self.classes_done.contains(name) {
            return Ok(());
        }
        if let Some(cd) = self.class_defs.remove(name) {
            self.classes_done.insert(name.to_string());
            classes::define_class(self, name, cd)?;
        }
        Ok(())
    }

    /// Registers a method to compile later.
    pub fn add_pending_method(&mut self, qualified: String, def: Def, class: Arc<ClassType>) {
        self.pending.insert(
            qualified,
            PendingDef {
                def,
                class: Some(class),
            },
        );
    }

    /// Compiles a pending method now (needed for `__init__`, and on first call).
    pub fn compile_pending(
        &mut self,
        qualified: &str,
        call_range: &SourceRange,
    ) -> CResult<Option<Arc<Function>>> {
        self.get_function(qualified, call_range)
    }
}

/// Compiles TorchScript source into a compilation unit: every top-level `def` becomes a
/// function, every `class` a class type (TorchScript classes, `NamedTuple`s, `Enum`s).
pub fn compile_source(src: &Arc<Source>) -> CResult<Arc<CompilationUnit>> {
    let cu = CompilationUnit::new();
    compile_into(&cu, src)?;
    Ok(cu)
}

/// Compiles `src` into an existing unit.
pub fn compile_into(cu: &Arc<CompilationUnit>, src: &Arc<Source>) -> CResult<()> {
    let mut ctx = CompileCtx::new(cu.clone());
    compile_files(&mut ctx, &[("__torch__".to_string(), src.clone())])
}

/// Compiles `src` into `cu` with its functions and classes under `namespace`
/// (`__torch__.torch.nn.functional`).
pub fn compile_into_namespace(
    cu: &Arc<CompilationUnit>,
    src: &Arc<Source>,
    namespace: &str,
) -> CResult<()> {
    let mut ctx = CompileCtx::new(cu.clone());
    compile_files(&mut ctx, &[(namespace.to_string(), src.clone())])
}

/// Compiles the `code/` files of a `torch.jit.save` archive into `cu`. Each file comes with its
/// qualifier (`code/__torch__/a/b.py` defines the members of `__torch__.a.b`); `constants` is
/// the archive's constants table.
pub fn compile_archive_code(
    cu: &Arc<CompilationUnit>,
    files: &[(String, Arc<Source>)],
    constants: Vec<ts_core::IValue>,
) -> CResult<()> {
    compile_parsed_archive_code(cu, parse_files(files)?, constants)
}

/// Source files parsed, each with its qualifier, ready for [`compile_parsed_archive_code`].
/// Parsing needs no operators, so a loader can parse while the operator registry is still
/// being built elsewhere, and wait for it only to compile.
pub struct ParsedFiles(Vec<(String, Vec<Stmt>)>);

/// Parses every file of `files` (qualifier, source).
pub fn parse_files(files: &[(String, Arc<Source>)]) -> CResult<ParsedFiles> {
    let mut programs = Vec::with_capacity(files.len());
    for (prefix, src) in files {
        programs.push((prefix.clone(), parse_program(src)?));
    }
    Ok(ParsedFiles(programs))
}

/// [`compile_archive_code`] on files parsed already.
pub fn compile_parsed_archive_code(
    cu: &Arc<CompilationUnit>,
    parsed: ParsedFiles,
    constants: Vec<ts_core::IValue>,
) -> CResult<()> {
    let mut ctx = CompileCtx::new(cu.clone());
    ctx.archive = true;
    ctx.constants = constants;
    compile_programs(&mut ctx, parsed)
}

fn compile_files(ctx: &mut CompileCtx, files: &[(String, Arc<Source>)]) -> CResult<()> {
    compile_programs(ctx, parse_files(files)?)
}

fn compile_programs(ctx: &mut CompileCtx, parsed: ParsedFiles) -> CResult<()> {
    library::register_library(ctx)?;
    let mut programs = parsed.0;
    // Declare classes first (across every file) so annotations can name them.
    for (prefix, program) in &mut programs {
        ctx.prefix = prefix.clone();
        for stmt in program.iter_mut() {
            if matches!(stmt.kind, StmtKind::Class(_)) {
                // Taken out (the pass below skips what is left).
                if let StmtKind::Class(cd) = std::mem::replace(&mut stmt.kind, StmtKind::Pass) {
                    classes::declare_class(ctx, cd)?;
                }
            }
        }
    }
    for (prefix, program) in programs {
        ctx.prefix = prefix.clone();
        for stmt in program {
            match stmt.kind {
                StmtKind::Def(d) => {
                    // Functions have qualified names (`__torch__.f`), as PyTorch gives them.
                    let name = format!("{prefix}.{}", d.name.name);
                    let f = Function::declare(name.clone());
                    ctx.cu.register_function(f);
                    ctx.order.push(name.clone());
                    ctx.pending.insert(name, PendingDef { def: d, class: None });
                }
                StmtKind::Class(_) | StmtKind::Import | StmtKind::Pass => {}
                StmtKind::Assign {
                    targets,
                    value: Some(v),
                    ..
                } if targets.len() == 1 => {
                    if let Some(n) = targets[0].dotted_name() {
                        // `op_version_set = N` heads every archive file.
                        if !(ctx.archive && n == "op_version_set") {
                            ctx.globals.insert(n, v);
                        }
                    }
                }
                StmtKind::Expr(e) if matches!(e.kind, crate::ast::ExprKind::Str(_)) => {}
                _ => {
                    return Err(CompileError::new(
                        "only function and class definitions and simple assignments are allowed at the top level",
                        &stmt.range,
                    ))
                }
            }
        }
    }
    let mut names: Vec<String> = ctx.class_defs.keys().cloned().collect();
    names.sort();
    for n in names {
        ctx.ensure_class(&n)?;
    }
    let order = ctx.order.clone();
    for name in order {
        if let Some(p) = ctx.pending.remove(&name) {
            ctx.compile_def(&name, p)?;
        }
    }
    let mut rest: Vec<String> = ctx.pending.keys().cloned().collect();
    rest.sort();
    for name in rest {
        if let Some(p) = ctx.pending.remove(&name) {
            ctx.compile_def(&name, p)?;
        }
    }
    Ok(())
}
