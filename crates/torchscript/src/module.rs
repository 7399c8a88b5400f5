//! [`Module`]: a loaded (or traced, or wrapped) TorchScript module, and its [`Method`]s.

use std::path::Path;
use std::sync::Arc;

use ts_core::types::ClassMethod;
use ts_core::Object as CoreObject;

use crate::error::{Error, ErrorKind, Result};
use crate::graph_view::Graph;
use crate::ivalue::{IValue, IntoArgs};
use crate::tensor::Tensor;

/// A TorchScript module: methods with their code, parameters, buffers, attributes and
/// submodules, as `torch.jit.load` returns it.
///
/// A `Module` is `Send + Sync`: one loaded model can serve calls from many threads at once.
/// Cloning the handle aliases the same module.
///
/// ```
/// # fn main() -> Result<(), torchscript::Error> {
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/add_relu.pt");
/// use torchscript::{Module, Tensor};
///
/// let model = Module::load(path)?;
/// let x = Tensor::from_data(&[-1.0f32, 2.0], &[1, 2])?;
/// let y = model.forward((x,))?;
/// println!("{y}");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Module {
    obj: Arc<CoreObject>,
    version: Option<u64>,
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Module>();
    assert_send_sync::<Method>();
    assert_send_sync::<Tensor>();
};

impl Module {
    /// Loads a `torch.jit.save` archive (also the PyTorch 1.0–1.2 `model.json` format).
    pub fn load(path: impl AsRef<Path>) -> Result<Module> {
        let path = path.as_ref();
        // The operators are needed from compiling the archive's code on; reading and parsing
        // it first overlaps a registry build in the background
        // ([`crate::warm_up_operators_in_background`]).
        let loaded = ts_serialize::load_script_module_with(path, &mut || {
            crate::libraries::ensure_registered()
        })
        .map_err(|e| {
            // A file that cannot be opened is Python's OSError, as `torch.jit.load` raises.
            let kind = match e {
                ts_serialize::SerializeError::Io { .. } => ErrorKind::Io,
                _ => ErrorKind::Format,
            };
            Error::new(kind, format!("cannot load {}: {e}", path.display()))
        })?;
        Ok(Module {
            obj: loaded.module,
            version: Some(loaded.version),
        })
    }

    /// Loads an archive held in memory (no file system needed).
    pub fn load_bytes(bytes: &[u8]) -> Result<Module> {
        crate::libraries::ensure_registered();
        let loaded = ts_serialize::load_script_module_bytes(bytes.to_vec())
            .map_err(|e| Error::new(ErrorKind::Format, format!("cannot load the archive: {e}")))?;
        Ok(Module {
            obj: loaded.module,
            version: Some(loaded.version),
        })
    }

    /// The module an object value holds.
    pub fn from_ivalue(v: IValue) -> Result<Module> {
        match v {
            IValue::Object(o) if o.is_module() => Ok(Module::from_object(o.0)),
            other => Err(Error::conversion(format!(
                "expected a module, got a value of type {}",
                other.type_name()
            ))),
        }
    }

    pub(crate) fn from_object(obj: Arc<CoreObject>) -> Module {
        Module { obj, version: None }
    }

    /// The runtime object (for code that uses the lower crates).
    pub fn object(&self) -> &Arc<CoreObject> {
        &self.obj
    }

    /// The file format version of the archive it was loaded from.
    pub fn file_format_version(&self) -> Option<u64> {
        self.version
    }

    /// The class's qualified name (`__torch__.MyModel`).
    pub fn class_name(&self) -> &str {
        &self.obj.class.name
    }

    /// Calls `forward`.
    pub fn forward(&self, args: impl IntoArgs) -> Result<IValue> {
        self.method("forward")?.call(args)
    }

