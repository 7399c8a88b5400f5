//! Symbolic differentiation (PyTorch's `autodiff.cpp`): splits a differentiable subgraph into
//! a forward graph `f` and a backward graph `df` computing the vector-Jacobian products of
//! `f`'s inputs from the gradients of its outputs.
//!
//! `f` is the subgraph itself plus the values `df` needs that are computed in the forward pass
//! (input sizes for broadcasting reductions, element counts), appended as extra outputs. `df`
//! takes, in order: one gradient per real output of `f`, then the captured inputs of `f`, then
//! the captured outputs of `f`; it returns one gradient per input of `f` (`None` for inputs
//! that are not tensors or do not get one). Only the operators listed in
//! [`has_symbolic_gradient`] are differentiated; anything else stays outside the subgraph and is
//! differentiated by the autograd engine.

use std::collections::HashMap;

use ts_core::{prim, IValue, Symbol, Type, TypeRef};
use ts_ir::{Graph, NodeId, ValueId};

use crate::node_schema::node_full_name;

/// A differentiated subgraph (PyTorch's `Gradient`).
pub struct Gradient {
    /// The forward graph: the subgraph's outputs, then the captured forward values.
    pub f: Graph,
    /// The backward graph (see the module documentation for its signature).
    pub df: Graph,
    /// How many of `f`'s outputs are the subgraph's own outputs.
    pub f_real_outputs: usize,
    /// Which inputs of `f` are passed to `df` (after the output gradients).
    pub df_input_captured_inputs: Vec<usize>,
    /// Which outputs of `f` are passed to `df` (after the captured inputs).
    pub df_input_captured_outputs: Vec<usize>,
}

/// The operators differentiated symbolically, by overload.
const SYMBOLIC: &[&str] = &[
    "aten::add.Tensor",
    "aten::add.Scalar",
    "aten::sub.Tensor",
    "aten::sub.Scalar",
    "aten::mul.Tensor",
    "aten::mul.Scalar",
    "aten::div.Tensor",
    "aten::div.Scalar",
    "aten::neg",
    "aten::relu",
    "aten::sigmoid",
    "aten::tanh",
    "aten::exp",
    "aten::log",
    "aten::pow.Tensor_Scalar",
    "aten::mm",
    "aten::matmul",
    "aten::addmm",
    "aten::linear",
    "aten::t",
    "aten::transpose.int",
    "aten::view",
    "aten::reshape",
    "aten::unsqueeze",
    "aten::sum",
    "aten::mean",
    "aten::sum.dim_IntList",
    "aten::mean.dim",
    "aten::softmax.int",
    "aten::log_softmax.int",
    "aten::gelu",
];

fn rank(g: &Graph, v: ValueId) -> Option<usize> {
    g.value(v)
        .ty()
        .tensor_type()
        .and_then(|t| t.sizes.as_ref().map(|s| s.len()))
}

fn is_tensor(g: &Graph, v: ValueId) -> bool {
    g.value(v).ty().is_tensor()
}

fn is_none(g: &Graph, v: ValueId) -> bool {
    matches!(g.to_ivalue(v), Some(IValue::None))
}

/// Constant reduction dimensions of a `sum.dim_IntList`/`mean.dim` node, normalized for an
/// input of known rank; `None` when they are not constants or the rank is unknown.
fn reduced_dims(g: &Graph, n: NodeId) -> Option<(Vec<usize>, bool)> {
    let node = g.node(n);
    let r = rank(g, node.input(0))? as i64;
    let dims = match g.to_ivalue(node.input(1))? {
        IValue::None => (0..r).collect::<Vec<_>>(),
        v => v.as_int_list()?,
    };
    let keepdim = g.to_ivalue(node.input(2))?.as_bool()?;
    let mut out = Vec::new();
    for d in if dims.is_empty() {
        (0..r).collect()
    } else {
        dims
    } {
        let d = if d < 0 { d + r } else { d };
        if d < 0 || d >= r.max(1) {
            return None;
        }
        out.push(d as usize);
    }
    out.sort_unstable();
    out.dedup();
    Some((out, keepdim))
}

