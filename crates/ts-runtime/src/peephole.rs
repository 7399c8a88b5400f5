//! Peephole fusion over linearized [`Code`]: turns the stack traffic of common instruction
//! sequences into register-to-register instructions, so the interpreter dispatches fewer,
//! cheaper instructions.
//!
//! Each rule rewrites a window of adjacent instructions that no jump enters except at its
//! first instruction, so control flow is unchanged; jump targets are remapped afterwards. The
//! rules, in order:
//!
//! 0. `LOADC(k) STORE(r)` of an int constant (not followed by `MOVE(r)`) → [`Instr::SetInt`].
//! 1. `STORE(r) MOVE(r) STORE(s)` with `r` used nowhere else → `STORE(s)`.
//! 2. `[LOAD|MOVE](a) [LOAD|MOVE](b) OP(k) STORE(c)` where operation `k` has an inline version
//!    → [`Instr::Bin`] (and the one-operand form → [`Instr::Un`]); followed by `JF` instead
//!    of `STORE` → [`Instr::JfBin`].
//! 3. `BIN(.. -> c) MOVE(c) JF(t)` with `c` used nowhere else → [`Instr::JfBin`].
//! 4. `[LOAD|MOVE](c) JF(t)` → [`Instr::JfR`].
//! 5. `STORE(r) MOVE(r)` with `r` used nowhere else → nothing (the value stays on the stack).
//! 6. `k` pushes of registers followed by `k` stores into other, distinct registers →
//!    `k` [`Instr::Copy`] / [`Instr::MoveTo`] (a parallel assignment, as at a loop's back edge).
//! 7. `DROPR(r)` right before a `COPY`/`MOVETO` into `r` from another register → the copy alone
//!    (the overwrite releases the old value at the same point).
//! 8. `JMP(t)` to a `LOOPNEXT` → that `LOOPNEXT` (the end of an `if` branch that closes a
//!    loop body, where the jump would only reach the back edge).

use std::sync::Arc;

use ts_core::IValue;

use crate::code::{Code, Instr, NodeInfo};

/// What the rules may consult: which registers are mentioned how often.
struct Facts {
    uses: Vec<u32>,
}

impl Facts {
    fn used_exactly(&self, r: u32, n: u32) -> bool {
        self.uses.get(r as usize) == Some(&n)
    }
}

/// A rule's rewrite: the number of instructions consumed, their replacement, and which
/// consumed instruction's node the replacement reports in tracebacks.
struct Rewrite {
    consumed: usize,
    with: Vec<Instr>,
    node_of: usize,
}

type Rule = fn(&Code, &Facts, &[Instr]) -> Option<Rewrite>;

/// Applies every rule to `code`.
pub fn optimize(code: &mut Code) {
    let rules: [Rule; 9] = [
        constant_int_store,
        store_move_store,
        fast_op,
        compare_jump,
        jump_on_register,
        store_move,
        parallel_copy,
        drop_before_overwrite,
        jump_to_back_edge,
    ];
    for rule in rules {
        apply(code, rule);
    }
}

/// One pass of `rule` over the code.
fn apply(code: &mut Code, rule: Rule) {
    let facts = Facts {
        uses: code.register_uses(),
    };
    let targets = code.jump_targets();
    let old = &code.instructions;
    let mut out: Vec<Instr> = Vec::with_capacity(old.len());
    let mut nodes: Vec<Option<Arc<NodeInfo>>> = Vec::with_capacity(old.len());
    let mut map = vec![0u32; old.len() + 1];
    let mut i = 0;
    let mut changed = false;
    while i < old.len() {
        let rw = rule(code, &facts, &old[i..]).filter(|rw| {
            rw.consumed > 0
                && i + rw.consumed <= old.len()
                && !targets[i + 1..i + rw.consumed].iter().any(|&t| t)
        });
        match rw {
            Some(rw) => {
                let node = code.instr_nodes[i + rw.node_of.min(rw.consumed - 1)].clone();
                map[i..i + rw.consumed].fill(out.len() as u32);
                for instr in rw.with {
                    out.push(instr);
                    nodes.push(node.clone());
                }
                i += rw.consumed;
                changed = true;
            }
            None => {
                map[i] = out.len() as u32;
                out.push(old[i].clone());
                nodes.push(code.instr_nodes[i].clone());
                i += 1;
            }
        }
    }
    map[old.len()] = out.len() as u32;
    if changed {
        code.replace_instructions(out, nodes, &map);
    }
}

/// A register push: its register and whether it moves the value out.
fn push_of(i: &Instr) -> Option<(u32, bool)> {
    match *i {
        Instr::Load(r) => Some((r, false)),
        Instr::Move(r) => Some((r, true)),
        _ => None,
    }
}

/// `LOADC k; STORE(r)` of an int constant becomes `SETINT(r, v)`: one instruction, and no
/// stack push/pop (unrolled loops store their index offsets this way every iteration).
fn constant_int_store(code: &Code, _: &Facts, w: &[Instr]) -> Option<Rewrite> {
    // `LOADC STORE(r) MOVE(r)` is left to `store_move`, which keeps the value on the stack.
    if let [Instr::LoadC(_), Instr::Store(r), Instr::Move(r2), ..] = w {
        if r == r2 {
            return None;
        }
    }
    match w {
        [Instr::LoadC(k), Instr::Store(r), ..] => match code.constants.get(*k as usize) {
            Some(IValue::Int(v)) => Some(Rewrite {
                consumed: 2,
                with: vec![Instr::SetInt(*r, *v)],
                node_of: 0,
            }),
            _ => None,
        },
        _ => None,
    }
}

