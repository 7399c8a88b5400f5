//! Parser and printer for function schemas, exactly as PyTorch writes them:
//! `aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`.

use std::fmt;

use crate::ivalue::IValue;
use crate::number_format::format_double;
use crate::parse_error::ParseError;
use crate::scanner::{quote_string, Scanner, Tok};
use crate::schema::{AliasInfo, Argument, FunctionSchema};
use crate::type_parser::{TypeParser, TypeResolver};
use crate::types::{Type, TypeRef};

/// The largest fixed list size (`int[N]`) accepted. PyTorch's schemas use at most a handful;
/// the limit keeps a hostile `int[99999999999] x=1` from expanding its default into an
/// enormous list.
const MAX_FIXED_LIST_SIZE: usize = 1 << 16;

impl FunctionSchema {
    /// Parses a full schema (`name(args) -> returns`).
    pub fn parse(text: &str) -> Result<FunctionSchema, ParseError> {
        parse_schema_with(text, None)
    }
}

/// Parses a schema, resolving class names through `resolver`.
pub fn parse_schema_with(
    text: &str,
    resolver: Option<TypeResolver<'_>>,
) -> Result<FunctionSchema, ParseError> {
    match parse_schema_or_name(text, resolver)? {
        SchemaOrName::Schema(s) => Ok(s),
        SchemaOrName::Name(..) => Err(ParseError::at(
            text,
            text.len(),
            "expected '(' after the operator name",
        )),
    }
}

/// Either a schema or a bare operator name (`aten::add`), as operator registration accepts.
#[derive(Clone, Debug)]
pub enum SchemaOrName {
    Schema(FunctionSchema),
    /// Qualified name and overload name.
    Name(String, String),
}

/// Parses a schema or a bare operator name.
pub fn parse_schema_or_name(
    text: &str,
    resolver: Option<TypeResolver<'_>>,
) -> Result<SchemaOrName, ParseError> {
    let mut s = Scanner::new(text, 0)?;
    let mut name = s.expect_ident()?;
    if s.is_punct(':') {
        s.next()?;
        s.expect(':')?;
        name.push_str("::");
        name.push_str(&s.expect_ident()?);
    }
    let mut overload = String::new();
    if s.next_if('.')? {
        overload = s.expect_ident()?;
    }
    if s.cur().tok == Tok::Eof {
        return Ok(SchemaOrName::Name(name, overload));
    }
    let mut p = SchemaParser {
        tp: TypeParser {
            s: &mut s,
            resolver,
        },
    };
    let (arguments, is_vararg) = p.parse_arguments()?;
    let s = &mut *p.tp.s;
    if !s.next_if_arrow()? {
        return Err(s.error(format!("expected '->' but found {}", s.describe_cur())));
    }
    let (returns, is_varret) = p.parse_returns()?;
    let s = &mut *p.tp.s;
    if s.cur().tok != Tok::Eof {
        return Err(s.error(format!("unexpected {} after schema", s.describe_cur())));
    }
    Ok(SchemaOrName::Schema(FunctionSchema {
        name,
        overload_name: overload,
        arguments,
        returns,
        is_vararg,
        is_varret,
    }))
}

struct SchemaParser<'s, 'a, 'r> {
    tp: TypeParser<'s, 'a, 'r>,
}