/// True when `n` is one of the operators with a symbolic gradient here, with the constant
/// arguments and known ranks its formula needs.
pub fn has_symbolic_gradient(g: &Graph, n: NodeId) -> bool {
    let node = g.node(n);
    if node.outputs().len() != 1 || !node.blocks().is_empty() {
        return false;
    }
    if !is_tensor(g, node.output(0)) {
        return false;
    }
    let Some(name) = node_full_name(g, n) else {
        return false;
    };
    if !SYMBOLIC.contains(&name.as_str()) {
        return false;
    }
    let ins = node.inputs();
    match name.as_str() {
        "aten::pow.Tensor_Scalar" => matches!(
            g.to_ivalue(ins[1]),
            Some(IValue::Int(_) | IValue::Double(_))
        ),
        "aten::matmul" => rank(g, ins[0]) == Some(2) && rank(g, ins[1]) == Some(2),
        "aten::linear" => {
            rank(g, ins[0]).is_some_and(|r| r >= 2)
                && rank(g, ins[1]) == Some(2)
                && (is_none(g, ins[2]) || is_tensor(g, ins[2]))
        }
        "aten::sum" | "aten::mean" => is_none(g, ins[1]),
        "aten::sum.dim_IntList" | "aten::mean.dim" => {
            is_none(g, ins[3]) && reduced_dims(g, n).is_some()
        }
        "aten::unsqueeze" => g.to_ivalue(ins[1]).is_some_and(|v| v.as_int().is_some()),
        // A constant dim and no dtype conversion.
        "aten::softmax.int" | "aten::log_softmax.int" => {
            g.to_ivalue(ins[1]).is_some_and(|v| v.as_int().is_some()) && is_none(g, ins[2])
        }
        // The exact (erf) form.
        "aten::gelu" => {
            matches!(g.to_ivalue(ins[1]), Some(IValue::String(s)) if s.as_str() == "none")
        }
        _ => true,
    }
}

struct Builder {
    f: Graph,
    df: Graph,
    /// Gradient (a `df` value) of each `f` value that has one so far.
    grads: HashMap<ValueId, ValueId>,
    /// `df` value standing for each captured `f` value.
    captured: HashMap<ValueId, ValueId>,
    n_grad_inputs: usize,
    cap_inputs: Vec<usize>,
    cap_outputs: Vec<usize>,
    /// Forward queries (`size`, `numel`) already computed, by operator and value.
    queries: HashMap<(&'static str, ValueId), ValueId>,
}

impl Builder {
    fn sym(name: &str) -> Symbol {
        Symbol::aten(name.trim_start_matches("aten::"))
    }

    /// Appends `aten::<name>(inputs)` to `df`, with one output of type `ty`.
    fn op(&mut self, name: &str, inputs: &[ValueId], ty: TypeRef) -> ValueId {
        let n = self.df.insert(Self::sym(name), inputs, 0);
        self.df.add_output(n, ty)
    }

    fn top(&mut self, name: &str, inputs: &[ValueId]) -> ValueId {
        self.op(name, inputs, Type::tensor())
    }

    fn constant(&mut self, v: IValue) -> ValueId {
        self.df.insert_constant(&v)
    }

    /// Appends `aten::<name>(inputs)` at the end of `f` (a forward value `df` needs).
    fn forward_op(&mut self, name: &str, inputs: &[ValueId], ty: TypeRef) -> ValueId {
        let n = self.f.insert(Self::sym(name), inputs, 0);
        self.f.add_output(n, ty)
    }

