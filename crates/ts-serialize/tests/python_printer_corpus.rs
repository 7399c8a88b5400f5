//! The Python printer against PyTorch's own output: every method graph of the conformance
//! models (`shared/corpus/ir/<case>.<submodule>.<method>.ir`, printed by PyTorch 2.15 after
//! `torch.jit.load`) is printed again and compared with the `def` PyTorch wrote into the
//! model's `code/` files; the program functions are printed and must parse.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use support::cases_dir;
use ts_core::types::ClassMethod;
use ts_core::types::FunctionType;
use ts_core::{
    parse_annotation, parse_schema_with, prim, ClassType, FunctionSchema, IValue, Source, Type,
    TypeRef, TypeResolver,
};
use ts_ir::{parse_ir, AttributeValue, Function, Graph};
use ts_serialize::python_printer::{schema_from_graph, MethodSource};
use ts_serialize::{PythonPrinter, ScriptArchive};

/// The method definitions printed by this implementation that equal PyTorch's, byte for byte.
/// It may only go up.
const METHOD_FLOOR: usize = 163;

/// Class headers (members before the first method) printed exactly. It may only go up.
const HEADER_FLOOR: usize = 137;

/// Whole `code/` files printed exactly, among those whose every method has an IR graph. It
/// may only go up.
const FILE_FLOOR: usize = 143;

/// Library free functions (`torch.nn.functional.*`) printed exactly. It may only go up. (The
/// one file and function that differ are explained at [`ARCHIVE_FLOOR`].)
const FUNCTION_FLOOR: usize = 52;

fn ir_dir() -> Option<PathBuf> {
    Some(cases_dir()?.parent()?.parent()?.join("corpus/ir"))
}

/// A top-level item of a code file: a class with its methods, or a free function.
struct Item {
    name: String,
    is_class: bool,
    /// For classes: the `class` line and the member lines before the first method.
    header: String,
    /// `(method name, text)` for classes; the function itself for a free function.
    defs: Vec<(String, String)>,
}

fn def_name(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("def ")?;
    Some(rest[..rest.find('(')?].to_string())
}

/// Splits a code file into classes (with their `  def` methods) and free functions.
fn split_items(text: &str) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    for line in text.split_inclusive('\n') {
        if !line.starts_with(' ') {
            if let Some(rest) = line.strip_prefix("class ") {
                let end = rest.find(['(', ':']).unwrap_or(rest.len());
                items.push(Item {
                    name: rest[..end].to_string(),
                    is_class: true,
                    header: line.to_string(),
                    defs: Vec::new(),
                });
                continue;
            }
            if let Some(name) = def_name(line) {
                items.push(Item {
                    name: name.clone(),
                    is_class: false,
                    header: String::new(),
                    defs: vec![(name, line.to_string())],
                });
                continue;
            }
        }
        let Some(item) = items.last_mut() else {
            continue;
        };
        if item.is_class && line.starts_with("  def ") {
            if let Some(name) = def_name(line) {
                item.defs.push((name, line.to_string()));
                continue;
            }
        }
        match item.defs.last_mut() {
            Some(d) => d.1.push_str(line),
            None => item.header.push_str(line),
        }
    }
    items
}

/// Gives each function constant (`prim::Constant[name="relu"]`, whose printed type is just
/// `Function`) a function type named as the printed code refers to it: the qualified name
/// `functions` maps its name to, else the plain name (functions of a `CompilationUnit`). Fork
/// subgraphs are updated too.
fn qualify_function_constants(g: &mut Graph, functions: &HashMap<String, String>) {
    for n in g.all_nodes() {
        let node = g.node(n);
        if let Some(sub) = node.g(ts_core::attr::Subgraph) {
            let mut sub = (**sub).clone();
            qualify_function_constants(&mut sub, functions);
            g.set_attr(
                n,
                ts_core::attr::Subgraph,
                AttributeValue::Graph(Arc::new(sub)),
            );
            continue;
        }
        if node.kind() != prim::Constant {
            continue;
        }
        let Some(&out) = node.outputs().first() else {
            continue;
        };
        if !matches!(**g.value(out).ty(), Type::Function(_)) {
            continue;
        }
        let Some(name) = node.s(ts_core::attr::name) else {
            continue;
        };
        let q = functions
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string());
        let ty = Arc::new(Type::Function(Arc::new(FunctionType {
            name: q,
            function: None,
        })));
        g.set_type(out, ty);
    }
}

