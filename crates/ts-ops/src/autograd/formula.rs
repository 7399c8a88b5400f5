//! The table of derivative formulas, keyed by operator (`name.overload`).

use std::collections::HashMap;
use std::sync::OnceLock;

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use crate::tensor_ops::Args;

/// What a formula sees: the operator's arguments (in-place ops: `self` as it was before the
/// write) and its outputs (without history).
pub struct Ctx {
    /// The operator's full name (`aten::pad`), shared by every node of the operator.
    pub op: std::sync::Arc<str>,
    /// The positions of the tensor-typed arguments (each gets a gradient slot, `None`
    /// arguments included).
    pub tensor_args: std::sync::Arc<[usize]>,
    pub args: Args,
    pub outs: Vec<IValue>,
}

impl Ctx {
    /// Tensor argument `i`.
    pub fn t(&self, i: usize) -> Result<&Tensor, Error> {
        self.args.t(i)
    }

    /// Output `k` for a formula that multiplies by it: the saved output, or, when the backward
    /// pass records (`create_graph=True`), the output recomputed from the inputs so that it
    /// carries their history.
    pub fn out_diff(
        &self,
        k: usize,
        recompute: impl FnOnce() -> Result<Tensor, Error>,
    ) -> Result<Tensor, Error> {
        if ts_tensor::autograd::is_grad_enabled() {
            recompute()
        } else {
            self.out(k)
        }
    }

    /// Recomputes output `k` by running the operator again on the same arguments.
    pub fn rerun(&self, k: usize) -> Result<Tensor, Error> {
        let outs = super::ops::call(&self.op, self.args.0.clone())?;
        let c = Ctx {
            op: self.op.clone(),
            tensor_args: self.tensor_args.clone(),
            args: Args(Vec::new()),
            outs,
        };
        c.out(k)
    }

    /// Tensor output `k` (flattened over tensor lists).
    pub fn out(&self, k: usize) -> Result<Tensor, Error> {
        let mut n = 0;
        for v in &self.outs {
            match v {
                IValue::Tensor(t) => {
                    if n == k {
                        return Ok(t.clone());
                    }
                    n += 1;
                }
                IValue::List(l) => {
                    for x in l.items.read().iter() {
                        if let IValue::Tensor(t) = x {
                            if n == k {
                                return Ok(t.clone());
                            }
                            n += 1;
                        }
                    }
                }
                _ => {}
            }
        }
        Err(Error::runtime(format!("autograd formula: no output {k}")))
    }
}

/// A derivative formula: from the gradients of the outputs (one per flattened tensor output,
/// zero where none arrived) to the gradients of the tensor inputs (one per flattened tensor
/// argument, lists expanded; `None` for an input without a gradient).
pub type FormulaFn = fn(&Ctx, &[Tensor]) -> Result<Vec<Option<Tensor>>, Error>;

/// A formula and what it keeps.
#[derive(Clone, Copy)]
pub struct Formula {
    pub f: FormulaFn,
    /// Whether it reads its tensor inputs (an in-place write to one of them then invalidates
    /// the node, with PyTorch's error); linear formulas (add, views) do not.
    pub saves_inputs: bool,
    /// Whether it reads its first output instead of its inputs (`relu`: the mask of the
    /// result). An in-place use then needs no copy of `self`, and a later in-place write to
    /// the result invalidates the node.
    pub saves_result: bool,
}

/// Builder of the formula table.
#[derive(Default)]
pub(crate) struct Table(HashMap<&'static str, Formula>);

impl Table {
    /// A formula that reads its inputs.
    pub fn add(&mut self, name: &'static str, f: FormulaFn) {
        self.0.insert(
            name,
            Formula {
                f,
                saves_inputs: true,
                saves_result: false,
            },
        );
    }

    /// A formula that needs only shapes (add, sub, views, reductions by sum).
    pub fn linear(&mut self, name: &'static str, f: FormulaFn) {
        self.0.insert(
            name,
            Formula {
                f,
                saves_inputs: false,
                saves_result: false,
            },
        );
    }

    /// A formula that reads only the operator's first output (`relu`, `hardtanh`).
    pub fn result(&mut self, name: &'static str, f: FormulaFn) {
        self.0.insert(
            name,
            Formula {
                f,
                saves_inputs: false,
                saves_result: true,
            },
        );
    }
}

fn table() -> &'static HashMap<&'static str, Formula> {
    static T: OnceLock<HashMap<&'static str, Formula>> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = Table::default();
        super::pointwise::register(&mut t);
        super::reduce::register(&mut t);
        super::shape::register(&mut t);
        super::linalg::register(&mut t);
        super::nn::register(&mut t);
        super::nn::register_pools(&mut t);
        super::composite::register(&mut t);
        super::spectral::register(&mut t);
        super::spectral::register_c2r(&mut t);
        super::scatter_reduce::register(&mut t);
        super::linalg::register_solvers(&mut t);
        super::factorization::register(&mut t);
        super::decomposed::register(&mut t);
        t.0
    })
}

/// The formula of the operator `full_name` (`aten::mul.Tensor`), if it is differentiable here.
pub fn formula_for(full_name: &str) -> Option<Formula> {
    table().get(full_name).copied()
}

/// Every operator with a derivative formula, sorted (the whole-table gradcheck walks it).
pub fn formula_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = table().keys().copied().collect();
    v.sort_unstable();
    v
}