impl SchemaParser<'_, '_, '_> {
    fn parse_arguments(&mut self) -> Result<(Vec<Argument>, bool), ParseError> {
        self.tp.s.expect('(')?;
        let mut args = Vec::new();
        let mut kwarg_only = false;
        let mut vararg = false;
        if self.tp.s.next_if(')')? {
            return Ok((args, vararg));
        }
        loop {
            if vararg {
                return Err(self.tp.s.error("'...' must be the last argument"));
            }
            if self.tp.s.cur().tok == Tok::Ellipsis {
                self.tp.s.next()?;
                vararg = true;
            } else if self.tp.s.is_punct('*')
                && matches!(
                    self.tp.s.lookahead()?.tok,
                    Tok::Punct(',') | Tok::Punct(')')
                )
            {
                self.tp.s.next()?;
                kwarg_only = true;
            } else {
                args.push(self.parse_argument(kwarg_only, true)?);
            }
            if self.tp.s.next_if(',')? {
                continue;
            }
            self.tp.s.expect(')')?;
            break;
        }
        Ok((args, vararg))
    }

    fn parse_returns(&mut self) -> Result<(Vec<Argument>, bool), ParseError> {
        let s = &mut *self.tp.s;
        if s.cur().tok == Tok::Ellipsis {
            s.next()?;
            return Ok((vec![], true));
        }
        // `(` starts a list of returns unless it is a tuple type followed by `[]`/`?` etc.; as in
        // PyTorch, a single return whose type begins with `(` is printed with extra parentheses.
        if s.is_punct('(') {
            s.next()?;
            let mut rets = Vec::new();
            let mut varret = false;
            if self.tp.s.next_if(')')? {
                return Ok((rets, false));
            }
            loop {
                if self.tp.s.cur().tok == Tok::Ellipsis {
                    self.tp.s.next()?;
                    varret = true;
                } else {
                    rets.push(self.parse_argument(false, false)?);
                }
                if self.tp.s.next_if(',')? {
                    continue;
                }
                self.tp.s.expect(')')?;
                break;
            }
            return Ok((rets, varret));
        }
        Ok((vec![self.parse_argument(false, false)?], false))
    }

    fn parse_argument(&mut self, kwarg_only: bool, is_arg: bool) -> Result<Argument, ParseError> {
        let (mut ty, mut alias) = self.tp.parse_type()?;
        let mut n = None;
        if self.tp.s.is_punct('[') {
            self.tp.s.next()?;
            let num = match &self.tp.s.cur().tok {
                Tok::Number(t) => t
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n <= MAX_FIXED_LIST_SIZE)
                    .ok_or_else(|| self.tp.s.error(format!("invalid list size '{t}'")))?,
                _ => {
                    return Err(self.tp.s.error(format!(
                        "expected a list size but found {}",
                        self.tp.s.describe_cur()
                    )))
                }
            };
            self.tp.s.next()?;
            self.tp.s.expect(']')?;
            n = Some(num);
            ty = Type::list(ty);
            alias = self.tp.wrap_container_alias(alias)?;
            if self.tp.s.next_if('?')? {
                ty = Type::optional(ty);
            }
        }
        let mut name = String::new();
        if let Tok::Ident(id) = &self.tp.s.cur().tok {
            name = id.clone();
            self.tp.s.next()?;
        } else if is_arg {
            return Err(self.tp.s.error(format!(
                "expected an argument name but found {}",
                self.tp.s.describe_cur()
            )));
        }
        let mut default = None;
        if is_arg && self.tp.s.next_if('=')? {
            default = Some(self.parse_default(&ty, n)?);
        }
        Ok(Argument {
            name,
            ty,
            real_ty: None,
            n,
            default,
            kwarg_only,
            alias_info: alias,
        })
    }

    fn parse_default(&mut self, ty: &TypeRef, n: Option<usize>) -> Result<IValue, ParseError> {
        let s = &mut *self.tp.s;
        let start = s.cur().start;
        let unopt = ty.optional_elem().cloned().unwrap_or_else(|| ty.clone());
        if s.is_ident("None") {
            s.next()?;
            return Ok(IValue::None);
        }
        if let Type::List(elem) = &*unopt {
            if s.is_punct('[') {
                s.next()?;
                let mut items = Vec::new();
                if !s.next_if(']')? {
                    loop {
                        items.push(parse_scalar_default(s, elem)?);
                        if s.next_if(',')? {
                            continue;
                        }
                        s.expect(']')?;
                        break;
                    }
                }
                return Ok(IValue::list(elem.clone(), items));
            }
            // `int[2] stride=1` means `[1, 1]`.
            let v = parse_scalar_default(s, elem)?;
            let count = n.unwrap_or(1);
            return Ok(IValue::list(elem.clone(), vec![v; count]));
        }
        // As in PyTorch, an optional argument's number default is typed by its text alone.
        let v = parse_scalar_default(s, ty)?;
        if matches!(v, IValue::None) && s.cur().start == start {
            return Err(s.error("expected a default value"));
        }
        Ok(v)
    }
}

