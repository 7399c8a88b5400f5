//! The environment: a stack of frames (one per block being emitted) mapping variable names to
//! their types (first-class values, accessed with `prim::Store`/`prim::Load`) or to sugared
//! values (modules, functions, ...), which cannot be reassigned.

use std::collections::{BTreeMap, HashMap};

use ts_core::TypeRef;
use ts_ir::BlockId;

use super::sugared::Sugared;

/// One frame of the environment.
pub struct Frame {
    pub block: BlockId,
    /// First-class variables defined in this frame and their types (ordered for determinism).
    pub types: BTreeMap<String, TypeRef>,
    /// Sugared bindings.
    pub sugared: HashMap<String, Sugared>,
    /// Deferred errors for variables that are not defined along every path, formatted (with
    /// their source highlight) only when the variable is used: most never are.
    pub errors: HashMap<String, crate::error::CompileError>,
}

impl Frame {
    /// A frame for block `b`.
    pub fn new(block: BlockId) -> Frame {
        Frame {
            block,
            types: BTreeMap::new(),
            sugared: HashMap::new(),
            errors: HashMap::new(),
        }
    }
}

/// The stack of frames.
#[derive(Default)]
pub struct Environment {
    pub frames: Vec<Frame>,
}

impl Environment {
    /// The innermost frame.
    pub fn top(&mut self) -> &mut Frame {
        self.frames
            .last_mut()
            .expect("the environment always has a frame")
    }

    /// The type of a first-class variable, searching outward.
    pub fn find_type(&self, name: &str) -> Option<TypeRef> {
        for f in self.frames.iter().rev() {
            if let Some(t) = f.types.get(name) {
                return Some(t.clone());
            }
            if f.sugared.contains_key(name) {
                return None;
            }
        }
        None
    }

    /// The type of a first-class variable in frames strictly outside the innermost one.
    pub fn find_type_in_parents(&self, name: &str) -> Option<TypeRef> {
        let n = self.frames.len();
        self.frames[..n.saturating_sub(1)]
            .iter()
            .rev()
            .find_map(|f| f.types.get(name).cloned())
    }

    /// A sugared binding, searching outward.
    pub fn find_sugared(&self, name: &str) -> Option<Sugared> {
        for f in self.frames.iter().rev() {
            if f.types.contains_key(name) {
                return None;
            }
            if let Some(s) = f.sugared.get(name) {
                return Some(s.clone());
            }
        }
        None
    }

    /// A deferred "not defined along all paths" error for `name`, if recorded.
    pub fn deferred_error(&self, name: &str) -> Option<String> {
        for f in self.frames.iter().rev() {
            if f.types.contains_key(name) || f.sugared.contains_key(name) {
                return None;
            }
            if let Some(e) = f.errors.get(name) {
                return Some(e.to_string());
            }
        }
        None
    }
}
