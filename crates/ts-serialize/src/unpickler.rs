//! The pickle virtual machine, reading side: turns a pickle stream (protocols 0-5, the binary
//! opcodes that Python and PyTorch write) into a [`PickleTree`].
//!
//! The machine never executes anything: GLOBAL pushes a name, REDUCE/NEWOBJ/BUILD record what
//! would have been called. Every length read from the stream is checked against the bytes that
//! remain before anything is allocated, so a truncated or hostile stream is an error, never a
//! panic or a huge allocation. The memo stores ids of containers, not copies, so shared
//! references stay shared.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Result, SerializeError};
use crate::opcodes as op;
use crate::pickle_value::{
    Construction, DictId, GlobalName, ListId, ObjectId, PersistentId, PickleObject, PickleTree,
    PickleValue, TupleId,
};

/// Unpickles `data`, the content of the record named `record` (used in error messages).
pub fn unpickle(data: &[u8], record: &str) -> Result<PickleTree> {
    Unpickler {
        data,
        pos: 0,
        op_start: 0,
        record,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        tree: PickleTree::default(),
    }
    .run()
}

struct Unpickler<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of the opcode being executed (for error messages).
    op_start: usize,
    record: &'a str,
    stack: Vec<PickleValue>,
    /// Stack heights at each MARK; values below the innermost mark are out of reach, as in
    /// Python's metastack.
    marks: Vec<usize>,
    memo: HashMap<u32, PickleValue>,
    tree: PickleTree,
}

impl<'a> Unpickler<'a> {
    fn run(mut self) -> Result<PickleTree> {
        loop {
            self.op_start = self.pos;
            let Some(&code) = self.data.get(self.pos) else {
                return Err(self.error("the stream ended without a STOP opcode"));
            };
            self.pos += 1;
            if code == op::STOP {
                let root = self.pop("STOP")?;
                self.tree.root = root;
                return Ok(self.tree);
            }
            self.step(code)?;
        }
    }

