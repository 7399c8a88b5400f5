//! PyTorch's schema strings, embedded, looked up by `name` or `name.overload`.

use std::sync::OnceLock;

use foldhash::{HashMap, HashMapExt};

static TEXT: &str = include_str!("../data/schemas.txt");

struct Table {
    /// `aten::add.Tensor` -> the full schema line.
    by_full_name: HashMap<&'static str, &'static str>,
    /// `aten::add` -> every overload line.
    by_name: HashMap<&'static str, Vec<&'static str>>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    // Built on every process start (the registry reads it): a fast hash and tables sized once
    // (SipHash and the rehashing growth were most of its cost).
    T.get_or_init(|| {
        let lines = TEXT.bytes().filter(|&b| b == b'\n').count() + 1;
        let mut t = Table {
            by_full_name: HashMap::with_capacity(lines),
            by_name: HashMap::with_capacity(lines / 2),
        };
        for line in TEXT.lines().filter(|l| !l.is_empty()) {
            let head = &line[..line.find('(').unwrap_or(line.len())];
            t.by_full_name.insert(head, line);
            // The overload is what follows the first '.' after the `ns::name`.
            // (A namespace has no colon, so its first one starts the `::`.)
            let name_end = head
                .find(':')
                .filter(|&p| head[p..].starts_with("::"))
                .map_or(0, |p| p + 2);
            let name = match head[name_end..].find('.') {
                Some(d) => &head[..name_end + d],
                None => head,
            };
            t.by_name.entry(name).or_default().push(line);
        }
        t
    })
}

/// The schema line for `name.overload` (or `name` for the overload-less one).
pub fn schema_line(full_name: &str) -> Option<&'static str> {
    table().by_full_name.get(full_name).copied()
}

/// Every schema line of operator `name` (all overloads).
pub fn overload_lines(name: &str) -> &'static [&'static str] {
    table()
        .by_name
        .get(name)
        .map(|v| v.as_slice())
        .unwrap_or(&[])
}

/// Number of PyTorch schemas known.
pub fn total_schemas() -> usize {
    table().by_full_name.len()
}

/// Every schema line, in the table's order.
pub fn all_lines() -> impl Iterator<Item = &'static str> {
    TEXT.lines().filter(|l| !l.is_empty())
}
