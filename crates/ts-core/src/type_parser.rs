//! Parser for the type syntax of schemas and printed graphs: `Tensor(a!)`, `int[]`, `int?`,
//! `(Tensor, int)`, `Dict(str, Tensor)`, `Future(int)`/`Future[int]`, `Union(int, str)`,
//! `Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)`, `NamedTuple(a : int)`,
//! class names such as `__torch__.Foo`, and type variables (`t`, `tVal`).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use ts_tensor::{DType, Device};

use crate::parse_error::ParseError;
use crate::scanner::{Scanner, Tok};
use crate::schema::AliasInfo;
use crate::types::{ClassType, NamedTupleInfo, TensorType, TupleType, Type, TypeRef};

/// Resolves class names (`__torch__.Foo`) to types; `None` means unknown.
pub type TypeResolver<'r> = &'r dyn Fn(&str) -> Option<TypeRef>;

/// The type for a class name nobody resolved: a shared placeholder class per name, so that
/// printing and equality still work (used by the IR parser and for custom classes).
pub fn named_class_placeholder(name: &str) -> TypeRef {
    static CLASSES: OnceLock<Mutex<HashMap<String, TypeRef>>> = OnceLock::new();
    let mut m = CLASSES.get_or_init(Default::default).lock();
    m.entry(name.to_string())
        .or_insert_with(|| Type::class(ClassType::new(name, false)))
        .clone()
}

/// Parses a whole string as one type (alias annotations are accepted and ignored).
pub fn parse_type(text: &str) -> Result<TypeRef, ParseError> {
    parse_type_with(text, None)
}

/// Parses a whole string as one type, resolving class names through `resolver`.
pub fn parse_type_with(
    text: &str,
    resolver: Option<TypeResolver<'_>>,
) -> Result<TypeRef, ParseError> {
    let mut s = Scanner::new(text, 0)?;
    let (t, _) = TypeParser {
        s: &mut s,
        resolver,
    }
    .parse_type()?;
    if s.cur().tok != Tok::Eof {
        return Err(s.error(format!("unexpected {} after type", s.describe_cur())));
    }
    Ok(t)
}

/// Parses one type starting at byte `pos` of `text`; returns the type and the byte offset just
/// after it. This is the entry point for parsers that embed types (the IR parser).
pub fn parse_type_prefix(
    text: &str,
    pos: usize,
    resolver: Option<TypeResolver<'_>>,
) -> Result<(TypeRef, usize), ParseError> {
    let mut s = Scanner::new(text, pos)?;
    let (t, _) = TypeParser {
        s: &mut s,
        resolver,
    }
    .parse_type()?;
    Ok((t, s.cur().start))
}

/// The type parser over a shared scanner (also used by the schema parser).
pub struct TypeParser<'s, 'a, 'r> {
    pub s: &'s mut Scanner<'a>,
    pub resolver: Option<TypeResolver<'r>>,
}

fn base_type(name: &str) -> Option<TypeRef> {
    Some(match name {
        "Tensor" => Type::tensor(),
        "int" => Type::int(),
        "SymInt" => Type::sym_int(),
        "float" => Type::float(),
        "SymFloat" => Type::sym_float(),
        "SymBool" => Type::sym_bool(),
        "complex" => Type::complex(),
        "bool" => Type::bool(),
        "str" => Type::string(),
        "None" | "NoneType" => Type::none(),
        "Device" => Type::device(),
        "Scalar" => Type::number(),
        "ScalarType" => Type::scalar_type(),
        "Layout" => Type::layout(),
        "MemoryFormat" => Type::memory_format(),
        "QScheme" => Type::qscheme(),
        "Dimname" => Type::dimname(),
        "Generator" => Type::generator(),
        "Storage" => Type::storage(),
        "Stream" => Type::stream(),
        "Capsule" => Type::capsule(),
        "Any" => Type::any(),
        "AnyClassType" => Type::any_class(),
        "AnyEnumType" => Type::any_enum(),
        "Function" => Arc::new(Type::Function(Arc::new(crate::types::FunctionType {
            name: String::new(),
            function: None,
        }))),
        _ => return None,
    })
}

