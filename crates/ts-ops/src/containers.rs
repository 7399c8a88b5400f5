//! List and dict operators with Python semantics (`append`, `pop`, `__getitem__` with negative
//! indices, `sort`, `dict.get`, `items`, ...). Lists and dicts are shared by reference, so
//! mutations are visible through every alias.

use std::cmp::Ordering;
use std::sync::Arc;

use ts_core::{DictKey, IValue, List, Type, TypeRef};
use ts_tensor::{Error, ErrorKind};

use crate::registry::{op, Registry, Stack};
use crate::schema_table::overload_lines;
use crate::stack::*;

fn index_error(msg: &str) -> Error {
    Error::new(ErrorKind::IndexError, msg)
}

/// Normalises a Python index for a sequence of `len`, or `None` when out of range.
pub fn norm_index(idx: i64, len: usize) -> Option<usize> {
    let l = len as i64;
    let i = if idx < 0 { idx + l } else { idx };
    if i < 0 || i >= l {
        None
    } else {
        Some(i as usize)
    }
}

/// Python slice bounds for a sequence of `len` (positive step only).
pub fn slice_indices(
    len: usize,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Vec<usize>, Error> {
    if step == 0 {
        return Err(Error::new(
            ErrorKind::ValueError,
            "slice step cannot be zero",
        ));
    }
    let l = len as i64;
    let norm = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v + l } else { v };
        v.clamp(lo, hi)
    };
    let mut out = Vec::new();
    if step > 0 {
        let s = norm(start.unwrap_or(0), 0, l);
        let e = norm(end.unwrap_or(l), 0, l);
        let mut i = s;
        while i < e {
            out.push(i as usize);
            i += step;
        }
    } else {
        let s = start.map(|v| norm(v, -1, l - 1)).unwrap_or(l - 1);
        let e = end.map(|v| norm(v, -1, l - 1)).unwrap_or(-1);
        let mut i = s;
        while i > e {
            out.push(i as usize);
            i += step;
        }
    }
    Ok(out)
}