fn store_move_store(_: &Code, f: &Facts, w: &[Instr]) -> Option<Rewrite> {
    match w {
        [Instr::Store(r), Instr::Move(r2), Instr::Store(s), ..]
            if r == r2 && f.used_exactly(*r, 2) =>
        {
            Some(Rewrite {
                consumed: 3,
                with: vec![Instr::Store(*s)],
                node_of: 0,
            })
        }
        _ => None,
    }
}

fn fast_op(code: &Code, _: &Facts, w: &[Instr]) -> Option<Rewrite> {
    let scalar = |k: u32| code.op_scalar.get(k as usize).copied().flatten();
    if let [x, y, Instr::Op(k), last, ..] = w {
        if let (Some((a, ma)), Some((b, mb)), Some(op)) = (push_of(x), push_of(y), scalar(*k)) {
            if op.arity() == 2 {
                let moves = ma as u8 | (mb as u8) << 1;
                let fused = match *last {
                    Instr::Store(out) => Some(Instr::Bin {
                        op,
                        moves,
                        k: *k,
                        a,
                        b,
                        out,
                    }),
                    Instr::Jf(target) => Some(Instr::JfBin {
                        op,
                        moves,
                        k: *k,
                        a,
                        b,
                        target,
                    }),
                    _ => None,
                };
                if let Some(fused) = fused {
                    return Some(Rewrite {
                        consumed: 4,
                        with: vec![fused],
                        node_of: 2,
                    });
                }
            }
        }
    }
    if let [x, Instr::Op(k), Instr::Store(out), ..] = w {
        if let (Some((a, ma)), Some(op)) = (push_of(x), scalar(*k)) {
            if op.arity() == 1 {
                return Some(Rewrite {
                    consumed: 3,
                    with: vec![Instr::Un {
                        op,
                        moves: ma as u8,
                        k: *k,
                        a,
                        out: *out,
                    }],
                    node_of: 1,
                });
            }
        }
    }
    None
}

fn compare_jump(_: &Code, f: &Facts, w: &[Instr]) -> Option<Rewrite> {
    match w {
        [Instr::Bin {
            op,
            moves,
            k,
            a,
            b,
            out,
        }, Instr::Move(c), Instr::Jf(target), ..]
            if out == c && a != c && b != c && f.used_exactly(*c, 2) =>
        {
            Some(Rewrite {
                consumed: 3,
                with: vec![Instr::JfBin {
                    op: *op,
                    moves: *moves,
                    k: *k,
                    a: *a,
                    b: *b,
                    target: *target,
                }],
                node_of: 0,
            })
        }
        _ => None,
    }
}

fn jump_on_register(_: &Code, _: &Facts, w: &[Instr]) -> Option<Rewrite> {
    match w {
        [x, Instr::Jf(target), ..] => {
            let (r, _) = push_of(x)?;
            Some(Rewrite {
                consumed: 2,
                with: vec![Instr::JfR { r, target: *target }],
                node_of: 1,
            })
        }
        _ => None,
    }
}

fn store_move(_: &Code, f: &Facts, w: &[Instr]) -> Option<Rewrite> {
    match w {
        [Instr::Store(r), Instr::Move(r2), ..] if r == r2 && f.used_exactly(*r, 2) => {
            Some(Rewrite {
                consumed: 2,
                with: Vec::new(),
                node_of: 0,
            })
        }
        _ => None,
    }
}

fn parallel_copy(_: &Code, _: &Facts, w: &[Instr]) -> Option<Rewrite> {
    let pushes: Vec<(u32, bool)> = w.iter().map_while(push_of).collect();
    let k = pushes.len();
    if k == 0 {
        return None;
    }
    let stores: Vec<u32> = w[k..]
        .iter()
        .take(k)
        .map_while(|i| match i {
            Instr::Store(r) => Some(*r),
            _ => None,
        })
        .collect();
    if stores.len() != k {
        return None;
    }
    // Push j is popped by store k-1-j.
    let dsts: Vec<u32> = (0..k).map(|j| stores[k - 1 - j]).collect();
    let distinct = dsts
        .iter()
        .enumerate()
        .all(|(j, d)| !dsts[..j].contains(d) && !pushes.iter().any(|(s, _)| s == d));
    if !distinct {
        return None;
    }
    let mut with: Vec<Instr> = pushes
        .iter()
        .zip(&dsts)
        .map(|(&(src, mv), &dst)| {
            if mv {
                Instr::MoveTo { dst, src }
            } else {
                Instr::Copy { dst, src }
            }
        })
        .collect();
    // With distinct sources the copies commute; keep the stores' order, so that a `DROPR`
    // just before the pushes can meet the copy into its register (rule 7).
    let sources_distinct = pushes
        .iter()
        .enumerate()
        .all(|(j, (s, _))| !pushes[..j].iter().any(|(t, _)| t == s));
    if sources_distinct {
        with.reverse();
    }
    Some(Rewrite {
        consumed: 2 * k,
        with,
        node_of: 0,
    })
}

fn drop_before_overwrite(_: &Code, _: &Facts, w: &[Instr]) -> Option<Rewrite> {
    match w {
        [Instr::DropR(r), next @ (Instr::Copy { dst, src } | Instr::MoveTo { dst, src }), ..]
            if dst == r && src != r =>
        {
            Some(Rewrite {
                consumed: 2,
                with: vec![next.clone()],
                node_of: 1,
            })
        }
        _ => None,
    }
}

fn jump_to_back_edge(code: &Code, _: &Facts, w: &[Instr]) -> Option<Rewrite> {
    match w {
        [Instr::Jmp(t), ..] => match code.instructions.get(*t as usize) {
            Some(next @ Instr::LoopNext { .. }) => Some(Rewrite {
                consumed: 1,
                with: vec![next.clone()],
                node_of: 0,
            }),
            _ => None,
        },
        _ => None,
    }
}
