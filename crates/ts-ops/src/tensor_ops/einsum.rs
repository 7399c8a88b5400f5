//! `torch.einsum`: Einstein summation over any number of operands.
//!
//! The equation is parsed into one label list per operand (`...` expands to anonymous
//! broadcast labels, aligned to the right) and an output list (explicit after `->`, or the
//! labels used exactly once in alphabetical order, after the ellipsis dimensions). Each
//! operand becomes a strided view with one dimension per distinct label (a repeated label
//! takes the diagonal by summing its strides); labels no later operand or the output needs
//! are summed away, and operands are contracted left to right as batched matrix products
//! (batch = labels both share and still need, inner = shared labels no longer needed).

use std::sync::Arc;

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use super::def;
use crate::registry::{op, Registry};
use crate::stack::pop_n;

/// A label: a letter, or the k-th ellipsis dimension counted from the right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Label {
    Ellipsis(usize),
    Letter(u8),
}

fn err(msg: impl Into<String>) -> Error {
    Error::runtime(format!("einsum(): {}", msg.into()))
}

/// Parses one operand's subscripts: the letters before `...`, whether it has one, and after.
fn parse_term(s: &str) -> Result<(Vec<u8>, bool, Vec<u8>), Error> {
    let s = s.trim();
    let (before, after, ell) = match s.find("...") {
        Some(p) => (&s[..p], &s[p + 3..], true),
        None => (s, "", false),
    };
    let letters = |x: &str| -> Result<Vec<u8>, Error> {
        x.bytes()
            .filter(|c| *c != b' ')
            .map(|c| {
                if c.is_ascii_alphabetic() {
                    Ok(c)
                } else if c == b'.' {
                    Err(err("found '.' for operand that is not part of any ellipsis"))
                } else {
                    Err(err(format!(
                        "invalid subscript given at index in the equation string, subscripts must be in [a-zA-Z], got '{}'",
                        c as char
                    )))
                }
            })
            .collect()
    };
    Ok((letters(before)?, ell, letters(after)?))
}

/// The labels of an operand of `ndim` dimensions.
fn labels_of(
    term: &(Vec<u8>, bool, Vec<u8>),
    ndim: usize,
    index: usize,
) -> Result<Vec<Label>, Error> {
    let (before, ell, after) = term;
    let named = before.len() + after.len();
    if (!ell && named != ndim) || (*ell && named > ndim) {
        return Err(err(format!(
            "the number of subscripts in the equation ({named}) {} the number of dimensions ({ndim}) for operand {index}{}",
            if *ell { "is more than" } else { "does not match" },
            if *ell { "" } else { " and no ellipsis was given" }
        )));
    }
    let n_ell = ndim - named;
    let mut v: Vec<Label> = before.iter().map(|&c| Label::Letter(c)).collect();
    v.extend((0..n_ell).rev().map(Label::Ellipsis));
    v.extend(after.iter().map(|&c| Label::Letter(c)));
    Ok(v)
}

/// A tensor with one dimension per label of `labels` (distinct).
struct Term {
    t: Tensor,
    labels: Vec<Label>,
}

/// The view of `t` with one dimension per distinct label (diagonals for repeated labels).
fn distinct_view(t: &Tensor, labels: &[Label]) -> Result<Term, Error> {
    let (sizes, strides) = (t.sizes(), t.strides());
    let mut out_labels: Vec<Label> = Vec::new();
    let mut out_sizes: Vec<i64> = Vec::new();
    let mut out_strides: Vec<i64> = Vec::new();
    for (d, l) in labels.iter().enumerate() {
        match out_labels.iter().position(|x| x == l) {
            Some(k) => {
                if out_sizes[k] != sizes[d] {
                    return Err(err(format!(
                        "subscript {} is repeated for operand but the sizes don't match, {} != {}",
                        label_char(*l),
                        out_sizes[k],
                        sizes[d]
                    )));
                }
                out_strides[k] += strides[d];
            }
            None => {
                out_labels.push(*l);
                out_sizes.push(sizes[d]);
                out_strides.push(strides[d]);
            }
        }
    }
    let view = if out_labels.len() == labels.len() {
        t.clone()
    } else {
        t.as_strided(&out_sizes, &out_strides, None)?
    };
    Ok(Term {
        t: view,
        labels: out_labels,
    })
}

fn label_char(l: Label) -> char {
    match l {
        Label::Letter(c) => c as char,
        Label::Ellipsis(_) => '.',
    }
}

impl Term {
    fn size(&self, l: Label) -> i64 {
        self.labels
            .iter()
            .position(|x| *x == l)
            .map_or(1, |k| self.t.sizes()[k])
    }

