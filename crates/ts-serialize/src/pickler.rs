//! The pickle virtual machine, writing side: protocol-2 opcodes sized the way Python's pickler
//! and PyTorch's C++ pickler size them, with a memo.
//!
//! The [`Pickler`] emits primitives; callers decide the structure (see
//! [`crate::torch_save_writer`]). Strings and globals are memoized by value, so a repeated string
//! or global costs a BINGET.

use std::collections::HashMap;

use crate::opcodes as op;

/// Python pickles lists and dicts in batches of this many items per APPENDS/SETITEMS.
pub const BATCH_SIZE: usize = 1000;

/// A protocol-2 pickle being written.
#[derive(Default)]
pub struct Pickler {
    out: Vec<u8>,
    next_memo: u32,
    strings: HashMap<String, u32>,
    globals: HashMap<(String, String), u32>,
}

impl Pickler {
    /// A pickle that starts with `PROTO 2`.
    pub fn new() -> Pickler {
        let mut p = Pickler::default();
        p.out.extend_from_slice(&[op::PROTO, 2]);
        p
    }

    /// Ends the pickle with STOP and returns its bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.out.push(op::STOP);
        self.out
    }

    /// Emits one opcode byte.
    pub fn opcode(&mut self, code: u8) {
        self.out.push(code);
    }

    /// Stores the top of the stack in the next memo slot (BINPUT, or LONG_BINPUT past 255) and
    /// returns the slot.
    pub fn memoize(&mut self) -> u32 {
        let i = self.next_memo;
        self.next_memo += 1;
        if i < 256 {
            self.out.extend_from_slice(&[op::BINPUT, i as u8]);
        } else {
            self.out.push(op::LONG_BINPUT);
            self.out.extend_from_slice(&i.to_le_bytes());
        }
        i
    }

    /// Pushes memo slot `i` (BINGET or LONG_BINGET).
    pub fn get(&mut self, i: u32) {
        if i < 256 {
            self.out.extend_from_slice(&[op::BINGET, i as u8]);
        } else {
            self.out.push(op::LONG_BINGET);
            self.out.extend_from_slice(&i.to_le_bytes());
        }
    }

    /// `None`.
    pub fn none(&mut self) {
        self.out.push(op::NONE);
    }

    /// A bool (NEWTRUE/NEWFALSE).
    pub fn bool(&mut self, b: bool) {
        self.out.push(if b { op::NEWTRUE } else { op::NEWFALSE });
    }

    /// An int, in the smallest of BININT1, BININT2, BININT and LONG1, as Python chooses.
    pub fn int(&mut self, v: i64) {
        if (0..=0xff).contains(&v) {
            self.out.extend_from_slice(&[op::BININT1, v as u8]);
        } else if (0..=0xffff).contains(&v) {
            self.out.push(op::BININT2);
            self.out.extend_from_slice(&(v as u16).to_le_bytes());
        } else if i32::try_from(v).is_ok() {
            self.out.push(op::BININT);
            self.out.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            let bytes = minimal_twos_complement(v);
            self.out.extend_from_slice(&[op::LONG1, bytes.len() as u8]);
            self.out.extend_from_slice(&bytes);
        }
    }

    /// A float (BINFLOAT, big-endian).
    pub fn float(&mut self, v: f64) {
        self.out.push(op::BINFLOAT);
        self.out.extend_from_slice(&v.to_be_bytes());
    }

    /// A string (BINUNICODE), memoized by value.
    pub fn str(&mut self, s: &str) {
        if let Some(&i) = self.strings.get(s) {
            self.get(i);
            return;
        }
        self.out.push(op::BINUNICODE);
        self.out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        self.out.extend_from_slice(s.as_bytes());
        let i = self.memoize();
        self.strings.insert(s.to_owned(), i);
    }

    /// A global `module.name` (GLOBAL), memoized by name.
    pub fn global(&mut self, module: &str, name: &str) {
        let key = (module.to_owned(), name.to_owned());
        if let Some(&i) = self.globals.get(&key) {
            self.get(i);
            return;
        }
        self.out.push(op::GLOBAL);
        self.out.extend_from_slice(module.as_bytes());
        self.out.push(b'\n');
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(b'\n');
        let i = self.memoize();
        self.globals.insert(key, i);
    }

    /// MARK.
    pub fn mark(&mut self) {
        self.out.push(op::MARK);
    }

    /// Closes a tuple of `n` items pushed after [`Pickler::tuple_start`]: TUPLE1-3 for up to
    /// three items, otherwise TUPLE (after the MARK `tuple_start` wrote). Empty tuples are
    /// written whole by `tuple_start`.
    pub fn tuple_end(&mut self, n: usize) {
        match n {
            0 => {}
            1 => self.out.push(op::TUPLE1),
            2 => self.out.push(op::TUPLE2),
            3 => self.out.push(op::TUPLE3),
            _ => self.out.push(op::TUPLE),
        }
    }

    /// Starts a tuple of `n` items: EMPTY_TUPLE when empty, MARK when it has more than three.
    pub fn tuple_start(&mut self, n: usize) {
        match n {
            0 => self.out.push(op::EMPTY_TUPLE),
            1..=3 => {}
            _ => self.out.push(op::MARK),
        }
    }

    /// The raw bytes written so far (for tests).
    pub fn bytes(&self) -> &[u8] {
        &self.out
    }
}