    /// The `df` value for the forward value `v`: a copy of a constant, or a captured input or
    /// output of `f`.
    fn fwd(&mut self, v: ValueId) -> ValueId {
        if let Some(&d) = self.captured.get(&v) {
            return d;
        }
        let producer = self.f.value(v).node();
        if self.f.node(producer).kind() == prim::Constant {
            if let Some(c) = self.f.to_ivalue(v) {
                let d = self.constant(c);
                self.captured.insert(v, d);
                return d;
            }
        }
        let ty = self.f.value(v).ty().clone();
        let top = self.df.block();
        let d = if let Some(i) = self.f.inputs().iter().position(|&x| x == v) {
            let at = self.n_grad_inputs + self.cap_inputs.len();
            self.cap_inputs.push(i);
            self.df.insert_block_input(top, at, ty)
        } else {
            let j = match self.f.outputs().iter().position(|&x| x == v) {
                Some(j) => j,
                None => self.f.register_output(v),
            };
            self.cap_outputs.push(j);
            self.df.add_block_input(top, ty)
        };
        self.captured.insert(v, d);
        d
    }

    /// The `df` value of `x.<name>()` (`size`, `numel`) computed once in the forward pass.
    fn forward_query(&mut self, name: &'static str, x: ValueId, ty: TypeRef) -> ValueId {
        if let Some(&v) = self.queries.get(&(name, x)) {
            return v;
        }
        let s = self.forward_op(name, &[x], ty);
        let d = self.fwd(s);
        self.queries.insert((name, x), d);
        d
    }

    /// The `df` value of `x.size()` computed in the forward pass.
    fn size_of(&mut self, x: ValueId) -> ValueId {
        self.forward_query("aten::size", x, Type::int_list())
    }

    /// The `df` value of `x.numel()` computed in the forward pass.
    fn numel_of(&mut self, x: ValueId) -> ValueId {
        self.forward_query("aten::numel", x, Type::int())
    }

    /// `g` summed down to the forward value `x`'s size (undoing broadcasting).
    fn sum_to(&mut self, g: ValueId, x: ValueId) -> ValueId {
        let s = self.size_of(x);
        self.top("aten::sum_to_size", &[g, s])
    }

    /// `g * s` for a scalar forward value `s`, skipped when `s` is the constant 1.
    fn scale(&mut self, g: ValueId, s: ValueId) -> ValueId {
        match self.f.to_ivalue(s) {
            Some(IValue::Int(1)) => g,
            Some(IValue::Double(1.0)) => g,
            _ => {
                let s = self.fwd(s);
                self.top("aten::mul", &[g, s])
            }
        }
    }

    fn add_grad(&mut self, v: ValueId, g: ValueId) {
        let new = match self.grads.get(&v).copied() {
            None => g,
            Some(prev) => {
                let one = self.constant(IValue::Int(1));
                self.top("aten::add", &[prev, g, one])
            }
        };
        self.grads.insert(v, new);
    }