    /// Sums away the labels not in `keep`.
    fn reduce(self, keep: &[Label]) -> Result<Term, Error> {
        let dims: Vec<i64> = (0..self.labels.len())
            .filter(|&k| !keep.contains(&self.labels[k]))
            .map(|k| k as i64)
            .collect();
        if dims.is_empty() {
            return Ok(self);
        }
        let labels = self
            .labels
            .iter()
            .filter(|l| keep.contains(l))
            .copied()
            .collect();
        Ok(Term {
            t: self.t.sum(Some(&dims), false, None)?,
            labels,
        })
    }

    /// The tensor permuted to `order` (labels it lacks become size-1 dimensions), reshaped to
    /// the products of the sizes of each group of `groups`.
    fn arrange(&self, groups: &[&[Label]], sizes: &dyn Fn(Label) -> i64) -> Result<Tensor, Error> {
        let order: Vec<Label> = groups.iter().flat_map(|g| g.iter().copied()).collect();
        let mut t = self.t.clone();
        // Add missing labels as trailing size-1 dimensions, then permute.
        let mut labels = self.labels.clone();
        for l in &order {
            if !labels.contains(l) {
                t = t.unsqueeze(t.dim() as i64)?;
                labels.push(*l);
            }
        }
        let perm: Vec<i64> = order
            .iter()
            .map(|l| labels.iter().position(|x| x == l).unwrap_or(0) as i64)
            .collect();
        let t = t.permute(&perm)?;
        let full: Vec<i64> = order.iter().map(|l| sizes(*l)).collect();
        let t = t.expand(&full, false)?;
        let shape: Vec<i64> = groups
            .iter()
            .map(|g| g.iter().map(|l| sizes(*l)).product())
            .collect();
        t.reshape(&shape)
    }
}

/// Contracts `a` and `b`, keeping the labels in `keep`.
fn contract(a: Term, b: Term, keep: &[Label]) -> Result<Term, Error> {
    let size = |l: Label| a.size(l).max(b.size(l));
    let both: Vec<Label> = a
        .labels
        .iter()
        .filter(|l| b.labels.contains(l))
        .copied()
        .collect();
    let batch: Vec<Label> = both.iter().filter(|l| keep.contains(l)).copied().collect();
    let inner: Vec<Label> = both.iter().filter(|l| !keep.contains(l)).copied().collect();
    let left: Vec<Label> = a
        .labels
        .iter()
        .filter(|l| !both.contains(l))
        .copied()
        .collect();
    let right: Vec<Label> = b
        .labels
        .iter()
        .filter(|l| !both.contains(l))
        .copied()
        .collect();
    let am = a.arrange(&[&batch, &left, &inner], &size)?;
    let bm = b.arrange(&[&batch, &inner, &right], &size)?;
    let prod = am.bmm(&bm)?;
    let mut labels = batch.clone();
    labels.extend(&left);
    labels.extend(&right);
    let shape: Vec<i64> = labels.iter().map(|l| size(*l)).collect();
    Ok(Term {
        t: prod.reshape(&shape)?,
        labels,
    })
}