/// Python `<` between two values of one comparable type.
pub fn py_cmp(a: &IValue, b: &IValue) -> Result<Ordering, Error> {
    Ok(match (a, b) {
        (IValue::String(x), IValue::String(y)) => x.cmp(y),
        (IValue::Tuple(x), IValue::Tuple(y)) => {
            for (p, q) in x.elements.iter().zip(&y.elements) {
                let c = py_cmp(p, q)?;
                if c != Ordering::Equal {
                    return Ok(c);
                }
            }
            x.elements.len().cmp(&y.elements.len())
        }
        (IValue::List(x), IValue::List(y)) => {
            let (x, y) = (x.items.read().clone(), y.items.read().clone());
            for (p, q) in x.iter().zip(&y) {
                let c = py_cmp(p, q)?;
                if c != Ordering::Equal {
                    return Ok(c);
                }
            }
            x.len().cmp(&y.len())
        }
        (IValue::Tensor(x), IValue::Tensor(y)) => {
            let (p, q) = (x.item()?.to_f64(), y.item()?.to_f64());
            p.partial_cmp(&q).unwrap_or(Ordering::Equal)
        }
        (IValue::Object(x), IValue::Object(_)) => {
            // Objects compare with their class's `__lt__`, as PyTorch's sort kernel does.
            let lt = x.class.find_method("__lt__").ok_or_else(|| {
                Error::runtime(format!(
                    "To sort a list of {0} it must define a __lt__ method with two inputs of type {0} that returns a bool",
                    x.class.name
                ))
            })?;
            let less = |p: &IValue, q: &IValue| -> Result<bool, Error> {
                let r = ts_core::types::invoke_method(&*lt, vec![p.clone(), q.clone()])?;
                r.as_bool()
                    .ok_or_else(|| Error::runtime("__lt__ must return a bool"))
            };
            if less(a, b)? {
                Ordering::Less
            } else if less(b, a)? {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
        _ => match (a.as_scalar(), b.as_scalar()) {
            (Some(x), Some(y)) => match (x, y) {
                (ts_tensor::Scalar::Float(_), _) | (_, ts_tensor::Scalar::Float(_)) => x
                    .to_f64()
                    .partial_cmp(&y.to_f64())
                    .unwrap_or(Ordering::Equal),
                _ => x.to_i64().cmp(&y.to_i64()),
            },
            _ => {
                return Err(Error::runtime(format!(
                    "'<' not supported between instances of '{}' and '{}'",
                    a.tag_name(),
                    b.tag_name()
                )))
            }
        },
    })
}

fn new_list_like(l: &List, items: Vec<IValue>) -> IValue {
    IValue::list(l.elem_type.clone(), items)
}

fn reg_each(
    r: &Registry,
    names: &[&str],
    f: impl Fn(&mut Stack) -> Result<(), Error> + Send + Sync + Clone + 'static,
) {
    for n in names {
        let _ = r.register_pt(n, op(f.clone()));
    }
}

/// Registers a closure under every overload of `name` accepted by `filter(schema line)`.
fn reg_family(
    r: &Registry,
    name: &str,
    filter: impl Fn(&str) -> bool,
    f: impl Fn(&mut Stack) -> Result<(), Error> + Send + Sync + Clone + 'static,
) {
    for line in overload_lines(name) {
        if filter(line) {
            r.define_op(line, op(f.clone()));
        }
    }
}

fn has_dict_self(line: &str) -> bool {
    line.contains("(Dict(")
}

fn has_list_self(line: &str) -> bool {
    let args = &line[line.find('(').map(|i| i + 1).unwrap_or(0)..];
    let first = args.split([',', ')']).next().unwrap_or("");
    first.contains("[]") && !first.contains("Tensor")
}

/// Registers the list operators.
pub fn register_lists(r: &Registry) {
    reg_each(r, &["aten::len.t", "aten::len.any"], |s| {
        let l = pop_list(s)?;
        let n = l.items.read().len() as i64;
        push(s, n);
        Ok(())
    });
    reg_each(r, &["aten::__getitem__.t", "aten::select.t"], |s| {
        let idx = pop_int(s)?;
        let l = pop_list(s)?;
        let items = l.items.read();
        let i =
            norm_index(idx, items.len()).ok_or_else(|| index_error("list index out of range"))?;
        let v = items[i].clone();
        drop(items);
        s.push(v);
        Ok(())
    });
    reg_each(r, &["aten::_set_item.t"], |s| {
        let v = pop(s)?;
        let idx = pop_int(s)?;
        let l = pop_list(s)?;
        {
            let mut items = l.items.write();
            let i = norm_index(idx, items.len())
                .ok_or_else(|| index_error("list assignment index out of range"))?;
            items[i] = v;
        }
        s.push(IValue::List(l));
        Ok(())
    });
    reg_each(r, &["aten::append.t"], |s| {
        let v = pop(s)?;
        let l = pop_list(s)?;
        l.items.write().push(v);
        s.push(IValue::List(l));
        Ok(())
    });
    reg_each(r, &["aten::pop.t"], |s| {
        let idx = pop_int(s)?;
        let l = pop_list(s)?;
        let mut items = l.items.write();
        if items.is_empty() {
            return Err(index_error("pop from empty list"));
        }
        let i =
            norm_index(idx, items.len()).ok_or_else(|| index_error("pop index out of range"))?;
        let v = items.remove(i);
        drop(items);
        s.push(v);
        Ok(())
    });
    reg_each(r, &["aten::Delete.t"], |s| {
        let idx = pop_int(s)?;
        let l = pop_list(s)?;
        let mut items = l.items.write();
        let i =
            norm_index(idx, items.len()).ok_or_else(|| index_error("list index out of range"))?;
        items.remove(i);
        Ok(())
    });
    reg_each(r, &["aten::insert.t"], |s| {
        let v = pop(s)?;
        let idx = pop_int(s)?;
        let l = pop_list(s)?;
        let mut items = l.items.write();
        let n = items.len() as i64;
        let i = if idx < 0 {
            (idx + n).max(0)
        } else {
            idx.min(n)
        };
        items.insert(i as usize, v);
        Ok(())
    });
    reg_each(r, &["aten::extend.t"], |s| {
        let other = pop_list(s)?;
        let l = pop_list(s)?;
        let add = other.items.read().clone();
        l.items.write().extend(add);
        Ok(())
    });
    reg_each(r, &["aten::add_.t"], |s| {
        let other = pop_list(s)?;
        let l = pop_list(s)?;
        let add = other.items.read().clone();
        l.items.write().extend(add);
        s.push(IValue::List(l));
        Ok(())
    });
    reg_each(r, &["aten::clear.t"], |s| {
        let l = pop_list(s)?;
        l.items.write().clear();
        Ok(())
    });
    reg_each(r, &["aten::reverse.t"], |s| {
        let l = pop_list(s)?;
        l.items.write().reverse();
        Ok(())
    });
    reg_each(r, &["aten::copy.t", "aten::list.t"], |s| {
        let l = pop_list(s)?;
        let items = l.items.read().clone();
        s.push(new_list_like(&l, items));
        Ok(())
    });
    reg_each(r, &["aten::add.t"], |s| {
        let b = pop_list(s)?;
        let a = pop_list(s)?;
        let mut items = a.items.read().clone();
        items.extend(b.items.read().iter().cloned());
        s.push(new_list_like(&a, items));
        Ok(())
    });
    reg_each(r, &["aten::mul.left_t"], |s| {
        let n = pop_int(s)?;
        let l = pop_list(s)?;
        let items = l.items.read().clone();
        let out: Vec<IValue> = (0..n.max(0)).flat_map(|_| items.iter().cloned()).collect();
        s.push(new_list_like(&l, out));
        Ok(())
    });
    reg_each(r, &["aten::mul.right_"], |s| {
        let l = pop_list(s)?;
        let n = pop_int(s)?;
        let items = l.items.read().clone();
        let out: Vec<IValue> = (0..n.max(0)).flat_map(|_| items.iter().cloned()).collect();
        s.push(new_list_like(&l, out));
        Ok(())
    });
    reg_each(r, &["aten::mul_.t"], |s| {
        let n = pop_int(s)?;
        let l = pop_list(s)?;
        {
            let mut items = l.items.write();
            let orig = items.clone();
            items.clear();
            for _ in 0..n.max(0) {
                items.extend(orig.iter().cloned());
            }
        }
        s.push(IValue::List(l));
        Ok(())
    });
    reg_each(r, &["aten::slice.t"], |s| {
        let step = pop_int(s)?;
        let end = pop_opt_int(s)?;
        let start = pop_opt_int(s)?;
        let l = pop_list(s)?;
        let items = l.items.read().clone();
        let idx = slice_indices(items.len(), start, end, step)?;
        s.push(new_list_like(
            &l,
            idx.into_iter().map(|i| items[i].clone()).collect(),
        ));
        Ok(())
    });
    // Tensor lists too (`has_list_self` leaves them out): elements compare by value.
    let with_tensor_lists = |l: &str| {
        has_list_self(l) || l.contains("(Tensor[](a!) self") || l.contains("(Tensor[](a) input)")
    };
    reg_family(r, "aten::remove", with_tensor_lists, |s| {
        let v = pop(s)?;
        let l = pop_list(s)?;
        let mut items = l.items.write();
        match items.iter().position(|x| x.py_eq(&v)) {
            Some(i) => {
                items.remove(i);
                Ok(())
            }
            None => Err(Error::new(
                ErrorKind::ValueError,
                "list.remove(x): x not in list",
            )),
        }
    });
    reg_family(
        r,
        "aten::index",
        |l| l.contains(".list_"),
        |s| {
            let v = pop(s)?;
            let l = pop_list(s)?;
            let items = l.items.read();
            match items.iter().position(|x| x.py_eq(&v)) {
                Some(i) => {
                    drop(items);
                    push(s, i as i64);
                    Ok(())
                }
                None => Err(Error::new(
                    ErrorKind::ValueError,
                    "'list.index(x)': x not in list",
                )),
            }
        },
    );
    let count = |s: &mut Stack| {
        let v = pop(s)?;
        let l = pop_list(s)?;
        let n = l.items.read().iter().filter(|x| x.py_eq(&v)).count() as i64;
        push(s, n);
        Ok(())
    };
    reg_family(r, "aten::count", has_list_self, count);
    // Tensors count by value (`[t(4), t(1), t(4)].count(t(4)) == 2`).
    reg_each(r, &["aten::count.Tensor"], count);
    reg_family(
        r,
        "aten::__contains__",
        |l| l.contains("_list("),
        |s| {
            let v = pop(s)?;
            let l = pop_list(s)?;
            let found = l.items.read().iter().any(|x| x.py_eq(&v));
            push(s, found);
            Ok(())
        },
    );
    reg_family(r, "aten::sort", with_tensor_lists, |s| {
        let reverse = pop_bool(s)?;
        let l = pop_list(s)?;
        let mut items = l.items.read().clone();
        sort_values(&mut items, reverse)?;
        *l.items.write() = items;
        Ok(())
    });
    reg_family(r, "aten::sorted", with_tensor_lists, |s| {
        let l = pop_list(s)?;
        let mut items = l.items.read().clone();
        sort_values(&mut items, false)?;
        s.push(new_list_like(&l, items));
        Ok(())
    });
    for (name, is_eq) in [("aten::eq", true), ("aten::ne", false)] {
        reg_family(
            r,
            name,
            |l| l.contains("_list("),
            move |s| {
                let b = pop(s)?;
                let a = pop(s)?;
                push(s, a.py_eq(&b) == is_eq);
                Ok(())
            },
        );
    }
    reg_family(r, "aten::sum", has_list_self, |s| {
        let l = pop_list(s)?;
        let items = l.items.read();
        let all_int = items
            .iter()
            .all(|v| matches!(v, IValue::Int(_) | IValue::Bool(_)));
        let out = if all_int {
            IValue::Int(
                items
                    .iter()
                    .map(|v| v.as_scalar().map(|x| x.to_i64()).unwrap_or(0))
                    .fold(0i64, i64::wrapping_add),
            )
        } else {
            IValue::Double(
                items
                    .iter()
                    .map(|v| v.as_scalar().map(|x| x.to_f64()).unwrap_or(0.0))
                    .sum(),
            )
        };
        drop(items);
        s.push(out);
        Ok(())
    });
    for (name, want) in [
        ("prim::min", Ordering::Less),
        ("prim::max", Ordering::Greater),
    ] {
        reg_family(
            r,
            name,
            |l| l.contains(".self_"),
            move |s| {
                let l = pop_list(s)?;
                let items = l.items.read().clone();
                let mut best = items.first().cloned().ok_or_else(|| {
                    Error::new(
                        ErrorKind::ValueError,
                        format!(
                            "{}() arg is an empty sequence",
                            if want == Ordering::Less { "min" } else { "max" }
                        ),
                    )
                })?;
                for v in &items[1..] {
                    if py_cmp(v, &best)? == want {
                        best = v.clone();
                    }
                }
                s.push(best);
                Ok(())
            },
        );
        reg_family(
            r,
            name,
            |l| l.contains("_list("),
            move |s| {
                let b = pop_list(s)?;
                let a = pop_list(s)?;
                let (x, y) = (a.items.read().clone(), b.items.read().clone());
                for (p, q) in x.iter().zip(&y) {
                    let c = py_cmp(p, q)?;
                    if c != Ordering::Equal {
                        let pick = if c == want { &a } else { &b };
                        let items = pick.items.read().clone();
                        s.push(new_list_like(pick, items));
                        return Ok(());
                    }
                }
                let pick = if (x.len().cmp(&y.len())) == want {
                    &a
                } else {
                    &b
                };
                let items = pick.items.read().clone();
                s.push(new_list_like(pick, items));
                Ok(())
            },
        );
    }
}

/// Python's stable sort of comparable values.
pub fn sort_values(items: &mut [IValue], reverse: bool) -> Result<(), Error> {
    // A merge sort of our own: the comparison may run user code (`__lt__`) or see NaNs, so it
    // need not be a total order, and `slice::sort_by` may panic on such comparators.
    let before = |a: &IValue, b: &IValue| -> Result<bool, Error> {
        let o = py_cmp(a, b)?;
        Ok(if reverse {
            o == Ordering::Greater
        } else {
            o == Ordering::Less
        })
    };
    let mut buf: Vec<IValue> = items.to_vec();
    merge_sort(&mut buf, &before)?;
    items.clone_from_slice(&buf);
    Ok(())
}

/// Stable top-down merge sort with a fallible "strictly before" test.
fn merge_sort(
    v: &mut Vec<IValue>,
    before: &dyn Fn(&IValue, &IValue) -> Result<bool, Error>,
) -> Result<(), Error> {
    if v.len() < 2 {
        return Ok(());
    }
    let mut right = v.split_off(v.len() / 2);
    merge_sort(v, before)?;
    merge_sort(&mut right, before)?;
    let left = std::mem::take(v);
    v.reserve(left.len() + right.len());
    let (mut l, mut r) = (left.into_iter().peekable(), right.into_iter().peekable());
    loop {
        let take_right = match (l.peek(), r.peek()) {
            (Some(a), Some(b)) => before(b, a)?,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (None, None) => break,
        };
        let next = if take_right { r.next() } else { l.next() };
        v.extend(next);
    }
    Ok(())
}

fn key_error(k: &IValue) -> Error {
    Error::new(ErrorKind::KeyError, k.to_display_string())
}

/// Registers the dict operators.
pub fn register_dicts(r: &Registry) {
    // `torch.dict()` (saved code's empty `dict()`): an empty dict of the node's output type,
    // `Dict(str, Tensor)` unless the graph refined it.
    if let Some(line) = crate::schema_table::schema_line("aten::dict") {
        let _ = r.register_node_op(
            line,
            Arc::new(|g, n| {
                let ty = g.value(g.node(n).output(0)).ty().clone();
                let (k, v) = match &*ty {
                    Type::Dict(k, v) => (k.clone(), v.clone()),
                    _ => (Type::string(), Type::tensor()),
                };
                Ok(op(move |s| {
                    s.push(IValue::dict(k.clone(), v.clone(), Vec::new()));
                    Ok(())
                }))
            }),
        );
    }
    reg_family(r, "aten::len", has_dict_self, |s| {
        let d = pop_dict(s)?;
        let n = d.entries.read().len() as i64;
        push(s, n);
        Ok(())
    });
    reg_family(r, "aten::__getitem__", has_dict_self, |s| {
        let k = pop(s)?;
        let d = pop_dict(s)?;
        let v = d
            .entries
            .read()
            .get(&DictKey(k.clone()))
            .cloned()
            .ok_or_else(|| key_error(&k))?;
        s.push(v);
        Ok(())
    });
    reg_family(r, "aten::_set_item", has_dict_self, |s| {
        let v = pop(s)?;
        let k = pop(s)?;
        let d = pop_dict(s)?;
        d.entries.write().insert(DictKey(k), v);
        Ok(())
    });
    reg_family(r, "aten::__contains__", has_dict_self, |s| {
        let k = pop(s)?;
        let d = pop_dict(s)?;
        let found = d.entries.read().contains_key(&DictKey(k));
        push(s, found);
        Ok(())
    });
    reg_family(
        r,
        "aten::get",
        |l| has_dict_self(l) && !l.contains("default_"),
        |s| {
            let k = pop(s)?;
            let d = pop_dict(s)?;
            let v = d
                .entries
                .read()
                .get(&DictKey(k))
                .cloned()
                .unwrap_or(IValue::None);
            s.push(v);
            Ok(())
        },
    );
    reg_family(
        r,
        "aten::get",
        |l| l.contains("default_"),
        |s| {
            let default = pop(s)?;
            let k = pop(s)?;
            let d = pop_dict(s)?;
            let v = d
                .entries
                .read()
                .get(&DictKey(k))
                .cloned()
                .unwrap_or(default);
            s.push(v);
            Ok(())
        },
    );
    reg_family(r, "aten::setdefault", has_dict_self, |s| {
        let default = pop(s)?;
        let k = pop(s)?;
        let d = pop_dict(s)?;
        let v = d
            .entries
            .write()
            .entry(DictKey(k))
            .or_insert(default)
            .clone();
        s.push(v);
        Ok(())
    });
    reg_family(
        r,
        "aten::pop",
        |l| has_dict_self(l) && !l.contains("default_"),
        |s| {
            let k = pop(s)?;
            let d = pop_dict(s)?;
            let v = d
                .entries
                .write()
                .shift_remove(&DictKey(k.clone()))
                .ok_or_else(|| key_error(&k))?;
            s.push(v);
            Ok(())
        },
    );
    reg_family(
        r,
        "aten::pop",
        |l| l.contains("Dict_default_"),
        |s| {
            let default = pop(s)?;
            let k = pop(s)?;
            let d = pop_dict(s)?;
            let v = d
                .entries
                .write()
                .shift_remove(&DictKey(k))
                .unwrap_or(default);
            s.push(v);
            Ok(())
        },
    );
    reg_family(r, "aten::Delete", has_dict_self, |s| {
        let k = pop(s)?;
        let d = pop_dict(s)?;
        let removed = d.entries.write().shift_remove(&DictKey(k.clone()));
        removed.map(|_| ()).ok_or_else(|| key_error(&k))
    });
    reg_family(r, "aten::popitem", has_dict_self, |s| {
        let d = pop_dict(s)?;
        let (k, v) = d
            .entries
            .write()
            .pop()
            .ok_or_else(|| Error::new(ErrorKind::KeyError, "popitem(): dictionary is empty"))?;
        s.push(IValue::tuple(vec![k.0, v]));
        Ok(())
    });
    reg_family(r, "aten::keys", has_dict_self, |s| {
        let d = pop_dict(s)?;
        let keys: Vec<IValue> = d.entries.read().keys().map(|k| k.0.clone()).collect();
        s.push(IValue::list(d.key_type.clone(), keys));
        Ok(())
    });
    reg_family(r, "aten::values", has_dict_self, |s| {
        let d = pop_dict(s)?;
        let vals: Vec<IValue> = d.entries.read().values().cloned().collect();
        s.push(IValue::list(d.value_type.clone(), vals));
        Ok(())
    });
    reg_family(r, "aten::items", has_dict_self, |s| {
        let d = pop_dict(s)?;
        let items: Vec<IValue> = d
            .entries
            .read()
            .iter()
            .map(|(k, v)| IValue::tuple(vec![k.0.clone(), v.clone()]))
            .collect();
        let ty: TypeRef = Type::tuple(vec![d.key_type.clone(), d.value_type.clone()]);
        s.push(IValue::list(ty, items));
        Ok(())
    });
    reg_family(r, "aten::clear", has_dict_self, |s| {
        let d = pop_dict(s)?;
        d.entries.write().clear();
        Ok(())
    });
    reg_family(r, "aten::update", has_dict_self, |s| {
        let other = pop_dict(s)?;
        let d = pop_dict(s)?;
        if Arc::ptr_eq(&d, &other) {
            return Ok(());
        }
        let add: Vec<(DictKey, IValue)> = other
            .entries
            .read()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        d.entries.write().extend(add);
        Ok(())
    });
    let copy = |s: &mut Stack| {
        let d = pop_dict(s)?;
        let entries: Vec<(IValue, IValue)> = d
            .entries
            .read()
            .iter()
            .map(|(k, v)| (k.0.clone(), v.clone()))
            .collect();
        s.push(IValue::dict(
            d.key_type.clone(),
            d.value_type.clone(),
            entries,
        ));
        Ok(())
    };
    reg_family(r, "aten::copy", has_dict_self, copy);
    reg_family(r, "aten::dict", has_dict_self, copy);
    reg_family(
        r,
        "aten::dict",
        |l| {
            l.contains("((str, tVal)[]")
                || l.contains("((int, tVal)[]")
                || l.contains(", tVal)[] inputs")
        },
        |s| {
            let l = pop_list(s)?;
            let items = l.items.read().clone();
            let (kt, vt) = match &*l.elem_type {
                Type::Tuple(t) if t.elements.len() == 2 => {
                    (t.elements[0].clone(), t.elements[1].clone())
                }
                _ => (Type::any(), Type::any()),
            };
            let mut entries = Vec::new();
            for it in items {
                let t = it
                    .as_tuple()
                    .ok_or_else(|| Error::runtime("dict() expects a list of pairs"))?;
                entries.push((t.elements[0].clone(), t.elements[1].clone()));
            }
            s.push(IValue::dict(kt, vt, entries));
            Ok(())
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(v: &[IValue]) -> String {
        IValue::tuple(v.to_vec()).to_display_string()
    }

    #[test]
    fn sort_is_stable_and_never_panics() {
        let t = |a: i64, b: &str| IValue::tuple(vec![IValue::Int(a), IValue::str(b)]);
        let mut v = vec![t(2, "a"), t(1, "b"), t(2, "c"), t(1, "d")];
        sort_values(&mut v, false).unwrap();
        assert_eq!(show(&v), "((1, b), (1, d), (2, a), (2, c))");
        sort_values(&mut v, true).unwrap();
        assert_eq!(show(&v), "((2, c), (2, a), (1, d), (1, b))");
        // NaNs make the comparison inconsistent; sorting still finishes without a panic.
        let mut v: Vec<IValue> = (0..200)
            .map(|i| {
                IValue::Double(if i % 3 == 0 {
                    f64::NAN
                } else {
                    (i * 7 % 13) as f64
                })
            })
            .collect();
        sort_values(&mut v, false).unwrap();
        assert_eq!(v.len(), 200);
        // Values that cannot be compared are an error, not a panic.
        let mut v = vec![IValue::Int(1), IValue::str("a")];
        assert!(sort_values(&mut v, false).is_err());
    }
}