/// The functions a printed text refers to by qualified name (`__torch__.a.b.f`), by their
/// plain name: how the test recovers the identity of function constants, which the IR text
/// only names (`prim::Constant[name="f"]`).
fn referenced_functions(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for (i, _) in text.match_indices("__torch__.") {
        let q: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        if let Some((_, name)) = q.rsplit_once('.') {
            out.insert(name.to_string(), q.clone());
        }
    }
    out
}

/// Named tuples the archive defines: field names -> qualified name (the IR text writes them
/// as `NamedTuple(a : T, ...)` without their name).
fn named_tuples(qualifier: &str, text: &str, out: &mut HashMap<Vec<String>, String>) {
    let mut current: Option<(String, Vec<String>)> = None;
    for line in text.lines().chain(std::iter::once("")) {
        if let Some((_, fields)) = current.as_mut() {
            if let Some(f) = line.strip_prefix("  ").and_then(|l| l.split_once(" : ")) {
                fields.push(f.0.to_string());
                continue;
            }
            let (name, fields) = current.take().unwrap();
            out.insert(fields, format!("{qualifier}.{name}"));
        }
        if let Some(name) = line
            .strip_prefix("class ")
            .and_then(|r| r.strip_suffix("(NamedTuple):"))
        {
            current = Some((name.to_string(), Vec::new()));
        }
    }
}

/// `t` with every anonymous `NamedTuple(...)` replaced by the archive's named tuple type.
fn name_tuples(t: &TypeRef, names: &HashMap<Vec<String>, String>) -> TypeRef {
    match &**t {
        Type::Tuple(tt) => {
            let elements: Vec<TypeRef> =
                tt.elements.iter().map(|e| name_tuples(e, names)).collect();
            match &tt.names {
                Some(info) if info.qualified_name == "NamedTuple" => {
                    match names.get(&info.fields) {
                        Some(q) => Type::named_tuple(q.clone(), info.fields.clone(), elements),
                        None => t.clone(),
                    }
                }
                Some(_) => t.clone(),
                None => Type::tuple(elements),
            }
        }
        Type::List(e) => Type::list(name_tuples(e, names)),
        Type::Optional(e) => Type::optional(name_tuples(e, names)),
        _ => t.clone(),
    }
}

fn name_graph_tuples(g: &mut Graph, names: &HashMap<Vec<String>, String>) {
    let mut values: Vec<_> = g.inputs().to_vec();
    for n in g.all_nodes() {
        values.extend_from_slice(g.node(n).outputs());
        for &b in g.node(n).blocks() {
            values.extend_from_slice(g.block_inputs(b));
        }
    }
    for v in values {
        let t = name_tuples(g.value(v).ty(), names);
        g.set_type(v, t);
    }
}

/// A default value as PyTorch writes it in a `def` header (`None`, `True`, `3`, `0.5`,
/// `"text"`, `[1, 1]`), or `None` when this small reader does not know the form.
fn parse_default(text: &str) -> Option<IValue> {
    let t = text.trim();
    match t {
        "None" => return Some(IValue::None),
        "True" => return Some(IValue::Bool(true)),
        "False" => return Some(IValue::Bool(false)),
        _ => {}
    }
    if let Ok(i) = t.parse::<i64>() {
        return Some(IValue::Int(i));
    }
    if t.ends_with('.') || t.contains('.') || t.contains('e') {
        if let Ok(f) = t.trim_end_matches('.').parse::<f64>() {
            return Some(IValue::Double(f));
        }
    }
    if let Some(inner) = t.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        if !inner.contains('\\') {
            return Some(IValue::str(inner));
        }
    }
    if let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        let items: Option<Vec<IValue>> = inner
            .trim_end_matches(',')
            .split(", ")
            .map(parse_default)
            .collect();
        return items.map(IValue::tuple);
    }
    if let Some(inner) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let items: Option<Vec<i64>> = inner.split(", ").map(|x| x.parse().ok()).collect();
        return items.map(IValue::int_list);
    }
    None
}

/// Gives the graph schema the defaults of PyTorch's `def` header (the IR does not keep the
/// declaration's defaults; the declaration is an input of the printer).
fn add_header_defaults(schema: &mut FunctionSchema, def: &str) {
    let Some(header) = def.split(") -> ").next() else {
        return;
    };
    let params = header.split(",\n    ");
    for (arg, p) in schema.arguments.iter_mut().zip(params) {
        let Some((_, ty_default)) = p.split_once(": ") else {
            continue;
        };
        // The default follows the first '=' outside brackets.
        let mut depth = 0i32;
        for (i, c) in ty_default.char_indices() {
            match c {
                '[' | '(' => depth += 1,
                ']' | ')' => depth -= 1,
                '=' if depth == 0 => {
                    arg.default = parse_default(&ty_default[i + 1..]);
                    break;
                }
                _ => {}
            }
        }
    }
}