fn parse_scalar_default(s: &mut Scanner<'_>, ty: &TypeRef) -> Result<IValue, ParseError> {
    let neg = s.next_if('-')?;
    let tok = s.cur().clone();
    let v = match &tok.tok {
        Tok::Ident(id) => match id.as_str() {
            "True" => IValue::Bool(true),
            "False" => IValue::Bool(false),
            "None" => IValue::None,
            "inf" => IValue::Double(f64::INFINITY),
            "nan" => IValue::Double(f64::NAN),
            // Enum-like defaults (`contiguous_format`, `strided`, `long`, `Mean`): keep the text.
            other => IValue::str(other),
        },
        Tok::Number(text) => parse_number(s, text, ty)?,
        Tok::Str(v) => IValue::str(v.clone()),
        _ => {
            return Err(s.error(format!(
                "expected a default value but found {}",
                s.describe_cur()
            )))
        }
    };
    s.next()?;
    Ok(match v {
        IValue::Int(i) if neg => IValue::Int(i.wrapping_neg()),
        IValue::Double(d) if neg => IValue::Double(-d),
        IValue::Complex(c) if neg => IValue::complex(-c.0, -c.1),
        other if neg => {
            return Err(ParseError::at(
                s.text,
                tok.start,
                format!("cannot negate '{other}'"),
            ))
        }
        other => other,
    })
}

fn parse_number(s: &Scanner<'_>, text: &str, ty: &TypeRef) -> Result<IValue, ParseError> {
    let bad = || ParseError::at(s.text, s.cur().start, format!("invalid number '{text}'"));
    if let Some(im) = text.strip_suffix('j') {
        let v: f64 = im.parse().map_err(|_| bad())?;
        return Ok(IValue::complex(0.0, v));
    }
    let is_float_text = text.contains(['.', 'e', 'E']);
    if is_float_text || ty.is_float() {
        let v: f64 = text.parse().map_err(|_| bad())?;
        if ty.is_int() {
            return Ok(IValue::Int(v as i64));
        }
        return Ok(IValue::Double(v));
    }
    let v: i64 = text.parse().map_err(|_| bad())?;
    Ok(match &**ty {
        Type::Bool => IValue::Bool(v != 0),
        _ => IValue::Int(v),
    })
}

// ---------------------------------------------------------------------------------------------
// Printing

impl fmt::Display for AliasInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        f.write_str(&self.before_sets.join("|"))?;
        if self.is_write {
            f.write_str("!")?;
        }
        if self.before_sets != self.after_sets {
            write!(f, " -> {}", self.after_sets.join("|"))?;
        }
        f.write_str(")")
    }
}

fn write_default(out: &mut String, arg: &Argument, v: &IValue) {
    let ty = &arg.ty;
    let unopt = ty.optional_elem().unwrap_or(ty);
    if let IValue::String(s) = v {
        if matches!(**unopt, Type::Str) {
            quote_string(s, out);
            return;
        }
        out.push_str(s);
        return;
    }
    if let (Type::List(e), IValue::List(l)) = (&**ty, v) {
        if matches!(**e, Type::Int) {
            let items = l.items.read();
            if items.len() > 1 && items.iter().all(|x| x.py_eq(&items[0])) {
                items[0].write(out, crate::ivalue::StrStyle::Quoted);
                return;
            }
        }
    }
    match v {
        IValue::Double(d) => out.push_str(&format_double(*d)),
        other => other.write(out, crate::ivalue::StrStyle::Quoted),
    }
}

