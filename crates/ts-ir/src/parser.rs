//! Reads the printed graph text back into a [`Graph`] (PyTorch's irparser):
//!
//! ```text
//! graph    := 'graph' '(' [var_t {',' var_t}] ')' ':' {stmt} 'return' '(' [var {',' var}] ')'
//! var_t    := var [':' type]            (the type defaults to Tensor)
//! stmt     := [var_t {',' var_t}] '=' ns '::' name ['[' attr {',' attr} ']'] '(' [var {',' var}] ')' {block}
//! block    := 'block' N '(' [var_t {',' var_t}] ')' ':' {stmt} '->' '(' [var {',' var}] ')'
//! ```
//! Comments (`# ...`) run to the end of the line and are ignored.

use std::collections::HashMap;
use std::sync::Arc;

use ts_core::{parse_type_prefix, IValue, ParseError, Symbol, Type, TypeRef};
use ts_tensor::{DType, Tensor};

use crate::attribute::AttributeValue;
use crate::graph::{BlockId, Graph, ValueId};

/// Parses IR text into a new graph.
pub fn parse_ir(text: &str) -> Result<Graph, ParseError> {
    let mut p = IrParser {
        text,
        pos: 0,
        g: Graph::new(),
        vars: HashMap::new(),
        depth: 0,
    };
    p.parse_graph()?;
    Ok(p.g)
}

/// Parses IR text and also returns the map from names to values (PyTorch's `vmap`).
pub fn parse_ir_with_names(text: &str) -> Result<(Graph, HashMap<String, ValueId>), ParseError> {
    let mut p = IrParser {
        text,
        pos: 0,
        g: Graph::new(),
        vars: HashMap::new(),
        depth: 0,
    };
    p.parse_graph()?;
    Ok((p.g, p.vars))
}

struct IrParser<'a> {
    text: &'a str,
    pos: usize,
    g: Graph,
    vars: HashMap<String, ValueId>,
    /// How many blocks and attribute lists enclose the position.
    depth: usize,
}

/// How deeply blocks and attribute lists may nest; deeper text is an error, not a stack
/// overflow.
const MAX_NESTING: usize = 200;

impl<'a> IrParser<'a> {
    fn err(&self, msg: impl Into<String>) -> ParseError {
        ParseError::at(self.text, self.pos, msg)
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    /// Skips spaces, newlines and comments.
    fn skip_ws(&mut self) {
        loop {
            let r = self.rest();
            let trimmed = r.trim_start();
            self.pos += r.len() - trimmed.len();
            if trimmed.starts_with('#') {
                let end = trimmed.find('\n').unwrap_or(trimmed.len());
                self.pos += end;
            } else {
                break;
            }
        }
    }

    fn peek_is(&mut self, s: &str) -> bool {
        self.skip_ws();
        self.rest().starts_with(s)
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.peek_is(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, s: &str) -> Result<(), ParseError> {
        if self.eat(s) {
            Ok(())
        } else {
            let found: String = self.rest().chars().take(12).collect();
            Err(self.err(format!(
                "expected '{s}' but found '{}'",
                found.split('\n').next().unwrap_or("")
            )))
        }
    }

    fn ident(&mut self) -> Result<String, ParseError> {
        self.skip_ws();
        let r = self.rest();
        let len = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(r.len());
        if len == 0 {
            return Err(self.err("expected an identifier"));
        }
        let s = r[..len].to_string();
        self.pos += len;
        Ok(s)
    }

    fn var_name(&mut self) -> Result<String, ParseError> {
        self.expect("%")?;
        let r = self.rest();
        let len = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(r.len());
        if len == 0 {
            return Err(self.err("expected a value name after '%'"));
        }
        let s = r[..len].to_string();
        self.pos += len;
        Ok(s)
    }

    fn parse_type_here(&mut self) -> Result<TypeRef, ParseError> {
        self.skip_ws();
        let (t, end) = parse_type_prefix(self.text, self.pos, None)?;
        self.pos = end;
        Ok(t)
    }

    fn var_decl(&mut self) -> Result<(String, TypeRef), ParseError> {
        let name = self.var_name()?;
        let ty = if self.eat(":") {
            self.parse_type_here()?
        } else {
            Type::tensor()
        };
        Ok((name, ty))
    }

    fn define(&mut self, name: &str, v: ValueId) {
        self.g.set_name_unchecked(v, name);
        self.vars.insert(name.to_string(), v);
    }

    fn use_var(&mut self) -> Result<ValueId, ParseError> {
        let start = self.pos;
        let name = self.var_name()?;
        self.vars
            .get(&name)
            .copied()
            .ok_or_else(|| ParseError::at(self.text, start, format!("undefined value %{name}")))
    }

    fn var_list(&mut self) -> Result<Vec<ValueId>, ParseError> {
        self.expect("(")?;
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            out.push(self.use_var()?);
            if self.eat(",") {
                continue;
            }
            self.expect(")")?;
            return Ok(out);
        }
    }

    fn decl_list(&mut self) -> Result<Vec<(String, TypeRef)>, ParseError> {
        self.expect("(")?;
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            out.push(self.var_decl()?);
            if self.eat(",") {
                continue;
            }
            self.expect(")")?;
            return Ok(out);
        }
    }

