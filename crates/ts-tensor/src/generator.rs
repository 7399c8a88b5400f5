//! The random number generator: PyTorch's CPU generator (MT19937 seeded with the low 32 bits of
//! the seed), so that `manual_seed(s)` followed by `rand`/`randn`/`randint` reproduces PyTorch's
//! CPU streams.

use std::sync::OnceLock;

use parking_lot::Mutex;

const N: usize = 624;
const M: usize = 397;

/// MT19937 state plus the cached second normal sample of the Box-Muller pair.
#[derive(Clone)]
pub(crate) struct Mt19937 {
    state: [u32; N],
    index: usize,
    pub(crate) next_normal: Option<f64>,
    seed: u64,
}

impl Mt19937 {
    fn new(seed: u64) -> Mt19937 {
        let mut state = [0u32; N];
        state[0] = (seed & 0xffff_ffff) as u32;
        for i in 1..N {
            state[i] = 1812433253u32
                .wrapping_mul(state[i - 1] ^ (state[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 {
            state,
            index: N,
            next_normal: None,
            seed,
        }
    }

    fn twist(&mut self) {
        for k in 0..N {
            let y = (self.state[k] & 0x8000_0000) | (self.state[(k + 1) % N] & 0x7fff_ffff);
            let mut v = self.state[(k + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                v ^= 0x9908_b0df;
            }
            self.state[k] = v;
        }
        self.index = 0;
    }

    /// The next 32 random bits.
    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// 64 random bits from two draws (the first is the high half).
    pub(crate) fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        let lo = self.next_u32() as u64;
        (hi << 32) | lo
    }

    /// A float32-precision uniform in [0, 1) (24 random bits).
    pub(crate) fn uniform_f32(&mut self) -> f32 {
        (self.next_u32() & ((1 << 24) - 1)) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// A float64-precision uniform in [0, 1) (53 random bits).
    pub(crate) fn uniform_f64(&mut self) -> f64 {
        (self.next_u64() & ((1u64 << 53) - 1)) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal sample in double precision (Box-Muller; the pair's second value is
    /// cached for the next call, as PyTorch's generator does).
    pub(crate) fn normal_f64(&mut self) -> f64 {
        if let Some(v) = self.next_normal.take() {
            return v;
        }
        let u1 = self.uniform_f64();
        let u2 = self.uniform_f64();
        let r = (-2.0 * (-u2).ln_1p()).sqrt();
        let theta = 2.0 * std::f64::consts::PI * u1;
        self.next_normal = Some(r * theta.sin());
        r * theta.cos()
    }
}

/// A random number generator (`torch.Generator` on the CPU). Shareable across threads.
pub struct Generator {
    inner: Mutex<Mt19937>,
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator {
            inner: Mutex::new(Mt19937::new(seed)),
        }
    }

    /// Re-seeds (`generator.manual_seed(seed)`), clearing cached samples.
    pub fn manual_seed(&self, seed: u64) {
        *self.inner.lock() = Mt19937::new(seed);
    }

    /// The seed last set (`initial_seed`).
    pub fn initial_seed(&self) -> u64 {
        self.inner.lock().seed
    }

    /// Runs `f` with exclusive access to the state.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Mt19937) -> R) -> R {
        f(&mut self.inner.lock())
    }
}

/// PyTorch's default CPU seed.
const DEFAULT_SEED: u64 = 67280421310721;

/// The process-wide default generator.
pub fn default_generator() -> &'static Generator {
    static GEN: OnceLock<Generator> = OnceLock::new();
    GEN.get_or_init(|| Generator::new(DEFAULT_SEED))
}

/// `torch.manual_seed(seed)`: re-seeds the default generator.
pub fn manual_seed(seed: u64) {
    default_generator().manual_seed(seed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_reference_mt19937() {
        // The 10000th output of MT19937 seeded with 5489 is 4123659995 (C++ standard).
        let mut g = Mt19937::new(5489);
        let mut v = 0;
        for _ in 0..10000 {
            v = g.next_u32();
        }
        assert_eq!(v, 4123659995);
    }

    #[test]
    #[allow(clippy::excessive_precision)]
    fn uniform_matches_torch_seed_0() {
        // torch.manual_seed(0); torch.rand(5).tolist()
        let mut g = Mt19937::new(0);
        let want = [
            0.49625658988952637f32,
            0.7682217955589294,
            0.08847743272781372,
            0.13203048706054688,
            0.30742281675338745,
        ];
        for w in want {
            assert_eq!(g.uniform_f32(), w);
        }
        // torch.manual_seed(0); torch.rand(3, dtype=torch.float64).tolist()
        let mut g = Mt19937::new(0);
        assert_eq!(g.uniform_f64(), 0.9700530018065531);
    }
}
