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
}

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
];

/// TorchScript source of the library (written for this project; signatures follow
/// `torch.nn.functional` so that calls match PyTorch's).
const LIBRARY_SOURCE: &str = r#"
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.relu_(input)
    else:
        result = torch.relu(input)
    return result

def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.hardtanh_(input, 0.0, 6.0)
    else:
        result = torch.hardtanh(input, 0.0, 6.0)
    return result

def silu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return torch.silu_(input)
    return torch.silu(input)

def mish(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return torch.mish_(input)
    return torch.mish(input)

def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return torch.hardswish_(input)
    return torch.hardswish(input)

def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return torch.hardsigmoid_(input)
    return torch.hardsigmoid(input)

def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.elu_(input, alpha)
    else:
        result = torch.elu(input, alpha)
    return result

def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.celu_(input, alpha)
    else:
        result = torch.celu(input, alpha)
    return result

def selu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.selu_(input)
    else:
        result = torch.selu(input)
    return result

def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.leaky_relu_(input, negative_slope)
    else:
        result = torch.leaky_relu(input, negative_slope)
    return result

def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.hardtanh_(input, min_val, max_val)
    else:
        result = torch.hardtanh(input, min_val, max_val)
    return result

def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    if inplace:
        result = torch.threshold_(input, threshold, value)
    else:
        result = torch.threshold(input, threshold, value)
    return result

def glu(input: Tensor, dim: int = -1) -> Tensor:
    return torch.glu(input, dim)

def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()

def tanh(input: Tensor) -> Tensor:
    return input.tanh()

def softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1)

def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()

def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    if ndim == 0 or ndim == 1 or ndim == 3:
        ret = 0
    else:
        ret = 1
    return ret

def softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[int] = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is None:
        ret = input.softmax(dim)
    else:
        ret = input.softmax(dim, dtype=dtype)
    return ret

def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[int] = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    if dtype is None:
        ret = (-input).softmax(dim)
    else:
        ret = (-input).softmax(dim, dtype=dtype)
    return ret

def log_softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[int] = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is None:
        ret = input.log_softmax(dim)
    else:
        ret = input.log_softmax(dim, dtype=dtype)
    return ret

def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))
    if inplace:
        result = torch.dropout_(input, p, training)
    else:
        result = torch.dropout(input, p, training)
    return result

def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))
    if inplace:
        result = torch.alpha_dropout_(input, p, training)
    else:
        result = torch.alpha_dropout(input, p, training)
    return result

def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))
    if inplace:
        result = torch.feature_dropout_(input, p, training)
    else:
        result = torch.feature_dropout(input, p, training)
    return result

def layer_norm(input: Tensor, normalized_shape: List[int], weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, eps: float = 1e-05) -> Tensor:
    return torch.layer_norm(input, normalized_shape, weight, bias, eps, False)

def rms_norm(input: Tensor, normalized_shape: List[int], weight: Optional[Tensor] = None, eps: Optional[float] = None) -> Tensor:
    return torch.rms_norm(input, normalized_shape, weight, eps)

def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, eps: float = 1e-05) -> Tensor:
    return torch.group_norm(input, num_groups, weight, bias, eps, False)

def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor], weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    return torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)

def instance_norm(input: Tensor, running_mean: Optional[Tensor] = None, running_var: Optional[Tensor] = None, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    return torch.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)

def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)