impl fmt::Display for Argument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ty = self.real_ty.as_ref().unwrap_or(&self.ty);
        let (is_opt, unopt) = match &**ty {
            Type::Optional(e) => (true, e),
            _ => (false, ty),
        };
        let mut out = String::new();
        if let Type::List(e) = &**unopt {
            out.push_str(&e.str_for_schema());
            if let Some(c) = self.alias_info.as_ref().and_then(|a| a.contained.first()) {
                out.push_str(&c.to_string());
            }
            out.push('[');
            if let Some(n) = self.n {
                out.push_str(&n.to_string());
            }
            out.push(']');
        } else {
            out.push_str(&unopt.str_for_schema());
        }
        if let Some(a) = &self.alias_info {
            if !a.before_sets.is_empty() {
                out.push_str(&a.to_string());
            }
        }
        if is_opt {
            out.push('?');
        }
        if !self.name.is_empty() {
            out.push(' ');
            out.push_str(&self.name);
        }
        if let Some(d) = &self.default {
            out.push('=');
            write_default(&mut out, self, d);
        }
        f.write_str(&out)
    }
}

impl Type {
    /// `Type::str()` as schemas print it (tensors as `Tensor`, `SymInt` kept).
    fn str_for_schema(&self) -> String {
        self.str()
    }
}

impl fmt::Display for FunctionSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.overload_name.is_empty() {
            write!(f, ".{}", self.overload_name)?;
        }
        f.write_str("(")?;
        let mut seen_kwarg_only = false;
        for (i, a) in self.arguments.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            if a.kwarg_only && !seen_kwarg_only {
                f.write_str("*, ")?;
                seen_kwarg_only = true;
            }
            write!(f, "{a}")?;
        }
        if self.is_vararg {
            if !self.arguments.is_empty() {
                f.write_str(", ")?;
            }
            f.write_str("...")?;
        }
        f.write_str(") -> ")?;
        let single = self.returns.len() == 1 && !self.is_varret;
        let mut need_paren = !(single || (self.returns.is_empty() && self.is_varret));
        let rets: Vec<String> = self.returns.iter().map(|r| r.to_string()).collect();
        if single && rets[0].starts_with('(') {
            need_paren = true;
        }
        if need_paren {
            f.write_str("(")?;
        }
        f.write_str(&rets.join(", "))?;
        if self.is_varret {
            if !rets.is_empty() {
                f.write_str(", ")?;
            }
            f.write_str("...")?;
        }
        if need_paren {
            f.write_str(")")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_examples() {
        for s in [
            "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
            "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
            "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor",
            "aten::items.str(Dict(str, t) self) -> ((str, t)[])",
            "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
            "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
            "prim::rpc_async(...) -> ...",
            "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor",
            "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
            "aten::strip(str self, str chars=\" \\n\\t\\f\\v\") -> str",
            "aten::_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
        ] {
            let schema = FunctionSchema::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(schema.to_string(), s);
        }
    }

    #[test]
    fn parses_details() {
        let s = FunctionSchema::parse(
            "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        )
        .unwrap();
        assert_eq!(s.name, "aten::add");
        assert_eq!(s.overload_name, "Tensor");
        assert_eq!(s.arguments.len(), 3);
        assert!(s.arguments[2].kwarg_only);
        assert_eq!(
            s.arguments[2].default.as_ref().and_then(|d| d.as_int()),
            Some(1)
        );
        let s =
            FunctionSchema::parse("aten::add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
                .unwrap();
        let a = s.arguments[0].alias_info.as_ref().unwrap();
        assert!(a.is_write);
        assert_eq!(a.before_sets, vec!["a".to_string()]);
    }

    #[test]
    fn malformed_schemas_are_errors() {
        for bad in [
            "aten::add(",
            "aten::add(Tensor self) ->",
            "aten::add(Tensor) -> Tensor",
            "aten::add(Tensor self -> Tensor",
            "aten::add(Tensor self, ..., int x) -> Tensor",
            "aten::f(int[x] a) -> int",
            // Found by the schema fuzz target: the default would have been a list of 10^17
            // elements.
            "aten::f(Tensor[99999999999999999] a=1) -> int",
            "aten::f(Blah a) -> int",
            "(",
            "",
        ] {
            assert!(FunctionSchema::parse(bad).is_err(), "{bad}");
        }
        let e = FunctionSchema::parse("aten::add(Tensor self,\n  Tensor) -> Tensor").unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(e.line_text, "  Tensor) -> Tensor");
    }
}
