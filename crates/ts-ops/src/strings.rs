//! `str` operators: Python string methods, `format` and `%` formatting, conversions.

use std::sync::Arc;

use ts_core::{IValue, Type};
use ts_tensor::{Error, ErrorKind};

use crate::containers::{norm_index, slice_indices};
use crate::registry::{op, Registry, Stack};
use crate::stack::*;

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

/// PyTorch's start/end normalisation for `find`-like methods (`end=-1` means the whole string).
fn span(len: usize, start: i64, end: i64) -> (usize, usize) {
    let l = len as i64;
    let s = if start < 0 {
        (l + start).max(0)
    } else {
        start.min(l)
    };
    let e = if end < 0 {
        (l + end + 1).max(0)
    } else {
        end.min(l)
    };
    (s as usize, e.max(s) as usize)
}

fn find_in(hay: &[char], needle: &[char], from: usize, to: usize, reverse: bool) -> Option<usize> {
    if needle.len() > to.saturating_sub(from) {
        return None;
    }
    let range = from..=(to - needle.len());
    let hit = |i: &usize| hay[*i..*i + needle.len()] == *needle;
    if reverse {
        range.rev().find(hit)
    } else {
        range.into_iter().find(hit)
    }
}

fn str_op(
    r: &Registry,
    name: &str,
    f: impl Fn(&mut Stack) -> Result<(), Error> + Send + Sync + 'static,
) {
    let _ = r.register_pt(name, op(f));
}

fn unary_str(r: &Registry, name: &str, f: fn(&str) -> String) {
    str_op(r, name, move |s| {
        let x = pop_str(s)?;
        push(s, f(&x));
        Ok(())
    });
}

fn pred_str(r: &Registry, name: &str, f: fn(&str) -> bool) {
    str_op(r, name, move |s| {
        let x = pop_str(s)?;
        push(s, f(&x));
        Ok(())
    });
}

fn strip_with(x: &str, chars: &str, left: bool, right: bool) -> String {
    let set: Vec<char> = chars.chars().collect();
    let mut t = x;
    if left {
        t = t.trim_start_matches(|c| set.contains(&c));
    }
    if right {
        t = t.trim_end_matches(|c| set.contains(&c));
    }
    t.to_string()
}

fn split_ws(x: &str, max: i64) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = x.trim_start();
    while !rest.is_empty() {
        if max >= 0 && out.len() as i64 == max {
            out.push(rest.to_string());
            return out;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        out.push(rest[..end].to_string());
        rest = rest[end..].trim_start();
    }
    out
}