/// The class type a `class` header declares: `(Module)`, `__parameters__`/`__buffers__`, the
/// attribute annotations (including `__annotations__["0"] = T`) and the `Final` constants.
/// The header stands in for the module's type, which this test has no other source for.
fn class_from_header(name: &str, header: &str) -> Result<Arc<ClassType>, String> {
    let first = header.lines().next().unwrap_or_default();
    let class = ClassType::new(name, first.contains("(Module)"));
    fill_class_from_header(&class, header, None)?;
    Ok(class)
}

/// Adds the attributes and constants a `class` header declares to `class`; class names in
/// annotations go through `resolver`.
fn fill_class_from_header(
    class: &Arc<ClassType>,
    header: &str,
    resolver: Option<TypeResolver<'_>>,
) -> Result<(), String> {
    let mut lines = header.lines();
    lines.next();
    let quoted = |l: &str| -> Vec<String> {
        l.split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let (mut params, mut buffers) = (Vec::new(), Vec::new());
    for line in lines {
        let l = line
            .strip_prefix("  ")
            .ok_or(format!("unexpected line {line:?}"))?;
        if l.starts_with("__parameters__ = [") {
            params = quoted(l);
        } else if l.starts_with("__buffers__ = [") {
            buffers = quoted(l);
        } else if l == "__annotations__ = []" {
            continue;
        } else if let Some(rest) = l.strip_prefix("__annotations__[\"") {
            let (attr, ty) = rest.split_once("\"] = ").ok_or(format!("bad line {l:?}"))?;
            let t = parse_annotation(ty, resolver).map_err(|e| format!("{ty}: {e}"))?;
            class.add_attribute(
                attr,
                t,
                params.iter().any(|p| p == attr),
                buffers.iter().any(|b| b == attr),
            );
        } else if let Some((attr, rest)) = l.split_once(" : ") {
            if let Some(fin) = rest.strip_prefix("Final[") {
                let (_, value) = fin.split_once("] = ").ok_or(format!("bad line {l:?}"))?;
                let v = parse_default(value).ok_or(format!("constant {value:?}"))?;
                class.add_constant(attr, v);
            } else {
                let t = parse_annotation(rest, resolver).map_err(|e| format!("{rest}: {e}"))?;
                class.add_attribute(
                    attr,
                    t,
                    params.iter().any(|p| p == attr),
                    buffers.iter().any(|b| b == attr),
                );
            }
        } else {
            return Err(format!("unknown header line {l:?}"));
        }
    }
    Ok(())
}

/// The method graphs of a model case: the corpus's `<case>.*.ir` files, or for the models the
/// corpus misses, those of `fixtures/ir_extra` (made by `fixtures/gen_ir_extra.py`).
fn case_ir_files(ir: &Path, prefix: &str) -> Vec<PathBuf> {
    let list = |dir: &Path| -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut v: Vec<PathBuf> = rd
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
            })
            .collect();
        v.sort();
        v
    };
    let corpus = list(ir);
    if corpus.is_empty() {
        list(&support::fixture("ir_extra"))
    } else {
        corpus
    }
}

struct Outcome {
    matched: usize,
    total: usize,
    headers_matched: usize,
    headers: usize,
    files_matched: usize,
    files_complete: usize,
    functions_matched: usize,
    functions: usize,
    failures: Vec<String>,
}

