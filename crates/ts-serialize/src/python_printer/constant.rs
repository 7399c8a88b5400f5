//! Constants as printed source (PyTorch's `IValue::repr` with the printer's formatter): values
//! Python source cannot spell (tensors, objects, strings with non-ASCII characters) go to the
//! archive's constant table and print as `CONSTANTS.cN`.

use super::annotation::{annotation, is_named_tuple_class};
use ts_core::number_format::format_g;
use ts_core::scanner::quote_string;
use ts_core::{IValue, Type};

/// The constant table written to `constants.pkl`: values referenced as `CONSTANTS.cN`.
#[derive(Default, Debug)]
pub struct ConstantTable {
    values: Vec<IValue>,
}

impl ConstantTable {
    /// The index of `v` in the table, adding it unless an equal tensor is already there
    /// (tensors are de-duplicated by dtype and contents, as PyTorch does; other values never).
    pub fn index_of(&mut self, v: &IValue) -> usize {
        if let IValue::Tensor(t) = v {
            for (i, c) in self.values.iter().enumerate() {
                if let IValue::Tensor(t2) = c {
                    if t.dtype() == t2.dtype()
                        && t.device() == t2.device()
                        && t.sizes() == t2.sizes()
                        && t.to_vec::<f64>() == t2.to_vec::<f64>()
                    {
                        return i;
                    }
                }
            }
        }
        self.values.push(v.clone());
        self.values.len() - 1
    }

    /// The values in table order.
    pub fn values(&self) -> &[IValue] {
        &self.values
    }

    /// Takes the values out.
    pub fn into_values(self) -> Vec<IValue> {
        self.values
    }
}

/// Whether a list or dict element type is recoverable from the printed members; when it is
/// not, the literal is wrapped in `annotate(T, ...)`.
pub fn elem_type_inferable(t: &Type) -> bool {
    !matches!(
        t,
        Type::Optional(_) | Type::Union(_) | Type::Number | Type::Interface(_) | Type::Any
    )
}

/// A float as `IValue::repr` writes it: integral values below 1e10 as `2.`/`-0.`, everything
/// else with 17 significant digits (`0.10000000000000001`, `1e+20`, `inf`, `nan`).
pub fn float_repr(d: f64) -> String {
    if d.is_finite() && d.abs() < 1e10 && d == d.trunc() {
        let i = d as i64;
        if i == 0 && d.is_sign_negative() {
            return "-0.".to_string();
        }
        return format!("{i}.");
    }
    format_g(d, 17)
}

fn contains_non_ascii_string(v: &IValue) -> bool {
    match v {
        IValue::String(s) => !s.is_ascii(),
        IValue::List(l) => l.items.read().iter().any(contains_non_ascii_string),
        IValue::Tuple(t) => t.elements.iter().any(contains_non_ascii_string),
        IValue::Dict(d) => d
            .entries
            .read()
            .iter()
            .any(|(k, v)| contains_non_ascii_string(&k.0) || contains_non_ascii_string(v)),
        _ => false,
    }
}

/// Writes `v` as printed source, adding what cannot be spelled to `table`.
pub fn write_constant(out: &mut String, v: &IValue, table: &mut ConstantTable) {
    if matches!(v, IValue::Tensor(_) | IValue::Object(_)) || contains_non_ascii_string(v) {
        out.push_str(&format!("CONSTANTS.c{}", table.index_of(v)));
        return;
    }
    match v {
        IValue::None => out.push_str("None"),
        IValue::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        IValue::Int(i) => out.push_str(&i.to_string()),
        IValue::Double(d) => out.push_str(&float_repr(*d)),
        IValue::Complex(c) => {
            // `1.5-2.j`: the real part, the imaginary part's sign and magnitude, `j`.
            let (re, im) = **c;
            let sign = if im >= 0.0 { '+' } else { '-' };
            out.push_str(&format!(
                "{}{sign}{}j",
                float_repr(re),
                float_repr(im.abs())
            ));
        }
        IValue::String(s) => quote_string(s, out),
        IValue::Device(d) => out.push_str(&format!("torch.device(\"{d}\")")),
        IValue::Tuple(t) => {
            if let Some(nt) = t.named_type.as_ref().filter(|nt| is_named_tuple_class(nt)) {
                out.push_str(&annotation(nt));
            }
            out.push('(');
            for (i, e) in t.elements.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_constant(out, e, table);
            }
            if t.elements.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        IValue::List(l) => {
            let items = l.items.read();
            let annotate = items.is_empty() || !elem_type_inferable(&l.elem_type);
            if annotate {
                out.push_str(&format!(
                    "annotate({}, ",
                    annotation(&Type::list(l.elem_type.clone()))
                ));
            }
            out.push('[');
            for (i, e) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_constant(out, e, table);
            }
            out.push(']');
            if annotate {
                out.push(')');
            }
        }
        IValue::Dict(d) => {
            let entries = d.entries.read();
            let annotate = entries.is_empty()
                || !elem_type_inferable(&d.key_type)
                || !elem_type_inferable(&d.value_type);
            if annotate {
                out.push_str(&format!(
                    "annotate({}, ",
                    annotation(&Type::dict(d.key_type.clone(), d.value_type.clone()))
                ));
            }
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_constant(out, &k.0, table);
                out.push_str(": ");
                write_constant(out, v, table);
            }
            out.push('}');
            if annotate {
                out.push(')');
            }
        }
        IValue::Enum(e) => out.push_str(&format!("{}.{}", e.enum_type.name, e.name)),
        other => other.write(out, ts_core::StrStyle::IrConstant),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(v: &IValue) -> String {
        let mut s = String::new();
        write_constant(&mut s, v, &mut ConstantTable::default());
        s
    }

    #[test]
    fn floats_as_pytorch_repr() {
        // The spellings PyTorch 2.15 writes into code/ files (`0.`, `0.5`, `1.0000000000000001e-05`).
        assert_eq!(float_repr(0.0), "0.");
        assert_eq!(float_repr(-0.0), "-0.");
        assert_eq!(float_repr(2.0), "2.");
        assert_eq!(float_repr(0.5), "0.5");
        assert_eq!(float_repr(0.1), "0.10000000000000001");
        assert_eq!(float_repr(1e-5), "1.0000000000000001e-05");
        assert_eq!(float_repr(1e10), "10000000000");
        assert_eq!(float_repr(f64::INFINITY), "inf");
        assert_eq!(float_repr(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn containers_and_the_constant_table() {
        assert_eq!(repr(&IValue::int_list([1, 2])), "[1, 2]");
        assert_eq!(
            repr(&IValue::list(Type::int(), vec![])),
            "annotate(List[int], [])"
        );
        assert_eq!(
            repr(&IValue::tuple(vec![IValue::Int(1)])),
            "(1,)".to_string()
        );
        assert_eq!(repr(&IValue::str("a\"b")), "\"a\\\"b\"");
        // `complex(1.5, -2.0)` in a scripted function prints so in PyTorch 2.15's `fn.code`.
        assert_eq!(repr(&IValue::complex(1.5, -2.0)), "1.5-2.j");
        let mut table = ConstantTable::default();
        let mut s = String::new();
        write_constant(&mut s, &IValue::str("é"), &mut table);
        write_constant(&mut s, &IValue::str("ü"), &mut table);
        assert_eq!(s, "CONSTANTS.c0CONSTANTS.c1");
        assert_eq!(table.values().len(), 2);
    }
}