    /// The gradients of `n`'s inputs given the gradient `g` of its output.
    fn node_grads(&mut self, n: NodeId, name: &str, g: ValueId) -> Vec<Option<ValueId>> {
        let ins = self.f.node(n).inputs().to_vec();
        let out = self.f.node(n).output(0);
        match name {
            "aten::add.Tensor" | "aten::sub.Tensor" => {
                let ga = self.sum_to(g, ins[0]);
                let mut gb = self.scale(g, ins[2]);
                if name == "aten::sub.Tensor" {
                    gb = self.top("aten::neg", &[gb]);
                }
                let gb = self.sum_to(gb, ins[1]);
                vec![Some(ga), Some(gb), None]
            }
            "aten::add.Scalar" | "aten::sub.Scalar" => vec![Some(g), None, None],
            "aten::mul.Tensor" => {
                let b = self.fwd(ins[1]);
                let ga = self.top("aten::mul", &[g, b]);
                let ga = self.sum_to(ga, ins[0]);
                let a = self.fwd(ins[0]);
                let gb = self.top("aten::mul", &[g, a]);
                let gb = self.sum_to(gb, ins[1]);
                vec![Some(ga), Some(gb)]
            }
            "aten::mul.Scalar" => {
                let s = self.fwd(ins[1]);
                vec![Some(self.top("aten::mul", &[g, s])), None]
            }
            "aten::div.Tensor" => {
                let b = self.fwd(ins[1]);
                let q = self.top("aten::div", &[g, b]);
                let ga = self.sum_to(q, ins[0]);
                let o = self.fwd(out);
                let qo = self.top("aten::mul", &[q, o]);
                let nqo = self.top("aten::neg", &[qo]);
                let gb = self.sum_to(nqo, ins[1]);
                vec![Some(ga), Some(gb)]
            }
            "aten::div.Scalar" => {
                let s = self.fwd(ins[1]);
                vec![Some(self.top("aten::div", &[g, s])), None]
            }
            "aten::neg" => vec![Some(self.top("aten::neg", &[g]))],
            "aten::relu" => {
                let o = self.fwd(out);
                let zero = self.constant(IValue::Int(0));
                let mask = self.top("aten::gt", &[o, zero]);
                vec![Some(self.top("aten::mul", &[g, mask]))]
            }
            "aten::sigmoid" => {
                let o = self.fwd(out);
                let one = self.constant(IValue::Int(1));
                let om = self.top("aten::rsub", &[o, one, one]);
                let d = self.top("aten::mul", &[o, om]);
                vec![Some(self.top("aten::mul", &[g, d]))]
            }
            "aten::tanh" => {
                let o = self.fwd(out);
                let one = self.constant(IValue::Int(1));
                let sq = self.top("aten::mul", &[o, o]);
                let d = self.top("aten::rsub", &[sq, one, one]);
                vec![Some(self.top("aten::mul", &[g, d]))]
            }
            "aten::exp" => {
                let o = self.fwd(out);
                vec![Some(self.top("aten::mul", &[g, o]))]
            }
            "aten::log" => {
                let a = self.fwd(ins[0]);
                vec![Some(self.top("aten::div", &[g, a]))]
            }
            "aten::pow.Tensor_Scalar" => {
                let e = self.f.to_ivalue(ins[1]).unwrap_or(IValue::None);
                let (e_c, em1) = match e {
                    IValue::Int(i) => (IValue::Int(i), IValue::Int(i - 1)),
                    IValue::Double(d) => (IValue::Double(d), IValue::Double(d - 1.0)),
                    _ => (IValue::Int(0), IValue::Int(0)),
                };
                let is_zero = matches!(e_c, IValue::Int(0)) || e_c.as_double() == Some(0.0);
                let ec = self.constant(e_c);
                let ga = if is_zero {
                    self.top("aten::mul", &[g, ec])
                } else {
                    let a = self.fwd(ins[0]);
                    let em1 = self.constant(em1);
                    let p = self.top("aten::pow", &[a, em1]);
                    let d = self.top("aten::mul", &[p, ec]);
                    self.top("aten::mul", &[g, d])
                };
                vec![Some(ga), None]
            }
            "aten::mm" | "aten::matmul" => {
                let a = self.fwd(ins[0]);
                let b = self.fwd(ins[1]);
                let bt = self.top("aten::t", &[b]);
                let ga = self.top("aten::mm", &[g, bt]);
                let at = self.top("aten::t", &[a]);
                let gb = self.top("aten::mm", &[at, g]);
                vec![Some(ga), Some(gb)]
            }
            "aten::addmm" => {
                let gs = self.scale(g, ins[3]);
                let gs = self.sum_to(gs, ins[0]);
                let m1 = self.fwd(ins[1]);
                let m2 = self.fwd(ins[2]);
                let m2t = self.top("aten::t", &[m2]);
                let g1 = self.top("aten::mm", &[g, m2t]);
                let g1 = self.scale(g1, ins[4]);
                let m1t = self.top("aten::t", &[m1]);
                let g2 = self.top("aten::mm", &[m1t, g]);
                let g2 = self.scale(g2, ins[4]);
                vec![Some(gs), Some(g1), Some(g2), None, None]
            }
            "aten::linear" => {
                let x = self.fwd(ins[0]);
                let w = self.fwd(ins[1]);
                let gx = self.top("aten::matmul", &[g, w]);
                let zero = self.constant(IValue::Int(0));
                let m2 = self.constant(IValue::Int(-2));
                let gf = self.top("aten::flatten", &[g, zero, m2]);
                let xf = self.top("aten::flatten", &[x, zero, m2]);
                let gft = self.top("aten::t", &[gf]);
                let gw = self.top("aten::mm", &[gft, xf]);
                let gb = if self.f.value(ins[2]).ty().is_tensor() {
                    Some(self.sum_to(g, ins[2]))
                } else {
                    None
                };
                vec![Some(gx), Some(gw), gb]
            }
            "aten::t" => vec![Some(self.top("aten::t", &[g]))],
            "aten::transpose.int" => {
                let d0 = self.fwd(ins[1]);
                let d1 = self.fwd(ins[2]);
                vec![Some(self.top("aten::transpose", &[g, d0, d1])), None, None]
            }
            "aten::view" | "aten::reshape" => {
                let s = self.size_of(ins[0]);
                vec![Some(self.top("aten::reshape", &[g, s])), None]
            }
            "aten::unsqueeze" => {
                let d = self.fwd(ins[1]);
                vec![Some(self.top("aten::squeeze", &[g, d])), None]
            }
            "aten::sum" | "aten::mean" => {
                let s = self.size_of(ins[0]);
                let f = self.constant(IValue::Bool(false));
                let mut ga = self.top("aten::expand", &[g, s, f]);
                if name == "aten::mean" {
                    let n = self.numel_of(ins[0]);
                    ga = self.top("aten::div", &[ga, n]);
                }
                vec![Some(ga), None]
            }
            "aten::sum.dim_IntList" | "aten::mean.dim" => {
                let (dims, keepdim) = reduced_dims(&self.f, n).unwrap_or_default();
                let mut gk = g;
                if !keepdim {
                    for d in dims {
                        let dc = self.constant(IValue::Int(d as i64));
                        gk = self.top("aten::unsqueeze", &[gk, dc]);
                    }
                }
                let s = self.size_of(ins[0]);
                let f = self.constant(IValue::Bool(false));
                let mut ga = self.top("aten::expand", &[gk, s, f]);
                if name == "aten::mean.dim" {
                    let n_in = self.numel_of(ins[0]);
                    let n_out = self.numel_of(out);
                    ga = self.top("aten::mul", &[ga, n_out]);
                    ga = self.top("aten::div", &[ga, n_in]);
                }
                vec![Some(ga), None, None, None]
            }
            "aten::softmax.int" | "aten::log_softmax.int" => {
                // softmax: y * (g - sum(g * y, dim)); log_softmax: g - exp(y) * sum(g, dim).
                let dim = self
                    .f
                    .to_ivalue(ins[1])
                    .and_then(|v| v.as_int())
                    .unwrap_or(-1);
                let dims = self.constant(IValue::int_list([dim]));
                let keep = self.constant(IValue::Bool(true));
                let none = self.constant(IValue::None);
                let one = self.constant(IValue::Int(1));
                let o = self.fwd(out);
                let ga = if name == "aten::softmax.int" {
                    let go = self.top("aten::mul", &[g, o]);
                    let s = self.top("aten::sum", &[go, dims, keep, none]);
                    let d = self.top("aten::sub", &[g, s, one]);
                    self.top("aten::mul", &[o, d])
                } else {
                    let s = self.top("aten::sum", &[g, dims, keep, none]);
                    let p = self.top("aten::exp", &[o]);
                    let ps = self.top("aten::mul", &[p, s]);
                    self.top("aten::sub", &[g, ps, one])
                };
                vec![Some(ga), None, None]
            }
            "aten::gelu" => {
                // d/dx x Φ(x) = Φ(x) + x φ(x), Φ(x) = (1 + erf(x / √2)) / 2.
                let x = self.fwd(ins[0]);
                let one = self.constant(IValue::Int(1));
                let r2 = self.constant(IValue::Double(std::f64::consts::FRAC_1_SQRT_2));
                let half = self.constant(IValue::Double(0.5));
                let mhalf = self.constant(IValue::Double(-0.5));
                let inv_sqrt_2pi = self.constant(IValue::Double(
                    0.5 * std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2,
                ));
                let xs = self.top("aten::mul", &[x, r2]);
                let e = self.top("aten::erf", &[xs]);
                let e1 = self.top("aten::add", &[e, one, one]);
                let cdf = self.top("aten::mul", &[e1, half]);
                let x2 = self.top("aten::mul", &[x, x]);
                let x2h = self.top("aten::mul", &[x2, mhalf]);
                let ex = self.top("aten::exp", &[x2h]);
                let pdf = self.top("aten::mul", &[ex, inv_sqrt_2pi]);
                let xpdf = self.top("aten::mul", &[x, pdf]);
                let d = self.top("aten::add", &[cdf, xpdf, one]);
                vec![Some(self.top("aten::mul", &[g, d])), None]
            }
            _ => vec![None; ins.len()],
        }
    }
}

/// Differentiates `sub`, whose nodes all satisfy [`has_symbolic_gradient`] (or are
/// constants). `None` when a node has no formula.
pub fn differentiate(sub: &Graph) -> Option<Gradient> {
    let mut f = sub.copy();
    let top = f.block();
    f.set_insert_point_at_end(top);
    let mut df = Graph::new();
    let dtop = df.block();
    df.set_insert_point_at_end(dtop);
    let n_real = f.outputs().len();
    for _ in 0..n_real {
        df.add_graph_input(Type::tensor());
    }
    let mut b = Builder {
        f,
        df,
        grads: HashMap::new(),
        captured: HashMap::new(),
        n_grad_inputs: n_real,
        cap_inputs: Vec::new(),
        cap_outputs: Vec::new(),
        queries: HashMap::new(),
    };
    // A value returned twice gets the sum of both gradients.
    let outs = b.f.outputs().to_vec();
    for (i, o) in outs.into_iter().enumerate() {
        let gi = b.df.inputs()[i];
        b.add_grad(o, gi);
    }
    let nodes = b.f.block_nodes(top);
    for &n in nodes.iter().rev() {
        if b.f.node(n).kind() == prim::Constant {
            continue;
        }
        let out = b.f.node(n).output(0);
        let Some(g) = b.grads.get(&out).copied() else {
            continue;
        };
        let name = node_full_name(&b.f, n)?;
        if !SYMBOLIC.contains(&name.as_str()) {
            return None;
        }
        let ins = b.f.node(n).inputs().to_vec();
        let gs = b.node_grads(n, &name, g);
        for (v, gv) in ins.into_iter().zip(gs) {
            if let Some(gv) = gv {
                if b.f.value(v).ty().is_tensor() {
                    b.add_grad(v, gv);
                }
            }
        }
    }
    let inputs = b.f.inputs().to_vec();
    for v in inputs {
        let out = match b.grads.get(&v).copied() {
            Some(g) if b.f.value(v).ty().is_tensor() => g,
            _ => b.constant(IValue::None),
        };
        b.df.register_output(out);
    }
    Some(Gradient {
        f: b.f,
        df: b.df,
        f_real_outputs: n_real,
        df_input_captured_inputs: b.cap_inputs,
        df_input_captured_outputs: b.cap_outputs,
    })
}