    /// The method `name`; `"encoder.layer0.forward"` names a submodule's method.
    pub fn method(&self, name: &str) -> Result<Method> {
        let (owner, method_name) = match name.rsplit_once('.') {
            Some((path, m)) => (self.submodule(path)?, m),
            None => (self.clone(), name),
        };
        let method = owner.obj.class.find_method(method_name).ok_or_else(|| {
            Error::not_found(format!(
                "'{}' has no method '{method_name}'",
                owner.obj.class.name
            ))
        })?;
        if ts_ir::as_function(&method).is_none() {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("method '{method_name}' is not a TorchScript method"),
            ));
        }
        Ok(Method {
            owner: owner.obj,
            method,
            name: method_name.to_string(),
        })
    }

    /// The names of the module's own methods.
    pub fn method_names(&self) -> Vec<String> {
        self.obj
            .class
            .methods()
            .iter()
            .map(|m| m.name().to_string())
            .collect()
    }

    /// The attribute `name` (a parameter, buffer, submodule or plain attribute).
    pub fn attribute(&self, name: &str) -> Result<IValue> {
        crate::ivalue::Object(self.obj.clone()).attribute(name)
    }

    /// Sets attribute `name` to `value`, converted to the attribute's declared type.
    pub fn set_attribute(&self, name: &str, value: impl Into<IValue>) -> Result<()> {
        let i = self.obj.class.attribute_index(name).ok_or_else(|| {
            Error::not_found(format!(
                "'{}' object has no attribute '{name}'",
                self.obj.class.name
            ))
        })?;
        let ty = self.obj.class.attributes()[i].ty.clone();
        let v = ts_runtime::coerce(value.into().into_core(), &ty).ok_or_else(|| {
            Error::new(
                ErrorKind::Argument,
                format!(
                    "attribute '{name}' has type '{}'; the value does not convert to it",
                    ty.annotation_str()
                ),
            )
        })?;
        self.obj.slots.write()[i] = v;
        Ok(())
    }

    /// Every attribute with its value, in declaration order.
    pub fn attributes(&self) -> Vec<(String, IValue)> {
        let slots = self.obj.slots.read().clone();
        self.obj
            .class
            .attributes()
            .into_iter()
            .zip(slots)
            .map(|(a, v)| (a.name, IValue::from_core(v)))
            .collect()
    }

    /// Parameters of this module and its submodules, named by path (`fc1.weight`), as
    /// `named_parameters()` lists them.
    pub fn parameters(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        self.collect_tensors("", true, &mut out, 0);
        out
    }

    /// Buffers of this module and its submodules, named by path.
    pub fn buffers(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        self.collect_tensors("", false, &mut out, 0);
        out
    }

    fn collect_tensors(
        &self,
        prefix: &str,
        params: bool,
        out: &mut Vec<(String, Tensor)>,
        depth: usize,
    ) {
        if depth > 256 {
            return;
        }
        let slots = self.obj.slots.read().clone();
        for (a, v) in self.obj.class.attributes().iter().zip(slots) {
            let name = format!("{prefix}{}", a.name);
            match v {
                ts_core::IValue::Tensor(t)
                    if (params && a.is_parameter) || (!params && a.is_buffer) =>
                {
                    out.push((name, Tensor(t)))
                }
                ts_core::IValue::Object(o) if o.class.is_module => Module::from_object(o)
                    .collect_tensors(&format!("{name}."), params, out, depth + 1),
                _ => {}
            }
        }
    }

    /// The direct submodules, by attribute name.
    pub fn submodules(&self) -> Vec<(String, Module)> {
        let slots = self.obj.slots.read().clone();
        self.obj
            .class
            .attributes()
            .into_iter()
            .zip(slots)
            .filter_map(|(a, v)| match v {
                ts_core::IValue::Object(o) if o.class.is_module => {
                    Some((a.name, Module::from_object(o)))
                }
                _ => None,
            })
            .collect()
    }

    /// The submodule at `path` (`encoder.layer0`).
    pub fn submodule(&self, path: &str) -> Result<Module> {
        let mut cur = self.clone();
        for part in path.split('.') {
            let v = cur.attribute(part).map_err(|_| {
                Error::not_found(format!(
                    "'{}' has no submodule '{part}'",
                    cur.obj.class.name
                ))
            })?;
            cur = Module::from_ivalue(v)
                .map_err(|_| Error::not_found(format!("attribute '{part}' is not a module")))?;
        }
        Ok(cur)
    }

    /// Saves the module as a `torch.jit.save` archive that PyTorch's `torch.jit.load` reads.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        ts_serialize::save_script_module(&self.obj, path).map_err(|e| {
            Error::new(
                ErrorKind::Format,
                format!("cannot save {}: {e}", path.display()),
            )
        })
    }

    /// The archive bytes [`Module::save`] would write.
    pub fn save_bytes(&self) -> Result<Vec<u8>> {
        Ok(ts_serialize::save_script_module_bytes(
            &self.obj, "archive",
        )?)
    }

    /// Every `code/` file `torch.jit.save` would write: (record path, text).
    pub fn code_files(&self) -> Result<Vec<(String, String)>> {
        let mut p = ts_serialize::PythonPrinter::new();
        p.add_type_tree(&ts_core::Type::class(self.obj.class.clone()))
            .map_err(|e| {
                Error::new(
                    ErrorKind::Unsupported,
                    format!("cannot print the code: {e}"),
                )
            })?;
        Ok(p.files()
            .into_iter()
            .map(|(f, t)| (f, t.to_string()))
            .collect())
    }

    /// The code of `forward` as PyTorch's `module.code` shows it.
    pub fn code(&self) -> Result<String> {
        self.method("forward")?.code()
    }

    /// A tree of submodules, tensors (dtype and shape), attributes and method signatures, as
    /// `tsrs info` prints it.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        describe(&self.obj, "root", 0, &mut out);
        out
    }
}

