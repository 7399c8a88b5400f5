//! Freezing (PyTorch's `torch.jit.freeze`) and inference optimization
//! (`torch.jit.optimize_for_inference`) of a loaded module.
//!
//! Freezing makes a new module whose `forward` (and any preserved method) has every call
//! inlined and every attribute read (`prim::GetAttr` chains from `self`) of a parameter,
//! buffer or attribute that no kept method writes replaced by a constant (tensors detached
//! from autograd); training-only branches fold away with `training == False`; the frozen
//! graph is then optimized (constant propagation, CSE, peephole, constant loop unrolling) and
//! the frozen-graph foldings run (dropout removal, convolution + batch norm, + add, * mul,
//! linear + batch norm/add/mul). Attributes still read (written ones, preserved ones, objects
//! that cannot be constants) stay on the new module; everything else is dropped, as are the
//! other methods. The module must be in eval mode.
//!
//! Inference optimization freezes a module that is not frozen yet, then pre-transposes linear
//! weights (`FrozenLinearTranspose`); PyTorch's MKLDNN conversions are not done.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::RwLock;
use ts_core::types::ClassType;
use ts_core::{prim, IValue, Object, Type};
use ts_ir::{Function, Graph, ValueId};
use ts_tensor::Error;

use crate::alias_analysis::AliasDb;
use crate::pass_manager::PassManager;

/// Options of [`freeze_module`].
#[derive(Clone, Debug, Default)]
pub struct FreezeOptions {
    /// Methods and attributes to keep (PyTorch's `preserved_attrs`).
    pub preserved_attrs: Vec<String>,
    /// Skip the numerics-changing foldings (PyTorch's `optimize_numerics=False`).
    pub no_numerics: bool,
}

/// Freezes `module` (see the module documentation).
pub fn freeze_module(module: &Arc<Object>, opts: &FreezeOptions) -> Result<Arc<Object>, Error> {
    let class = &module.class;
    if !class.is_module {
        return Err(Error::runtime(format!(
            "freezing expects a module, got an object of class '{}'",
            class.name
        )));
    }
    if let Some(i) = class.attribute_index("training") {
        if matches!(module.slots.read().get(i), Some(IValue::Bool(true))) {
            return Err(Error::runtime(
                "Freezing is currently only implemented for modules in eval mode. Please call .eval() on your module before freezing.",
            ));
        }
    }
    let mut methods: Vec<String> = vec!["forward".to_string()];
    for p in &opts.preserved_attrs {
        if class.find_method(p).is_some() && !methods.contains(p) {
            methods.push(p.clone());
        }
    }
    if class.find_method("forward").is_none() {
        methods.remove(0);
    }
    if methods.is_empty() {
        return Err(Error::runtime(format!(
            "cannot freeze '{}': it has no forward method and no preserved method",
            class.name
        )));
    }
    let preserved: HashSet<&str> = opts.preserved_attrs.iter().map(String::as_str).collect();
    let mut frozen_graphs = Vec::new();
    let mut kept_attrs: HashSet<String> = HashSet::new();
    for name in &methods {
        let m = class
            .find_method(name)
            .ok_or_else(|| Error::runtime(format!("no method '{name}'")))?;
        let f = ts_ir::as_function(&m)
            .ok_or_else(|| Error::runtime(format!("'{name}' is not a TorchScript method")))?;
        let body = f
            .graph()
            .ok_or_else(|| Error::runtime(format!("method '{name}' has no body")))?;
        let schema = f
            .try_schema()
            .ok_or_else(|| Error::runtime(format!("method '{name}' has no schema")))?;
        let mut g = body.copy();
        crate::inliner::inline_calls(&mut g);
        propagate_attributes(&mut g, module, &preserved);
        run_frozen_cleanup(&mut g);
        crate::frozen_graph_optimizations::optimize_frozen_graph(&mut g, !opts.no_numerics);
        collect_kept_attrs(&g, &mut kept_attrs);
        frozen_graphs.push((name.clone(), g, schema));
    }
    for p in &preserved {
        if class.attribute_index(p).is_some() {
            kept_attrs.insert(p.to_string());
        }
    }
    // The new class: the kept attributes (in their original order) and the frozen methods.
    let new_class = ClassType::new(class.name.clone(), true);
    let mut slots = Vec::new();
    let old_slots = module.slots.read().clone();
    for (i, a) in class.attributes().into_iter().enumerate() {
        if kept_attrs.contains(&a.name) {
            new_class.add_attribute(&a.name, a.ty.clone(), a.is_parameter, a.is_buffer);
            slots.push(old_slots.get(i).cloned().unwrap_or(IValue::None));
        }
    }
    let self_ty = Type::class(new_class.clone());
    for (name, mut g, mut schema) in frozen_graphs {
        if let Some(&s) = g.inputs().first() {
            g.set_type(s, self_ty.clone());
        }
        if let Some(a) = schema.arguments.first_mut() {
            a.ty = self_ty.clone();
        }
        let f = Function::new(format!("{}.{name}", new_class.name), g, schema);
        new_class.add_method(f);
    }
    Ok(Arc::new(Object {
        class: new_class,
        slots: RwLock::new(slots),
    }))
}

