//! Trains a scripted MLP from Rust: loads a `torch.jit.save` archive, fits it to synthetic
//! regression data with SGD or Adam (the gradients come from the autograd engine through
//! `Tensor::backward`), reports the loss and the time per step, and saves the trained module
//! as an archive that PyTorch's `torch.jit.load` reads.
//!
//! ```sh
//! cargo run --release -p torchscript --example train_mlp -- \
//!     crates/torchscript/tests/data/mlp.pt adam 200 /tmp/mlp_trained.pt
//! ```
//!
//! Arguments: the archive (a module taking `[N, 8]` and returning `[N, 1]`), the optimizer
//! (`sgd` or `adam`), the number of steps, and where to save the trained module. It fails when
//! the final loss is not below the first one.

use std::time::Instant;

use torchscript::{autograd, ops, IValue, Module, Tensor};

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The optimizers of this example, with PyTorch's update rules (`torch.optim.SGD` with
/// momentum, `torch.optim.Adam`); their state is one tensor (or two) per parameter.
enum Optimizer {
    Sgd {
        lr: f64,
        momentum: f64,
        velocity: Vec<Option<Tensor>>,
    },
    Adam {
        lr: f64,
        betas: (f64, f64),
        eps: f64,
        step: i32,
        m: Vec<Tensor>,
        v: Vec<Tensor>,
    },
}

impl Optimizer {
    fn new(kind: &str, params: &[Tensor]) -> BoxResult<Optimizer> {
        let zeros = |p: &Tensor| Tensor::zeros(&p.shape(), p.dtype());
        Ok(match kind {
            "sgd" => Optimizer::Sgd {
                lr: 0.05,
                momentum: 0.9,
                velocity: vec![None; params.len()],
            },
            "adam" => Optimizer::Adam {
                lr: 0.01,
                betas: (0.9, 0.999),
                eps: 1e-8,
                step: 0,
                m: params.iter().map(zeros).collect::<Result<_, _>>()?,
                v: params.iter().map(zeros).collect::<Result<_, _>>()?,
            },
            other => return Err(format!("unknown optimizer {other:?} (sgd or adam)").into()),
        })
    }

    /// One update of every parameter from its `.grad`, written into the parameter in place so
    /// that the module sees it; runs without recording, as `optimizer.step()` does.
    fn step(&mut self, params: &[Tensor]) -> BoxResult<()> {
        let _no_grad = autograd::no_grad();
        if let Optimizer::Adam { step, .. } = self {
            *step += 1;
        }
        for (i, p) in params.iter().enumerate() {
            let Some(g) = p.grad() else { continue };
            let update = match self {
                Optimizer::Sgd {
                    lr,
                    momentum,
                    velocity,
                } => {
                    let buf = match &velocity[i] {
                        Some(b) => b.mul_scalar(*momentum)?.add(&g)?,
                        None => g.deep_clone()?,
                    };
                    velocity[i] = Some(buf.clone());
                    buf.mul_scalar(*lr)?
                }
                Optimizer::Adam {
                    lr,
                    betas: (b1, b2),
                    eps,
                    step,
                    m,
                    v,
                } => {
                    m[i] = m[i].mul_scalar(*b1)?.add(&g.mul_scalar(1.0 - *b1)?)?;
                    v[i] = v[i]
                        .mul_scalar(*b2)?
                        .add(&g.mul(&g)?.mul_scalar(1.0 - *b2)?)?;
                    let m_hat = m[i].div_scalar(1.0 - b1.powi(*step))?;
                    let v_hat = v[i].div_scalar(1.0 - b2.powi(*step))?;
                    m_hat
                        .div(&v_hat.sqrt()?.add_scalar(*eps)?)?
                        .mul_scalar(*lr)?
                }
            };
            ops::call("aten::copy_", (p.clone(), p.sub(&update)?))?;
        }
        Ok(())
    }
}

/// Synthetic regression data: `y = sin(x · w) + 0.1 * x₀²` for fixed random `w`.
fn dataset(n: i64) -> BoxResult<(Tensor, Tensor)> {
    let x = Tensor::randn(&[n, 8], 7)?;
    let w = Tensor::randn(&[8, 1], 11)?;
    let x0 = tensor(ops::call("aten::select", (x.clone(), 1i64, 0i64))?)?.reshape(&[n, 1])?;
    let y =
        tensor(ops::call("aten::sin", (x.matmul(&w)?,))?)?.add(&x0.mul(&x0)?.mul_scalar(0.1)?)?;
    Ok((x, y))
}

fn mse(module: &Module, x: &Tensor, y: &Tensor) -> BoxResult<Tensor> {
    let out = tensor(module.forward((x.clone(),))?)?;
    tensor(ops::call("aten::mse_loss", (out, y.clone()))?)
}

/// The tensor an operator or method returned.
fn tensor(v: IValue) -> BoxResult<Tensor> {
    Ok(v.as_tensor().ok_or("expected a tensor result")?.clone())
}

fn main() -> BoxResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [archive, optimizer, steps, output] = args.as_slice() else {
        return Err("usage: train_mlp ARCHIVE sgd|adam STEPS OUTPUT.pt".into());
    };
    let steps: usize = steps
        .parse()
        .map_err(|_| format!("bad step count {steps:?}"))?;

    let module = Module::load(archive)?;
    let params: Vec<Tensor> = module.parameters().into_iter().map(|(_, p)| p).collect();
    for p in &params {
        p.set_requires_grad(true)?;
    }
    let mut opt = Optimizer::new(optimizer, &params)?;
    let (x, y) = dataset(256)?;

    let first = mse(&module, &x, &y)?.item::<f32>()?;
    println!("step 0: loss {first:.6}");
    let mut last = first;
    let start = Instant::now();
    for step in 1..=steps {
        for p in &params {
            p.set_grad(None);
        }
        let loss = mse(&module, &x, &y)?;
        loss.backward()?;
        opt.step(&params)?;
        last = loss.item::<f32>()?;
        if step % 50 == 0 || step == steps {
            println!("step {step}: loss {last:.6}");
        }
    }
    let per_step = start.elapsed().as_secs_f64() * 1e6 / steps.max(1) as f64;
    let final_loss = {
        let _no_grad = autograd::no_grad();
        mse(&module, &x, &y)?.item::<f32>()?
    };
    println!("final loss {final_loss:.6} (first {first:.6}); {per_step:.1} µs per step");
    module.save(output)?;
    println!("saved {output}");
    if !(final_loss < first && last.is_finite()) {
        return Err(format!("the loss did not decrease: {first} -> {final_loss}").into());
    }
    Ok(())
}