impl TypeParser<'_, '_, '_> {
    /// Parses a type with an optional alias annotation.
    pub fn parse_type(&mut self) -> Result<(TypeRef, Option<AliasInfo>), ParseError> {
        let (mut value, mut alias) = self.parse_primary()?;
        // Each `[]` or `?` wraps one level deeper; they count against the nesting limit.
        let mut entered = 0;
        let r = loop {
            let is_list = self.s.is_punct('[') && self.s.lookahead()?.tok == Tok::Punct(']');
            let is_optional = self.s.is_punct('?');
            if !is_list && !is_optional {
                break Ok(());
            }
            if let Err(e) = self.s.enter() {
                break Err(e);
            }
            entered += 1;
            self.s.next()?;
            if is_list {
                self.s.next()?;
                value = Type::list(value);
                alias = self.wrap_container_alias(alias)?;
            } else {
                value = Type::optional(value);
            }
        };
        for _ in 0..entered {
            self.s.leave();
        }
        r?;
        Ok((value, alias))
    }

    /// After `[]` (or `[N]`): the list's own annotation, containing the element's.
    pub fn wrap_container_alias(
        &mut self,
        elem: Option<AliasInfo>,
    ) -> Result<Option<AliasInfo>, ParseError> {
        let mut container = self.parse_alias_annotation()?;
        if let Some(e) = elem {
            let c = container.get_or_insert_with(|| AliasInfo {
                is_write: e.is_write,
                ..Default::default()
            });
            c.contained.push(e);
        }
        Ok(container)
    }

    fn parse_type_list(&mut self, open: char, close: char) -> Result<Vec<TypeRef>, ParseError> {
        self.s.expect(open)?;
        let mut out = Vec::new();
        if self.s.next_if(close)? {
            return Ok(out);
        }
        loop {
            out.push(self.parse_type()?.0);
            if self.s.next_if(',')? {
                if self.s.next_if(close)? {
                    break;
                }
                continue;
            }
            self.s.expect(close)?;
            break;
        }
        Ok(out)
    }

    fn parse_primary(&mut self) -> Result<(TypeRef, Option<AliasInfo>), ParseError> {
        self.s.enter()?;
        let r = self.parse_primary_inner();
        self.s.leave();
        r
    }

    fn parse_primary_inner(&mut self) -> Result<(TypeRef, Option<AliasInfo>), ParseError> {
        if self.s.is_punct('(') {
            let elems = self.parse_type_list('(', ')')?;
            return Ok((Type::tuple(elems), None));
        }
        let start = self.s.cur().start;
        let name = match &self.s.cur().tok {
            Tok::Ident(n) => n.clone(),
            _ => {
                return Err(self.s.error(format!(
                    "expected a type but found {}",
                    self.s.describe_cur()
                )))
            }
        };
        match name.as_str() {
            "Future" | "RRef" | "Await" => {
                self.s.next()?;
                let (open, close) = if self.s.is_punct('[') {
                    ('[', ']')
                } else {
                    ('(', ')')
                };
                let mut elems = self.parse_type_list(open, close)?;
                if elems.len() != 1 {
                    return Err(ParseError::at(
                        self.s.text,
                        start,
                        format!("{name} takes one type"),
                    ));
                }
                let e = elems.remove(0);
                let t = match name.as_str() {
                    "Future" => Type::future(e),
                    "RRef" => Arc::new(Type::RRef(e)),
                    _ => Arc::new(Type::Await(e)),
                };
                Ok((t, None))
            }
            "Dict" => {
                self.s.next()?;
                let elems = self.parse_type_list('(', ')')?;
                if elems.len() != 2 {
                    return Err(ParseError::at(
                        self.s.text,
                        start,
                        "Dict takes a key and a value type",
                    ));
                }
                let alias = self.parse_alias_annotation()?;
                Ok((Type::dict(elems[0].clone(), elems[1].clone()), alias))
            }
            "Union" => {
                self.s.next()?;
                let elems = self.parse_type_list('(', ')')?;
                let alias = self.parse_alias_annotation()?;
                Ok((Arc::new(Type::Union(elems)), alias))
            }
            "NamedTuple" if self.s.lookahead()?.tok == Tok::Punct('(') => {
                self.s.next()?;
                self.parse_named_tuple().map(|t| (t, None))
            }
            "Tensor" => {
                self.s.next()?;
                if self.s.is_punct('(') && self.tensor_props_follow()? {
                    let t = self.parse_refined_tensor(None, false)?;
                    return Ok((t, None));
                }
                let alias = self.parse_alias_annotation()?;
                Ok((Type::tensor(), alias))
            }
            "Enum" if self.s.lookahead()?.tok == Tok::Punct('<') => {
                self.s.next()?;
                self.s.expect('<')?;
                let qn = self.parse_dotted()?;
                self.s.expect('>')?;
                let t = self
                    .resolver
                    .and_then(|r| r(&qn))
                    .unwrap_or_else(|| named_class_placeholder(&qn));
                Ok((t, None))
            }
            _ => {
                if let Some(d) = DType::from_scalar_type_name(name.trim_end_matches("Tensor")) {
                    if name.ends_with("Tensor") || self.s.lookahead()?.tok == Tok::Punct('(') {
                        self.s.next()?;
                        let with_dims = !name.ends_with("Tensor");
                        let t = self.parse_refined_tensor(Some(d), with_dims)?;
                        return Ok((t, None));
                    }
                }
                if let Some(t) = base_type(&name) {
                    self.s.next()?;
                    let alias = self.parse_alias_annotation()?;
                    return Ok((t, alias));
                }
                if self.s.lookahead()?.tok == Tok::Punct('.') {
                    let qn = self.parse_dotted()?;
                    let t = self
                        .resolver
                        .and_then(|r| r(&qn))
                        .unwrap_or_else(|| named_class_placeholder(&qn));
                    return Ok((t, None));
                }
                if name.starts_with(|c: char| c.is_ascii_lowercase()) {
                    self.s.next()?;
                    let alias = self.parse_alias_annotation()?;
                    return Ok((Arc::new(Type::Var(name)), alias));
                }
                if let Some(t) = self.resolver.and_then(|r| r(&name)) {
                    self.s.next()?;
                    return Ok((t, None));
                }
                Err(ParseError::at(
                    self.s.text,
                    start,
                    format!("unknown type specifier '{name}'"),
                ))
            }
        }
    }

    fn parse_dotted(&mut self) -> Result<String, ParseError> {
        let mut qn = self.s.expect_ident()?;
        while self.s.is_punct('.') {
            self.s.next()?;
            qn.push('.');
            qn.push_str(&self.s.expect_ident()?);
        }
        Ok(qn)
    }

    /// After `Tensor`: does `(` start `requires_grad=`/`device=` properties (not an alias set)?
    fn tensor_props_follow(&mut self) -> Result<bool, ParseError> {
        let save = self.s.cur().end;
        let rest = self.s.text[save..].trim_start();
        Ok(rest.starts_with("requires_grad=")
            || rest.starts_with("device=")
            || rest.starts_with(')'))
    }

    fn parse_named_tuple(&mut self) -> Result<TypeRef, ParseError> {
        self.s.expect('(')?;
        let mut fields = Vec::new();
        let mut elements = Vec::new();
        let mut defaults = Vec::new();
        if !self.s.next_if(')')? {
            loop {
                fields.push(self.s.expect_ident()?);
                self.s.expect(':')?;
                elements.push(self.parse_type()?.0);
                if self.s.next_if('=')? {
                    let start = self.s.cur().start;
                    while !self.s.is_punct(',')
                        && !self.s.is_punct(')')
                        && self.s.cur().tok != Tok::Eof
                    {
                        self.s.next()?;
                    }
                    defaults.push(Some(
                        self.s.text[start..self.s.cur().start].trim().to_string(),
                    ));
                } else {
                    defaults.push(None);
                }
                if self.s.next_if(',')? {
                    continue;
                }
                self.s.expect(')')?;
                break;
            }
        }
        Ok(Arc::new(Type::Tuple(TupleType {
            elements,
            names: Some(NamedTupleInfo {
                qualified_name: "NamedTuple".to_string(),
                fields,
                defaults,
            }),
        })))
    }

    /// `Float(2, *, 3, strides=[3, 1, 1], requires_grad=0, device=cpu)`; the name was consumed.
    fn parse_refined_tensor(
        &mut self,
        dtype: Option<DType>,
        with_dims: bool,
    ) -> Result<TypeRef, ParseError> {
        let mut t = TensorType {
            dtype,
            ..Default::default()
        };
        if !self.s.is_punct('(') {
            return Ok(Arc::new(Type::Tensor(t)));
        }
        self.s.next()?;
        let mut sizes: Vec<Option<i64>> = Vec::new();
        let mut saw_dims = false;
        if !self.s.next_if(')')? {
            loop {
                let is_kw = matches!(&self.s.cur().tok, Tok::Ident(_))
                    && self.s.lookahead()?.tok == Tok::Punct('=');
                if is_kw {
                    let key = self.s.expect_ident()?;
                    self.s.expect('=')?;
                    match key.as_str() {
                        "strides" => {
                            self.s.expect('[')?;
                            let mut st = Vec::new();
                            if !self.s.next_if(']')? {
                                loop {
                                    st.push(Some(self.parse_signed_int()?));
                                    if self.s.next_if(',')? {
                                        continue;
                                    }
                                    self.s.expect(']')?;
                                    break;
                                }
                            }
                            t.strides = Some(st);
                        }
                        "requires_grad" => t.requires_grad = Some(self.parse_signed_int()? != 0),
                        "device" => {
                            let start = self.s.cur().start;
                            let mut end = start;
                            while !self.s.is_punct(',')
                                && !self.s.is_punct(')')
                                && self.s.cur().tok != Tok::Eof
                            {
                                end = self.s.cur().end;
                                self.s.next()?;
                            }
                            let text = &self.s.text[start..end];
                            t.device = Some(Device::parse(text).ok_or_else(|| {
                                ParseError::at(
                                    self.s.text,
                                    start,
                                    format!("invalid device '{text}'"),
                                )
                            })?);
                        }
                        other => {
                            return Err(self
                                .s
                                .error(format!("unknown tensor type property '{other}'")));
                        }
                    }
                } else if self.s.next_if('*')? {
                    saw_dims = true;
                    sizes.push(None);
                } else if self.s.is_ident("SS") {
                    // Symbolic shape `SS(-1)`.
                    self.s.next()?;
                    self.s.expect('(')?;
                    self.parse_signed_int()?;
                    self.s.expect(')')?;
                    saw_dims = true;
                    sizes.push(None);
                } else {
                    saw_dims = true;
                    sizes.push(Some(self.parse_signed_int()?));
                }
                if self.s.next_if(',')? {
                    continue;
                }
                self.s.expect(')')?;
                break;
            }
        }
        if with_dims || saw_dims {
            t.sizes = Some(sizes);
        }
        Ok(Arc::new(Type::Tensor(t)))
    }

    fn parse_signed_int(&mut self) -> Result<i64, ParseError> {
        let neg = self.s.next_if('-')?;
        match &self.s.cur().tok {
            Tok::Number(n) => {
                let v: i64 = n
                    .parse()
                    .map_err(|_| self.s.error(format!("expected an integer but found '{n}'")))?;
                self.s.next()?;
                Ok(if neg { -v } else { v })
            }
            _ => Err(self.s.error(format!(
                "expected an integer but found {}",
                self.s.describe_cur()
            ))),
        }
    }

    /// `(a)`, `(a!)`, `(a|b)`, `(a -> *)`, `(*)`, or a bare `!`.
    pub fn parse_alias_annotation(&mut self) -> Result<Option<AliasInfo>, ParseError> {
        if self.s.is_punct('!') {
            self.s.next()?;
            return Ok(Some(AliasInfo {
                before_sets: vec!["$0".into()],
                after_sets: vec!["$0".into()],
                is_write: true,
                contained: vec![],
            }));
        }
        if !self.s.is_punct('(') {
            return Ok(None);
        }
        // Only an alias annotation when the parenthesis holds alias sets: an identifier or `*`
        // followed by `|`, `!`, `)` or `->`.
        let rest = self.s.text[self.s.cur().end..].trim_start();
        let looks_alias = rest.starts_with('*')
            || rest
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .is_some_and(|w| {
                    !w.is_empty() && {
                        let after = rest[w.len()..].trim_start();
                        after.starts_with('|')
                            || after.starts_with('!')
                            || after.starts_with(')')
                            || after.starts_with("->")
                    }
                });
        if !looks_alias {
            return Ok(None);
        }
        self.s.next()?;
        let mut info = AliasInfo {
            before_sets: self.parse_alias_sets()?,
            ..Default::default()
        };
        if self.s.next_if('!')? {
            info.is_write = true;
        }
        if self.s.next_if_arrow()? {
            info.after_sets = self.parse_alias_sets()?;
        } else {
            info.after_sets = info.before_sets.clone();
        }
        self.s.expect(')')?;
        Ok(Some(info))
    }

    fn parse_alias_sets(&mut self) -> Result<Vec<String>, ParseError> {
        let mut sets = Vec::new();
        loop {
            if self.s.next_if('*')? {
                sets.push("*".to_string());
            } else {
                sets.push(self.s.expect_ident()?);
            }
            if !self.s.next_if('|')? {
                break;
            }
        }
        Ok(sets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_printed_types() {
        for text in [
            "Tensor",
            "int[]",
            "Tensor?",
            "(Tensor, int)",
            "Dict(str, Tensor)",
            "Future[Tensor[]]",
            "Union(int, str)",
            "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)",
            "Long(requires_grad=0, device=cpu)",
            "NamedTuple(values : Tensor, indices : Tensor)",
            "int[][]",
            "(int, int)[]",
            "__torch__.MyModule",
            "t",
            "Float(*, 3)",
        ] {
            let t = parse_type(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(t.to_string(), text);
        }
    }

    #[test]
    fn errors_have_positions() {
        let e = parse_type("Dict(str, %)").unwrap_err();
        assert_eq!(e.line, 1);
        assert_eq!(e.column, 11);
        assert!(e.message.contains("expected a type"), "{e}");
        assert!(parse_type("Blah").is_err());
        assert!(parse_type("int[").is_err());
        assert!(parse_type("Float(2, strides=[").is_err());
    }
}

/// Parses a Python type annotation (`List[int]`, `Optional[Tuple[Tensor, int]]`,
/// `Dict[str, List[float]]`, `torch.Tensor`, `None`) starting at byte `pos`; returns the type
/// and the offset after it. Class names go through `resolver`.
pub fn parse_annotation_prefix(
    text: &str,
    pos: usize,
    resolver: Option<TypeResolver<'_>>,
) -> Result<(TypeRef, usize), ParseError> {
    let mut s = Scanner::new(text, pos)?;
    let t = parse_annotation_inner(&mut s, resolver)?;
    Ok((t, s.cur().start))
}

/// Parses a whole string as a Python type annotation.
pub fn parse_annotation(
    text: &str,
    resolver: Option<TypeResolver<'_>>,
) -> Result<TypeRef, ParseError> {
    let mut s = Scanner::new(text, 0)?;
    let t = parse_annotation_inner(&mut s, resolver)?;
    if s.cur().tok != Tok::Eof {
        return Err(s.error(format!(
            "unexpected {} after type annotation",
            s.describe_cur()
        )));
    }
    Ok(t)
}

fn parse_annotation_inner(
    s: &mut Scanner<'_>,
    resolver: Option<TypeResolver<'_>>,
) -> Result<TypeRef, ParseError> {
    s.enter()?;
    let r = parse_annotation_nested(s, resolver);
    s.leave();
    r
}

fn parse_annotation_nested(
    s: &mut Scanner<'_>,
    resolver: Option<TypeResolver<'_>>,
) -> Result<TypeRef, ParseError> {
    let start = s.cur().start;
    if s.next_if('(')? {
        // `Tuple[()]` spells the empty tuple as `()`.
        s.expect(')')?;
        return Ok(Type::tuple(vec![]));
    }
    let mut name = s.expect_ident()?;
    while s.is_punct('.') {
        s.next()?;
        name.push('.');
        name.push_str(&s.expect_ident()?);
    }
    let short = name
        .strip_prefix("typing.")
        .or_else(|| name.strip_prefix("torch."))
        .unwrap_or(&name)
        .to_string();
    let mut args = Vec::new();
    if s.next_if('[')? {
        loop {
            args.push(parse_annotation_inner(s, resolver)?);
            if s.next_if(',')? {
                continue;
            }
            s.expect(']')?;
            break;
        }
    }
    let arity = |n: usize| -> Result<(), ParseError> {
        if args.len() == n {
            Ok(())
        } else {
            Err(ParseError::at(
                s.text,
                start,
                format!("{short} expects {n} type argument(s), got {}", args.len()),
            ))
        }
    };
    Ok(match short.as_str() {
        "List" | "list" => {
            arity(1)?;
            Type::list(args[0].clone())
        }
        "Optional" => {
            arity(1)?;
            Type::optional(args[0].clone())
        }
        "Future" => {
            arity(1)?;
            Type::future(args[0].clone())
        }
        "Dict" | "dict" => {
            arity(2)?;
            Type::dict(args[0].clone(), args[1].clone())
        }
        "Tuple" | "tuple" => {
            let elems = if args.len() == 1
                && matches!(&*args[0], Type::Tuple(t) if t.elements.is_empty() && t.names.is_none())
            {
                vec![]
            } else {
                args
            };
            Type::tuple(elems)
        }
        "Union" => Type::union(args),
        "Tensor" => Type::tensor(),
        "int" => Type::int(),
        "float" => Type::float(),
        "bool" => Type::bool(),
        "str" => Type::string(),
        "complex" => Type::complex(),
        "None" | "NoneType" => Type::none(),
        "Any" => Type::any(),
        "number" => Type::number(),
        "device" | "Device" => Type::device(),
        "Generator" => Type::generator(),
        _ => match resolver.and_then(|r| r(&name)) {
            Some(t) => t,
            None if name.contains('.') => named_class_placeholder(&name),
            None => {
                return Err(ParseError::at(
                    s.text,
                    start,
                    format!("unknown type annotation '{name}'"),
                ))
            }
        },
    })
}

#[cfg(test)]
mod annotation_tests {
    use super::*;

    #[test]
    fn python_annotations() {
        for (text, want) in [
            ("List[int]", "int[]"),
            ("Optional[Tuple[Tensor, int]]", "(Tensor, int)?"),
            ("Dict[str, List[float]]", "Dict(str, float[])"),
            ("Tuple[()]", "()"),
            ("torch.Tensor", "Tensor"),
            ("Union[int, str]", "Union(int, str)"),
            ("Optional[None]", "NoneType?"),
        ] {
            assert_eq!(
                parse_annotation(text, None).unwrap().to_string(),
                want,
                "{text}"
            );
        }
        assert!(parse_annotation("List[int", None).is_err());
        assert!(parse_annotation("Dict[int]", None).is_err());
        assert!(parse_annotation("Nope", None).is_err());
    }
}