/// Replaces attribute reads of `module` (and its submodules) by constants where no node
/// writes them.
fn propagate_attributes(g: &mut Graph, module: &Arc<Object>, preserved: &HashSet<&str>) {
    let Some(&self_v) = g.inputs().first() else {
        return;
    };
    // Which object each module-typed value is, and the path it was reached by.
    let mut objects: HashMap<ValueId, (Arc<Object>, String)> = HashMap::new();
    objects.insert(self_v, (module.clone(), "self".to_string()));
    let db = AliasDb::new_frozen(g);
    // Attributes some kept node writes: (object identity, name).
    let mut written: HashSet<(usize, String)> = HashSet::new();
    let nodes = g.all_nodes();
    for &n in &nodes {
        let node = g.node(n);
        if node.kind() == prim::GetAttr {
            let (inp, out) = (node.input(0), node.output(0));
            let Some((obj, path)) = objects.get(&inp).cloned() else {
                continue;
            };
            let name = node.s(ts_core::attr::name).unwrap_or_default().to_string();
            if let Some(IValue::Object(o)) = read_attr(&obj, &name) {
                if o.class.is_module {
                    objects.insert(out, (o, format!("{path}.{name}")));
                }
            }
        } else if node.kind() == prim::SetAttr {
            let name = node.s(ts_core::attr::name).unwrap_or_default().to_string();
            match objects.get(&node.input(0)) {
                Some((o, _)) => {
                    written.insert((Arc::as_ptr(o) as usize, name));
                }
                // An unknown object of some class: any object's attribute of that name.
                None => {
                    written.insert((0, name));
                }
            }
        }
    }
    for n in nodes {
        if !g.is_alive(n) || g.node(n).kind() != prim::GetAttr {
            continue;
        }
        let (inp, out) = (g.node(n).input(0), g.node(n).output(0));
        let Some((obj, path)) = objects.get(&inp).cloned() else {
            continue;
        };
        let name = g
            .node(n)
            .s(ts_core::attr::name)
            .unwrap_or_default()
            .to_string();
        let is_root = Arc::ptr_eq(&obj, module);
        if is_root && preserved.contains(name.as_str()) {
            continue;
        }
        if written.contains(&(Arc::as_ptr(&obj) as usize, name.clone()))
            || written.contains(&(0, name.clone()))
            || db.has_writers(g, out)
        {
            continue;
        }
        let Some(value) = read_attr(&obj, &name) else {
            continue;
        };
        let value = match value {
            IValue::Tensor(t) if t.requires_grad() => IValue::Tensor(t.detach()),
            IValue::Object(_) => continue,
            v => v,
        };
        if !crate::constant_propagation::insertable(&value) {
            continue;
        }
        let c = g.with_insert_point(n, |g| g.insert_constant(&value));
        if matches!(value, IValue::None) {
            let ty = g.value(out).ty().clone();
            g.set_type(c, ty);
        }
        let _ = g.set_debug_name(c, &format!("{path}.{name}"));
        g.replace_all_uses_with(out, c);
        crate::graph_update!("Folded attribute {path}.{name} into a constant");
    }
    crate::dead_code_elimination::eliminate_dead_code(g);
}