    fn step(&mut self, code: u8) -> Result<()> {
        match code {
            op::PROTO => {
                let v = self.read_u8("PROTO")?;
                if v > op::HIGHEST_PROTOCOL {
                    return Err(self.error(format!("unsupported pickle protocol {v}")));
                }
            }
            op::FRAME => {
                let n = self.read_u64("FRAME")?;
                if n > self.remaining() as u64 {
                    return Err(self.error(format!(
                        "FRAME claims {n} bytes but only {} remain",
                        self.remaining()
                    )));
                }
            }
            op::MARK => self.marks.push(self.stack.len()),
            op::POP => {
                if self.stack.len() > self.floor() {
                    self.stack.pop();
                } else {
                    self.pop_mark("POP")?;
                }
            }
            op::POP_MARK => {
                self.pop_mark("POP_MARK")?;
            }
            op::DUP => {
                let top = self.top("DUP")?.clone();
                self.push(top);
            }
            op::NONE => self.push(PickleValue::None),
            op::NEWTRUE => self.push(PickleValue::Bool(true)),
            op::NEWFALSE => self.push(PickleValue::Bool(false)),
            op::INT => {
                let line = self.read_line("INT")?;
                let v = match line {
                    b"00" => PickleValue::Bool(false),
                    b"01" => PickleValue::Bool(true),
                    _ => PickleValue::Int(self.parse_decimal(line, "INT")?),
                };
                self.push(v);
            }
            op::LONG => {
                let line = self.read_line("LONG")?;
                let digits = line.strip_suffix(b"L").unwrap_or(line);
                let v = self.parse_decimal(digits, "LONG")?;
                self.push(PickleValue::Int(v));
            }
            op::BININT => {
                let b = self.take(4, "BININT")?;
                let v = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                self.push(PickleValue::Int(v.into()));
            }
            op::BININT1 => {
                let v = self.read_u8("BININT1")?;
                self.push(PickleValue::Int(v.into()));
            }
            op::BININT2 => {
                let b = self.take(2, "BININT2")?;
                self.push(PickleValue::Int(u16::from_le_bytes([b[0], b[1]]).into()));
            }
            op::LONG1 => {
                let n = self.read_u8("LONG1")? as usize;
                let bytes = self.take(n, "LONG1")?;
                self.push(decode_long(bytes));
            }
            op::LONG4 => {
                let n = self.read_i32("LONG4")?;
                let n = usize::try_from(n)
                    .map_err(|_| self.error(format!("LONG4 with negative length {n}")))?;
                let bytes = self.take(n, "LONG4")?;
                self.push(decode_long(bytes));
            }
            op::FLOAT => {
                let line = self.read_line("FLOAT")?;
                let v = std::str::from_utf8(line)
                    .ok()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .ok_or_else(|| self.error("FLOAT with an unparsable value"))?;
                self.push(PickleValue::Float(v));
            }
            op::BINFLOAT => {
                let b = self.take(8, "BINFLOAT")?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                self.push(PickleValue::Float(f64::from_be_bytes(a)));
            }
            op::BINUNICODE => {
                let n = self.read_u32("BINUNICODE")? as u64;
                self.push_unicode(n, "BINUNICODE")?;
            }
            op::SHORT_BINUNICODE => {
                let n = self.read_u8("SHORT_BINUNICODE")? as u64;
                self.push_unicode(n, "SHORT_BINUNICODE")?;
            }
            op::BINUNICODE8 => {
                let n = self.read_u64("BINUNICODE8")?;
                self.push_unicode(n, "BINUNICODE8")?;
            }
            op::BINSTRING => {
                let n = self.read_i32("BINSTRING")?;
                let n = u64::try_from(n)
                    .map_err(|_| self.error(format!("BINSTRING with negative length {n}")))?;
                let bytes = self.take_u64(n, "BINSTRING")?;
                // Python 2 `str`: decoded as latin-1, as `pickle.load(encoding='latin1')` does.
                let s: String = bytes.iter().map(|&b| b as char).collect();
                self.push(PickleValue::Str(Arc::new(s)));
            }
            op::SHORT_BINSTRING => {
                let n = self.read_u8("SHORT_BINSTRING")? as u64;
                let bytes = self.take_u64(n, "SHORT_BINSTRING")?;
                let s: String = bytes.iter().map(|&b| b as char).collect();
                self.push(PickleValue::Str(Arc::new(s)));
            }
            op::BINBYTES => {
                let n = self.read_u32("BINBYTES")? as u64;
                self.push_bytes(n, "BINBYTES")?;
            }
            op::SHORT_BINBYTES => {
                let n = self.read_u8("SHORT_BINBYTES")? as u64;
                self.push_bytes(n, "SHORT_BINBYTES")?;
            }
            op::BINBYTES8 => {
                let n = self.read_u64("BINBYTES8")?;
                self.push_bytes(n, "BINBYTES8")?;
            }
            op::BYTEARRAY8 => {
                let n = self.read_u64("BYTEARRAY8")?;
                self.push_bytes(n, "BYTEARRAY8")?;
            }
            op::EMPTY_TUPLE => {
                let id = self.new_tuple(Vec::new())?;
                self.push(id);
            }
            op::TUPLE => {
                let items = self.pop_mark("TUPLE")?;
                let id = self.new_tuple(items)?;
                self.push(id);
            }
            op::TUPLE1 | op::TUPLE2 | op::TUPLE3 => {
                let n = (code - op::TUPLE1 + 1) as usize;
                if self.stack.len() < self.floor() + n {
                    return Err(self.error(format!("TUPLE{n} needs {n} values on the stack")));
                }
                let items = self.stack.split_off(self.stack.len() - n);
                let id = self.new_tuple(items)?;
                self.push(id);
            }
            op::EMPTY_LIST => {
                let id = self.new_list(Vec::new())?;
                self.push(id);
            }
            op::LIST => {
                let items = self.pop_mark("LIST")?;
                let id = self.new_list(items)?;
                self.push(id);
            }
            op::APPEND => {
                let v = self.pop("APPEND")?;
                self.extend_top(vec![v], "APPEND")?;
            }
            op::APPENDS => {
                let items = self.pop_mark("APPENDS")?;
                self.extend_top(items, "APPENDS")?;
            }
            op::EMPTY_DICT => {
                let id = self.new_dict(Vec::new())?;
                self.push(id);
            }
            op::DICT => {
                let items = self.pop_mark("DICT")?;
                let pairs = self.pairs(items, "DICT")?;
                let id = self.new_dict(pairs)?;
                self.push(id);
            }
            op::SETITEM => {
                let v = self.pop("SETITEM")?;
                let k = self.pop("SETITEM")?;
                self.set_items_top(vec![(k, v)], "SETITEM")?;
            }
            op::SETITEMS => {
                let items = self.pop_mark("SETITEMS")?;
                let pairs = self.pairs(items, "SETITEMS")?;
                self.set_items_top(pairs, "SETITEMS")?;
            }
            op::GLOBAL => {
                let module = self.read_text_line("GLOBAL")?;
                let name = self.read_text_line("GLOBAL")?;
                self.push(PickleValue::Global(Arc::new(GlobalName { module, name })));
            }
            op::STACK_GLOBAL => {
                let name = self.pop("STACK_GLOBAL")?;
                let module = self.pop("STACK_GLOBAL")?;
                match (module, name) {
                    (PickleValue::Str(module), PickleValue::Str(name)) => {
                        self.push(PickleValue::Global(Arc::new(GlobalName {
                            module: module.as_str().to_owned(),
                            name: name.as_str().to_owned(),
                        })));
                    }
                    _ => return Err(self.error("STACK_GLOBAL needs two strings")),
                }
            }
            op::REDUCE => {
                let args = self.pop("REDUCE")?;
                let callable = self.pop("REDUCE")?;
                let id = self.new_object(Construction::Reduce { callable, args })?;
                self.push(id);
            }
            op::NEWOBJ => {
                let args = self.pop("NEWOBJ")?;
                let class = self.pop("NEWOBJ")?;
                let id = self.new_object(Construction::NewObj { class, args })?;
                self.push(id);
            }
            op::NEWOBJ_EX => {
                let kwargs = self.pop("NEWOBJ_EX")?;
                let args = self.pop("NEWOBJ_EX")?;
                let class = self.pop("NEWOBJ_EX")?;
                let no_kwargs =
                    matches!(kwargs, PickleValue::Dict(d) if self.tree.dict(d).is_empty());
                if !no_kwargs {
                    return Err(self.unsupported("NEWOBJ_EX with keyword arguments"));
                }
                let id = self.new_object(Construction::NewObj { class, args })?;
                self.push(id);
            }
            op::BUILD => {
                let state = self.pop("BUILD")?;
                let target = self.top("BUILD")?.clone();
                let PickleValue::Object(id) = target else {
                    return Err(self.error(format!(
                        "BUILD applied to a {} (only objects have state)",
                        target.kind_name()
                    )));
                };
                let obj = self.object_mut(id)?;
                if obj.state.is_some() {
                    return Err(self.error("BUILD applied twice to one object"));
                }
                obj.state = Some(state);
            }
            op::PERSID => {
                let pid = self.read_text_line("PERSID")?;
                let id = self.new_persistent(PickleValue::Str(Arc::new(pid)))?;
                self.push(id);
            }
            op::BINPERSID => {
                let pid = self.pop("BINPERSID")?;
                let id = self.new_persistent(pid)?;
                self.push(id);
            }
            op::BINPUT => {
                let i = self.read_u8("BINPUT")?;
                self.memo_put(i.into(), "BINPUT")?;
            }
            op::LONG_BINPUT => {
                let i = self.read_u32("LONG_BINPUT")?;
                self.memo_put(i, "LONG_BINPUT")?;
            }
            op::PUT => {
                let line = self.read_line("PUT")?;
                let i = self.parse_memo_index(line, "PUT")?;
                self.memo_put(i, "PUT")?;
            }
            op::MEMOIZE => {
                let i = u32::try_from(self.memo.len()).map_err(|_| self.error("memo is full"))?;
                self.memo_put(i, "MEMOIZE")?;
            }
            op::BINGET => {
                let i = self.read_u8("BINGET")?;
                self.memo_get(i.into())?;
            }
            op::LONG_BINGET => {
                let i = self.read_u32("LONG_BINGET")?;
                self.memo_get(i)?;
            }
            op::GET => {
                let line = self.read_line("GET")?;
                let i = self.parse_memo_index(line, "GET")?;
                self.memo_get(i)?;
            }
            op::EMPTY_SET | op::ADDITEMS | op::FROZENSET => {
                return Err(self.unsupported("sets (EMPTY_SET/ADDITEMS/FROZENSET opcodes)"));
            }
            op::INST | op::OBJ => {
                return Err(self.unsupported("protocol 0/1 class instances (INST/OBJ opcodes)"));
            }
            op::STRING | op::UNICODE => {
                return Err(self.unsupported("protocol 0 text strings (STRING/UNICODE opcodes)"));
            }
            op::EXT1 | op::EXT2 | op::EXT4 => {
                return Err(self.unsupported("the copyreg extension registry (EXT opcodes)"));
            }
            op::NEXT_BUFFER | op::READONLY_BUFFER => {
                return Err(self.unsupported("out-of-band buffers (protocol 5)"));
            }
            other => return Err(self.error(format!("unknown opcode 0x{other:02x}"))),
        }
        Ok(())
    }