fn describe(obj: &Arc<CoreObject>, name: &str, depth: usize, out: &mut String) {
    use std::fmt::Write;
    if depth > 256 {
        return;
    }
    let pad = "  ".repeat(depth);
    let _ = writeln!(out, "{pad}{name} ({})", obj.class.name);
    let slots = obj.slots.read().clone();
    for (a, v) in obj.class.attributes().iter().zip(&slots) {
        match v {
            ts_core::IValue::Object(o) if o.class.is_module => {
                describe(o, &a.name, depth + 1, out);
            }
            ts_core::IValue::Tensor(t) => {
                let kind = if a.is_parameter {
                    "parameter"
                } else if a.is_buffer {
                    "buffer"
                } else {
                    "attribute"
                };
                let _ = writeln!(
                    out,
                    "{pad}  {kind} {}: {}{:?}",
                    a.name,
                    t.dtype().name(),
                    t.sizes().as_slice()
                );
            }
            other => {
                let mut shown = other.to_display_string();
                if shown.len() > 60 {
                    let mut cut = 57;
                    while !shown.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    shown.truncate(cut);
                    shown.push_str("...");
                }
                let _ = writeln!(
                    out,
                    "{pad}  attribute {}: {} = {shown}",
                    a.name,
                    a.ty.annotation_str()
                );
            }
        }
    }
    for m in obj.class.methods() {
        if let Some(f) = ts_ir::as_function(&m) {
            if let Some(s) = f.try_schema() {
                let _ = writeln!(out, "{pad}  method {s}");
            }
        }
    }
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Module({})", self.obj.class.name)
    }
}

/// A method of a module, bound to its `self`.
#[derive(Clone)]
pub struct Method {
    owner: Arc<CoreObject>,
    method: Arc<dyn ClassMethod>,
    name: String,
}

impl Method {
    fn function(&self) -> &ts_ir::Function {
        // `Module::method` only builds methods that are TorchScript functions.
        ts_ir::as_function(&self.method).unwrap_or_else(|| unreachable!("checked when built"))
    }

    /// The method's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The signature, as PyTorch prints a schema (`forward(__torch__.M self, Tensor x) -> Tensor`).
    pub fn schema(&self) -> Result<String> {
        Ok(self.schema_ref()?.to_string())
    }

