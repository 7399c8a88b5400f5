//! Functions written in TorchScript that the compiler provides: the Python functions of
//! `torch.nn.functional` (called with `prim::CallFunction`, as PyTorch does), and builtin
//! overloads PyTorch implements in TorchScript (`1 + tensor`, `tensor // x`, ...), which are
//! inlined where they are called.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use ts_core::Source;
use ts_ir::{CompilationUnit, Function};

use super::CompileCtx;
use crate::error::CResult;

/// How `torch.nn.functional.<name>` is provided.
pub enum Functional {
    /// A builtin operator.
    Builtin(&'static str),
    /// A TorchScript function.
    Script(Arc<Function>),
    /// Two functions chosen by a constant boolean argument (PyTorch's `boolean_dispatch`).
    BoolDispatch(Arc<BoolDispatch>),
    /// Overloads (PyTorch's `@_overload`): the first whose signature matches is called.
    Overloads(Vec<Arc<Function>>),
}

/// A boolean-dispatched functional such as `max_pool2d(..., return_indices=...)`: the flag (at
/// `index` or keyword `arg`, `default` when absent) must be a constant and selects `if_true` or
/// `if_false`, which both take every argument.
pub struct BoolDispatch {
    pub arg: &'static str,
    pub index: usize,
    pub default: bool,
    pub if_true: Arc<Function>,
    pub if_false: Arc<Function>,
}

/// `(functional, flag name, flag position, default, if_true, if_false)`.
const BOOL_DISPATCH: &[(&str, &str, usize, bool, &str, &str)] = &[
    (
        "max_pool1d",
        "return_indices",
        6,
        false,
        "max_pool1d_with_indices",
        "_max_pool1d",
    ),
    (
        "max_pool2d",
        "return_indices",
        6,
        false,
        "max_pool2d_with_indices",
        "_max_pool2d",
    ),
    (
        "max_pool3d",
        "return_indices",
        6,
        false,
        "max_pool3d_with_indices",
        "_max_pool3d",
    ),
    (
        "adaptive_max_pool1d",
        "return_indices",
        2,
        false,
        "adaptive_max_pool1d_with_indices",
        "_adaptive_max_pool1d",
    ),
    (
        "adaptive_max_pool2d",
        "return_indices",
        2,
        false,
        "adaptive_max_pool2d_with_indices",
        "_adaptive_max_pool2d",
    ),
    (
        "adaptive_max_pool3d",
        "return_indices",
        2,
        false,
        "adaptive_max_pool3d_with_indices",
        "_adaptive_max_pool3d",
    ),
    (
        "fractional_max_pool2d",
        "return_indices",
        4,
        false,
        "fractional_max_pool2d_with_indices",
        "_fractional_max_pool2d",
    ),
    (
        "fractional_max_pool3d",
        "return_indices",
        4,
        false,
        "fractional_max_pool3d_with_indices",
        "_fractional_max_pool3d",
    ),
];

const BUILTIN_FUNCTIONAL: &[(&str, &str)] = &[
    ("one_hot", "aten::one_hot"),
    ("gelu", "aten::gelu"),
    ("softplus", "aten::softplus"),
    ("logsigmoid", "aten::log_sigmoid"),
    ("linear", "aten::linear"),
    ("bilinear", "aten::bilinear"),
    ("conv1d", "aten::conv1d"),
    ("conv2d", "aten::conv2d"),
    ("conv3d", "aten::conv3d"),
    ("conv_transpose1d", "aten::conv_transpose1d"),
    ("conv_transpose2d", "aten::conv_transpose2d"),
    ("conv_transpose3d", "aten::conv_transpose3d"),
    ("conv_tbc", "aten::conv_tbc"),
    ("avg_pool1d", "aten::avg_pool1d"),
    ("avg_pool2d", "aten::avg_pool2d"),
    ("avg_pool3d", "aten::avg_pool3d"),
    ("adaptive_avg_pool1d", "aten::adaptive_avg_pool1d"),
    ("prelu", "aten::prelu"),
    ("pixel_shuffle", "aten::pixel_shuffle"),
    ("pixel_unshuffle", "aten::pixel_unshuffle"),
    ("hardshrink", "aten::hardshrink"),
    ("softshrink", "aten::softshrink"),
    ("pairwise_distance", "aten::pairwise_distance"),
    ("cosine_similarity", "aten::cosine_similarity"),
    ("pdist", "aten::pdist"),
    (
        "scaled_dot_product_attention",
        "aten::scaled_dot_product_attention",
    ),
    ("channel_shuffle", "aten::channel_shuffle"),
    ("native_channel_shuffle", "aten::native_channel_shuffle"),
    ("relu_", "aten::relu_"),
    ("elu_", "aten::elu_"),
    ("celu_", "aten::celu_"),
    ("selu_", "aten::selu_"),
    ("leaky_relu_", "aten::leaky_relu_"),
    ("hardtanh_", "aten::hardtanh_"),
    ("threshold_", "aten::threshold_"),
    ("rrelu_", "aten::rrelu_"),
];

/// The TorchScript source of the `torch.nn.functional` functions.
const FUNCTIONAL_SOURCE: &str = include_str!("functional.py");

/// TorchScript source of the builtin overloads written in TorchScript (written for this project).
const LIBRARY_SOURCE: &str = r#"
def add(a: int, b: Tensor) -> Tensor:
    return b + a

def add(a: float, b: Tensor) -> Tensor:
    return b + a

def mul(a: int, b: Tensor) -> Tensor:
    return b * a

def mul(a: float, b: Tensor) -> Tensor:
    return b * a

def ne(a: int, b: Tensor) -> Tensor:
    return b != a

def ne(a: float, b: Tensor) -> Tensor:
    return b != a

def eq(a: int, b: Tensor) -> Tensor:
    return b == a

def eq(a: float, b: Tensor) -> Tensor:
    return b == a

def sub(a: int, b: Tensor) -> Tensor:
    return torch.neg(b) + a

def sub(a: float, b: Tensor) -> Tensor:
    return torch.neg(b) + a

def div(a: int, b: Tensor) -> Tensor:
    return torch.reciprocal(b) * a

def div(a: float, b: Tensor) -> Tensor:
    return torch.reciprocal(b) * a

def lt(a: int, b: Tensor) -> Tensor:
    return b > a

def lt(a: float, b: Tensor) -> Tensor:
    return b > a

def le(a: int, b: Tensor) -> Tensor:
    return b >= a

def le(a: float, b: Tensor) -> Tensor:
    return b >= a

def gt(a: int, b: Tensor) -> Tensor:
    return b < a

def gt(a: float, b: Tensor) -> Tensor:
    return b < a

def ge(a: int, b: Tensor) -> Tensor:
    return b <= a

def ge(a: float, b: Tensor) -> Tensor:
    return b <= a

def floordiv(self: Tensor, other: Tensor) -> Tensor:
    return torch.floor_divide(self, other)

def floordiv(self: Tensor, other: number) -> Tensor:
    return torch.floor_divide(self, other)

def ndim(a: Tensor) -> int:
    return a.dim()

def shape(a: Tensor) -> List[int]:
    return a.size()
"#;

/// Python functions of `torch` (`torch/functional.py`) that PyTorch compiles from source, as
/// extra overloads of the builtin of the same name: `torch.norm` with a string order,
/// `torch.tensordot` with `dims` as a count or a pair of lists and `torch.cdist` with a string
/// `compute_mode`.
const TORCH_OVERLOAD_SOURCE: &str = r#"
def norm(self: Tensor, p: str = "fro", dim: Optional[List[int]] = None, keepdim: bool = False, out: Optional[Tensor] = None, dtype: Optional[int] = None) -> Tensor:
    if p == "fro":
        use_vector = True
        if dim is not None:
            use_vector = len(dim) <= 2
        if use_vector:
            if out is None:
                return torch.linalg.vector_norm(self, 2, dim, keepdim, dtype=dtype)
            return torch.linalg.vector_norm(self, 2, dim, keepdim, dtype=dtype, out=out)
    dims: List[int] = []
    if dim is None:
        for i in range(self.dim()):
            dims.append(i)
    else:
        dims = dim
    if out is None:
        return torch.linalg.matrix_norm(self, p, dims, keepdim, dtype=dtype)
    return torch.linalg.matrix_norm(self, p, dims, keepdim, dtype=dtype, out=out)

def norm(self: Tensor, p: str, dim: int, keepdim: bool = False, out: Optional[Tensor] = None, dtype: Optional[int] = None) -> Tensor:
    if p != "fro":
        return torch.linalg.matrix_norm(self, p, [dim], keepdim, dtype=dtype)
    if out is None:
        return torch.linalg.vector_norm(self, 2, [dim], keepdim, dtype=dtype)
    return torch.linalg.vector_norm(self, 2, [dim], keepdim, dtype=dtype, out=out)

def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    if compute_mode == "use_mm_for_euclid_dist_if_necessary":
        return torch.cdist(x1, x2, p, None)
    if compute_mode == "use_mm_for_euclid_dist":
        return torch.cdist(x1, x2, p, 1)
    if compute_mode == "donot_use_mm_for_euclid_dist":
        return torch.cdist(x1, x2, p, 2)
    raise ValueError(compute_mode + " is not a valid value for compute_mode")

def tensordot(a: Tensor, b: Tensor, dims: int = 2, out: Optional[Tensor] = None) -> Tensor:
    if dims < 0:
        raise RuntimeError("tensordot expects dims >= 0, but got dims=" + str(dims))
    if dims > min(a.dim(), b.dim()):
        raise RuntimeError("tensordot expects dims < ndim_a or ndim_b, but got dims=" + str(dims))
    dims_a: List[int] = []
    dims_b: List[int] = []
    for i in range(dims):
        dims_a.append(i - dims)
        dims_b.append(i)
    if out is None:
        return torch.tensordot(a, b, dims_a, dims_b)
    return torch.tensordot(a, b, dims_a, dims_b, out=out)

def tensordot(a: Tensor, b: Tensor, dims: Tuple[List[int], List[int]], out: Optional[Tensor] = None) -> Tensor:
    if out is None:
        return torch.tensordot(a, b, dims[0], dims[1])
    return torch.tensordot(a, b, dims[0], dims[1], out=out)

def tensordot(a: Tensor, b: Tensor, dims: List[List[int]], out: Optional[Tensor] = None) -> Tensor:
    if len(dims) != 2:
        raise RuntimeError("tensordot expects dims to be a pair of lists")
    if out is None:
        return torch.tensordot(a, b, dims[0], dims[1])
    return torch.tensordot(a, b, dims[0], dims[1], out=out)
"#;

/// Names defined in the library that are builtin overloads rather than functionals.
const OVERLOAD_NAMES: &[&str] = &[
    "add",
    "mul",
    "ne",
    "eq",
    "sub",
    "div",
    "lt",
    "le",
    "gt",
    "ge",
    "floordiv",
    "norm",
    "tensordot",
    "cdist",
];

struct Library {
    functions: HashMap<String, Arc<Function>>,
    /// Overloaded functionals (`interpolate`, ...), in definition order.
    functional_overloads: HashMap<String, Vec<Arc<Function>>>,
}

thread_local! {
    /// Set while the library itself is being compiled (its bodies use the plain builtins).
    static BUILDING: Cell<bool> = const { Cell::new(false) };
}

fn library() -> Option<&'static Library> {
    static LIB: OnceLock<Option<Library>> = OnceLock::new();
    if BUILDING.with(|b| b.get()) {
        return None;
    }
    LIB.get_or_init(|| {
        BUILDING.with(|b| b.set(true));
        let r = build_library();
        BUILDING.with(|b| b.set(false));
        r.ok()
    })
    .as_ref()
}