    fn parse_graph(&mut self) -> Result<(), ParseError> {
        let kw = self.ident()?;
        if kw != "graph" {
            return Err(self.err(format!("expected 'graph' but found '{kw}'")));
        }
        let top = self.g.block();
        for (name, ty) in self.decl_list()? {
            let v = self.g.add_graph_input(ty);
            self.define(&name, v);
        }
        self.expect(":")?;
        self.parse_stmts(top)?;
        if !self.eat("return") {
            return Err(self.err("expected a statement or 'return'"));
        }
        for v in self.var_list()? {
            self.g.register_output(v);
        }
        // `with prim::fork_0 = graph(...)` sections define the subgraphs of numbered nodes.
        while self.eat("with") {
            let start = self.pos;
            let ns = self.ident()?;
            self.expect("::")?;
            let label = self.ident()?;
            self.expect("=")?;
            let sub_start = self.pos;
            let sub_end = self.text[sub_start..]
                .find("\nwith ")
                .map(|i| sub_start + i + 1)
                .unwrap_or(self.text.len());
            let sub = parse_ir(&self.text[sub_start..sub_end]).map_err(|mut e| {
                e.line += self.text[..sub_start].matches('\n').count();
                e
            })?;
            self.pos = sub_end;
            let full = format!("{ns}::{label}");
            let target = self
                .g
                .all_nodes()
                .into_iter()
                .find(|&n| self.g.node(n).kind().qualified() == full);
            let (Some(n), Some((base, _))) = (target, label.rsplit_once('_')) else {
                return Err(ParseError::at(
                    self.text,
                    start,
                    format!("no node {full} for this subgraph"),
                ));
            };
            self.g.set_kind(n, Symbol::from_parts(&ns, base));
            self.g.set_attr(
                n,
                Symbol::attr("Subgraph"),
                AttributeValue::Graph(Arc::new(sub)),
            );
        }
        self.skip_ws();
        if self.pos < self.text.len() {
            return Err(self.err("unexpected text after the graph's return"));
        }
        Ok(())
    }