/// The library free functions the models' code files define, from
/// `fixtures/gen_free_function_graphs.py` (PyTorch 2.15): qualified name -> (schema line, graph
/// text). The schema is `?` where PyTorch cannot print it.
fn free_function_fixture() -> HashMap<String, (String, String)> {
    let text = std::fs::read_to_string(support::fixture("free_function_graphs.txt"))
        .expect("fixture free_function_graphs.txt");
    let mut out = HashMap::new();
    for chunk in text.split("=== ").skip(1) {
        let mut parts = chunk.splitn(3, '\n');
        let (Some(name), Some(schema), Some(graph)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        out.insert(name.to_string(), (schema.to_string(), graph.to_string()));
    }
    out
}

fn check_model(
    case: &str,
    model: &Path,
    ir: &Path,
    free_functions: &HashMap<String, (String, String)>,
    out: &mut Outcome,
) {
    let mut archive = ScriptArchive::open(model).expect("model.pt opens");
    let records: Vec<String> = archive.code_files().iter().map(|s| s.to_string()).collect();
    let mut files = Vec::new();
    let mut functions = HashMap::new();
    let mut tuples = HashMap::new();
    for r in &records {
        let text = archive.read_code(r).expect("code record reads");
        let qualifier = r["code/".len()..r.len() - 3].replace('/', ".");
        for item in split_items(&text) {
            if !item.is_class {
                functions.insert(item.name.clone(), format!("{qualifier}.{}", item.name));
            }
        }
        named_tuples(&qualifier, &text, &mut tuples);
        files.push((qualifier, text));
    }
    // (class qualified name, method) -> graph
    let mut methods: HashMap<(String, String), Graph> = HashMap::new();
    let prefix = format!("{case}.");
    let entries = case_ir_files(ir, &prefix);
    for p in entries {
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let method = stem.rsplit('.').next().unwrap().to_string();
        let text = std::fs::read_to_string(&p).unwrap();
        let mut g = match parse_ir(&text) {
            Ok(g) => g,
            Err(e) => {
                out.failures.push(format!("{stem}: IR does not parse: {e}"));
                continue;
            }
        };
        qualify_function_constants(&mut g, &functions);
        name_graph_tuples(&mut g, &tuples);
        let Some(&this) = g.inputs().first() else {
            continue;
        };
        let class = g.value(this).ty().annotation_str();
        methods.entry((class, method)).or_insert(g);
    }
    for (qualifier, text) in &files {
        let mut printer = PythonPrinter::new();
        let mut expected = Vec::new();
        let mut expected_headers = Vec::new();
        let mut expected_functions = Vec::new();
        let mut complete = true;
        for item in split_items(text) {
            if !item.is_class {
                let q = format!("{qualifier}.{}", item.name);
                let Some((schema_line, graph_text)) = free_functions.get(&q) else {
                    complete = false;
                    continue;
                };
                let mut g = parse_ir(graph_text).expect("fixture graph parses");
                qualify_function_constants(&mut g, &functions);
                name_graph_tuples(&mut g, &tuples);
                let def = &item.defs[0].1;
                let schema = match parse_schema_with(schema_line, None) {
                    Ok(s) => s,
                    Err(_) => {
                        let mut s = schema_from_graph(&item.name, &g);
                        add_header_defaults(&mut s, def);
                        s
                    }
                };
                match printer.add_function(&q, &g, &schema) {
                    Ok(()) => expected_functions.push((q, def.clone())),
                    Err(e) => out.failures.push(format!("{case} {q}: {e}")),
                }
                continue;
            }
            let class_name = format!("{qualifier}.{}", item.name);
            if item
                .header
                .starts_with(&format!("class {}(NamedTuple):", item.name))
            {
                expected_headers.push((item.name.clone(), item.header.clone()));
                let mut fields = Vec::new();
                let mut types = Vec::new();
                for l in item.header.lines().skip(1) {
                    let Some((f, t)) = l.trim_start().split_once(" : ") else {
                        continue;
                    };
                    fields.push(f.to_string());
                    types.push(parse_annotation(t, None).expect("field type parses"));
                }
                let t = Type::named_tuple(class_name.clone(), fields, types);
                if let Err(e) = printer.add_named_tuple(&t) {
                    out.failures.push(format!("{case} {class_name}: {e}"));
                }
                continue;
            }
            let class = match class_from_header(&class_name, &item.header) {
                Ok(c) => c,
                Err(e) => {
                    out.failures
                        .push(format!("{case} {class_name}: header: {e}"));
                    complete = false;
                    ClassType::new(class_name.clone(), true)
                }
            };
            expected_headers.push((item.name.clone(), item.header.clone()));
            let mut owned = Vec::new();
            for (m, def) in &item.defs {
                if let Some(g) = methods.get(&(class_name.clone(), m.clone())) {
                    let mut schema = schema_from_graph(m, g);
                    add_header_defaults(&mut schema, def);
                    owned.push((m.clone(), g, schema));
                    expected.push((format!("{class_name}.{m}"), m.clone(), def.clone()));
                } else {
                    complete = false;
                }
            }
            let sources: Vec<MethodSource<'_>> = owned
                .iter()
                .map(|(n, g, s)| MethodSource {
                    name: n,
                    graph: g,
                    schema: s,
                })
                .collect();
            if let Err(e) = printer.add_class(&class, &sources) {
                out.failures.push(format!("{case} {class_name}: {e}"));
            }
        }
        let printed = printer.file(qualifier).unwrap_or_default().to_string();
        let printed_items = split_items(&printed);
        for (name, want) in expected_headers {
            out.headers += 1;
            match printed_items.iter().find(|i| i.is_class && i.name == name) {
                Some(i) if i.header == want => out.headers_matched += 1,
                Some(i) => out.failures.push(format!(
                    "{case} {qualifier}.{name} header\n--- pytorch\n{want}--- printed\n{}",
                    i.header
                )),
                None => out
                    .failures
                    .push(format!("{case} {qualifier}.{name}: not printed")),
            }
        }
        for (q, want) in expected_functions {
            out.functions += 1;
            let name = q.rsplit('.').next().unwrap_or_default();
            match printed_items.iter().find(|i| !i.is_class && i.name == name) {
                Some(i) if i.defs[0].1 == want => out.functions_matched += 1,
                Some(i) => out.failures.push(format!(
                    "{case} {q}\n--- pytorch\n{want}--- printed\n{}",
                    i.defs[0].1
                )),
                None => out.failures.push(format!("{case} {q}: not printed")),
            }
        }
        let got: HashMap<String, String> = printed_items
            .into_iter()
            .flat_map(|i| {
                let n = i.name.clone();
                i.defs
                    .into_iter()
                    .map(move |(m, t)| (format!("{n}.{m}"), t))
            })
            .collect();
        for (full, _m, want) in expected {
            out.total += 1;
            let short = full
                .rsplit_once('.')
                .map(|(c, m)| format!("{}.{m}", c.rsplit('.').next().unwrap_or(c)));
            let key = short.unwrap_or_default();
            match got.get(&key) {
                Some(t) if *t == want => out.matched += 1,
                Some(t) => out.failures.push(format!(
                    "{case} {full}\n--- pytorch\n{want}--- printed\n{t}"
                )),
                None => out.failures.push(format!("{case} {full}: not printed")),
            }
        }
        if complete {
            out.files_complete += 1;
            if printed == *text {
                out.files_matched += 1;
            } else {
                out.failures
                    .push(format!("{case} {qualifier}: whole file differs"));
            }
        }
    }
}

#[test]
fn model_methods_print_as_pytorch_wrote_them() {
    let (Some(cases), Some(ir)) = (cases_dir(), ir_dir()) else {
        eprintln!("conformance cases or IR corpus not found; skipped");
        return;
    };
    if !ir.is_dir() {
        eprintln!("IR corpus not found; skipped");
        return;
    }
    let mut out = Outcome {
        matched: 0,
        total: 0,
        headers_matched: 0,
        headers: 0,
        files_matched: 0,
        files_complete: 0,
        functions_matched: 0,
        functions: 0,
        failures: Vec::new(),
    };
    let free_functions = free_function_fixture();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&cases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.pt").is_file())
        .collect();
    dirs.sort();
    for d in dirs {
        let case = d.file_name().unwrap().to_string_lossy().to_string();
        check_model(&case, &d.join("model.pt"), &ir, &free_functions, &mut out);
    }
    for f in &out.failures {
        eprintln!("{f}");
    }
    eprintln!(
        "python printer: {} of {} model methods match PyTorch's code byte for byte",
        out.matched, out.total
    );
    eprintln!(
        "python printer: {} of {} library free functions in the models' code files match",
        out.functions_matched, out.functions
    );
    eprintln!(
        "python printer: {} of {} class headers and {} of {} whole code files (those whose \
         every method has an IR graph) match",
        out.headers_matched, out.headers, out.files_matched, out.files_complete
    );
    assert!(
        out.functions_matched >= FUNCTION_FLOOR,
        "only {} free functions match (floor {FUNCTION_FLOOR})",
        out.functions_matched
    );
    assert!(
        out.headers_matched >= HEADER_FLOOR && out.files_matched >= FILE_FLOOR,
        "{} headers (floor {HEADER_FLOOR}) and {} files (floor {FILE_FLOOR}) match",
        out.headers_matched,
        out.files_matched
    );
    assert!(
        out.matched >= METHOD_FLOOR,
        "only {} methods match (floor {METHOD_FLOOR})",
        out.matched
    );
}

/// `fn.code` of every program function, from `fixtures/gen_python_code.py` run with PyTorch
/// 2.15 over the conformance cases: `<case>.<function>` -> code.
fn program_code_fixture() -> HashMap<String, String> {
    let text = std::fs::read_to_string(support::fixture("python_code_programs.txt"))
        .expect("fixture python_code_programs.txt");
    let mut out = HashMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.split_inclusive('\n') {
        if let Some(key) = line.strip_prefix("=== ") {
            if let Some((k, v)) = current.take() {
                out.insert(k, v);
            }
            current = Some((key.trim_end().to_string(), String::new()));
        } else if let Some((_, v)) = current.as_mut() {
            v.push_str(line);
        }
    }
    if let Some((k, v)) = current {
        out.insert(k, v);
    }
    out
}

/// Every program function of the IR corpus printed as a free function: it must parse, and it
/// should equal PyTorch's own printing of the same graph (`fn.code`).
#[test]
fn program_functions_print_as_pytorch_does() {
    let (Some(cases), Some(ir)) = (cases_dir(), ir_dir()) else {
        eprintln!("conformance cases or IR corpus not found; skipped");
        return;
    };
    if !ir.is_dir() {
        return;
    }
    let expected = program_code_fixture();
    let (mut parsed, mut exact, mut total) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&ir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let Some((case, func)) = stem.split_once('.') else {
            continue;
        };
        let dir = cases.join(case);
        if dir.join("model.pt").is_file() || !dir.join("program.py").is_file() {
            continue;
        }
        total += 1;
        let mut g = match parse_ir(&std::fs::read_to_string(&p).unwrap()) {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{stem}: IR does not parse: {e}"));
                continue;
            }
        };
        let want = expected.get(&stem);
        let functions = want.map(|w| referenced_functions(w)).unwrap_or_default();
        qualify_function_constants(&mut g, &functions);
        let mut schema = schema_from_graph(func, &g);
        if let Some(w) = want {
            add_header_defaults(&mut schema, w);
        }
        let mut printer = PythonPrinter::new();
        if let Err(e) = printer.add_function(&format!("__torch__.{func}"), &g, &schema) {
            failures.push(format!("{stem}: {e}"));
            continue;
        }
        let text = printer.file("__torch__").unwrap_or_default().to_string();
        let src = Source::new(text.clone(), Some(stem.clone()), 1);
        match ts_frontend::parse_program(&src) {
            Ok(_) => parsed += 1,
            Err(e) => failures.push(format!(
                "{stem}: printed source does not parse: {e}\n{text}"
            )),
        }
        match want {
            Some(w) if *w == text => exact += 1,
            Some(w) => failures.push(format!("{stem}\n--- pytorch\n{w}--- printed\n{text}")),
            None => failures.push(format!("{stem}: no PyTorch code in the fixture")),
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    eprintln!(
        "python printer: {parsed} of {total} program functions print as parseable source, \
         {exact} exactly as PyTorch prints them"
    );
    assert!(
        parsed >= PROGRAM_FLOOR,
        "only {parsed} program functions parse (floor {PROGRAM_FLOOR})"
    );
    assert!(
        exact >= PROGRAM_EXACT_FLOOR,
        "only {exact} program functions match (floor {PROGRAM_EXACT_FLOOR})"
    );
}

/// Program functions whose printed source parses. It may only go up.
const PROGRAM_FLOOR: usize = 314;

/// Program functions printed exactly as PyTorch's `fn.code`. It may only go up.
const PROGRAM_EXACT_FLOOR: usize = 314;

/// The types of one archive, rebuilt for printing: classes from their headers, named tuples,
/// and functions (declared first, so that graphs can refer to them).
struct ArchiveTypes {
    types: HashMap<String, TypeRef>,
    tuples: HashMap<Vec<String>, String>,
    /// Plain name -> function.
    functions: HashMap<String, Arc<Function>>,
}

impl ArchiveTypes {
    /// `t` with placeholder classes replaced by the archive's types and anonymous named
    /// tuples by the archive's named tuples.
    fn resolve(&self, t: &TypeRef) -> TypeRef {
        match &**t {
            Type::Class(c) => self
                .types
                .get(&c.name)
                .cloned()
                .unwrap_or_else(|| t.clone()),
            Type::Tuple(tt) => {
                let elements: Vec<TypeRef> = tt.elements.iter().map(|e| self.resolve(e)).collect();
                match &tt.names {
                    Some(info) if info.qualified_name == "NamedTuple" => {
                        match self
                            .tuples
                            .get(&info.fields)
                            .and_then(|q| self.types.get(q))
                        {
                            Some(named) => named.clone(),
                            None => t.clone(),
                        }
                    }
                    Some(_) => t.clone(),
                    None => Type::tuple(elements),
                }
            }
            Type::List(e) => Type::list(self.resolve(e)),
            Type::Optional(e) => Type::optional(self.resolve(e)),
            Type::Dict(k, v) => Type::dict(self.resolve(k), self.resolve(v)),
            _ => t.clone(),
        }
    }

    /// Resolves every value type of `g` and points function constants at their functions.
    fn resolve_graph(&self, g: &mut Graph) {
        let mut values: Vec<_> = g.inputs().to_vec();
        for n in g.all_nodes() {
            let node = g.node(n);
            if let Some(sub) = node.g(ts_core::attr::Subgraph) {
                let mut sub = (**sub).clone();
                self.resolve_graph(&mut sub);
                g.set_attr(
                    n,
                    ts_core::attr::Subgraph,
                    AttributeValue::Graph(Arc::new(sub)),
                );
            }
            let node = g.node(n);
            if node.kind() == prim::Constant {
                if let (Some(name), Some(&out)) =
                    (node.s(ts_core::attr::name), node.outputs().first())
                {
                    if let Some(f) = self.functions.get(name) {
                        g.set_type(out, f.function_type());
                        continue;
                    }
                }
            }
            values.extend_from_slice(g.node(n).outputs());
            for &b in g.node(n).blocks() {
                values.extend_from_slice(g.block_inputs(b));
            }
        }
        for v in values {
            let t = self.resolve(g.value(v).ty());
            g.set_type(v, t);
        }
    }
}

/// The module's objects' classes in the order `torch.jit.save` pickles them: the root, then
/// each module-typed attribute depth first.
fn object_order(t: &TypeRef, out: &mut Vec<TypeRef>) {
    let Type::Class(c) = &**t else {
        return;
    };
    if out.iter().any(|o| o.annotation_str() == c.name) {
        return;
    }
    out.push(t.clone());
    for a in c.attributes() {
        object_order(&a.ty, out);
    }
}

/// Rebuilds every type of a model archive from its code files (headers), the IR corpus
/// (methods) and the free-function fixture, prints the root module's type tree as
/// `torch.jit.save` does and compares the whole set of `code/` files. `Err` says why the case
/// cannot be rebuilt (a method or function without a graph).
fn export_model(
    case: &str,
    model: &Path,
    ir: &Path,
    free_functions: &HashMap<String, (String, String)>,
) -> Result<Result<(), String>, String> {
    let mut archive = ScriptArchive::open(model).map_err(|e| e.to_string())?;
    let records: Vec<String> = archive.code_files().iter().map(|s| s.to_string()).collect();
    let mut files = Vec::new();
    for r in &records {
        let text = archive.read_code(r).map_err(|e| e.to_string())?;
        let qualifier = r["code/".len()..r.len() - 3].replace('/', ".");
        files.push((r.clone(), qualifier, text));
    }
    let mut at = ArchiveTypes {
        types: HashMap::new(),
        tuples: HashMap::new(),
        functions: HashMap::new(),
    };
    let mut classes = Vec::new();
    let mut tuple_items = Vec::new();
    let mut function_items = Vec::new();
    for (_, qualifier, text) in &files {
        named_tuples(qualifier, text, &mut at.tuples);
        for item in split_items(text) {
            let q = format!("{qualifier}.{}", item.name);
            if item.header.contains("(NamedTuple):") {
                tuple_items.push((q, item));
            } else if item.is_class {
                let c = ClassType::new(q.clone(), item.header.contains("(Module)"));
                at.types.insert(q.clone(), Type::class(c.clone()));
                classes.push((c, item));
            } else {
                let f = Function::declare(q.clone());
                at.functions.insert(item.name.clone(), f.clone());
                function_items.push((q, f, item));
            }
        }
    }
    for (q, item) in &tuple_items {
        let mut fields = Vec::new();
        let mut types = Vec::new();
        for l in item.header.lines().skip(1) {
            let (f, t) = l.trim_start().split_once(" : ").ok_or("bad field")?;
            fields.push(f.to_string());
            types.push(parse_annotation(t, None).map_err(|e| e.to_string())?);
        }
        at.types
            .insert(q.clone(), Type::named_tuple(q.clone(), fields, types));
    }
    let types = at.types.clone();
    let resolver = move |n: &str| types.get(n).cloned();
    for (c, item) in &classes {
        fill_class_from_header(c, &item.header, Some(&resolver))?;
    }
    for (q, f, item) in &function_items {
        let (schema_line, graph_text) = free_functions
            .get(q)
            .ok_or(format!("no graph for function {q}"))?;
        let mut g = parse_ir(graph_text).map_err(|e| e.to_string())?;
        at.resolve_graph(&mut g);
        let schema = match parse_schema_with(schema_line, Some(&resolver)) {
            Ok(s) => s,
            Err(_) => {
                let mut s = schema_from_graph(&item.name, &g);
                add_header_defaults(&mut s, &item.defs[0].1);
                s
            }
        };
        f.define(g, schema);
    }
    let prefix = format!("{case}.");
    let mut root = None;
    let mut graphs: HashMap<(String, String), Graph> = HashMap::new();
    let entries = case_ir_files(ir, &prefix);
    for p in entries {
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let method = stem.rsplit('.').next().unwrap().to_string();
        let mut g = parse_ir(&std::fs::read_to_string(&p).unwrap()).map_err(|e| e.to_string())?;
        at.resolve_graph(&mut g);
        let Some(&this) = g.inputs().first() else {
            continue;
        };
        let class = g.value(this).ty().clone();
        if stem.starts_with(&format!("{prefix}root.")) {
            root = Some(class.clone());
        }
        graphs.entry((class.annotation_str(), method)).or_insert(g);
    }
    for (c, item) in &classes {
        for (m, def) in &item.defs {
            let g = graphs
                .remove(&(c.name.clone(), m.clone()))
                .ok_or(format!("no graph for method {}.{m}", c.name))?;
            let mut schema = schema_from_graph(m, &g);
            add_header_defaults(&mut schema, def);
            let f: Arc<dyn ClassMethod> = Function::new(format!("{}.{m}", c.name), g, schema);
            c.add_method(f);
        }
    }
    let root = root.ok_or("no root graph")?;
    let mut first = Vec::new();
    object_order(&root, &mut first);
    let mut printer = PythonPrinter::new();
    if let Err(e) = printer.add_types(&first) {
        return Ok(Err(e.to_string()));
    }
    let printed: HashMap<String, &str> = printer.files().into_iter().collect();
    let mut problems = Vec::new();
    for (record, _, text) in &files {
        let path = record.split_once('/').map(|(_, p)| p).unwrap_or(record);
        match printed.get(path).or_else(|| printed.get(record.as_str())) {
            Some(t) if *t == text => {}
            Some(t) => problems.push(format!(
                "{record} differs\n--- pytorch\n{text}--- printed\n{t}"
            )),
            None => problems.push(format!("{record} not printed")),
        }
    }
    if printed.len() != files.len() {
        problems.push(format!(
            "printed {} files, the archive has {}: {:?}",
            printed.len(),
            files.len(),
            printed.keys().collect::<Vec<_>>()
        ));
    }
    Ok(if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    })
}

