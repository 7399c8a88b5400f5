//! Grad mode: whether operators record backward history, per thread (PyTorch's
//! `GradMode`/`AutoGradMode`). On by default on every thread.

use std::cell::Cell;

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// `torch.is_grad_enabled()` on this thread.
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(|g| g.get())
}

/// `torch.set_grad_enabled(enabled)` on this thread.
pub fn set_grad_enabled(enabled: bool) {
    GRAD_ENABLED.with(|g| g.set(enabled));
}

/// Sets grad mode for a scope and restores the previous mode when dropped (`no_grad`,
/// `enable_grad`, `set_grad_enabled` as guards).
pub struct GradModeGuard {
    prev: bool,
}

impl GradModeGuard {
    /// Enters a scope with grad mode `enabled`.
    pub fn new(enabled: bool) -> GradModeGuard {
        let prev = is_grad_enabled();
        set_grad_enabled(enabled);
        GradModeGuard { prev }
    }

    /// A `no_grad` scope.
    pub fn no_grad() -> GradModeGuard {
        GradModeGuard::new(false)
    }
}

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        set_grad_enabled(self.prev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_nest_and_restore() {
        assert!(is_grad_enabled());
        {
            let _g = GradModeGuard::no_grad();
            assert!(!is_grad_enabled());
            {
                let _e = GradModeGuard::new(true);
                assert!(is_grad_enabled());
            }
            assert!(!is_grad_enabled());
        }
        assert!(is_grad_enabled());
    }

    #[test]
    fn mode_is_per_thread() {
        let _g = GradModeGuard::no_grad();
        let other = std::thread::spawn(is_grad_enabled).join().unwrap();
        assert!(other);
        assert!(!is_grad_enabled());
    }
}
