//! `Future[T]`: the result of `torch.jit.fork`, completed by another task.

use parking_lot::{Condvar, Mutex};

use crate::ivalue::IValue;
use crate::types::TypeRef;
use ts_tensor::Error;

type Callback = Box<dyn FnOnce(&Result<IValue, Error>) + Send>;

struct FutureState {
    result: Option<Result<IValue, Error>>,
    callbacks: Vec<Callback>,
}

/// A value that will be available later. `wait` blocks; `add_callback` lets a suspended
/// interpreter resume when it completes.
pub struct Future {
    /// The type of the eventual value.
    pub elem_type: TypeRef,
    state: Mutex<FutureState>,
    ready: Condvar,
}

impl Future {
    /// A pending future.
    pub fn new(elem_type: TypeRef) -> Future {
        Future {
            elem_type,
            state: Mutex::new(FutureState {
                result: None,
                callbacks: Vec::new(),
            }),
            ready: Condvar::new(),
        }
    }

    /// Completes the future (first completion wins) and runs the callbacks.
    pub fn complete(&self, result: Result<IValue, Error>) {
        let callbacks = {
            let mut s = self.state.lock();
            if s.result.is_some() {
                return;
            }
            s.result = Some(result);
            std::mem::take(&mut s.callbacks)
        };
        self.ready.notify_all();
        let s = self.state.lock();
        let r = s.result.clone().expect("result was just set");
        drop(s);
        for cb in callbacks {
            cb(&r);
        }
    }

    /// True once completed.
    pub fn is_completed(&self) -> bool {
        self.state.lock().result.is_some()
    }

    /// Blocks until completed and returns the value or the error.
    pub fn wait(&self) -> Result<IValue, Error> {
        let mut s = self.state.lock();
        while s.result.is_none() {
            self.ready.wait(&mut s);
        }
        s.result.clone().expect("loop exits only when set")
    }

    /// Runs `cb` when the future completes (immediately if it already has).
    pub fn add_callback(&self, cb: impl FnOnce(&Result<IValue, Error>) + Send + 'static) {
        let mut s = self.state.lock();
        match &s.result {
            Some(r) => {
                let r = r.clone();
                drop(s);
                cb(&r);
            }
            None => s.callbacks.push(Box::new(cb)),
        }
    }
}

impl std::fmt::Debug for Future {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Future(completed={})", self.is_completed())
    }
}