/// Python's `str.title()`.
fn title(x: &str) -> String {
    let mut out = String::new();
    let mut prev_cased = false;
    for c in x.chars() {
        if c.is_alphabetic() {
            if prev_cased {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            prev_cased = true;
        } else {
            out.push(c);
            prev_cased = false;
        }
    }
    out
}

fn pad(x: &str, width: i64, fill: &str, align: char) -> Result<String, Error> {
    let fc: Vec<char> = fill.chars().collect();
    if fc.len() != 1 {
        return Err(Error::new(
            ErrorKind::TypeError,
            "The fill character must be exactly one character long",
        ));
    }
    let n = x.chars().count() as i64;
    if width <= n {
        return Ok(x.to_string());
    }
    let total = (width - n) as usize;
    let (l, r) = match align {
        '<' => (0, total),
        '>' => (total, 0),
        _ => {
            // Python centres with the extra fill on the right when the string length is even.
            let left = total / 2 + (total & width as usize & 1);
            (left, total - left)
        }
    };
    let f = fc[0].to_string();
    Ok(format!("{}{x}{}", f.repeat(l), f.repeat(r)))
}

/// `"{}".format(args...)`: each `{}` takes the next argument's `str()`.
pub fn format_str(fmt: &str, args: &[IValue]) -> Result<String, Error> {
    let mut out = String::new();
    let mut used = 0;
    let mut rest = fmt;
    while let Some(loc) = rest.find("{}") {
        out.push_str(&rest[..loc]);
        let a = args
            .get(used)
            .ok_or_else(|| Error::runtime(format!("Too few arguments for format string: {fmt}")))?;
        out.push_str(&a.to_display_string());
        used += 1;
        rest = &rest[loc + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `"%d %s" % (args...)` as TorchScript implements it (`%d`, `%i`, `%s`, `%f`, `%e`, `%c`, `%%`).
pub fn percent_format(fmt: &str, args: &[IValue]) -> Result<String, Error> {
    let mut out = String::new();
    let mut it = fmt.chars().peekable();
    let mut used = 0;
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = it.next() else {
            return Err(Error::new(ErrorKind::ValueError, "incomplete format"));
        };
        if spec == '%' {
            out.push('%');
            continue;
        }
        let a = args
            .get(used)
            .ok_or_else(|| Error::runtime("Too few arguments for format string"))?;
        used += 1;
        let kind = match a {
            IValue::String(_) => "String",
            IValue::Tensor(_) => "Tensor",
            IValue::List(_) => "List",
            _ => "",
        };
        match spec {
            'd' | 'i' => match a.as_scalar() {
                Some(v) => out.push_str(&(v.to_f64() as i64).to_string()),
                None => {
                    return Err(Error::runtime(format!(
                        "%{spec} requires a number for formatting, but got {kind}"
                    )));
                }
            },
            'f' | 'e' | 'E' => match a.as_scalar() {
                Some(v) => out.push_str(&match spec {
                    'f' => format!("{:.6}", v.to_f64()),
                    'e' => ts_tensor::aten_format::format_scientific(v.to_f64(), 6),
                    _ => ts_tensor::aten_format::format_scientific(v.to_f64(), 6).to_uppercase(),
                }),
                None => {
                    return Err(Error::runtime(format!(
                        "%{spec} requires a number for formatting, but got {kind}"
                    )));
                }
            },
            'c' => match a {
                IValue::Int(i) => out.push(char::from_u32(*i as u32).unwrap_or('\u{fffd}')),
                IValue::String(s) if s.chars().count() == 1 => out.push_str(s),
                _ => {
                    return Err(Error::runtime(format!(
                        "%c requires an int or char for formatting, but got {kind}"
                    )))
                }
            },
            's' => out.push_str(&a.to_display_string()),
            other => {
                return Err(Error::runtime(format!(
                    "The specifier %{other} is not supported in TorchScript format strings"
                )))
            }
        }
    }
    if used < args.len() {
        return Err(Error::new(
            ErrorKind::TypeError,
            "not all arguments converted during string formatting",
        ));
    }
    Ok(out)
}

/// Registers the string operators.
pub fn register(r: &Registry) {
    str_op(r, "aten::len.str", |s| {
        let x = pop_str(s)?;
        push(s, x.chars().count() as i64);
        Ok(())
    });
    let getitem = |s: &mut Stack| {
        let i = pop_int(s)?;
        let x = pop_str(s)?;
        let cs = chars(&x);
        let k = norm_index(i, cs.len())
            .ok_or_else(|| Error::new(ErrorKind::IndexError, "string index out of range"))?;
        push(s, cs[k].to_string());
        Ok(())
    };
    str_op(r, "aten::__getitem__.str", getitem);
    str_op(r, "prim::StringIndex", getitem);
    str_op(r, "aten::slice.str", |s| {
        let step = pop_int(s)?;
        let end = pop_opt_int(s)?;
        let start = pop_opt_int(s)?;
        let x = pop_str(s)?;
        let cs = chars(&x);
        let idx = slice_indices(cs.len(), start, end, step)?;
        push(s, idx.into_iter().map(|i| cs[i]).collect::<String>());
        Ok(())
    });
    str_op(r, "aten::add.str", |s| {
        let b = pop_str(s)?;
        let a = pop_str(s)?;
        push(s, format!("{a}{b}"));
        Ok(())
    });
    for (name, f) in [
        (
            "aten::eq.str",
            (|a: &str, b: &str| a == b) as fn(&str, &str) -> bool,
        ),
        ("aten::ne.str", |a, b| a != b),
        ("aten::lt.str", |a, b| a < b),
        ("aten::gt.str", |a, b| a > b),
        ("aten::le.str", |a, b| a <= b),
        ("aten::ge.str", |a, b| a >= b),
    ] {
        str_op(r, name, move |s| {
            let b = pop_str(s)?;
            let a = pop_str(s)?;
            push(s, f(&a, &b));
            Ok(())
        });
    }
    str_op(r, "aten::str", |s| {
        let v = pop(s)?;
        push(s, v.to_display_string());
        Ok(())
    });
    str_op(r, "aten::list", |s| {
        // `list("abc") == ["a", "b", "c"]`.
        let x = pop_str(s)?;
        let chars = x.chars().map(|c| IValue::str(c.to_string())).collect();
        s.push(IValue::list(Type::string(), chars));
        Ok(())
    });
    unary_str(r, "aten::lower", |x| x.to_lowercase());
    unary_str(r, "aten::upper", |x| x.to_uppercase());
    unary_str(r, "aten::swapcase", |x| {
        x.chars()
            .flat_map(|c| {
                if c.is_uppercase() {
                    c.to_lowercase().collect::<Vec<_>>()
                } else {
                    c.to_uppercase().collect()
                }
            })
            .collect()
    });
    unary_str(r, "aten::capitalize", |x| {
        let mut cs = x.chars();
        match cs.next() {
            Some(f) => f
                .to_uppercase()
                .chain(cs.flat_map(|c| c.to_lowercase()))
                .collect(),
            None => String::new(),
        }
    });
    unary_str(r, "aten::title", title);
    pred_str(r, "aten::isdigit", |x| {
        !x.is_empty() && x.chars().all(|c| c.is_ascii_digit())
    });
    pred_str(r, "aten::isdecimal", |x| {
        !x.is_empty() && x.chars().all(|c| c.is_ascii_digit())
    });
    pred_str(r, "aten::isnumeric", |x| {
        !x.is_empty() && x.chars().all(|c| c.is_numeric())
    });
    pred_str(r, "aten::isalpha", |x| {
        !x.is_empty() && x.chars().all(|c| c.is_alphabetic())
    });
    pred_str(r, "aten::isalnum", |x| {
        !x.is_empty() && x.chars().all(|c| c.is_alphanumeric())
    });
    pred_str(r, "aten::isspace", |x| {
        !x.is_empty() && x.chars().all(|c| c.is_whitespace())
    });
    pred_str(r, "aten::islower", |x| {
        x.chars().any(|c| c.is_lowercase()) && !x.chars().any(|c| c.is_uppercase())
    });
    pred_str(r, "aten::isupper", |x| {
        x.chars().any(|c| c.is_uppercase()) && !x.chars().any(|c| c.is_lowercase())
    });
    pred_str(r, "aten::istitle", |x| {
        x.chars().any(|c| c.is_alphabetic()) && title(x) == x
    });
    pred_str(r, "aten::isidentifier", |x| {
        let mut cs = x.chars();
        matches!(cs.next(), Some(c) if c.is_alphabetic() || c == '_')
            && cs.all(|c| c.is_alphanumeric() || c == '_')
    });
    pred_str(r, "aten::isprintable", |x| {
        x.chars().all(|c| !c.is_control())
    });
    for (name, left, right) in [
        ("aten::strip", true, true),
        ("aten::lstrip", true, false),
        ("aten::rstrip", false, true),
    ] {
        str_op(r, name, move |s| {
            let cs = pop_str(s)?;
            let x = pop_str(s)?;
            push(s, strip_with(&x, &cs, left, right));
            Ok(())
        });
    }
    str_op(r, "aten::split.str", |s| {
        let max = pop_int(s)?;
        let sep = pop_opt_str(s)?;
        let x = pop_str(s)?;
        let parts: Vec<String> = match sep {
            None => split_ws(&x, max),
            Some(sep) if sep.is_empty() => {
                return Err(Error::new(ErrorKind::ValueError, "empty separator"))
            }
            Some(sep) => {
                if max < 0 {
                    x.split(sep.as_str()).map(String::from).collect()
                } else {
                    x.splitn(max as usize + 1, sep.as_str())
                        .map(String::from)
                        .collect()
                }
            }
        };
        s.push(IValue::list(
            Type::string(),
            parts.into_iter().map(IValue::str).collect(),
        ));
        Ok(())
    });
    str_op(r, "aten::rsplit", |s| {
        let max = pop_int(s)?;
        let sep = pop_str(s)?;
        let x = pop_str(s)?;
        let mut parts: Vec<String> = if max < 0 {
            x.split(sep.as_str()).map(String::from).collect()
        } else {
            x.rsplitn(max as usize + 1, sep.as_str())
                .map(String::from)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect()
        };
        if max < 0 {
            parts = parts.into_iter().collect();
        }
        s.push(IValue::list(
            Type::string(),
            parts.into_iter().map(IValue::str).collect(),
        ));
        Ok(())
    });
    str_op(r, "aten::splitlines", |s| {
        let keep = pop_bool(s)?;
        let x = pop_str(s)?;
        let mut out = Vec::new();
        let mut cur = String::new();
        for c in x.chars() {
            if c == '\n' || c == '\r' {
                if keep {
                    cur.push(c);
                }
                out.push(IValue::str(std::mem::take(&mut cur)));
            } else {
                cur.push(c);
            }
        }
        if !cur.is_empty() {
            out.push(IValue::str(cur));
        }
        s.push(IValue::list(Type::string(), out));
        Ok(())
    });
    str_op(r, "aten::join", |s| {
        let vals = pop_list(s)?;
        let sep = pop_str(s)?;
        let parts: Vec<String> = vals
            .items
            .read()
            .iter()
            .map(|v| {
                v.as_str()
                    .map(String::from)
                    .ok_or_else(|| Error::runtime("join expects a list of str"))
            })
            .collect::<Result<_, _>>()?;
        push(s, parts.join(sep.as_str()));
        Ok(())
    });
    str_op(r, "aten::replace", |s| {
        let max = pop_int(s)?;
        let new = pop_str(s)?;
        let old = pop_str(s)?;
        let x = pop_str(s)?;
        push(
            s,
            if max < 0 {
                x.replace(old.as_str(), &new)
            } else {
                x.replacen(old.as_str(), &new, max as usize)
            },
        );
        Ok(())
    });
    for (name, reverse, must) in [
        ("aten::find", false, false),
        ("aten::rfind", true, false),
        ("aten::index.str", false, true),
        ("aten::rindex", true, true),
    ] {
        str_op(r, name, move |s| {
            let end = pop_int(s)?;
            let start = pop_int(s)?;
            let sub = pop_str(s)?;
            let x = pop_str(s)?;
            let (hay, needle) = (chars(&x), chars(&sub));
            let (a, b) = span(hay.len(), start, end);
            match find_in(&hay, &needle, a, b, reverse) {
                Some(i) => push(s, i as i64),
                None if must => {
                    return Err(Error::new(ErrorKind::ValueError, "substring not found"))
                }
                None => push(s, -1i64),
            }
            Ok(())
        });
    }
    str_op(r, "aten::count", |s| {
        let end = pop_int(s)?;
        let start = pop_int(s)?;
        let sub = pop_str(s)?;
        let x = pop_str(s)?;
        let (hay, needle) = (chars(&x), chars(&sub));
        let (a, b) = span(hay.len(), start, end);
        let mut n = 0i64;
        let mut i = a;
        while let Some(p) = find_in(&hay, &needle, i, b, false) {
            n += 1;
            i = p + needle.len().max(1);
            if i > b {
                break;
            }
        }
        push(s, n);
        Ok(())
    });
    for (name, ends) in [("aten::startswith", false), ("aten::endswith", true)] {
        str_op(r, name, move |s| {
            let end = pop_int(s)?;
            let start = pop_int(s)?;
            let sub = pop_str(s)?;
            let x = pop_str(s)?;
            let hay = chars(&x);
            let (a, b) = span(hay.len(), start, end);
            let part: String = hay[a..b].iter().collect();
            push(
                s,
                if ends {
                    part.ends_with(sub.as_str())
                } else {
                    part.starts_with(sub.as_str())
                },
            );
            Ok(())
        });
    }
    for (name, align) in [
        ("aten::center", '^'),
        ("aten::ljust", '<'),
        ("aten::rjust", '>'),
    ] {
        str_op(r, name, move |s| {
            let fill = pop_str(s)?;
            let w = pop_int(s)?;
            let x = pop_str(s)?;
            push(s, pad(&x, w, &fill, align)?);
            Ok(())
        });
    }
    str_op(r, "aten::zfill", |s| {
        let w = pop_int(s)?;
        let x = pop_str(s)?;
        let (sign, digits) = match x.strip_prefix(['+', '-']) {
            Some(rest) => (&x[..1], rest),
            None => ("", x.as_str()),
        };
        let n = x.chars().count() as i64;
        let zeros = "0".repeat((w - n).max(0) as usize);
        push(s, format!("{sign}{zeros}{digits}"));
        Ok(())
    });
    str_op(r, "aten::expandtabs", |s| {
        let tab = pop_int(s)?;
        let x = pop_str(s)?;
        let mut out = String::new();
        let mut col = 0i64;
        for c in x.chars() {
            if c == '\t' {
                let n = if tab > 0 { tab - col % tab } else { 0 };
                out.push_str(&" ".repeat(n as usize));
                col += n;
            } else {
                out.push(c);
                col = if c == '\n' { 0 } else { col + 1 };
            }
        }
        push(s, out);
        Ok(())
    });
    for (name, right) in [("aten::partition", false), ("aten::rpartition", true)] {
        str_op(r, name, move |s| {
            let sep = pop_str(s)?;
            let x = pop_str(s)?;
            let hit = if right {
                x.rfind(sep.as_str())
            } else {
                x.find(sep.as_str())
            };
            let parts = match hit {
                Some(i) => (
                    x[..i].to_string(),
                    sep.to_string(),
                    x[i + sep.len()..].to_string(),
                ),
                None if right => (String::new(), String::new(), x.to_string()),
                None => (x.to_string(), String::new(), String::new()),
            };
            s.push(IValue::tuple(vec![
                IValue::str(parts.0),
                IValue::str(parts.1),
                IValue::str(parts.2),
            ]));
            Ok(())
        });
    }
    str_op(r, "aten::ord", |s| {
        let x = pop_str(s)?;
        let mut cs = x.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) => push(s, c as i64),
            _ => {
                return Err(Error::new(
                    ErrorKind::TypeError,
                    format!(
                        "ord() expected a character, but string of length {} found",
                        x.chars().count()
                    ),
                ))
            }
        }
        Ok(())
    });
    str_op(r, "aten::chr", |s| {
        let i = pop_int(s)?;
        let c = u32::try_from(i)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| Error::new(ErrorKind::ValueError, "chr() arg not in range(0x110000)"))?;
        push(s, c.to_string());
        Ok(())
    });
    for (name, radix) in [("aten::hex", 16u32), ("aten::oct", 8), ("aten::bin", 2)] {
        str_op(r, name, move |s| {
            let i = pop_int(s)?;
            let (sign, v) = if i < 0 {
                ("-", i.unsigned_abs())
            } else {
                ("", i as u64)
            };
            let body = match radix {
                16 => format!("0x{v:x}"),
                8 => format!("0o{v:o}"),
                _ => format!("0b{v:b}"),
            };
            push(s, format!("{sign}{body}"));
            Ok(())
        });
    }
    str_op(r, "aten::Int.str", |s| {
        let x = pop_str(s)?;
        let t = x.trim().replace('_', "");
        let v: i64 = t.parse().map_err(|_| {
            Error::new(
                ErrorKind::ValueError,
                format!("invalid literal for int() with base 10: '{x}'"),
            )
        })?;
        push(s, v);
        Ok(())
    });
    str_op(r, "aten::Float.str", |s| {
        let x = pop_str(s)?;
        let t = x.trim().to_lowercase();
        let v: f64 = match t.as_str() {
            "inf" | "+inf" | "infinity" => f64::INFINITY,
            "-inf" | "-infinity" => f64::NEG_INFINITY,
            "nan" | "+nan" | "-nan" => f64::NAN,
            _ => t.parse().map_err(|_| {
                Error::new(
                    ErrorKind::ValueError,
                    format!("could not convert string to float: '{x}'"),
                )
            })?,
        };
        push(s, v);
        Ok(())
    });
    let _ = r.register_node_op(
        crate::schema_table::schema_line("aten::format")
            .unwrap_or("aten::format(str self, ...) -> str"),
        Arc::new(|g, n| {
            let count = g.node(n).inputs().len();
            Ok(op(move |s| {
                let args = pop_n(s, count)?;
                let fmt = args[0]
                    .as_str()
                    .ok_or_else(|| Error::runtime("format expects a string"))?
                    .to_string();
                push(s, format_str(&fmt, &args[1..])?);
                Ok(())
            }))
        }),
    );
    let _ = r.register_node_op(
        crate::schema_table::schema_line("aten::percentFormat")
            .unwrap_or("aten::percentFormat(str self, ...) -> str"),
        Arc::new(|g, n| {
            let count = g.node(n).inputs().len();
            Ok(op(move |s| {
                let args = pop_n(s, count)?;
                let fmt = args[0]
                    .as_str()
                    .ok_or_else(|| Error::runtime("% expects a format string"))?
                    .to_string();
                let rest: Vec<IValue> = match args.get(1) {
                    Some(IValue::Tuple(t)) if args.len() == 2 => t.elements.clone(),
                    _ => args[1..].to_vec(),
                };
                push(s, percent_format(&fmt, &rest)?);
                Ok(())
            }))
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(
            format_str("{} and {}", &[IValue::Int(1), IValue::Double(2.0)]).unwrap(),
            "1 and 2."
        );
        assert!(format_str("{} {}", &[IValue::Int(1)]).is_err());
        assert_eq!(
            percent_format("%d-%s", &[IValue::Int(3), IValue::str("x")]).unwrap(),
            "3-x"
        );
        let e = percent_format("%d", &[IValue::str("x")]).unwrap_err();
        assert_eq!(
            e.message,
            "%d requires a number for formatting, but got String"
        );
    }

    #[test]
    fn helpers() {
        assert_eq!(pad("ab", 5, "*", '^').unwrap(), "**ab*");
        assert_eq!(pad("abc", 6, "*", '^').unwrap(), "*abc**");
        assert_eq!(title("hello world"), "Hello World");
        assert_eq!(split_ws("  a b  c ", -1), vec!["a", "b", "c"]);
        assert_eq!(span(5, 0, -1), (0, 5));
    }
}
