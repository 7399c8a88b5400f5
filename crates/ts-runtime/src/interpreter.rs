//! The interpreter: runs [`Code`] with an explicit frame stack so that execution can suspend on
//! `wait` for an unfinished future and resume later, possibly on another thread.

use std::sync::Arc;

use ts_core::{DictKey, Future, IValue, Type};
use ts_ir::Function;
use ts_ops::{Scalar as Plain, Stack};
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
        let innermost = self.frames.len().saturating_sub(1);
        let mut out = Vec::new();
        for (i, f) in self.frames.iter().enumerate() {
            // A caller's pc is already past its call instruction; the frame is shown at the
            // call (PyTorch's traceback includes the entry function's line).
            let pc = if i < innermost {
                f.pc.saturating_sub(1)
            } else {
                f.pc
            };
            let info = f.code.instr_nodes.get(pc).cloned().flatten();
            let range = info.as_ref().and_then(|i| i.range.clone());
            match info.as_ref().and_then(|i| i.callstack.clone()) {
                // An inlined node: one frame per call it was inlined through.
                Some(cs) if !cs.frames.is_empty() => {
                    let mut function = f.code.function_name.clone();
                    for fr in &cs.frames {
                        out.push(TraceFrame {
                            function: std::mem::replace(&mut function, fr.callee.clone()),
                            range: fr.call_site.clone(),
                        });
                    }
                    out.push(TraceFrame { function, range });
                }
                _ => out.push(TraceFrame {
                    function: f.code.function_name.clone(),
                    range,
                }),
            }
        }
        out
    }

    fn fail(&self, e: Error) -> ExecutionError {
        ExecutionError::with_trace(e, self.traceback())
    }

    /// Runs until the code returns or must wait for an unfinished future.
    pub fn run(&mut self) -> Result<Step, ExecutionError> {
        loop {
            let Some(frame) = self.frames.last_mut() else {
                return Err(ExecutionError::plain(Error::runtime(
                    "internal error: no frame",
                )));
            };
            // The running frame's code and pc live in locals while the frame runs; only
            // instructions that change frames (or suspend) leave the inner loop.
            let code = frame.code.clone();
            let mut pc = frame.pc;
            let exit = run_frame(&code, &mut pc, &mut frame.registers, &mut self.stack);
            frame.pc = pc;
            match exit {
                Exit::Fail(e) => return Err(self.fail(e)),
                Exit::Switch => {
                    if let Some(step) = self.switch(&code, pc)? {
                        return Ok(step);
                    }
                }
            }
        }
    }

    /// Runs the frame-changing instruction at `pc`: calls, returns and `wait`.
    fn switch(&mut self, code: &Code, pc: usize) -> Result<Option<Step>, ExecutionError> {
        match code.instructions.get(pc) {
            Some(Instr::Call(k, n)) => {
                let callee = code.functions[*k as usize].clone();
                let Some(f) = callee.as_any().downcast_ref::<Function>() else {
                    return Err(self.fail(Error::runtime("callee is not a TorchScript function")));
                };
                self.advance();
                self.push_call(f, *n as usize)?;
            }
            Some(Instr::CallMethod(k, n)) => {
                let name = &code.names[*k as usize];
                let n = *n as usize;
                let obj = match self.stack.len().checked_sub(n) {
                    Some(i) => self.stack[i].clone(),
                    None => IValue::None,
                };
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
                let Some(f) = m.as_any().downcast_ref::<Function>() else {
                    return Err(self.fail(Error::runtime(format!(
                        "method '{name}' is not a TorchScript function"
                    ))));
                };
                self.advance();
                self.push_call(f, n)?;
            }
            Some(Instr::Ret) => {
                let Some(done) = self.frames.pop() else {
                    return Err(ExecutionError::plain(Error::runtime(
                        "internal error: no frame",
                    )));
                };
                if self.frames.is_empty() {
                    let out = self.stack.split_off(done.base.min(self.stack.len()));
                    return Ok(Some(Step::Done(out)));
                }
            }
            Some(Instr::Wait) => {
                let fut = match self.stack.last() {
                    Some(IValue::Future(f)) => f.clone(),
                    _ => return Err(self.fail(Error::runtime("wait expects a Future"))),
                };
                if !fut.is_completed() {
                    // Resume at this instruction once the future completes.
                    return Ok(Some(Step::Suspended(fut)));
                }
                self.stack.pop();
                match fut.wait() {
                    Ok(v) => self.stack.push(v),
                    Err(e) => return Err(self.fail(e)),
                }
                self.advance();
            }
            _ => {
                return Err(self.fail(Error::runtime(
                    "internal error: fell off the end of the code",
                )))
            }
        }
        Ok(None)
    }

    /// Moves the running frame to its next instruction.
    fn advance(&mut self) {
        if let Some(f) = self.frames.last_mut() {
            f.pc += 1;
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

/// Why [`run_frame`] stopped.
enum Exit {
    /// The instruction at `pc` failed.
    Fail(Error),
    /// The instruction at `pc` calls, returns or waits: [`InterpreterState::switch`] runs it.
    Switch,
}

/// Reads a jump condition (a bool, or an int as C would).
#[inline]
fn condition(v: &IValue) -> Result<bool, Error> {
    match v {
        IValue::Bool(b) => Ok(*b),
        IValue::Int(i) => Ok(*i != 0),
        other => Err(Error::runtime(format!(
            "expected a bool condition, got {}",
            other.tag_name()
        ))),
    }
}

/// Whether a loop runs another iteration: `reg[i] < reg[max] && reg[cond]`.
#[inline]
fn loop_continues(regs: &[IValue], i: u32, max: u32, cond: u32) -> bool {
    let iv = regs[i as usize].as_int().unwrap_or(0);
    let mv = match &regs[max as usize] {
        IValue::Int(m) => *m,
        _ => i64::MAX,
    };
    let cv = match &regs[cond as usize] {
        IValue::Bool(b) => *b,
        IValue::Int(x) => *x != 0,
        _ => false,
    };
    iv < mv && cv
}

/// Stores into a register. Overwriting a plain value (none, bool, int, float) needs no drop,
/// so the common scalar case skips the out-of-line drop of the old value.
#[inline(always)]
fn set_reg(slot: &mut IValue, v: IValue) {
    if matches!(
        slot,
        IValue::None | IValue::Bool(_) | IValue::Int(_) | IValue::Double(_)
    ) {
        // The old value owns nothing, so forgetting it leaks nothing.
        std::mem::forget(std::mem::replace(slot, v));
    } else {
        *slot = v;
    }
}

/// Stores a plain value into a register with one store for the tag and one for the payload.
/// Building the `IValue` first and copying it as a whole made the compiler write its tag and
/// payload separately to the stack and read them back as one 16-byte load, a store-forwarding
/// stall that cost about as much as the rest of a fused instruction.
#[inline(always)]
fn store_plain(slot: &mut IValue, v: Plain) {
    if !matches!(
        slot,
        IValue::None | IValue::Bool(_) | IValue::Int(_) | IValue::Double(_)
    ) {
        *slot = IValue::None;
    }
    // The old value owns nothing now, so overwriting without a drop leaks nothing.
    match v {
        Plain::Int(x) => std::mem::forget(std::mem::replace(slot, IValue::Int(x))),
        Plain::Double(x) => std::mem::forget(std::mem::replace(slot, IValue::Double(x))),
        Plain::Bool(x) => std::mem::forget(std::mem::replace(slot, IValue::Bool(x))),
    }
}

/// Copies a register's value; plain values are copied inline.
#[inline(always)]
fn copy_value(v: &IValue) -> IValue {
    match v {
        IValue::None => IValue::None,
        IValue::Bool(b) => IValue::Bool(*b),
        IValue::Int(i) => IValue::Int(*i),
        IValue::Double(d) => IValue::Double(*d),
        other => other.clone(),
    }
}

/// Pushes a register operand, moving it out when `moved`.
fn push_operand(regs: &mut [IValue], stack: &mut Stack, r: u32, moved: bool) {
    let v = if moved {
        std::mem::take(&mut regs[r as usize])
    } else {
        regs[r as usize].clone()
    };
    stack.push(v);
}

/// Runs operation `k` of `code` on register operands (the generic path of the fused
/// instructions) and returns its result.
#[cold]
#[inline(never)]
fn run_op_on_registers(
    code: &Code,
    k: u32,
    regs: &mut [IValue],
    stack: &mut Stack,
    operands: &[(u32, bool)],
) -> Result<IValue, Error> {
    for &(r, moved) in operands {
        push_operand(regs, stack, r, moved);
    }
    (code.operations[k as usize])(stack)?;
    stack
        .pop()
        .ok_or_else(|| Error::runtime("internal error: an operator returned nothing"))
}

/// Runs the running frame's instructions from `*pc` until one fails or changes frames.
fn run_frame(code: &Code, pc_out: &mut usize, regs: &mut [IValue], stack: &mut Stack) -> Exit {
    // The program counter lives in a local (a register) and is written back on the way out.
    let mut pc = *pc_out;
    macro_rules! fail {
        ($e:expr) => {{
            *pc_out = pc;
            return Exit::Fail($e);
        }};
    }
    loop {
        let Some(instr) = code.instructions.get(pc) else {
            *pc_out = pc;
            return Exit::Switch;
        };
        match instr {
            Instr::Bin {
                op,
                moves,
                k,
                a,
                b,
                out,
            } => {
                // Plain results are stored field by field (see `store_plain`).
                match op.eval2(&regs[*a as usize], &regs[*b as usize]) {
                    Some(x) => store_plain(&mut regs[*out as usize], x),
                    None => match run_op_on_registers(
                        code,
                        *k,
                        regs,
                        stack,
                        &[(*a, moves & 1 != 0), (*b, moves & 2 != 0)],
                    ) {
                        Ok(v) => set_reg(&mut regs[*out as usize], v),
                        Err(e) => fail!(e),
                    },
                }
            }
            Instr::JfBin {
                op,
                moves,
                k,
                a,
                b,
                target,
            } => {
                let c = match op.eval2(&regs[*a as usize], &regs[*b as usize]) {
                    Some(Plain::Bool(c)) => Ok(c),
                    Some(other) => condition(&other.into()),
                    None => run_op_on_registers(
                        code,
                        *k,
                        regs,
                        stack,
                        &[(*a, moves & 1 != 0), (*b, moves & 2 != 0)],
                    )
                    .and_then(|v| condition(&v)),
                };
                match c {
                    Ok(true) => {}
                    Ok(false) => {
                        pc = *target as usize;
                        continue;
                    }
                    Err(e) => fail!(e),
                }
            }
            Instr::Un {
                op,
                moves,
                k,
                a,
                out,
            } => match op.eval1(&regs[*a as usize]) {
                Some(x) => store_plain(&mut regs[*out as usize], x),
                None => match run_op_on_registers(code, *k, regs, stack, &[(*a, moves & 1 != 0)]) {
                    Ok(v) => set_reg(&mut regs[*out as usize], v),
                    Err(e) => fail!(e),
                },
            },
            Instr::Copy { dst, src } => {
                let plain = match &regs[*src as usize] {
                    IValue::Int(x) => Some(Plain::Int(*x)),
                    IValue::Double(x) => Some(Plain::Double(*x)),
                    IValue::Bool(x) => Some(Plain::Bool(*x)),
                    _ => None,
                };
                match plain {
                    Some(p) => store_plain(&mut regs[*dst as usize], p),
                    None => {
                        let v = copy_value(&regs[*src as usize]);
                        set_reg(&mut regs[*dst as usize], v);
                    }
                }
            }
            Instr::MoveTo { dst, src } => {
                let v = std::mem::take(&mut regs[*src as usize]);
                set_reg(&mut regs[*dst as usize], v);
            }
            Instr::JfR { r, target } => match condition(&regs[*r as usize]) {
                Ok(true) => {}
                Ok(false) => {
                    pc = *target as usize;
                    continue;
                }
                Err(e) => fail!(e),
            },
            Instr::Load(r) => stack.push(copy_value(&regs[*r as usize])),
            Instr::Move(r) => stack.push(std::mem::take(&mut regs[*r as usize])),
            Instr::Store(r) => regs[*r as usize] = stack.pop().unwrap_or_default(),
            Instr::Drop => {
                stack.pop();
            }
            Instr::DropR(r) => set_reg(&mut regs[*r as usize], IValue::None),
            Instr::LoadC(k) => stack.push(code.constants[*k as usize].clone()),
            Instr::SetInt(r, v) => store_plain(&mut regs[*r as usize], Plain::Int(*v)),
            Instr::Uninitialized => stack.push(IValue::Uninitialized),
            Instr::Op(k) => {
                if let Err(e) = (code.operations[*k as usize])(stack) {
                    fail!(e);
                }
            }
            Instr::Jf(t) => {
                let c = match stack.pop() {
                    Some(v) => condition(&v),
                    None => Err(Error::runtime("expected a bool condition, got nothing")),
                };
                match c {
                    Ok(true) => {}
                    Ok(false) => {
                        pc = *t as usize;
                        continue;
                    }
                    Err(e) => fail!(e),
                }
            }
            Instr::Jmp(t) => {
                pc = *t as usize;
                continue;
            }
            Instr::LoopGuard { i, max, cond, exit } => {
                if !loop_continues(regs, *i, *max, *cond) {
                    pc = *exit as usize;
                    continue;
                }
            }
            Instr::LoopNext { i, top } => {
                let iv = regs[*i as usize].as_int().unwrap_or(0);
                set_reg(&mut regs[*i as usize], IValue::Int(iv.wrapping_add(1)));
                // Run the guard at `top` here rather than dispatching to it.
                pc = match code.instructions.get(*top as usize) {
                    Some(&Instr::LoopGuard { i, max, cond, exit }) => {
                        if loop_continues(regs, i, max, cond) {
                            *top as usize + 1
                        } else {
                            exit as usize
                        }
                    }
                    _ => *top as usize,
                };
                continue;
            }
            Instr::Call(..) | Instr::CallMethod(..) | Instr::Ret | Instr::Wait => {
                *pc_out = pc;
                return Exit::Switch;
            }
            Instr::Fork(k, n) => {
                let Some(at) = stack.len().checked_sub(*n as usize) else {
                    fail!(Error::runtime("internal error: fork without its arguments"));
                };
                let sub = code.forked[*k as usize].clone();
                let args = stack.split_off(at);
                let fut = Arc::new(Future::new(Type::any()));
                spawn_forked(sub, args, fut.clone());
                stack.push(IValue::Future(fut));
            }
            other => {
                if let Err(e) = run_data_instr(code, other, stack) {
                    fail!(e);
                }
            }
        }
        pc += 1;
    }
}

/// Runs an instruction that builds or takes apart a value on the stack.
fn run_data_instr(code: &Code, instr: &Instr, stack: &mut Stack) -> Result<(), Error> {
    let split = |stack: &mut Stack, n: usize| -> Result<Vec<IValue>, Error> {
        let at = stack
            .len()
            .checked_sub(n)
            .ok_or_else(|| Error::runtime("internal error: the stack has too few values"))?;
        Ok(stack.split_off(at))
    };
    match instr {
        Instr::TupleConstruct(n, t) => {
            let elems = split(stack, *n as usize)?;
            let v = if *t > 0 {
                IValue::named_tuple(code.types[*t as usize].clone(), elems)
            } else {
                IValue::tuple(elems)
            };
            stack.push(v);
        }
        Instr::ListConstruct(t, n) => {
            let elems = split(stack, *n as usize)?;
            stack.push(IValue::list(code.types[*t as usize].clone(), elems));
        }
        Instr::DictConstruct(t, n) => {
            let flat = split(stack, 2 * *n as usize)?;
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
            stack.push(IValue::Dict(Arc::new(map)));
        }
        Instr::ListUnpack(n) => {
            let l = match stack.pop() {
                Some(IValue::List(l)) => l,
                _ => return Err(Error::runtime("ListUnpack expects a list")),
            };
            let items = l.items.read();
            if items.len() != *n as usize {
                return Err(Error::runtime(format!(
                    "Expected {} elements in a list but found {}",
                    n,
                    items.len()
                )));
            }
            stack.extend(items.iter().cloned());
        }
        Instr::TupleUnpack(n) => {
            let t = match stack.pop() {
                Some(IValue::Tuple(t)) => t,
                _ => return Err(Error::runtime("TupleUnpack expects a tuple")),
            };
            if t.elements.len() != *n as usize {
                return Err(Error::runtime(format!(
                    "Expected a tuple of {n} elements but got {}",
                    t.elements.len()
                )));
            }
            stack.extend(t.elements.iter().cloned());
        }
        Instr::TupleSlice(b, e) => {
            let t = match stack.pop() {
                Some(IValue::Tuple(t)) => t,
                _ => return Err(Error::runtime("TupleSlice expects a tuple")),
            };
            let (b, e) = (
                (*b as usize).min(t.elements.len()),
                (*e as usize).min(t.elements.len()),
            );
            stack.push(IValue::tuple(t.elements[b..e.max(b)].to_vec()));
        }
        Instr::GetAttr(slot) => {
            let v = match stack.pop() {
                Some(IValue::Object(o)) => o.slots.read().get(*slot as usize).cloned(),
                _ => None,
            };
            match v {
                Some(v) => stack.push(v),
                None => return Err(Error::runtime("GetAttr on a value that is not an object")),
            }
        }
        Instr::GetAttrByName(k) => {
            let name = &code.names[*k as usize];
            let v = match stack.pop() {
                Some(IValue::Object(o)) => o
                    .class
                    .attribute_index(name)
                    .and_then(|i| o.slots.read().get(i).cloned()),
                _ => None,
            };
            match v {
                Some(v) => stack.push(v),
                None => return Err(Error::runtime(format!("object has no attribute '{name}'"))),
            }
        }
        Instr::SetAttr(slot) => {
            let v = stack.pop().unwrap_or_default();
            match stack.pop() {
                Some(IValue::Object(o)) => {
                    let mut slots = o.slots.write();
                    let i = *slot as usize;
                    if i >= slots.len() {
                        slots.resize(i + 1, IValue::None);
                    }
                    slots[i] = v;
                }
                _ => return Err(Error::runtime("SetAttr on a value that is not an object")),
            }
        }
        Instr::IsInstance(k) => {
            let v = stack.pop().unwrap_or_default();
            let hit = code.type_lists[*k as usize]
                .iter()
                .any(|t| v.is_instance_of(t));
            stack.push(IValue::Bool(hit));
        }
        Instr::CreateObject(t) => {
            let Some(c) = code.types[*t as usize].class_type().cloned() else {
                return Err(Error::runtime("CreateObject of a type that is not a class"));
            };
            let n = c.num_attributes();
            stack.push(IValue::object(c, vec![IValue::None; n]));
        }
        other => {
            return Err(Error::runtime(format!(
                "internal error: {other:?} is not a data instruction"
            )))
        }
    }
    Ok(())
}

fn new_frame(code: Arc<Code>, inputs: Vec<IValue>, base: usize) -> Frame {
    let mut registers = inputs;
    // `resize_with` writes the empty value directly; `resize` would clone it element by
    // element through `IValue::clone`'s match, which showed up at 8% of a transformer
    // layer's time (its plan has thousands of registers).
    registers.resize_with(code.num_registers.max(registers.len()), || IValue::None);
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