    /// Statements until `return`, `->` or the end.
    /// Runs `f` one nesting level deeper, refusing text nested past [`MAX_NESTING`].
    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        if self.depth >= MAX_NESTING {
            return Err(self.err(format!(
                "the graph is nested too deeply (more than {MAX_NESTING} levels)"
            )));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn parse_stmts(&mut self, b: BlockId) -> Result<(), ParseError> {
        self.nested(|p| p.parse_stmts_inner(b))
    }

    fn parse_stmts_inner(&mut self, b: BlockId) -> Result<(), ParseError> {
        loop {
            self.skip_ws();
            let r = self.rest();
            if r.is_empty() || r.starts_with("return") || r.starts_with("->") {
                return Ok(());
            }
            self.parse_stmt(b)?;
        }
    }

    fn parse_stmt(&mut self, b: BlockId) -> Result<(), ParseError> {
        let mut outs = Vec::new();
        if !self.peek_is("=") {
            loop {
                outs.push(self.var_decl()?);
                if self.eat(",") {
                    continue;
                }
                break;
            }
        }
        self.expect("=")?;
        let kind_start = self.pos;
        let ns = self.ident()?;
        if !self.eat("::") {
            return Err(ParseError::at(
                self.text,
                kind_start,
                "expected a node kind 'ns::name'",
            ));
        }
        let name = self.ident()?;
        let kind = Symbol::from_parts(&ns, &name);
        let mut attrs = Vec::new();
        let first_ty = outs.first().map(|(_, t)| t.clone());
        if self.eat("[") {
            loop {
                let key = self.ident()?;
                self.expect("=")?;
                let v = self.attr_value(first_ty.as_ref())?;
                attrs.push((Symbol::attr(&key), v));
                if self.eat(",") {
                    continue;
                }
                self.expect("]")?;
                break;
            }
        }
        let inputs = self.var_list()?;
        let n = self.g.create(kind, &inputs, 0);
        for (k, v) in attrs {
            self.g.set_attr(n, k, v);
        }
        self.g.append_node(b, n);
        for (oname, ty) in outs {
            let v = self.g.add_output(n, ty);
            self.define(&oname, v);
        }
        // Nested blocks.
        loop {
            self.skip_ws();
            if !self.rest().starts_with("block") {
                break;
            }
            let _label = self.ident()?;
            let blk = self.g.add_block(n);
            for (bname, ty) in self.decl_list()? {
                let v = self.g.add_block_input(blk, ty);
                self.define(&bname, v);
            }
            self.expect(":")?;
            self.parse_stmts(blk)?;
            self.expect("->")?;
            for v in self.var_list()? {
                self.g.add_block_output(blk, v);
            }
        }
        Ok(())
    }

    /// An attribute value; `out_ty` is the first output's type (sizes `<Tensor>` constants).
    fn attr_value(&mut self, out_ty: Option<&TypeRef>) -> Result<AttributeValue, ParseError> {
        self.nested(|p| p.attr_value_inner(out_ty))
    }

    fn attr_value_inner(&mut self, out_ty: Option<&TypeRef>) -> Result<AttributeValue, ParseError> {
        self.skip_ws();
        if self.rest().starts_with('[') {
            self.pos += 1;
            let mut items: Vec<AttributeValue> = Vec::new();
            if !self.eat("]") {
                loop {
                    items.push(self.literal(None)?);
                    if self.eat(",") {
                        continue;
                    }
                    self.expect("]")?;
                    break;
                }
            }
            return self.classify_list(items);
        }
        self.literal(out_ty)
    }

    fn classify_list(&self, items: Vec<AttributeValue>) -> Result<AttributeValue, ParseError> {
        macro_rules! all_of {
            ($pat:pat => $e:expr, $ctor:path) => {
                if !items.is_empty() && items.iter().all(|a| matches!(a, $pat)) {
                    return Ok($ctor(
                        items
                            .iter()
                            .filter_map(|a| match a {
                                $pat => Some($e),
                                _ => None,
                            })
                            .collect(),
                    ));
                }
            };
        }
        if items.is_empty() {
            return Ok(AttributeValue::Ints(vec![]));
        }
        all_of!(AttributeValue::Int(_i) => *_i, AttributeValue::Ints);
        all_of!(AttributeValue::Float(_f) => *_f, AttributeValue::Floats);
        all_of!(AttributeValue::String(_x) => _x.clone(), AttributeValue::Strings);
        all_of!(AttributeValue::Type(_t) => _t.clone(), AttributeValue::Types);
        all_of!(AttributeValue::Tensor(_t) => _t.clone(), AttributeValue::Tensors);
        let vals: Option<Vec<IValue>> = items.iter().map(|a| a.to_ivalue()).collect();
        match vals {
            Some(v) => {
                let elem = ts_core::unify_type_list(
                    &v.iter().map(|x| x.type_of()).collect::<Vec<_>>(),
                    false,
                )
                .unwrap_or_else(Type::any);
                Ok(AttributeValue::IValue(IValue::list(elem, v)))
            }
            None => Err(self.err("unsupported list attribute")),
        }
    }

    /// One literal: number, string, None/True/False, tuple, list, dict, tensor, annotate(...),
    /// or a type.
    fn literal(&mut self, out_ty: Option<&TypeRef>) -> Result<AttributeValue, ParseError> {
        self.nested(|p| p.literal_inner(out_ty))
    }

    fn literal_inner(&mut self, out_ty: Option<&TypeRef>) -> Result<AttributeValue, ParseError> {
        self.skip_ws();
        let r = self.rest();
        if r.starts_with('"') || r.starts_with('\'') {
            let (s, end) = ts_core::scanner::lex_string(self.text, self.pos)?;
            self.pos = end;
            return Ok(AttributeValue::String(s));
        }
        if r.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.' || c == '(') {
            if let Some(t) = self.try_aten_tensor()? {
                return Ok(AttributeValue::Tensor(t));
            }
        }
        if r.starts_with("<Tensor>") {
            self.pos += "<Tensor>".len();
            let (sizes, dtype) = match out_ty.map(|t| &**t) {
                Some(Type::Tensor(tt)) => (
                    tt.sizes
                        .as_ref()
                        .map(|s| s.iter().map(|d| d.unwrap_or(0)).collect::<Vec<_>>())
                        .unwrap_or_default(),
                    tt.dtype.unwrap_or(DType::Float32),
                ),
                _ => (vec![], DType::Float32),
            };
            return Tensor::zeros(&sizes, dtype)
                .map(AttributeValue::Tensor)
                .map_err(|e| self.err(e.message));
        }
        for (kw, v) in [
            ("None", IValue::None),
            ("True", IValue::Bool(true)),
            ("False", IValue::Bool(false)),
        ] {
            if r.starts_with(kw)
                && !r[kw.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            {
                self.pos += kw.len();
                return Ok(AttributeValue::IValue(v));
            }
        }
        if r.starts_with("annotate(") {
            self.pos += "annotate(".len();
            let (ty, end) = ts_core::parse_annotation_prefix(self.text, self.pos, None)?;
            self.pos = end;
            self.expect(",")?;
            let inner = self.literal(None)?;
            self.expect(")")?;
            let v = inner
                .to_ivalue()
                .ok_or_else(|| self.err("annotate() needs a list or dict"))?;
            return Ok(AttributeValue::IValue(retype(v, &ty)));
        }
        if r.starts_with('(') {
            self.pos += 1;
            let mut items = Vec::new();
            if !self.eat(")") {
                loop {
                    let lit = self.literal(None)?;
                    items.push(
                        lit.to_ivalue()
                            .ok_or_else(|| self.err("unsupported tuple element"))?,
                    );
                    if self.eat(",") {
                        if self.eat(")") {
                            break;
                        }
                        continue;
                    }
                    self.expect(")")?;
                    break;
                }
            }
            return Ok(AttributeValue::IValue(IValue::tuple(items)));
        }
        if r.starts_with('[') {
            self.pos += 1;
            let mut items = Vec::new();
            if !self.eat("]") {
                loop {
                    items.push(self.literal(None)?);
                    if self.eat(",") {
                        continue;
                    }
                    self.expect("]")?;
                    break;
                }
            }
            let l = self.classify_list(items)?;
            return Ok(AttributeValue::IValue(
                l.to_ivalue().ok_or_else(|| self.err("unsupported list"))?,
            ));
        }
        if r.starts_with('{') {
            self.pos += 1;
            if self.eat("}") {
                return Ok(AttributeValue::IValue(IValue::dict(
                    Type::any(),
                    Type::any(),
                    vec![],
                )));
            }
            let first = self.literal(None)?;
            if self.eat("}") {
                // `{v}`: a one-element tensor.
                let t = match first {
                    AttributeValue::Int(i) => Tensor::from_vec(vec![i], &[]),
                    AttributeValue::Float(d) => Tensor::from_vec(vec![d as f32], &[]),
                    _ => return Err(self.err("expected a number in a tensor constant")),
                }
                .map_err(|e| self.err(e.message))?;
                return Ok(AttributeValue::Tensor(t));
            }
            let mut entries = Vec::new();
            let mut key = first;
            loop {
                self.expect(":")?;
                let val = self.literal(None)?;
                let k = key
                    .to_ivalue()
                    .ok_or_else(|| self.err("unsupported dict key"))?;
                let v = val
                    .to_ivalue()
                    .ok_or_else(|| self.err("unsupported dict value"))?;
                entries.push((k, v));
                if self.eat(",") {
                    key = self.literal(None)?;
                    continue;
                }
                self.expect("}")?;
                break;
            }
            let kt = entries[0].0.type_of();
            let vt = entries[0].1.type_of();
            return Ok(AttributeValue::IValue(IValue::dict(kt, vt, entries)));
        }
        if r.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
            || r.starts_with("inf")
            || r.starts_with("nan")
        {
            return Ok(match self.number()? {
                IValue::Int(i) => AttributeValue::Int(i),
                IValue::Double(d) => AttributeValue::Float(d),
                other => AttributeValue::IValue(other),
            });
        }
        Ok(AttributeValue::Type(self.parse_type_here()?))
    }

    fn number(&mut self) -> Result<IValue, ParseError> {
        self.skip_ws();
        let start = self.pos;
        let r = self.rest();
        let mut len = 0;
        let b = r.as_bytes();
        if len < b.len() && b[len] == b'-' {
            len += 1;
        }
        if r[len..].starts_with("inf") {
            self.pos += len + 3;
            return Ok(IValue::Double(if len == 1 {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }));
        }
        if r[len..].starts_with("nan") {
            self.pos += len + 3;
            return Ok(IValue::Double(f64::NAN));
        }
        while len < b.len() {
            let c = b[len] as char;
            let prev = if len > 0 { b[len - 1] as char } else { ' ' };
            if c.is_ascii_digit()
                || c == '.'
                || c == 'e'
                || c == 'E'
                || c == 'j'
                || ((c == '-' || c == '+') && (prev == 'e' || prev == 'E'))
            {
                len += 1;
            } else {
                break;
            }
        }
        let t = &r[..len];
        self.pos += len;
        if let Some(im) = t.strip_suffix('j') {
            let v: f64 = im
                .parse()
                .map_err(|_| ParseError::at(self.text, start, format!("invalid number '{t}'")))?;
            return Ok(IValue::complex(0.0, v));
        }
        if t.contains(['.', 'e', 'E']) {
            t.parse::<f64>()
                .map(IValue::Double)
                .map_err(|_| ParseError::at(self.text, start, format!("invalid number '{t}'")))
        } else {
            t.parse::<i64>()
                .map(IValue::Int)
                .map_err(|_| ParseError::at(self.text, start, format!("invalid number '{t}'")))
        }
    }

    /// ATen tensor printing inside an attribute: numbers followed by `[ CPU<T>Type{dims} ]`.
    fn try_aten_tensor(&mut self) -> Result<Option<Tensor>, ParseError> {
        let r = self.rest();
        let Some(open) = r.find("[ CPU") else {
            return Ok(None);
        };
        // Only when every character before it is part of a number list.
        let prefix = &r[..open];
        if !prefix
            .chars()
            .all(|c| c.is_ascii_digit() || " .-+e\n(),=".contains(c))
            || prefix.trim().is_empty()
        {
            return Ok(None);
        }
        let Some(close) = r[open..].find(" ]") else {
            return Ok(None);
        };
        let desc = &r[open + 2..open + close];
        let (tname, dims) = desc
            .split_once('{')
            .ok_or_else(|| self.err("malformed tensor constant"))?;
        let dt_name = tname.trim_start_matches("CPU").trim_end_matches("Type");
        let dtype = DType::from_scalar_type_name(dt_name)
            .ok_or_else(|| self.err(format!("unknown tensor type '{tname}'")))?;
        let sizes: Vec<i64> = dims
            .trim_end_matches('}')
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.trim().parse::<i64>())
            .collect::<Result<_, _>>()
            .map_err(|_| self.err("malformed tensor constant sizes"))?;
        // Skip the `(1,.,.) =` headers of matrices in tensors of rank > 2.
        let values: Vec<f64> = prefix
            .split_whitespace()
            .filter(|w| !w.starts_with('(') && *w != "=")
            .map(|s| s.parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| self.err("malformed tensor constant values"))?;
        let t = Tensor::from_vec(values, &sizes)
            .and_then(|t| t.to_dtype(dtype, false))
            .map_err(|e| self.err(e.message))?;
        self.pos += open + close + 2;
        Ok(Some(t))
    }
}

/// Convenience for tests: a shared graph from text.
pub fn parse_ir_arc(text: &str) -> Result<Arc<Graph>, ParseError> {
    parse_ir(text).map(Arc::new)
}

/// Gives a parsed list or dict literal the element types an `annotate(T, ...)` states.
fn retype(v: IValue, ty: &TypeRef) -> IValue {
    match (&**ty, &v) {
        (Type::List(e), IValue::List(l)) => IValue::list(e.clone(), l.items.read().clone()),
        (Type::Dict(k, val), IValue::Dict(d)) => IValue::dict(
            k.clone(),
            val.clone(),
            d.entries
                .read()
                .iter()
                .map(|(a, b)| (a.0.clone(), b.clone()))
                .collect(),
        ),
        _ => v,
    }
}
