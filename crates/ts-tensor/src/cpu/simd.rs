//! Runtime CPU-feature dispatch for auto-vectorized kernels. [`simd_dispatch!`] declares a
//! function that runs an `#[inline(always)]` kernel code-generated for AVX-512 when the CPU has
//! it (16 f32 lanes), else for AVX2 + FMA (8 lanes), else as baseline code (4 lanes). The
//! arithmetic is the same either way: Rust never contracts `a * b + c` into an FMA by itself.

/// Whether this CPU supports AVX2 and FMA (the detection result is cached by std).
#[inline(always)]
pub(crate) fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
thread_local! {
    /// Tests set this to run the AVX2 copies of dispatched kernels on an AVX-512 machine.
    static AVX2_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the AVX-512 copies of [`simd_dispatch!`] kernels disabled on this thread
/// (tests of the AVX2 path on machines that have AVX-512).
#[cfg(test)]
pub(crate) fn with_avx2_only<R>(f: impl FnOnce() -> R) -> R {
    AVX2_ONLY.with(|c| c.set(true));
    let r = f();
    AVX2_ONLY.with(|c| c.set(false));
    r
}

/// Whether this CPU supports AVX-512F (with AVX2 and FMA; the result is cached by std).
#[inline(always)]
pub(crate) fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        #[cfg(test)]
        if AVX2_ONLY.with(|c| c.get()) {
            return false;
        }
        std::arch::is_x86_feature_detected!("avx512f") && has_avx2_fma()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `simd_dispatch!(vis fn name<T: Bound>(args) -> Ret = kernel;)` declares `name`, which calls
/// `kernel(args)` (an `#[inline(always)]` function) inside a copy compiled for AVX-512 or for
/// AVX2 + FMA when the CPU supports them. `unsafe fn` declares an unsafe function (for kernels
/// on raw pointers) with the kernel's own contract.
macro_rules! simd_dispatch {
    ($vis:vis unsafe fn $name:ident<$($g:ident: $b:path),*>($($a:ident: $t:ty),* $(,)?) $(-> $r:ty)? = $k:ident;) => {
        /// Runs the kernel in the widest instruction set this CPU has.
        ///
        /// # Safety
        /// As the kernel's.
        $vis unsafe fn $name<$($g: $b),*>($($a: $t),*) $(-> $r)? {
            #[cfg(target_arch = "x86_64")]
            {
                /// The kernel code-generated for AVX2 + FMA.
                ///
                /// # Safety
                /// The CPU must support AVX2 and FMA; the kernel's contract holds.
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2<$($g: $b),*>($($a: $t),*) $(-> $r)? {
                    // SAFETY: forwarded from the caller.
                    unsafe { $k::<$($g),*>($($a),*) }
                }
                /// The kernel code-generated for AVX-512.
                ///
                /// # Safety
                /// The CPU must support AVX-512F, AVX2 and FMA; the kernel's contract holds.
                #[target_feature(enable = "avx512f,avx2,fma")]
                unsafe fn avx512<$($g: $b),*>($($a: $t),*) $(-> $r)? {
                    // SAFETY: forwarded from the caller.
                    unsafe { $k::<$($g),*>($($a),*) }
                }
                if $crate::cpu::simd::has_avx512() {
                    // SAFETY: the CPU has AVX-512F, AVX2 and FMA; the rest is the caller's.
                    return unsafe { avx512::<$($g),*>($($a),*) };
                }
                if $crate::cpu::simd::has_avx2_fma() {
                    // SAFETY: the CPU has AVX2 and FMA; the rest is the caller's.
                    return unsafe { avx2::<$($g),*>($($a),*) };
                }
            }
            // SAFETY: forwarded from the caller.
            unsafe { $k::<$($g),*>($($a),*) }
        }
    };
    ($vis:vis fn $name:ident<$($g:ident: $b:path),*>($($a:ident: $t:ty),* $(,)?) $(-> $r:ty)? = $k:path;) => {
        $vis fn $name<$($g: $b),*>($($a: $t),*) $(-> $r)? {
            #[cfg(target_arch = "x86_64")]
            {
                /// The kernel code-generated for AVX2 + FMA.
                ///
                /// # Safety
                /// The CPU must support AVX2 and FMA.
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2<$($g: $b),*>($($a: $t),*) $(-> $r)? {
                    $k($($a),*)
                }
                /// The kernel code-generated for AVX-512.
                ///
                /// # Safety
                /// The CPU must support AVX-512F, AVX2 and FMA.
                #[target_feature(enable = "avx512f,avx2,fma")]
                unsafe fn avx512<$($g: $b),*>($($a: $t),*) $(-> $r)? {
                    $k($($a),*)
                }
                if $crate::cpu::simd::has_avx512() {
                    // SAFETY: `avx512` only needs AVX-512F, AVX2 and FMA, which this CPU was
                    // just found to support.
                    return unsafe { avx512($($a),*) };
                }
                if $crate::cpu::simd::has_avx2_fma() {
                    // SAFETY: `avx2` only needs AVX2 and FMA, which this CPU was just found to
                    // support.
                    return unsafe { avx2($($a),*) };
                }
            }
            $k($($a),*)
        }
    };
}
pub(crate) use simd_dispatch;

#[cfg(test)]
mod tests {
    #[inline(always)]
    fn halves_sum(v: &[f32], scale: f32) -> f32 {
        v.iter().map(|&x| x * scale).sum()
    }

    simd_dispatch!(fn dispatched<>(v: &[f32], scale: f32) -> f32 = halves_sum;);

    #[test]
    fn dispatched_kernel_matches_the_plain_one() {
        let v: Vec<f32> = (0..100).map(|i| i as f32).collect();
        assert_eq!(dispatched(&v, 0.5), halves_sum(&v, 0.5));
        assert_eq!(dispatched(&v, 0.5), 2475.0);
    }
}
