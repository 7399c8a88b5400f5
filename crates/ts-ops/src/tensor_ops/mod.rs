//! The aten tensor operators, bound to ts-tensor under PyTorch's own schemas.
//!
//! Each operator is registered by its `name.overload` with a closure over typed [`Args`]. The
//! in-place (`foo_`) and `out=` variants that ts-tensor has no dedicated kernel for are derived
//! from the functional overload with the same arguments (compute, check the cast, copy into
//! `self`/`out`), as ATen's structured kernels behave.

mod aliases;
mod args;
mod arithmetic;
mod attention;
mod channels;
mod conv_pool;
mod creation;
mod derived;
mod distance;
mod layers;
mod linalg;
mod loss;
mod nn;
mod queries;
mod reductions;
mod reshaping;
mod rnn;
mod sampling;
mod scatter;
mod shapes;
mod special;
mod spectral;
mod statistics;
mod view_copies;

use std::sync::Arc;

use parking_lot::Mutex;
use ts_core::FunctionSchema;
use ts_tensor::Error;

pub use args::{Args, Outputs};

use crate::registry::{op, Registry};
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
    derived::register(r);
    aliases::register(r);
}

static REGISTRATION_ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Problems found while registering (a binding naming a schema PyTorch does not have); a test
/// asserts there are none.
pub fn registration_errors() -> Vec<String> {
    REGISTRATION_ERRORS.lock().clone()
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
    if r.find(full_name).is_some() {
        note_error(format!("'{full_name}' is already registered"));
        return;
    }
    let Some(line) = crate::schema_table::schema_line(full_name) else {
        note_error(format!("no PyTorch schema named '{full_name}'"));
        return;
    };
    let schema = match FunctionSchema::parse(line) {
        Ok(s) => s,
        Err(e) => return note_error(format!("{full_name}: {e}")),
    };
    let n = schema.arguments.len();
    let f = Arc::new(f);
    if let Err(e) = r.register(
        line,
        op(move |s| {
            let args = Args(pop_n(s, n)?);
            f(&args)?.push_to(s);
            Ok(())
        }),
    ) {
        note_error(format!("{full_name}: {}", e.message));
    }
}

/// Registers an operator of another library under its own full schema string (`ns::name(...)
/// -> ...`) with `f` over the popped arguments: how operator libraries outside PyTorch's
/// schema table (torchvision's, quantized back ends) bind their kernels.
pub fn def_schema<O, F>(r: &Registry, schema: &str, f: F) -> Result<(), Error>
where
    O: Outputs,
    F: Fn(&Args) -> Result<O, Error> + Send + Sync + 'static,
{
    let n = FunctionSchema::parse(schema)
        .map_err(|e| Error::runtime(format!("invalid operator schema '{schema}': {e}")))?
        .arguments
        .len();
    r.register(
        schema,
        op(move |s| {
            let args = Args(pop_n(s, n)?);
            f(&args)?.push_to(s);
            Ok(())
        }),
    )?;
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