    fn schema_ref(&self) -> Result<ts_core::FunctionSchema> {
        self.function().try_schema().ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!("method '{}' has no schema", self.name),
            )
        })
    }

    /// Calls the method with positional arguments.
    pub fn call(&self, args: impl IntoArgs) -> Result<IValue> {
        self.call_with_kwargs(args, &[])
    }

    /// Calls the method with positional and keyword arguments.
    pub fn call_with_kwargs(
        &self,
        args: impl IntoArgs,
        kwargs: &[(&str, IValue)],
    ) -> Result<IValue> {
        self.prepare_with_kwargs(args, kwargs)?.run()
    }

    /// Binds arguments once for repeated calls ([`PreparedCall::run`]): what benchmarks time.
    pub fn prepare(&self, args: impl IntoArgs) -> Result<PreparedCall> {
        self.prepare_with_kwargs(args, &[])
    }

    fn prepare_with_kwargs(
        &self,
        args: impl IntoArgs,
        kwargs: &[(&str, IValue)],
    ) -> Result<PreparedCall> {
        let schema = self.schema_ref()?;
        let mut bound = vec![ts_core::IValue::Object(self.owner.clone())];
        bound.extend(crate::calling::bind(
            &schema,
            args.into_args(),
            kwargs,
            true,
        )?);
        Ok(PreparedCall::new(self.method.clone(), bound))
    }

    /// The method's graph as PyTorch prints `module.graph` (with source comments).
    pub fn graph(&self) -> Result<String> {
        let g = self.function().graph().ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!("method '{}' has no graph", self.name),
            )
        })?;
        Ok(g.to_text(ts_ir::PrintOptions {
            source_comments: true,
        }))
    }

    /// The stored graph as a value ([`Graph`]: text, `dot`, SVG, interpreter code).
    pub fn ir_graph(&self) -> Result<Graph> {
        crate::graph_view::stored(self.function(), &self.name)
    }

    /// The graph the executor runs for these arguments (`self` is added), after its
    /// optimization passes.
    pub fn optimized_graph(&self, args: impl IntoArgs) -> Result<Graph> {
        let call = self.prepare(args)?;
        crate::graph_view::optimized(self.function(), &self.name, call.args())
    }

    /// An HTML page with the graph after every optimization pass run for these arguments.
    pub fn pass_report(&self, args: impl IntoArgs, title: &str) -> Result<String> {
        let call = self.prepare(args)?;
        crate::graph_view::pass_report(self.function(), title, call.args())
    }

    /// The interpreter instructions the method runs (`tsrs graph --code`).
    pub fn interpreter_code(&self) -> Result<String> {
        crate::compile::interpreter_code(self.function(), &self.name)
    }

    /// The method's code as PyTorch's `module.code` shows it.
    pub fn code(&self) -> Result<String> {
        let mut p = ts_serialize::PythonPrinter::new();
        p.add_type_tree(&ts_core::Type::class(self.owner.class.clone()))
            .map_err(|e| {
                Error::new(
                    ErrorKind::Unsupported,
                    format!("cannot print the code: {e}"),
                )
            })?;
        let file = p
            .files()
            .into_iter()
            .find_map(|(_, text)| method_block(text, &self.name));
        file.ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!("cannot print the code of method '{}'", self.name),
            )
        })
    }
}

/// The `def name(...)` block of a class body in printed code, as PyTorch's `module.code`
/// shows a method: `self` without its annotation, the body at the left margin.
fn method_block(text: &str, name: &str) -> Option<String> {
    let start = format!("  def {name}(");
    let mut lines = text.lines().skip_while(|l| !l.starts_with(&start));
    let first = lines.next()?;
    let mut def = first[2..].to_string();
    if let Some(rest) = def.strip_prefix(&format!("def {name}(self: ")) {
        let cut = rest.find([',', ')']).unwrap_or(rest.len());
        def = format!("def {name}(self{}", &rest[cut..]);
    }
    let mut in_signature = !first.ends_with(':');
    let mut out = def;
    out.push('\n');
    for l in lines {
        if !l.is_empty() && !l.starts_with("    ") {
            break;
        }
        if in_signature {
            in_signature = !l.ends_with(':');
            out.push_str(l);
        } else {
            out.push_str(l.get(2..).unwrap_or(""));
        }
        out.push('\n');
    }
    Some(out)
}

impl std::fmt::Debug for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Method({}.{})", self.owner.class.name, self.name)
    }
}

/// A call with its arguments already bound (a method's or a function's):
/// [`PreparedCall::run`] calls it again, without binding the arguments each time.
pub struct PreparedCall {
    function: Arc<dyn ClassMethod>,
    args: Vec<ts_core::IValue>,
}

impl PreparedCall {
    pub(crate) fn new(function: Arc<dyn ClassMethod>, args: Vec<ts_core::IValue>) -> Self {
        PreparedCall { function, args }
    }

    pub(crate) fn args(&self) -> &[ts_core::IValue] {
        &self.args
    }

    /// Runs the call (the arguments are reused; tensors are shared, not copied).
    pub fn run(&self) -> Result<IValue> {
        if crate::trace::is_tracing() {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "running a prepared call inside a trace is not supported: trace the \
                 computation, or call a compiled function (its graph is inlined into the trace)",
            ));
        }
        let f = ts_ir::as_function(&self.function)
            .unwrap_or_else(|| unreachable!("prepared calls are built from TorchScript functions"));
        let out = ts_runtime::call_function(f, self.args.clone())?;
        Ok(IValue::from_core(out))
    }
}