/// `torch.einsum(equation, operands)`.
pub fn einsum(equation: &str, operands: &[Tensor]) -> Result<Tensor, Error> {
    if operands.is_empty() {
        return Err(err("must provide at least one operand"));
    }
    let (lhs, rhs) = match equation.find("->") {
        Some(p) => (&equation[..p], Some(&equation[p + 2..])),
        None => (equation, None),
    };
    let terms: Vec<_> = lhs.split(',').map(parse_term).collect::<Result<_, _>>()?;
    if terms.len() != operands.len() {
        return Err(err(if terms.len() > operands.len() {
            "fewer operands were provided than specified in the equation"
        } else {
            "more operands were provided than specified in the equation"
        }));
    }
    let labels: Vec<Vec<Label>> = terms
        .iter()
        .zip(operands)
        .enumerate()
        .map(|(i, (term, t))| labels_of(term, t.dim(), i))
        .collect::<Result<_, _>>()?;
    let n_ell = labels
        .iter()
        .map(|ls| {
            ls.iter()
                .filter(|l| matches!(l, Label::Ellipsis(_)))
                .count()
        })
        .max()
        .unwrap_or(0);
    let output: Vec<Label> = match rhs {
        Some(r) => {
            let term = parse_term(r)?;
            let mut out: Vec<Label> = term.0.iter().map(|&c| Label::Letter(c)).collect();
            if term.1 {
                out.extend((0..n_ell).rev().map(Label::Ellipsis));
            }
            out.extend(term.2.iter().map(|&c| Label::Letter(c)));
            for (k, l) in out.iter().enumerate() {
                if out[..k].contains(l) {
                    return Err(err(format!(
                        "output subscript {} appears more than once in the output",
                        label_char(*l)
                    )));
                }
                if matches!(l, Label::Letter(_)) && !labels.iter().any(|ls| ls.contains(l)) {
                    return Err(err(format!(
                        "output subscript {} does not appear in the equation for any input operand",
                        label_char(*l)
                    )));
                }
            }
            out
        }
        None => {
            let mut letters: Vec<u8> = Vec::new();
            for ls in &labels {
                for l in ls {
                    if let Label::Letter(c) = l {
                        letters.push(*c);
                    }
                }
            }
            let mut once: Vec<u8> = letters
                .iter()
                .filter(|c| letters.iter().filter(|d| d == c).count() == 1)
                .copied()
                .collect();
            once.sort_by_key(|c| (c.is_ascii_lowercase(), *c));
            let mut out: Vec<Label> = (0..n_ell).rev().map(Label::Ellipsis).collect();
            out.extend(once.into_iter().map(Label::Letter));
            out
        }
    };
    // Check that each label has one size (or 1, which broadcasts).
    let mut terms: Vec<Term> = Vec::with_capacity(operands.len());
    for (t, ls) in operands.iter().zip(&labels) {
        terms.push(distinct_view(t, ls)?);
    }
    let mut seen: Vec<(Label, i64)> = Vec::new();
    for term in &terms {
        for (k, l) in term.labels.iter().enumerate() {
            let s = term.t.sizes()[k];
            match seen.iter_mut().find(|(x, _)| x == l) {
                Some((_, have)) if *have != s && *have != 1 && s != 1 => {
                    return Err(err(format!(
                        "operands do not broadcast with remapped shapes (original->remapped): subscript {} has sizes {} and {}",
                        label_char(*l),
                        have,
                        s
                    )))
                }
                Some((_, have)) => *have = (*have).max(s),
                None => seen.push((*l, s)),
            }
        }
    }
    // Contract left to right.
    let needed_after = |i: usize, terms: &[Term]| -> Vec<Label> {
        let mut v = output.clone();
        for t in &terms[i..] {
            v.extend(t.labels.iter().copied());
        }
        v
    };
    let mut iter = terms.into_iter();
    let first = iter
        .next()
        .ok_or_else(|| err("must provide at least one operand"))?;
    let rest: Vec<Term> = iter.collect();
    let mut acc = first.reduce(&needed_after(0, &rest))?;
    for i in 0..rest.len() {
        let keep = needed_after(i + 1, &rest);
        let mut keep_b = keep.clone();
        keep_b.extend(acc.labels.iter().copied());
        let b = Term {
            t: rest[i].t.clone(),
            labels: rest[i].labels.clone(),
        }
        .reduce(&keep_b)?;
        let mut keep_a = keep.clone();
        keep_a.extend(b.labels.iter().copied());
        acc = acc.reduce(&keep_a)?;
        acc = contract(acc, b, &keep)?;
    }
    let acc = acc.reduce(&output)?;
    let size = |l: Label| acc.size(l);
    let groups: Vec<&[Label]> = output.iter().map(std::slice::from_ref).collect();
    let result = acc.arrange(&groups, &size)?;
    // `arrange` reshapes to the group sizes, which are the output's sizes.
    Ok(result)
}

/// The subscript letter of sublist label `n`: `0..26` are `A-Z`, `26..52` are `a-z` (so the
/// implicit output's alphabetical order is the labels' numeric order, as in PyTorch).
fn sublist_letter(n: i64) -> Result<char, Error> {
    match n {
        0..=25 => Ok((b'A' + n as u8) as char),
        26..=51 => Ok((b'a' + (n - 26) as u8) as char),
        _ => Err(err(format!(
            "subscript in subscript list is not within the valid range [0, 52), but got {n}"
        ))),
    }
}

fn sublist_term(v: &IValue) -> Result<String, Error> {
    let IValue::List(l) = v else {
        return Err(err(format!(
            "expected a list of subscripts but got '{}'",
            v.tag_name()
        )));
    };
    let items = l.items.read();
    items
        .iter()
        .map(|x| match x {
            IValue::Int(n) => sublist_letter(*n),
            other => Err(err(format!(
                "expected int subscripts but got '{}'",
                other.tag_name()
            ))),
        })
        .collect()
}

