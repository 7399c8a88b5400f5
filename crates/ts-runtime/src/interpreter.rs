//! The interpreter: runs [`Code`] with an explicit frame stack so that execution can suspend on
//! `wait` for an unfinished future and resume later, possibly on another thread.

use std::sync::Arc;

use ts_core::{DictKey, Future, IValue, Type};
use ts_ir::Function;
use ts_ops::Stack;
use ts_tensor::Error;

use crate::code::{Code, Instr};
use crate::error::{ExecutionError, TraceFrame};
use crate::executor::code_for_call;

/// One activation: a function's code, its program counter and registers.
struct Frame {
    code: Arc<Code>,
    pc: usize,
    registers: Vec<IValue>,
    /// Stack height below this frame's values.
    base: usize,
}

/// The complete state of one execution.
pub struct InterpreterState {
    frames: Vec<Frame>,
    stack: Stack,
}

/// What running did: finished with the outputs, or suspended waiting for a future.
pub enum Step {
    Done(Vec<IValue>),
    Suspended(Arc<Future>),
}

impl InterpreterState {
    /// A state ready to run `code` on `inputs`.
    pub fn new(code: Arc<Code>, inputs: Vec<IValue>) -> Result<InterpreterState, ExecutionError> {
        crate::run::install_method_invoker();
        if inputs.len() != code.num_inputs {
            return Err(ExecutionError::plain(Error::runtime(format!(
                "{}() expected {} arguments but got {}",
                code.function_name,
                code.num_inputs,
                inputs.len()
            ))));
        }
        let frame = new_frame(code, inputs, 0);
        Ok(InterpreterState {
            frames: vec![frame],
            stack: Vec::with_capacity(16),
        })
    }

    fn traceback(&self) -> Vec<TraceFrame> {
        self.frames
            .iter()
            .map(|f| {
                let info = f.code.instr_nodes.get(f.pc).cloned().flatten();
                TraceFrame {
                    function: f.code.function_name.clone(),
                    range: info.and_then(|i| i.range.clone()),
                }
            })
            .collect()
    }

    fn fail(&self, e: Error) -> ExecutionError {
        ExecutionError::with_trace(e, self.traceback())
    }

