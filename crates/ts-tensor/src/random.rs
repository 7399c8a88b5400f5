//! The seedable CPU generator: a Mersenne Twister (mt19937) drawn the way ATen's CPU generator
//! draws (24-bit floats, 53-bit doubles, Box-Muller normals), so `manual_seed` followed by
//! `rand`/`randn`/`randint` reproduces PyTorch's CPU streams for float32/float64.

use std::sync::OnceLock;

use parking_lot::Mutex;

const N: usize = 624;
const M: usize = 397;

/// A Mersenne Twister state plus the cached second normal sample.
#[derive(Clone)]
pub struct Generator {
    mt: [u32; N],
    idx: usize,
    seed: u64,
    next_normal: Option<f64>,
}

/// PyTorch's default CPU seed.
pub const DEFAULT_SEED: u64 = 67280421310721;

impl Generator {
    /// A generator seeded like `torch.manual_seed(seed)`.
    pub fn new(seed: u64) -> Generator {
        let mut g = Generator {
            mt: [0; N],
            idx: N,
            seed,
            next_normal: None,
        };
        g.set_seed(seed);
        g
    }

    /// Reseeds (`manual_seed`).
    pub fn set_seed(&mut self, seed: u64) {
        self.seed = seed;
        self.next_normal = None;
        self.mt[0] = seed as u32;
        for i in 1..N {
            self.mt[i] = 1812433253u32
                .wrapping_mul(self.mt[i - 1] ^ (self.mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        self.idx = N;
    }

    /// The seed last set.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn twist(&mut self) {
        for i in 0..N {
            let y = (self.mt[i] & 0x8000_0000) | (self.mt[(i + 1) % N] & 0x7fff_ffff);
            let mut v = self.mt[(i + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                v ^= 0x9908_b0df;
            }
            self.mt[i] = v;
        }
        self.idx = 0;
    }

    /// The next 32 random bits.
    pub fn random(&mut self) -> u32 {
        if self.idx >= N {
            self.twist();
        }
        let mut y = self.mt[self.idx];
        self.idx += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// The next 64 random bits (two draws, the first is the high half).
    pub fn random64(&mut self) -> u64 {
        let hi = self.random() as u64;
        let lo = self.random() as u64;
        (hi << 32) | lo
    }

    /// Uniform in [0, 1) with 24 random bits (float32 draws).
    pub fn uniform_f32(&mut self) -> f32 {
        (self.random() & ((1 << 24) - 1)) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// Uniform in [0, 1) with 53 random bits (float64 draws).
    pub fn uniform_f64(&mut self) -> f64 {
        (self.random64() & ((1u64 << 53) - 1)) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal sample (Box-Muller on two doubles; the second value is cached).
    pub fn normal_f64(&mut self) -> f64 {
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

    /// A uniform integer in `[low, high)`.
    pub fn random_range(&mut self, low: i64, high: i64) -> i64 {
        let range = (high as i128 - low as i128) as u128;
        if range == 0 {
            return low;
        }
        let r = if range >= 1u128 << 32 {
            (self.random64() as u128 % range) as i128
        } else {
            (self.random() as u128 % range) as i128
        };
        (low as i128 + r) as i64
    }
}

fn global() -> &'static Mutex<Generator> {
    static G: OnceLock<Mutex<Generator>> = OnceLock::new();
    G.get_or_init(|| Mutex::new(Generator::new(DEFAULT_SEED)))
}

/// `torch.manual_seed(seed)` for the default CPU generator.
pub fn manual_seed(seed: u64) {
    global().lock().set_seed(seed);
}

/// Runs `f` with the default generator locked.
pub fn with_generator<R>(f: impl FnOnce(&mut Generator) -> R) -> R {
    f(&mut global().lock())
}

/// Fills `data` with standard normals the way ATen's `normal_fill` does for 16 or more values:
/// uniforms first, then Box-Muller over blocks of 16 (the tail recomputes the last 16).
pub fn normal_fill(
    g: &mut Generator,
    data: &mut [f64],
    mean: f64,
    std: f64,
    draw: impl Fn(&mut Generator) -> f64,
) {
    let n = data.len();
    for d in data.iter_mut() {
        *d = draw(g);
    }
    let fill16 = |d: &mut [f64]| {
        for j in 0..8 {
            let u1 = 1.0 - d[j];
            let u2 = d[j + 8];
            let radius = (-2.0 * u1.ln()).sqrt();
            let theta = 2.0 * std::f64::consts::PI * u2;
            d[j] = radius * theta.cos() * std + mean;
            d[j + 8] = radius * theta.sin() * std + mean;
        }
    };
    let mut i = 0;
    while i + 16 <= n {
        fill16(&mut data[i..i + 16]);
        i += 16;
    }
    if !n.is_multiple_of(16) {
        let tail = &mut data[n - 16..];
        for d in tail.iter_mut() {
            *d = draw(g);
        }
        fill16(tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt19937_reference_values() {
        // The 10000th output of mt19937 seeded with 5489 is 4123659995 (C++11 standard).
        let mut g = Generator::new(5489);
        let mut v = 0;
        for _ in 0..10000 {
            v = g.random();
        }
        assert_eq!(v, 4123659995);
    }

    #[test]
    fn matches_torch_rand() {
        // torch.manual_seed(0); torch.rand(3) in PyTorch 2.15 gives
        // tensor([0.4963, 0.7682, 0.0885]).
        let mut g = Generator::new(0);
        let v: Vec<f32> = (0..3).map(|_| g.uniform_f32()).collect();
        assert!(
            (v[0] - 0.4963).abs() < 1e-4
                && (v[1] - 0.7682).abs() < 1e-4
                && (v[2] - 0.0885).abs() < 1e-4,
            "{v:?}"
        );
    }
}