/// `einsum(op0, sublist0, op1, sublist1, ..., [output_sublist])`: the sublist format, turned
/// into the equivalent equation.
pub fn einsum_sublist(args: &[IValue]) -> Result<Tensor, Error> {
    let pairs = args.len() / 2;
    if pairs == 0 {
        return Err(err("must provide at least one operand"));
    }
    let mut operands = Vec::with_capacity(pairs);
    let mut terms = Vec::with_capacity(pairs);
    for k in 0..pairs {
        match &args[2 * k] {
            IValue::Tensor(t) => operands.push(t.clone()),
            other => {
                return Err(err(format!(
                    "expected operand {k} to be a Tensor but got '{}'",
                    other.tag_name()
                )))
            }
        }
        terms.push(sublist_term(&args[2 * k + 1])?);
    }
    let mut equation = terms.join(",");
    if args.len() % 2 == 1 {
        equation.push_str("->");
        equation.push_str(&sublist_term(&args[args.len() - 1])?);
    }
    einsum(&equation, &operands)
}

/// Registers `aten::einsum` and its sublist overload (a vararg schema: the count of
/// arguments comes from the node).
pub fn register(r: &Registry) {
    def(r, "aten::einsum", |a| {
        a.oints(2)?;
        einsum(a.str(0)?, &a.tensors(1)?)
    });
    if let Some(line) = crate::schema_table::schema_line("aten::einsum.sublist") {
        let _ = r.register_node_op(
            line,
            Arc::new(|g, n| {
                let count = g.node(n).inputs().len();
                Ok(op(move |s| {
                    let args = pop_n(s, count)?;
                    s.push(IValue::Tensor(einsum_sublist(&args)?));
                    Ok(())
                }))
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f64], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }

    #[test]
    fn matmul_trace_outer_and_diagonal() {
        let a = t(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        let b = t(&[1., 0., 0., 1., 1., 1.], &[3, 2]);
        let c = einsum("ij,jk->ik", &[a.clone(), b]).unwrap();
        assert_eq!(c.to_vec::<f64>(), vec![4., 5., 10., 11.]);
        let m = t(&[1., 2., 3., 4.], &[2, 2]);
        assert_eq!(
            einsum("ii", std::slice::from_ref(&m))
                .unwrap()
                .to_vec::<f64>(),
            vec![5.]
        );
        assert_eq!(
            einsum("ii->i", std::slice::from_ref(&m))
                .unwrap()
                .to_vec::<f64>(),
            vec![1., 4.]
        );
        assert_eq!(
            einsum("ij->ji", std::slice::from_ref(&m))
                .unwrap()
                .to_vec::<f64>(),
            vec![1., 3., 2., 4.]
        );
        let v = t(&[1., 2.], &[2]);
        let w = t(&[3., 4., 5.], &[3]);
        let o = einsum("i,j", &[v.clone(), w]).unwrap();
        assert_eq!(o.sizes().as_slice(), &[2, 3]);
        assert_eq!(o.to_vec::<f64>(), vec![3., 4., 5., 6., 8., 10.]);
        assert_eq!(
            einsum("...j,j->...", &[a, t(&[1., 1., 1.], &[3])])
                .unwrap()
                .to_vec::<f64>(),
            vec![6., 15.]
        );
        assert_eq!(
            einsum("i,i->", &[v.clone(), v]).unwrap().to_vec::<f64>(),
            vec![5.]
        );
        assert!(einsum("ij,jk", &[m]).is_err());
    }

    #[test]
    fn sublist_format() {
        let ints = |v: &[i64]| IValue::int_list(v.iter().copied());
        let a = t(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        let b = t(&[1., 0., 0., 1., 1., 1.], &[3, 2]);
        // torch.einsum(a, [0, 1], b, [1, 2], [0, 2]) == a @ b; without the output the
        // implicit order is the numeric one; label 30 sorts after 2.
        let args = [
            IValue::Tensor(a.clone()),
            ints(&[0, 1]),
            IValue::Tensor(b.clone()),
            ints(&[1, 2]),
            ints(&[0, 2]),
        ];
        let c = einsum_sublist(&args).unwrap();
        assert_eq!(c.to_vec::<f64>(), vec![4., 5., 10., 11.]);
        let d = einsum_sublist(&args[..4]).unwrap();
        assert_eq!(d.to_vec::<f64>(), vec![4., 5., 10., 11.]);
        let e = einsum_sublist(&[IValue::Tensor(a.clone()), ints(&[30, 2])]).unwrap();
        assert_eq!(e.sizes().as_slice(), &[3, 2]);
        assert!(einsum_sublist(&[IValue::Tensor(a), ints(&[0, 52])]).is_err());
        assert!(einsum_sublist(&[IValue::Int(1)]).is_err());
    }
}
