//! Parser for the type strings of `torch.jit._pickle.restore_type_tag` (`"Dict[str, Tensor]"`,
//! `"List[Tuple[int, float]]"`, `"__torch__.Point"`): the annotation syntax PyTorch's pickler
//! writes next to generic lists and dicts.
//!
//! Qualified names (`__torch__.…`) are user classes, named tuples or enums and are resolved by the
//! caller, since only the module importer knows them.

use ts_core::TypeRef;

use crate::type_table::TypeTable;

/// Deepest nesting accepted, so that a hostile string cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

/// Parses `text`. `resolve` is asked for every qualified name; its error message is reported
/// as the reason the tag is invalid.
pub fn parse_type_tag(
    text: &str,
    table: &mut TypeTable,
    resolve: &mut dyn FnMut(&str, &mut TypeTable) -> Result<TypeRef, String>,
) -> Result<TypeRef, String> {
    let mut p = Parser {
        tokens: tokenize(text)?,
        pos: 0,
        table,
        resolve,
    };
    let ty = p.parse_type(0)?;
    if p.pos != p.tokens.len() {
        return Err(format!("unexpected '{}' after the type", p.tokens[p.pos]));
    }
    Ok(ty)
}

fn tokenize(text: &str) -> Result<Vec<&str>, String> {
    let mut tokens = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let is_name = c.is_alphanumeric() || c == '_' || c == '.';
        match (is_name, start) {
            (true, None) => start = Some(i),
            (true, Some(_)) => {}
            (false, s) => {
                if let Some(s) = s {
                    tokens.push(&text[s..i]);
                    start = None;
                }
                match c {
                    '[' | ']' | ',' | '(' | ')' | '<' | '>' => tokens.push(&text[i..i + 1]),
                    c if c.is_whitespace() => {}
                    other => return Err(format!("unexpected character '{other}'")),
                }
            }
        }
    }
    if let Some(s) = start {
        tokens.push(&text[s..]);
    }
    Ok(tokens)
}

struct Parser<'t, 'r> {
    tokens: Vec<&'t str>,
    pos: usize,
    table: &'r mut TypeTable,
    resolve: &'r mut dyn FnMut(&str, &mut TypeTable) -> Result<TypeRef, String>,
}

