//! The aten tensor operators, bound to ts-tensor under PyTorch's own schemas.
//!
//! Each operator is registered by its `name.overload` with a closure over typed [`Args`]. The
//! in-place (`foo_`) and `out=` variants that ts-tensor has no dedicated kernel for are derived
//! from the functional overload with the same arguments (compute, check the cast, copy into
//! `self`/`out`), as ATen's structured kernels behave.

mod aliases;
mod args;
mod arithmetic;
mod aten_internal;
mod attention;
mod backward;
mod channels;
mod conv_pool;
mod creation;
mod derived;
mod distance;
mod einsum;
mod foreach;
mod fused_optim;
pub mod generators;
mod grad_scaling;
mod interpolate_legacy;
mod layers;
mod linalg;
mod loss;
mod metadata;
mod nn;
mod number_theory;
mod packed_sequence;
mod philox;
mod queries;
mod random;
mod reductions;
mod reshaping;
mod resize_set;
mod rnn;
mod runtime_queries;
mod sampling;
mod scatter;
mod shapes;
mod special;
mod spectral;
mod statistics;
mod test_ops;
mod view_copies;
mod windows;

use parking_lot::Mutex;
use ts_core::FunctionSchema;
use ts_tensor::Error;

pub use args::{Args, Outputs};

use crate::registry::{op, OperatorKind, Registry};
use crate::stack::pop_n;

/// Registers every tensor operator.
pub fn register(r: &Registry) {
    arithmetic::register(r);
    reductions::register(r);
    shapes::register(r);
    creation::register(r);
    queries::register(r);
    nn::register(r);
    conv_pool::register(r);
    rnn::register(r);
    attention::register(r);
    linalg::register(r);
    channels::register(r);
    layers::register(r);
    loss::register(r);
    sampling::register(r);
    reshaping::register(r);
    scatter::register(r);
    view_copies::register(r);
    special::register(r);
    statistics::register(r);
    spectral::register(r);
    distance::register(r);
    windows::register(r);
    random::register(r);
    metadata::register(r);
    number_theory::register(r);
    einsum::register(r);
    aten_internal::register(r);
    resize_set::register(r);
    runtime_queries::register(r);
    packed_sequence::register(r);
    interpolate_legacy::register(r);
    fused_optim::register(r);
    // Before `derived`: their in-place and out= forms are derived from these.
    philox::register(r);
    generators::register(r);
    test_ops::register(r);
    grad_scaling::register(r);
    backward::register(r);
    derived::register(r);
    foreach::register(r);
    aliases::register(r);
}

static REGISTRATION_ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Problems found while registering (a binding naming a schema PyTorch does not have, a
/// schema line that does not parse); a test asserts there are none. Builds every lazily
/// defined operator first, so it is for tests and listings, not start-up paths.
pub fn registration_errors() -> Vec<String> {
    let mut errors = crate::registry().definition_errors();
    errors.extend(REGISTRATION_ERRORS.lock().iter().cloned());
    errors
}

/// Records a registration problem for [`registration_errors`].
pub(crate) fn note_registration_error(e: String) {
    note_error(e)
}

fn note_error(e: String) {
    REGISTRATION_ERRORS.lock().push(e);
}

/// Registers PyTorch's schema `full_name` with `f` over the popped arguments.
pub fn def<O, F>(r: &Registry, full_name: &str, f: F)
where
    O: Outputs,
    F: Fn(&Args) -> Result<O, Error> + Send + Sync + 'static,
{
    if r.is_defined(full_name) {
        note_error(format!("'{full_name}' is already registered"));
        return;
    }
    let Some(line) = crate::schema_table::schema_line(full_name) else {
        note_error(format!("no PyTorch schema named '{full_name}'"));
        return;
    };
    let name = full_name.to_string();
    r.define(
        line,
        Box::new(move |_, schema| {
            let n = schema.arguments.len();
            let refuse_quantized = refuses_quantized(schema);
            Some(OperatorKind::Op(op(move |s| {
                let args = Args(pop_n(s, n)?);
                if refuse_quantized {
                    check_not_quantized(&args, &name)?;
                }
                f(&args)?.push_to(s);
                Ok(())
            })))
        }),
    );
}

/// Whether an `aten` operator must refuse quantized tensors: all of them except queries of
/// metadata (results without tensors that do not read elements), since their kernels would
/// compute on the stored integers. The quantized overloads are registered separately
/// (`crate::quantized`).
fn refuses_quantized(schema: &FunctionSchema) -> bool {
    const READS_ELEMENTS: &[&str] = &[
        "aten::item",
        "aten::Int",
        "aten::Float",
        "aten::Bool",
        "aten::ScalarImplicit",
        "aten::equal",
        "aten::allclose",
        "aten::is_nonzero",
        "aten::_local_scalar_dense",
    ];
    let quantized_op = ["aten::q", "aten::dequantize", "aten::int_repr"]
        .iter()
        .any(|p| schema.name.starts_with(p));
    if !schema.name.starts_with("aten::") || quantized_op {
        return false;
    }
    let returns_tensor = schema
        .returns
        .iter()
        .any(|r| r.ty.to_string().contains("Tensor"));
    returns_tensor || READS_ELEMENTS.contains(&schema.name.as_str())
}

/// The error for a quantized tensor given to an operator without a quantized kernel.
fn check_not_quantized(args: &Args, name: &str) -> Result<(), Error> {
    let quantized = args.0.iter().any(|v| match v {
        ts_core::IValue::Tensor(t) => t.is_quantized(),
        ts_core::IValue::List(l) => l
            .items
            .read()
            .iter()
            .any(|x| matches!(x, ts_core::IValue::Tensor(t) if t.is_quantized())),
        _ => false,
    });
    if quantized {
        return Err(Error::runtime(format!(
            "Could not run '{name}' with arguments from the 'QuantizedCPU' backend: torchscript-rs has no quantized kernel for this operator"
        )));
    }
    Ok(())
}

/// Registers an operator of another library under its own full schema string (`ns::name(...)
/// -> ...`) with `f` over the popped arguments: how operator libraries outside PyTorch's
/// schema table (torchvision's, quantized back ends) bind their kernels.
pub fn def_schema<O, F>(r: &Registry, schema: &str, f: F) -> Result<(), Error>
where
    O: Outputs,
    F: Fn(&Args) -> Result<O, Error> + Send + Sync + 'static,
{
    let parsed = FunctionSchema::parse(schema)
        .map_err(|e| Error::runtime(format!("invalid operator schema '{schema}': {e}")))?;
    let n = parsed.arguments.len();
    r.register_schema(
        parsed,
        op(move |s| {
            let args = Args(pop_n(s, n)?);
            f(&args)?.push_to(s);
            Ok(())
        }),
    );
    Ok(())
}

/// Registers the same closure under several overloads with identical argument layouts.
pub fn def_many<O, F>(r: &Registry, full_names: &[&str], f: F)
where
    O: Outputs,
    F: Fn(&Args) -> Result<O, Error> + Send + Sync + Clone + 'static,
{
    for n in full_names {
        def(r, n, f.clone());
    }
}