def _max_pool1d(input: Tensor, kernel_size: BroadcastingList1[int], stride: Optional[BroadcastingList1[int]] = None, padding: BroadcastingList1[int] = 0, dilation: BroadcastingList1[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    if stride is None:
        stride = torch.jit.annotate(List[int], [])
    return torch.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)

def _max_pool2d(input: Tensor, kernel_size: BroadcastingList2[int], stride: Optional[BroadcastingList2[int]] = None, padding: BroadcastingList2[int] = 0, dilation: BroadcastingList2[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    if stride is None:
        stride = torch.jit.annotate(List[int], [])
    return torch.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)

def _adaptive_max_pool1d(input: Tensor, output_size: BroadcastingList1[int], return_indices: bool = False) -> Tensor:
    return torch.adaptive_max_pool1d(input, output_size)[0]

def _adaptive_max_pool2d(input: Tensor, output_size: BroadcastingList2[int], return_indices: bool = False) -> Tensor:
    output_size = _list_with_default(output_size, input.size())
    return torch.adaptive_max_pool2d(input, output_size)[0]

def _list_with_default(out_size: List[int], defaults: List[int]) -> List[int]:
    # PyTorch's `aten::list_with_default`: sizes are ints in TorchScript (no None to fill).
    return out_size

def adaptive_avg_pool2d(input: Tensor, output_size: BroadcastingList2[int]) -> Tensor:
    _output_size = _list_with_default(output_size, input.size())
    return torch._C._nn.adaptive_avg_pool2d(input, _output_size)

def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Optional[Tensor] = None) -> Tensor:
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom

def pad(input: Tensor, pad: List[int], mode: str = "constant", value: Optional[float] = None) -> Tensor:
    return torch._C._nn.pad(input, pad, mode, value)

def mse_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean", weight: Optional[Tensor] = None) -> Tensor:
    expanded_input, expanded_target = torch.broadcast_tensors(input, target)
    return torch._C._nn.mse_loss(expanded_input, expanded_target, _reduction_enum(reduction))

def l1_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean", weight: Optional[Tensor] = None) -> Tensor:
    expanded_input, expanded_target = torch.broadcast_tensors(input, target)
    return torch._C._nn.l1_loss(expanded_input, expanded_target, _reduction_enum(reduction))

def _reduction_enum(reduction: str) -> int:
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(reduction + " is not a valid value for reduction")

def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return torch._C._nn.nll_loss_nd(input, target, weight, _reduction_enum(reduction), ignore_index)

def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100, reduce: Optional[bool] = None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    return torch._C._nn.cross_entropy_loss(input, target, weight, _reduction_enum(reduction), ignore_index, label_smoothing)

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
/// extra overloads of the builtin of the same name: `torch.norm` with a string order and
/// `torch.tensordot` with `dims` as a count or a pair of lists.
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

/// Python functions of `torch.nn.functional` whose TorchScript name differs (boolean dispatch).
const FUNCTIONAL_ALIASES: &[(&str, &str)] = &[
    ("max_pool1d", "_max_pool1d"),
    ("max_pool2d", "_max_pool2d"),
    ("adaptive_max_pool1d", "_adaptive_max_pool1d"),
    ("adaptive_max_pool2d", "_adaptive_max_pool2d"),
];

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
];

struct Library {
    functions: HashMap<String, Arc<Function>>,
    overloads: HashMap<String, Vec<Arc<Function>>>,
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

fn build_library() -> CResult<Library> {
    // Overloaded names are compiled one definition at a time under unique names.
    let mut functions = HashMap::new();
    let mut overloads: HashMap<String, Vec<Arc<Function>>> = HashMap::new();
    let mut chunks: Vec<(String, String)> = Vec::new();
    let mut cur = String::new();
    let mut cur_name = String::new();
    for line in LIBRARY_SOURCE.lines().chain(TORCH_OVERLOAD_SOURCE.lines()) {
        if let Some(rest) = line.strip_prefix("def ") {
            if !cur.trim().is_empty() {
                chunks.push((cur_name.clone(), std::mem::take(&mut cur)));
            }
            cur_name = rest.split('(').next().unwrap_or("").to_string();
        }
        cur.push_str(line);
        cur.push('\n');
    }
    if !cur.trim().is_empty() {
        chunks.push((cur_name, cur));
    }
    // Helpers first, so functionals can call them.
    let cu = CompilationUnit::new();
    let mut helper_src = String::new();
    for (name, text) in &chunks {
        if !OVERLOAD_NAMES.contains(&name.as_str()) {
            helper_src.push_str(text);
        }
    }
    let src = Source::new(helper_src, Some("<torch.nn.functional>".into()), 1);
    super::compile_into_namespace(&cu, &src, LIBRARY_NAMESPACE)?;
    for f in cu.functions() {
        let base = f
            .qualified_name()
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_string();
        functions.insert(base, f);
    }
    for (name, text) in &chunks {
        if OVERLOAD_NAMES.contains(&name.as_str()) {
            let one = CompilationUnit::new();
            let src = Source::new(text.clone(), Some("<builtins>".into()), 1);
            super::compile_into_namespace(&one, &src, LIBRARY_NAMESPACE)?;
            if let Some(f) = one.find_function(&format!("{LIBRARY_NAMESPACE}.{name}")) {
                overloads
                    .entry(format!("aten::{name}"))
                    .or_default()
                    .push(f);
            }
        }
    }
    Ok(Library {
        functions,
        overloads,
    })
}

/// How `torch.nn.functional.<name>` resolves.
pub fn functional(name: &str) -> Option<Functional> {
    if let Some((_, sym)) = BUILTIN_FUNCTIONAL.iter().find(|(n, _)| *n == name) {
        return Some(Functional::Builtin(sym));
    }
    let target = FUNCTIONAL_ALIASES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .unwrap_or(name);
    library()?
        .functions
        .get(target)
        .cloned()
        .map(Functional::Script)
}

/// The TorchScript-written overloads of builtin operator `name` (`aten::add`, ...).
pub fn builtin_overloads(name: &str) -> Vec<Arc<Function>> {
    library()
        .and_then(|l| l.overloads.get(name).cloned())
        .unwrap_or_default()
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
    let r = build_library().err().map(|e| e.to_string());
    BUILDING.with(|b| b.set(false));
    r
}