/// The whole `code/` directory of each model whose every method and function has a graph is
/// printed from the root module's type, with PyTorch's file layout and order, byte for byte.
#[test]
fn model_archives_code_directories_reprint_exactly() {
    let (Some(cases), Some(ir)) = (cases_dir(), ir_dir()) else {
        eprintln!("conformance cases or IR corpus not found; skipped");
        return;
    };
    if !ir.is_dir() {
        return;
    }
    let free_functions = free_function_fixture();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&cases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.pt").is_file())
        .collect();
    dirs.sort();
    let (mut exact, mut rebuilt) = (0, 0);
    for d in dirs {
        let case = d.file_name().unwrap().to_string_lossy().to_string();
        match export_model(&case, &d.join("model.pt"), &ir, &free_functions) {
            Err(why) => eprintln!("{case}: not rebuilt: {why}"),
            Ok(Ok(())) => {
                rebuilt += 1;
                exact += 1;
            }
            Ok(Err(diff)) => {
                rebuilt += 1;
                eprintln!("{case}:\n{diff}");
            }
        }
    }
    eprintln!(
        "python printer: {exact} of {rebuilt} rebuilt model archives reprint their code/ exactly"
    );
    assert!(
        exact >= ARCHIVE_FLOOR,
        "only {exact} archives reprint (floor {ARCHIVE_FLOOR})"
    );
}

/// Model archives whose `code/` directory reprints exactly. It may only go up. The one
/// rebuilt archive that differs (`transformer_encoder_two_layers_masked`) is not a printer
/// fault: its graphs were printed after `torch.jit.load`, where variables the first save
/// named `mask0`..`mask10` carry those names instead of `mask`, so the file-wide counter for
/// `mask` no longer advances and a later function prints `mask0` where PyTorch printed
/// `mask11`. Printing the graph PyTorch compiled from Python source gives `mask11`.
const ARCHIVE_FLOOR: usize = 29;