    // ----- errors -----

    fn error(&self, message: impl Into<String>) -> SerializeError {
        SerializeError::Pickle {
            record: self.record.to_owned(),
            offset: self.op_start,
            message: message.into(),
        }
    }

    fn unsupported(&self, what: &str) -> SerializeError {
        SerializeError::unsupported(self.record, format!("{what} at byte {}", self.op_start))
    }

    // ----- reading the stream -----

    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "{what} needs {n} bytes but only {} remain (truncated stream)",
                self.remaining()
            )));
        }
        let data: &'a [u8] = self.data;
        let out = &data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn take_u64(&mut self, n: u64, what: &str) -> Result<&'a [u8]> {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        self.take(n, what)
    }

    fn read_u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    fn read_u32(&mut self, what: &str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn read_i32(&mut self, what: &str) -> Result<i32> {
        let b = self.take(4, what)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn read_u64(&mut self, what: &str) -> Result<u64> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// The bytes up to the next newline (which is consumed but not returned).
    fn read_line(&mut self, what: &str) -> Result<&'a [u8]> {
        let data: &'a [u8] = self.data;
        let rest = &data[self.pos..];
        let Some(n) = rest.iter().position(|&b| b == b'\n') else {
            return Err(self.error(format!("{what} argument is not terminated by a newline")));
        };
        self.pos += n + 1;
        Ok(&rest[..n])
    }

    fn read_text_line(&mut self, what: &str) -> Result<String> {
        let line = self.read_line(what)?;
        String::from_utf8(line.to_vec())
            .map_err(|_| self.error(format!("{what} argument is not valid UTF-8")))
    }

    fn parse_decimal(&self, digits: &[u8], what: &str) -> Result<i64> {
        std::str::from_utf8(digits)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .ok_or_else(|| self.error(format!("{what} with an unparsable or out-of-range value")))
    }

    fn parse_memo_index(&self, line: &[u8], what: &str) -> Result<u32> {
        let v = self.parse_decimal(line, what)?;
        u32::try_from(v).map_err(|_| self.error(format!("{what} with memo index {v}")))
    }

    fn push_unicode(&mut self, n: u64, what: &str) -> Result<()> {
        let bytes = self.take_u64(n, what)?;
        let s = std::str::from_utf8(bytes)
            .map_err(|_| self.error(format!("{what} string is not valid UTF-8")))?;
        self.push(PickleValue::Str(Arc::new(s.to_owned())));
        Ok(())
    }

    fn push_bytes(&mut self, n: u64, what: &str) -> Result<()> {
        let bytes = self.take_u64(n, what)?;
        self.push(PickleValue::Bytes(Arc::new(bytes.to_vec())));
        Ok(())
    }

    // ----- the stack -----

    /// The lowest stack index reachable (the innermost MARK).
    fn floor(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    fn push(&mut self, v: PickleValue) {
        self.stack.push(v);
    }

    fn pop(&mut self, what: &str) -> Result<PickleValue> {
        if self.stack.len() <= self.floor() {
            return Err(self.error(format!("{what} on an empty stack")));
        }
        self.stack
            .pop()
            .ok_or_else(|| self.error(format!("{what} on an empty stack")))
    }

    fn top(&self, what: &str) -> Result<&PickleValue> {
        if self.stack.len() <= self.floor() {
            return Err(self.error(format!("{what} on an empty stack")));
        }
        self.stack
            .last()
            .ok_or_else(|| self.error(format!("{what} on an empty stack")))
    }

    /// The values pushed since the innermost MARK, removing that mark.
    fn pop_mark(&mut self, what: &str) -> Result<Vec<PickleValue>> {
        let Some(mark) = self.marks.pop() else {
            return Err(self.error(format!("{what} without a preceding MARK")));
        };
        Ok(self.stack.split_off(mark.min(self.stack.len())))
    }

    fn pairs(
        &self,
        items: Vec<PickleValue>,
        what: &str,
    ) -> Result<Vec<(PickleValue, PickleValue)>> {
        if !items.len().is_multiple_of(2) {
            return Err(self.error(format!("{what} with an odd number of values")));
        }
        let mut out = Vec::with_capacity(items.len() / 2);
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            out.push((k, v));
        }
        Ok(out)
    }

    // ----- mutating containers on the stack -----

    fn extend_top(&mut self, items: Vec<PickleValue>, what: &str) -> Result<()> {
        let target = self.top(what)?.clone();
        match target {
            PickleValue::List(ListId(i)) => {
                let list = self
                    .tree
                    .lists
                    .get_mut(i as usize)
                    .ok_or_else(|| SerializeError::invalid("pickle", "dangling list id"))?;
                list.extend(items);
            }
            PickleValue::Object(id) => self.object_mut(id)?.list_items.extend(items),
            other => {
                return Err(self.error(format!("{what} to a {}", other.kind_name())));
            }
        }
        Ok(())
    }

    fn set_items_top(&mut self, pairs: Vec<(PickleValue, PickleValue)>, what: &str) -> Result<()> {
        let target = self.top(what)?.clone();
        match target {
            PickleValue::Dict(DictId(i)) => {
                let dict = self
                    .tree
                    .dicts
                    .get_mut(i as usize)
                    .ok_or_else(|| SerializeError::invalid("pickle", "dangling dict id"))?;
                dict.extend(pairs);
            }
            PickleValue::Object(id) => self.object_mut(id)?.dict_items.extend(pairs),
            other => {
                return Err(self.error(format!("{what} on a {}", other.kind_name())));
            }
        }
        Ok(())
    }

    fn object_mut(&mut self, ObjectId(i): ObjectId) -> Result<&mut PickleObject> {
        self.tree
            .objects
            .get_mut(i as usize)
            .ok_or_else(|| SerializeError::invalid("pickle", "dangling object id"))
    }

    // ----- arenas -----

    fn next_id(&self, len: usize) -> Result<u32> {
        u32::try_from(len).map_err(|_| self.error("too many values in one pickle"))
    }

    fn new_tuple(&mut self, items: Vec<PickleValue>) -> Result<PickleValue> {
        let id = self.next_id(self.tree.tuples.len())?;
        self.tree.tuples.push(items);
        Ok(PickleValue::Tuple(TupleId(id)))
    }

    fn new_list(&mut self, items: Vec<PickleValue>) -> Result<PickleValue> {
        let id = self.next_id(self.tree.lists.len())?;
        self.tree.lists.push(items);
        Ok(PickleValue::List(ListId(id)))
    }

    fn new_dict(&mut self, items: Vec<(PickleValue, PickleValue)>) -> Result<PickleValue> {
        let id = self.next_id(self.tree.dicts.len())?;
        self.tree.dicts.push(items);
        Ok(PickleValue::Dict(DictId(id)))
    }

    fn new_object(&mut self, construction: Construction) -> Result<PickleValue> {
        let id = self.next_id(self.tree.objects.len())?;
        self.tree.objects.push(PickleObject {
            construction,
            state: None,
            list_items: Vec::new(),
            dict_items: Vec::new(),
        });
        Ok(PickleValue::Object(ObjectId(id)))
    }

    fn new_persistent(&mut self, pid: PickleValue) -> Result<PickleValue> {
        let id = self.next_id(self.tree.persistent_ids.len())?;
        self.tree.persistent_ids.push(pid);
        Ok(PickleValue::Persistent(PersistentId(id)))
    }

    // ----- the memo -----

    fn memo_put(&mut self, index: u32, what: &str) -> Result<()> {
        let top = self.top(what)?.clone();
        self.memo.insert(index, top);
        Ok(())
    }

    fn memo_get(&mut self, index: u32) -> Result<()> {
        let v = self
            .memo
            .get(&index)
            .cloned()
            .ok_or_else(|| self.error(format!("memo entry {index} was never stored")))?;
        self.push(v);
        Ok(())
    }
}