    /// Runs until the code returns or must wait for an unfinished future.
    pub fn run(&mut self) -> Result<Step, ExecutionError> {
        // The running frame's code, re-cloned only when the frame changes: cloning the `Arc`
        // for every instruction cost two atomic operations per instruction.
        let mut code = match self.frames.last() {
            Some(f) => f.code.clone(),
            None => {
                return Err(ExecutionError::plain(Error::runtime(
                    "internal error: no frame",
                )))
            }
        };
        loop {
            let frame = self
                .frames
                .last_mut()
                .ok_or_else(|| ExecutionError::plain(Error::runtime("internal error: no frame")))?;
            if !Arc::ptr_eq(&code, &frame.code) {
                code = frame.code.clone();
            }
            let Some(instr) = code.instructions.get(frame.pc) else {
                return Err(self.fail(Error::runtime(
                    "internal error: fell off the end of the code",
                )));
            };
            match instr {
                Instr::Load(r) => {
                    let v = frame.registers[*r as usize].clone();
                    self.stack.push(v);
                }
                Instr::Move(r) => {
                    let v = std::mem::take(&mut frame.registers[*r as usize]);
                    self.stack.push(v);
                }
                Instr::Store(r) => {
                    let v = self.stack.pop().unwrap_or_default();
                    frame.registers[*r as usize] = v;
                }
                Instr::Drop => {
                    self.stack.pop();
                }
                Instr::DropR(r) => {
                    frame.registers[*r as usize] = IValue::None;
                }
                Instr::LoadC(k) => self.stack.push(code.constants[*k as usize].clone()),
                Instr::SetInt(r, v) => frame.registers[*r as usize] = IValue::Int(*v),
                Instr::Uninitialized => self.stack.push(IValue::Uninitialized),
                Instr::Op(k) => {
                    if let Err(e) = (code.operations[*k as usize])(&mut self.stack) {
                        return Err(self.fail(e));
                    }
                }
                Instr::Jf(t) => {
                    let c = match self.stack.pop() {
                        Some(IValue::Bool(b)) => b,
                        Some(IValue::Int(i)) => i != 0,
                        other => {
                            let got = other.map(|v| v.tag_name()).unwrap_or("nothing");
                            return Err(self.fail(Error::runtime(format!(
                                "expected a bool condition, got {got}"
                            ))));
                        }
                    };
                    if !c {
                        frame.pc = *t as usize;
                        continue;
                    }
                }
                Instr::Jmp(t) => {
                    frame.pc = *t as usize;
                    continue;
                }
                Instr::LoopGuard { i, max, cond, exit } => {
                    let iv = frame.registers[*i as usize].as_int().unwrap_or(0);
                    let mv = match &frame.registers[*max as usize] {
                        IValue::Int(m) => *m,
                        _ => i64::MAX,
                    };
                    let cv = match &frame.registers[*cond as usize] {
                        IValue::Bool(b) => *b,
                        IValue::Int(x) => *x != 0,
                        _ => false,
                    };
                    if !(iv < mv && cv) {
                        frame.pc = *exit as usize;
                        continue;
                    }
                }
                Instr::LoopNext { i, top } => {
                    let iv = frame.registers[*i as usize].as_int().unwrap_or(0);
                    frame.registers[*i as usize] = IValue::Int(iv + 1);
                    frame.pc = *top as usize;
                    continue;
                }
                Instr::Call(k, n) => {
                    let callee = code.functions[*k as usize].clone();
                    frame.pc += 1;
                    let Some(f) = callee.as_any().downcast_ref::<Function>() else {
                        return Err(
                            self.fail(Error::runtime("callee is not a TorchScript function"))
                        );
                    };
                    self.push_call(f, *n as usize)?;
                    continue;
                }
                Instr::CallMethod(k, n) => {
                    let name = &code.names[*k as usize];
                    let n = *n as usize;
                    let obj = self.stack[self.stack.len() - n].clone();
                    let IValue::Object(o) = &obj else {
                        return Err(self.fail(Error::runtime(format!(
                            "cannot call method '{name}' on a value of type '{}'",
                            obj.tag_name()
                        ))));
                    };
                    let Some(m) = o.class.find_method(name) else {
                        return Err(self.fail(Error::runtime(format!(
                            "'{}' object has no attribute or method '{name}'",
                            o.class.name
                        ))));
                    };
                    frame.pc += 1;
                    let Some(f) = m.as_any().downcast_ref::<Function>() else {
                        return Err(self.fail(Error::runtime(format!(
                            "method '{name}' is not a TorchScript function"
                        ))));
                    };
                    self.push_call(f, n)?;
                    continue;
                }
                Instr::Ret => {
                    let done = self.frames.pop().expect("a frame is running");
                    if self.frames.is_empty() {
                        let out = self.stack.split_off(done.base.min(self.stack.len()));
                        return Ok(Step::Done(out));
                    }
                    continue;
                }
                Instr::Fork(k, n) => {
                    let sub = code.forked[*k as usize].clone();
                    let args = self.stack.split_off(self.stack.len() - *n as usize);
                    let fut = Arc::new(Future::new(Type::any()));
                    spawn_forked(sub, args, fut.clone());
                    self.stack.push(IValue::Future(fut));
                }
                Instr::Wait => {
                    let fut = match self.stack.last() {
                        Some(IValue::Future(f)) => f.clone(),
                        _ => return Err(self.fail(Error::runtime("wait expects a Future"))),
                    };
                    if !fut.is_completed() {
                        // Resume at this instruction once the future completes.
                        return Ok(Step::Suspended(fut));
                    }
                    self.stack.pop();
                    match fut.wait() {
                        Ok(v) => self.stack.push(v),
                        Err(e) => return Err(self.fail(e)),
                    }
                }
                Instr::TupleConstruct(n, t) => {
                    let elems = self.stack.split_off(self.stack.len() - *n as usize);
                    let v = if *t > 0 {
                        IValue::named_tuple(code.types[*t as usize].clone(), elems)
                    } else {
                        IValue::tuple(elems)
                    };
                    self.stack.push(v);
                }
                Instr::ListConstruct(t, n) => {
                    let elems = self.stack.split_off(self.stack.len() - *n as usize);
                    self.stack
                        .push(IValue::list(code.types[*t as usize].clone(), elems));
                }
                Instr::DictConstruct(t, n) => {
                    let flat = self.stack.split_off(self.stack.len() - 2 * *n as usize);
                    let (kt, vt) = match &*code.types[*t as usize] {
                        Type::Dict(k, v) => (k.clone(), v.clone()),
                        _ => (Type::any(), Type::any()),
                    };
                    let mut map = ts_core::ivalue::Dict {
                        key_type: kt,
                        value_type: vt,
                        entries: Default::default(),
                    };
                    {
                        let entries = map.entries.get_mut();
                        let mut it = flat.into_iter();
                        while let (Some(k), Some(v)) = (it.next(), it.next()) {
                            entries.insert(DictKey(k), v);
                        }
                    }
                    self.stack.push(IValue::Dict(Arc::new(map)));
                }
                Instr::ListUnpack(n) => {
                    let l = match self.stack.pop() {
                        Some(IValue::List(l)) => l,
                        _ => return Err(self.fail(Error::runtime("ListUnpack expects a list"))),
                    };
                    let items = l.items.read();
                    if items.len() != *n as usize {
                        let msg = format!(
                            "Expected {} elements in a list but found {}",
                            n,
                            items.len()
                        );
                        drop(items);
                        return Err(self.fail(Error::runtime(msg)));
                    }
                    self.stack.extend(items.iter().cloned());
                }
                Instr::TupleUnpack(n) => {
                    let t = match self.stack.pop() {
                        Some(IValue::Tuple(t)) => t,
                        _ => return Err(self.fail(Error::runtime("TupleUnpack expects a tuple"))),
                    };
                    if t.elements.len() != *n as usize {
                        return Err(self.fail(Error::runtime(format!(
                            "Expected a tuple of {n} elements but got {}",
                            t.elements.len()
                        ))));
                    }
                    self.stack.extend(t.elements.iter().cloned());
                }
                Instr::TupleSlice(b, e) => {
                    let t = match self.stack.pop() {
                        Some(IValue::Tuple(t)) => t,
                        _ => return Err(self.fail(Error::runtime("TupleSlice expects a tuple"))),
                    };
                    let (b, e) = (
                        (*b as usize).min(t.elements.len()),
                        (*e as usize).min(t.elements.len()),
                    );
                    self.stack
                        .push(IValue::tuple(t.elements[b..e.max(b)].to_vec()));
                }
                Instr::GetAttr(slot) => {
                    let v = match self.stack.pop() {
                        Some(IValue::Object(o)) => o.slots.read().get(*slot as usize).cloned(),
                        _ => None,
                    };
                    match v {
                        Some(v) => self.stack.push(v),
                        None => {
                            return Err(self
                                .fail(Error::runtime("GetAttr on a value that is not an object")))
                        }
                    }
                }
                Instr::GetAttrByName(k) => {
                    let name = &code.names[*k as usize];
                    let v = match self.stack.pop() {
                        Some(IValue::Object(o)) => o
                            .class
                            .attribute_index(name)
                            .and_then(|i| o.slots.read().get(i).cloned()),
                        _ => None,
                    };
                    match v {
                        Some(v) => self.stack.push(v),
                        None => {
                            return Err(self
                                .fail(Error::runtime(format!("object has no attribute '{name}'"))))
                        }
                    }
                }
                Instr::SetAttr(slot) => {
                    let v = self.stack.pop().unwrap_or_default();
                    match self.stack.pop() {
                        Some(IValue::Object(o)) => {
                            let mut slots = o.slots.write();
                            let i = *slot as usize;
                            if i >= slots.len() {
                                slots.resize(i + 1, IValue::None);
                            }
                            slots[i] = v;
                        }
                        _ => {
                            return Err(self
                                .fail(Error::runtime("SetAttr on a value that is not an object")))
                        }
                    }
                }
                Instr::IsInstance(k) => {
                    let v = self.stack.pop().unwrap_or_default();
                    let hit = code.type_lists[*k as usize]
                        .iter()
                        .any(|t| v.is_instance_of(t));
                    self.stack.push(IValue::Bool(hit));
                }
                Instr::CreateObject(t) => {
                    let Some(c) = code.types[*t as usize].class_type().cloned() else {
                        return Err(
                            self.fail(Error::runtime("CreateObject of a type that is not a class"))
                        );
                    };
                    let n = c.num_attributes();
                    self.stack.push(IValue::object(c, vec![IValue::None; n]));
                }
            }
            if let Some(f) = self.frames.last_mut() {
                f.pc += 1;
            }
        }
    }

