//! Autograd on the operator side: recording backward nodes where every operator runs
//! ([`record`]), the engine that runs them ([`engine`]), the operators TorchScript uses to drive
//! it ([`api`]: `torch.autograd.grad`, `Tensor.backward`, `.grad`, ...) and the derivative
//! formulas, grouped by family and written with the operators themselves ([`ops`]) so that
//! the graph a backward pass builds with `create_graph=True` can be differentiated again.

pub mod api;
mod composite;
mod copy_slices;
mod decomposed;
pub mod engine;
mod factorization;
mod formula;
pub mod gradcheck;
mod linalg;
mod nn;
pub mod ops;
mod pointwise;
pub mod record;
mod reduce;
mod scatter_reduce;
mod shape;
mod spectral;

pub use formula::{formula_for, formula_names, Ctx, Formula};