/// Decodes the little-endian two's complement integer of LONG1/LONG4.
fn decode_long(bytes: &[u8]) -> PickleValue {
    if bytes.is_empty() {
        return PickleValue::Int(0);
    }
    let negative = bytes[bytes.len() - 1] & 0x80 != 0;
    let fill = if negative { 0xff } else { 0x00 };
    // Drop redundant sign-extension bytes, keeping one that carries the sign.
    let mut len = bytes.len();
    while len > 1 && bytes[len - 1] == fill && (bytes[len - 2] & 0x80 != 0) == negative {
        len -= 1;
    }
    if len > 8 {
        return PickleValue::BigInt(Arc::new(bytes.to_vec()));
    }
    let mut a = [fill; 8];
    a[..len].copy_from_slice(&bytes[..len]);
    PickleValue::Int(i64::from_le_bytes(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(data: &[u8]) -> Result<PickleTree> {
        unpickle(data, "test.pkl")
    }

    fn root(data: &[u8]) -> PickleValue {
        run(data).unwrap().root
    }

    #[test]
    fn scalars() {
        assert_eq!(root(b"\x80\x02K\x05."), PickleValue::Int(5));
        assert_eq!(root(b"\x80\x02M\x00\x01."), PickleValue::Int(256));
        assert_eq!(root(b"\x80\x02J\xff\xff\xff\xff."), PickleValue::Int(-1));
        assert_eq!(root(b"\x80\x02\x88."), PickleValue::Bool(true));
        assert_eq!(root(b"\x80\x02N."), PickleValue::None);
        // pickle.dumps(2.5, protocol=2): BINFLOAT is big-endian.
        assert_eq!(
            root(b"\x80\x02G@\x04\x00\x00\x00\x00\x00\x00."),
            PickleValue::Float(2.5)
        );
        assert_eq!(root(b"I01\n."), PickleValue::Bool(true));
        assert_eq!(root(b"I-7\n."), PickleValue::Int(-7));
        assert_eq!(root(b"F1.5\n."), PickleValue::Float(1.5));
    }

    #[test]
    fn longs() {
        // pickle.dumps(2**40, protocol=2) and pickle.dumps(-2**63, protocol=2)
        assert_eq!(
            root(b"\x80\x02\x8a\x06\x00\x00\x00\x00\x00\x01."),
            PickleValue::Int(1 << 40)
        );
        assert_eq!(
            root(b"\x80\x02\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80."),
            PickleValue::Int(i64::MIN)
        );
        assert_eq!(root(b"\x80\x02\x8a\x00."), PickleValue::Int(0));
        // 2**64 needs 9 bytes.
        assert!(matches!(
            root(b"\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."),
            PickleValue::BigInt(_)
        ));
        // A redundant sign byte still fits: -1 as two bytes.
        assert_eq!(root(b"\x80\x02\x8a\x02\xff\xff."), PickleValue::Int(-1));
        assert_eq!(
            root(b"\x80\x02\x8b\x01\x00\x00\x00\x7f."),
            PickleValue::Int(127)
        );
    }

    #[test]
    fn strings_and_bytes() {
        let t = run(b"\x80\x04\x8c\x03abc\x94.").unwrap();
        assert_eq!(t.root, PickleValue::Str(Arc::new("abc".into())));
        let t = run(b"\x80\x02X\x02\x00\x00\x00\xc3\xa9.").unwrap();
        assert_eq!(t.root, PickleValue::Str(Arc::new("\u{e9}".into())));
        let t = run(b"\x80\x03C\x02hi.").unwrap();
        assert_eq!(t.root, PickleValue::Bytes(Arc::new(b"hi".to_vec())));
        assert!(run(b"\x80\x02X\x01\x00\x00\x00\xff.").is_err());
    }

    #[test]
    fn containers() {
        // pickle.dumps([1, (2, 3), {'a': None}], protocol=2)
        let data = b"\x80\x02]q\x00(K\x01K\x02K\x03\x86q\x01}q\x02X\x01\x00\x00\x00aq\x03Nse.";
        let t = run(data).unwrap();
        let PickleValue::List(l) = t.root else {
            panic!("not a list")
        };
        let items = t.list(l);
        assert_eq!(items.len(), 3);
        assert_eq!(items[0], PickleValue::Int(1));
        assert_eq!(
            t.as_tuple(&items[1]).unwrap(),
            &[PickleValue::Int(2), PickleValue::Int(3)]
        );
        let PickleValue::Dict(d) = items[2] else {
            panic!("not a dict")
        };
        assert_eq!(t.dict(d).len(), 1);
    }

    #[test]
    fn memo_keeps_sharing() {
        // a = []; pickle.dumps([a, a], protocol=2)
        let data = b"\x80\x02]q\x00(]q\x01h\x01e.";
        let t = run(data).unwrap();
        let PickleValue::List(outer) = t.root else {
            panic!()
        };
        let items = t.list(outer);
        assert_eq!(items[0], items[1]);
        assert!(matches!(items[0], PickleValue::List(_)));
        // a list containing itself: a = []; a.append(a)
        let t = run(b"\x80\x02]q\x00h\x00a.").unwrap();
        let PickleValue::List(l) = t.root else {
            panic!()
        };
        assert_eq!(t.list(l), &[PickleValue::List(l)]);
    }

    #[test]
    fn globals_are_names_only() {
        let data = b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R.";
        let t = run(data).unwrap();
        let PickleValue::Object(o) = t.root else {
            panic!()
        };
        let obj = t.object(o).unwrap();
        let PickleValue::Global(g) = obj.callee() else {
            panic!()
        };
        assert_eq!(g.to_string(), "os.system");
        // STACK_GLOBAL (protocol 4)
        let data = b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93.";
        let PickleValue::Global(g) = root(data) else {
            panic!()
        };
        assert_eq!((g.module.as_str(), g.name.as_str()), ("builtins", "eval"));
    }

    #[test]
    fn build_and_setitems_on_objects() {
        // collections.OrderedDict() with one item, then a NEWOBJ + BUILD.
        let data = b"\x80\x02ccollections\nOrderedDict\n)RX\x01\x00\x00\x00aK\x01s.";
        let t = run(data).unwrap();
        let PickleValue::Object(o) = t.root else {
            panic!()
        };
        assert_eq!(t.object(o).unwrap().dict_items.len(), 1);
        let data = b"\x80\x02c__torch__\nM\n)\x81}b.";
        let t = run(data).unwrap();
        let PickleValue::Object(o) = t.root else {
            panic!()
        };
        assert!(matches!(
            t.object(o).unwrap().state,
            Some(PickleValue::Dict(_))
        ));
        assert!(run(b"\x80\x02c__torch__\nM\n)\x81}b}b.").is_err());
        assert!(run(b"\x80\x02]}b.").is_err());
    }

    #[test]
    fn persistent_ids() {
        let t = run(b"\x80\x02X\x01\x00\x00\x000Q.").unwrap();
        let PickleValue::Persistent(p) = t.root else {
            panic!()
        };
        assert_eq!(
            t.persistent_id(p),
            Some(&PickleValue::Str(Arc::new("0".into())))
        );
        assert!(matches!(root(b"P7\n."), PickleValue::Persistent(_)));
    }

    #[test]
    fn protocol_4_framing() {
        // pickle.dumps((1, 'x'), protocol=4)
        let data = b"\x80\x04\x95\x09\x00\x00\x00\x00\x00\x00\x00K\x01\x8c\x01x\x94\x86\x94.";
        let t = run(data).unwrap();
        assert_eq!(t.as_tuple(&t.root).unwrap().len(), 2);
    }

    #[test]
    fn corrupt_streams_are_errors() {
        let cases: &[&[u8]] = &[
            b"",
            b"\x80\x02",
            b"\x80\x09N.",
            b"\x80\x02X\xff\xff\xff\xff",
            b"\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\xffabc",
            b"\x80\x02\x95\xff\xff\xff\xff\xff\xff\xff\x7fN.",
            b"\x80\x02\x8b\xff\xff\xff\xff.",
            b"\x80\x02T\xfe\xff\xff\xff.",
            b"\x80\x02.",
            b"\x80\x02t.",
            b"\x80\x02(N\x86.",
            b"\x80\x02h\x05.",
            b"\x80\x02q\x00.",
            b"\x80\x02K\x01K\x01a.",
            b"\x80\x02}K\x01s.",
            b"\x80\x02(K\x01d.",
            b"\x80\x02cos\nsystem",
            b"\x80\x02K\x01K\x02\x93.",
            b"\x80\x02\xff.",
            b"\x80\x02\x8f.",
            b"\x80\x02N0N",
        ];
        for case in cases {
            let r = run(case);
            assert!(r.is_err(), "{case:?} was accepted: {r:?}");
        }
        let msg = run(b"\x80\x02X\xff\xff\xff\xff").unwrap_err().to_string();
        assert!(
            msg.starts_with("test.pkl: malformed pickle at byte 2"),
            "{msg}"
        );
        assert!(msg.contains("truncated"), "{msg}");
    }

    #[test]
    fn mark_hides_values_below_it() {
        // MARK then POP on an empty frame pops the mark (Python semantics); MARK then TUPLE1
        // cannot reach below the mark.
        assert_eq!(root(b"\x80\x02K\x01(0."), PickleValue::Int(1));
        assert!(run(b"\x80\x02K\x01(\x85.").is_err());
        assert!(run(b"\x80\x02K\x01(\x81.").is_err());
    }
}