fn read_attr(obj: &Arc<Object>, name: &str) -> Option<IValue> {
    let i = obj.class.attribute_index(name)?;
    obj.slots.read().get(i).cloned()
}

/// PyTorch's `runOptimization(graph, unroll_non_constant_loops=false,
/// const_prop_user_classes=false)` and tuple lowering, run on frozen graphs.
fn run_frozen_cleanup(g: &mut Graph) {
    let mut pm = PassManager::new();
    pm.run(
        "EliminateDeadCode",
        g,
        crate::dead_code_elimination::eliminate_dead_code,
    );
    pm.run(
        "EliminateCommonSubexpression",
        g,
        crate::common_subexpression_elimination::eliminate_common_subexpression,
    );
    pm.run("PeepholeOptimize", g, |g| {
        crate::peephole::peephole_optimize(g, false)
    });
    pm.run(
        "ConstantPropagation",
        g,
        crate::constant_propagation::constant_propagation,
    );
    pm.run(
        "ConstantPooling",
        g,
        crate::constant_pooling::constant_pooling,
    );
    if pm.run(
        "UnrollConstantLoops",
        g,
        crate::loop_unrolling::unroll_constant_loops,
    ) {
        pm.run(
            "RemoveListMutation",
            g,
            crate::remove_mutation::remove_list_mutation,
        );
        pm.run("PeepholeOptimize", g, |g| {
            crate::peephole::peephole_optimize(g, false)
        });
        pm.run(
            "ConstantPropagation",
            g,
            crate::constant_propagation::constant_propagation,
        );
    }
    pm.run(
        "EliminateCommonSubexpression",
        g,
        crate::common_subexpression_elimination::eliminate_common_subexpression,
    );
    pm.run(
        "LowerSimpleTuples",
        g,
        crate::lower_tuples::lower_simple_tuples,
    );
}

/// The root attributes the frozen graph still reads (`self.<name>` reads that remain).
fn collect_kept_attrs(g: &Graph, out: &mut HashSet<String>) {
    let Some(&self_v) = g.inputs().first() else {
        return;
    };
    for u in g.value(self_v).uses() {
        let node = g.node(u.user);
        if node.kind() == prim::GetAttr || node.kind() == prim::SetAttr {
            if let Some(name) = node.s(ts_core::attr::name) {
                out.insert(name.to_string());
            }
        }
    }
}

/// True when `module` is frozen (it has no `training` attribute, as PyTorch tells).
pub fn is_frozen(module: &Object) -> bool {
    module.class.attribute_index("training").is_none()
}

/// `torch.jit.optimize_for_inference`: freezes `module` unless it is frozen, then
/// pre-transposes the linear weights of `forward` and of `other_methods`.
pub fn optimize_for_inference(
    module: &Arc<Object>,
    other_methods: &[String],
) -> Result<Arc<Object>, Error> {
    let frozen = if is_frozen(module) {
        module.clone()
    } else {
        freeze_module(
            module,
            &FreezeOptions {
                preserved_attrs: other_methods.to_vec(),
                no_numerics: false,
            },
        )?
    };
    let mut names = vec!["forward".to_string()];
    names.extend(other_methods.iter().cloned());
    for name in names {
        let Some(m) = frozen.class.find_method(&name) else {
            continue;
        };
        let Some(f) = ts_ir::as_function(&m) else {
            continue;
        };
        let Some(g) = f.graph() else {
            continue;
        };
        let mut g = g.copy();
        if crate::frozen_linear_transpose::frozen_linear_transpose(&mut g) {
            f.set_graph(g);
        }
    }
    Ok(frozen)
}