    /// Pops `n` arguments and enters `f`.
    fn push_call(&mut self, f: &Function, n: usize) -> Result<(), ExecutionError> {
        let args = self.stack.split_off(self.stack.len() - n);
        let code = match code_for_call(f, &args) {
            Ok(c) => c,
            Err(e) => return Err(self.fail(e)),
        };
        if self.frames.len() > 10_000 {
            return Err(self.fail(Error::runtime("maximum recursion depth exceeded")));
        }
        let base = self.stack.len();
        self.frames.push(new_frame(code, args, base));
        Ok(())
    }
}

fn new_frame(code: Arc<Code>, inputs: Vec<IValue>, base: usize) -> Frame {
    let mut registers = inputs;
    registers.resize(code.num_registers.max(registers.len()), IValue::None);
    Frame {
        code,
        pc: 0,
        registers,
        base,
    }
}

/// Runs a state to completion on this thread, blocking on unfinished futures.
pub fn run_to_completion(mut st: InterpreterState) -> Result<Vec<IValue>, ExecutionError> {
    loop {
        match st.run()? {
            Step::Done(v) => return Ok(v),
            Step::Suspended(f) => {
                // Block until the awaited value exists, then resume (the WAIT re-executes).
                let _ = f.wait();
            }
        }
    }
}

/// Runs a state on the thread pool, completing `fut` with its single output; a suspended state
/// resumes from the awaited future's callback on whichever thread completes it.
pub fn run_async(mut st: InterpreterState, fut: Arc<Future>) {
    match st.run() {
        Ok(Step::Done(mut v)) => {
            let out = if v.len() == 1 {
                v.pop().unwrap_or_default()
            } else {
                IValue::tuple(v)
            };
            fut.complete(Ok(out));
        }
        Ok(Step::Suspended(awaited)) => {
            awaited.add_callback(move |_| {
                rayon::spawn(move || run_async(st, fut));
            });
        }
        Err(e) => fut.complete(Err(e.into_error())),
    }
}

fn spawn_forked(code: Arc<Code>, args: Vec<IValue>, fut: Arc<Future>) {
    match InterpreterState::new(code, args) {
        Ok(st) => rayon::spawn(move || run_async(st, fut)),
        Err(e) => fut.complete(Err(e.into_error())),
    }
}
