//! Functions and compilation units: named graphs with schemas, shared by the frontend (which
//! defines them), the serializer (which loads them) and the runtime (which runs them).

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;
use ts_core::types::ClassMethod;
use ts_core::{FunctionSchema, Type, TypeRef};

use crate::graph::Graph;

/// A TorchScript function (or method: then the first input is `self`).
pub struct Function {
    name: String,
    graph: RwLock<Option<Arc<Graph>>>,
    schema: RwLock<Option<FunctionSchema>>,
    /// Data the runtime attaches (its graph executor), created on first call.
    runtime: OnceLock<Box<dyn Any + Send + Sync>>,
    /// The graph callers inline (PyTorch's `optimized_graph()`: the body with its own calls
    /// inlined and cheap cleanups applied), computed on first use.
    optimized: RwLock<Option<Arc<Graph>>>,
    /// Set while the optimized graph is being computed, so a recursive call is not inlined.
    optimizing: AtomicBool,
}

impl Function {
    /// A function whose body is not yet defined (the frontend fills it in; this lets calls to
    /// functions defined later in the same unit be typed, and recursion be detected).
    pub fn declare(name: impl Into<String>) -> Arc<Function> {
        Arc::new(Function {
            name: name.into(),
            graph: RwLock::new(None),
            schema: RwLock::new(None),
            runtime: OnceLock::new(),
            optimized: RwLock::new(None),
            optimizing: AtomicBool::new(false),
        })
    }

    /// A function with its graph and schema.
    pub fn new(name: impl Into<String>, graph: Graph, schema: FunctionSchema) -> Arc<Function> {
        let f = Function::declare(name);
        f.define(graph, schema);
        f
    }

    /// Sets the body and schema.
    pub fn define(&self, graph: Graph, schema: FunctionSchema) {
        *self.graph.write() = Some(Arc::new(graph));
        *self.schema.write() = Some(schema);
        *self.optimized.write() = None;
    }

    /// Sets only the schema (known before the body is compiled).
    pub fn set_schema(&self, schema: FunctionSchema) {
        *self.schema.write() = Some(schema);
    }

    /// The qualified name.
    pub fn qualified_name(&self) -> &str {
        &self.name
    }

    /// The graph, once defined.
    pub fn graph(&self) -> Option<Arc<Graph>> {
        self.graph.read().clone()
    }

    /// Replaces the graph (passes that rewrite a function in place).
    pub fn set_graph(&self, g: Graph) {
        *self.graph.write() = Some(Arc::new(g));
        *self.optimized.write() = None;
    }

    /// The graph to inline at call sites, made by `optimize` from the body on first use and
    /// cached. `None` before the body is defined, or while it is being made (a recursive call:
    /// the caller then keeps the call).
    pub fn optimized_graph(&self, optimize: impl FnOnce(&Graph) -> Graph) -> Option<Arc<Graph>> {
        if let Some(g) = self.optimized.read().clone() {
            return Some(g);
        }
        let body = self.graph()?;
        if self.optimizing.swap(true, Ordering::AcqRel) {
            return None;
        }
        let g = Arc::new(optimize(&body));
        self.optimizing.store(false, Ordering::Release);
        *self.optimized.write() = Some(g.clone());
        Some(g)
    }

    /// The schema, once known.
    pub fn try_schema(&self) -> Option<FunctionSchema> {
        self.schema.read().clone()
    }

    /// True once the body is defined.
    pub fn is_defined(&self) -> bool {
        self.graph.read().is_some()
    }

    /// The runtime's per-function data, created by `init` on first use.
    pub fn runtime_data<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Option<&T> {
        self.runtime
            .get_or_init(|| Box::new(init()))
            .downcast_ref::<T>()
    }

    /// A function type for values naming this function.
    pub fn function_type(self: &Arc<Self>) -> TypeRef {
        Arc::new(Type::Function(Arc::new(ts_core::types::FunctionType {
            name: self.name.clone(),
            function: Some(self.clone() as Arc<dyn ClassMethod>),
        })))
    }
}

impl ClassMethod for Function {
    fn name(&self) -> &str {
        self.name.rsplit('.').next().unwrap_or(&self.name)
    }

    fn schema(&self) -> FunctionSchema {
        self.try_schema().unwrap_or_else(|| FunctionSchema {
            name: self.name.clone(),
            overload_name: String::new(),
            arguments: vec![],
            returns: vec![],
            is_vararg: true,
            is_varret: true,
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Function({})", self.name)
    }
}

/// The `Function` behind a class method handle, if it is one.
pub fn as_function(m: &Arc<dyn ClassMethod>) -> Option<&Function> {
    m.as_any().downcast_ref::<Function>()
}

/// A compilation unit: the functions and classes compiled together.
#[derive(Default)]
pub struct CompilationUnit {
    functions: RwLock<Vec<Arc<Function>>>,
    by_name: RwLock<HashMap<String, Arc<Function>>>,
    classes: RwLock<HashMap<String, TypeRef>>,
}

impl CompilationUnit {
    /// An empty unit.
    pub fn new() -> Arc<CompilationUnit> {
        Arc::new(CompilationUnit::default())
    }

    /// Adds a function (replacing one of the same name).
    pub fn register_function(&self, f: Arc<Function>) {
        let name = f.qualified_name().to_string();
        let mut fs = self.functions.write();
        fs.retain(|x| x.qualified_name() != name);
        fs.push(f.clone());
        self.by_name.write().insert(name, f);
    }

    /// The function with this qualified name; a bare name also finds `__torch__.<name>` (the
    /// functions of a source program).
    pub fn find_function(&self, name: &str) -> Option<Arc<Function>> {
        let by = self.by_name.read();
        by.get(name)
            .or_else(|| by.get(&format!("__torch__.{name}")))
            .cloned()
    }

    /// All functions, in definition order.
    pub fn functions(&self) -> Vec<Arc<Function>> {
        self.functions.read().clone()
    }

    /// Adds a named type (class, named tuple, enum, interface).
    pub fn register_type(&self, name: &str, t: TypeRef) {
        self.classes.write().insert(name.to_string(), t);
    }

    /// The named type.
    pub fn find_type(&self, name: &str) -> Option<TypeRef> {
        self.classes.read().get(name).cloned()
    }

    /// All named types.
    pub fn types(&self) -> Vec<(String, TypeRef)> {
        let mut v: Vec<(String, TypeRef)> = self
            .classes
            .read()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

impl std::fmt::Debug for CompilationUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CompilationUnit({} functions)",
            self.functions.read().len()
        )
    }
}