impl<'t> Parser<'t, '_> {
    fn peek(&self) -> Option<&'t str> {
        self.tokens.get(self.pos).copied()
    }

    fn expect(&mut self, tok: &str) -> Result<(), String> {
        match self.peek() {
            Some(t) if t == tok => {
                self.pos += 1;
                Ok(())
            }
            Some(t) => Err(format!("expected '{tok}' but found '{t}'")),
            None => Err(format!("expected '{tok}' but the type ended")),
        }
    }

    fn name(&mut self) -> Result<String, String> {
        match self.peek() {
            Some(t)
                if t.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_') =>
            {
                self.pos += 1;
                Ok(t.to_owned())
            }
            Some(t) => Err(format!("expected a type name but found '{t}'")),
            None => Err("expected a type name but the type ended".into()),
        }
    }

    /// Comma-separated types up to `]`, after the opening `[`.
    fn arguments(&mut self, depth: usize) -> Result<Vec<TypeRef>, String> {
        self.expect("[")?;
        let mut out = Vec::new();
        loop {
            out.push(self.parse_type(depth + 1)?);
            match self.peek() {
                Some(",") => self.pos += 1,
                _ => break,
            }
        }
        self.expect("]")?;
        Ok(out)
    }

    fn exactly<const N: usize>(
        &mut self,
        name: &str,
        depth: usize,
    ) -> Result<[TypeRef; N], String> {
        let args = self.arguments(depth)?;
        let n = args.len();
        args.try_into()
            .map_err(|_| format!("{name} takes {N} type argument(s), got {n}"))
    }

    fn parse_type(&mut self, depth: usize) -> Result<TypeRef, String> {
        if depth > MAX_DEPTH {
            return Err(format!("types nested deeper than {MAX_DEPTH} levels"));
        }
        let name = self.name()?;
        let t = &mut *self.table;
        Ok(match name.as_str() {
            "int" | "SymInt" | "ScalarType" | "Layout" | "MemoryFormat" => t.int.clone(),
            "float" | "SymFloat" => t.float.clone(),
            "bool" | "SymBool" => t.bool_.clone(),
            "complex" => t.complex.clone(),
            "str" => t.str_.clone(),
            "Tensor" => t.tensor.clone(),
            "NoneType" | "None" => t.none.clone(),
            "Any" => t.any.clone(),
            "Device" | "device" => t.device.clone(),
            "number" | "Scalar" => t.number.clone(),
            "List" => {
                let [e] = self.exactly::<1>("List", depth)?;
                self.table.list(&e)
            }
            "Optional" => {
                let [e] = self.exactly::<1>("Optional", depth)?;
                self.table.optional(&e)
            }
            "Future" => {
                let [e] = self.exactly::<1>("Future", depth)?;
                self.table.future(&e)
            }
            "Dict" => {
                let [k, v] = self.exactly::<2>("Dict", depth)?;
                self.table.dict(&k, &v)
            }
            "Union" => {
                let members = self.arguments(depth)?;
                self.table.union(members)
            }
            "Tuple" => {
                // `Tuple[()]` is the empty tuple type.
                if self.tokens.get(self.pos..self.pos + 4) == Some(&["[", "(", ")", "]"][..]) {
                    self.pos += 4;
                    self.table.tuple(Vec::new())
                } else {
                    let elements = self.arguments(depth)?;
                    self.table.tuple(elements)
                }
            }
            "Enum" if self.peek() == Some("<") => {
                self.pos += 1;
                let qualified = self.name()?;
                self.expect(">")?;
                (self.resolve)(&qualified, self.table)?
            }
            qualified if qualified.contains('.') => (self.resolve)(qualified, self.table)?,
            other => return Err(format!("unknown type '{other}'")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::type_table::annotation_str;

    fn parse(text: &str) -> Result<String, String> {
        let mut table = TypeTable::new();
        let mut resolve = |name: &str, _: &mut TypeTable| -> Result<TypeRef, String> {
            Err(format!("unknown class {name}"))
        };
        parse_type_tag(text, &mut table, &mut resolve).map(|t| annotation_str(&t))
    }

    #[test]
    fn builtin_types_round_trip() {
        for s in [
            "int",
            "Dict[str, Tensor]",
            "List[Tuple[int, float]]",
            "Optional[List[str]]",
            "Tuple[()]",
            "Dict[str, List[Any]]",
            "Union[int, str]",
            "Future[Tensor]",
            "Device",
        ] {
            assert_eq!(parse(s).as_deref(), Ok(s));
        }
        assert_eq!(parse("List[ int ]").as_deref(), Ok("List[int]"));
    }

    #[test]
    fn bad_tags_are_errors() {
        assert!(parse("List[int").is_err());
        assert!(parse("Dict[int]").is_err());
        assert!(parse("Blob").is_err());
        assert!(parse("int]").is_err());
        assert!(parse("List[$]").is_err());
        assert!(parse("").is_err());
        assert_eq!(
            parse("__torch__.Point").unwrap_err(),
            "unknown class __torch__.Point"
        );
        let deep = "List[".repeat(1000) + "int" + &"]".repeat(1000);
        assert!(parse(&deep).unwrap_err().contains("deeper"));
    }

    #[test]
    fn qualified_names_go_to_the_resolver() {
        let mut table = TypeTable::new();
        let mut seen = Vec::new();
        let mut resolve = |name: &str, t: &mut TypeTable| -> Result<TypeRef, String> {
            seen.push(name.to_owned());
            Ok(t.int.clone())
        };
        let ty = parse_type_tag("Dict[str, __torch__.a.Point]", &mut table, &mut resolve).unwrap();
        assert_eq!(annotation_str(&ty), "Dict[str, int]");
        assert_eq!(seen, ["__torch__.a.Point"]);
    }
}