/// Where PyTorch puts the compiled `torch.nn.functional` helpers (their qualified names in
/// saved archives).
const LIBRARY_NAMESPACE: &str = "__torch__.torch.nn.functional";

/// The library's source split into top-level `def`s: (name, text), in source order.
fn chunks() -> &'static [(String, String)] {
    static CHUNKS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CHUNKS.get_or_init(|| {
        let mut chunks: Vec<(String, String)> = Vec::new();
        let mut cur = String::new();
        let mut cur_name = String::new();
        for source in [FUNCTIONAL_SOURCE, LIBRARY_SOURCE, TORCH_OVERLOAD_SOURCE] {
            for line in source.lines().chain(std::iter::once("")) {
                if let Some(rest) = line.strip_prefix("def ") {
                    if !cur.trim().is_empty() {
                        chunks.push((cur_name.clone(), std::mem::take(&mut cur)));
                    }
                    cur_name = rest.split('(').next().unwrap_or("").to_string();
                }
                cur.push_str(line);
                cur.push('\n');
            }
        }
        if !cur.trim().is_empty() {
            chunks.push((cur_name, cur));
        }
        chunks
    })
}

fn build_library() -> CResult<Library> {
    // Overloaded names are compiled one definition at a time under unique names.
    let mut functions = HashMap::new();
    let chunks = chunks();
    // Names defined more than once (outside the builtin overloads) are functional overloads.
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (name, _) in chunks {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    let is_functional_overload =
        |n: &str| !OVERLOAD_NAMES.contains(&n) && counts.get(n).copied().unwrap_or(0) > 1;
    // Helpers first, so functionals can call them.
    let cu = CompilationUnit::new();
    let mut helper_src = String::new();
    for (name, text) in chunks {
        if !OVERLOAD_NAMES.contains(&name.as_str()) && !is_functional_overload(name) {
            helper_src.push_str(text);
        } else {
            // Keep line numbers of the helpers' source stable.
            helper_src.push_str(&"\n".repeat(text.lines().count()));
        }
    }
    let src = Source::new(helper_src, Some("<torch.nn.functional>".into()), 1);
    super::compile_into_namespace(&cu, &src, LIBRARY_NAMESPACE)?;
    for f in cu.functions() {
        if !f
            .qualified_name()
            .starts_with(&format!("{LIBRARY_NAMESPACE}."))
        {
            continue;
        }
        let base = f
            .qualified_name()
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_string();
        functions.insert(base, f);
    }
    // Each functional overload in its own namespace (PyTorch mangles them the same way); their
    // bodies reach the helpers by qualified name.
    let mut functional_overloads: HashMap<String, Vec<Arc<Function>>> = HashMap::new();
    for (i, (name, text)) in chunks
        .iter()
        .filter(|(n, _)| is_functional_overload(n))
        .enumerate()
    {
        let ns = format!("{LIBRARY_NAMESPACE}.___torch_mangle_{i}");
        let src = Source::new(text.clone(), Some("<torch.nn.functional>".into()), 1);
        super::compile_into_namespace(&cu, &src, &ns)?;
        if let Some(f) = cu.find_function(&format!("{ns}.{name}")) {
            functional_overloads
                .entry(name.clone())
                .or_default()
                .push(f);
        }
    }
    Ok(Library {
        functions,
        functional_overloads,
    })
}

/// How `torch.nn.functional.<name>` resolves.
pub fn functional(name: &str) -> Option<Functional> {
    if let Some((_, sym)) = BUILTIN_FUNCTIONAL.iter().find(|(n, _)| *n == name) {
        return Some(Functional::Builtin(sym));
    }
    let lib = library()?;
    if let Some(&(_, arg, index, default, t, f)) = BOOL_DISPATCH.iter().find(|(n, ..)| *n == name) {
        return Some(Functional::BoolDispatch(Arc::new(BoolDispatch {
            arg,
            index,
            default,
            if_true: lib.functions.get(t)?.clone(),
            if_false: lib.functions.get(f)?.clone(),
        })));
    }
    if let Some(fs) = lib.functional_overloads.get(name) {
        return Some(Functional::Overloads(fs.clone()));
    }
    lib.functions.get(name).cloned().map(Functional::Script)
}

/// The TorchScript-written overloads of builtin operator `name` (`aten::add`, ...).
///
/// Each name's overloads are compiled on its first lookup, apart from the functional library:
/// every builtin call asks for them, and compiling all of `torch.nn.functional` for that
/// made up a sixth of loading a ResNet.
pub fn builtin_overloads(name: &str) -> Vec<Arc<Function>> {
    const N: usize = OVERLOAD_NAMES.len();
    static BY_NAME: [OnceLock<Vec<Arc<Function>>>; N] = [const { OnceLock::new() }; N];
    let Some(short) = name.strip_prefix("aten::") else {
        return Vec::new();
    };
    let Some(i) = OVERLOAD_NAMES.iter().position(|n| *n == short) else {
        return Vec::new();
    };
    if BUILDING.with(|b| b.get()) {
        return Vec::new();
    }
    BY_NAME[i]
        .get_or_init(|| {
            BUILDING.with(|b| b.set(true));
            let r = compile_overloads(short);
            BUILDING.with(|b| b.set(false));
            r.unwrap_or_default()
        })
        .clone()
}

/// Compiles the library's definitions of builtin overload `short` (`add`), each in its own
/// unit (their bodies call only plain builtins).
fn compile_overloads(short: &str) -> CResult<Vec<Arc<Function>>> {
    let mut out = Vec::new();
    for (name, text) in chunks().iter().filter(|(n, _)| n == short) {
        let one = CompilationUnit::new();
        let src = Source::new(text.clone(), Some("<builtins>".into()), 1);
        super::compile_into_namespace(&one, &src, LIBRARY_NAMESPACE)?;
        if let Some(f) = one.find_function(&format!("{LIBRARY_NAMESPACE}.{name}")) {
            out.push(f);
        }
    }
    Ok(out)
}

/// Hook for per-unit setup (nothing today: the library is shared and built lazily).
pub fn register_library(_ctx: &mut CompileCtx) -> CResult<()> {
    Ok(())
}

/// Why the library failed to build, if it did (for diagnostics and tests).
pub fn library_error() -> Option<String> {
    if BUILDING.with(|b| b.get()) {
        return None;
    }
    BUILDING.with(|b| b.set(true));
    let mut r = build_library().err().map(|e| e.to_string());
    for name in OVERLOAD_NAMES {
        if r.is_none() {
            r = compile_overloads(name).err().map(|e| e.to_string());
        }
    }
    BUILDING.with(|b| b.set(false));
    r
}