/// The shortest little-endian two's complement encoding of `v` (Python's `encode_long`).
fn minimal_twos_complement(v: i64) -> Vec<u8> {
    let mut bytes = v.to_le_bytes().to_vec();
    let fill = if v < 0 { 0xff } else { 0x00 };
    while bytes.len() > 1 {
        let last = bytes[bytes.len() - 1];
        let sign_of_prev = bytes[bytes.len() - 2] & 0x80 != 0;
        if last == fill && sign_of_prev == (v < 0) {
            bytes.pop();
        } else {
            break;
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pickle(f: impl FnOnce(&mut Pickler)) -> Vec<u8> {
        let mut p = Pickler::new();
        f(&mut p);
        p.finish()
    }

    #[test]
    fn ints_are_sized_like_python() {
        // Expected bytes from `pickle.dumps(v, protocol=2)` in CPython 3.11.
        assert_eq!(pickle(|p| p.int(5)), b"\x80\x02K\x05.");
        assert_eq!(pickle(|p| p.int(256)), b"\x80\x02M\x00\x01.");
        assert_eq!(pickle(|p| p.int(-1)), b"\x80\x02J\xff\xff\xff\xff.");
        assert_eq!(pickle(|p| p.int(65536)), b"\x80\x02J\x00\x00\x01\x00.");
        assert_eq!(
            pickle(|p| p.int(1 << 40)),
            b"\x80\x02\x8a\x06\x00\x00\x00\x00\x00\x01."
        );
        assert_eq!(
            pickle(|p| p.int(i64::MIN)),
            b"\x80\x02\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80."
        );
        assert_eq!(
            pickle(|p| p.int(2147483648)),
            b"\x80\x02\x8a\x05\x00\x00\x00\x80\x00."
        );
        assert_eq!(
            pickle(|p| p.int(-2147483649)),
            b"\x80\x02\x8a\x05\xff\xff\xff\x7f\xff."
        );
    }

    #[test]
    fn floats_and_strings() {
        assert_eq!(
            pickle(|p| p.float(2.5)),
            b"\x80\x02G@\x04\x00\x00\x00\x00\x00\x00."
        );
        // pickle.dumps(('ab', 'ab'), protocol=2) with one string object.
        let bytes = pickle(|p| {
            p.tuple_start(2);
            p.str("ab");
            p.str("ab");
            p.tuple_end(2);
            p.memoize();
        });
        assert_eq!(bytes, b"\x80\x02X\x02\x00\x00\x00abq\x00h\x00\x86q\x01.");
    }

    #[test]
    fn memo_switches_to_long_form() {
        let mut p = Pickler::new();
        for i in 0..300 {
            p.str(&format!("s{i}"));
        }
        p.str("s299");
        let bytes = p.finish();
        assert!(bytes.ends_with(&[op::LONG_BINGET, 43, 1, 0, 0, op::STOP]));
    }
}
