//! Scratch folders for the CLI tests: unique per test, removed when the test ends (pass or
//! panic), so repeated runs leave nothing behind in the temporary directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh folder under the temporary directory, deleted with everything in it on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    /// Creates `tsrs-<tag>-<pid>-<n>`, unique across the tests of one process.
    pub fn new(tag: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tsrs-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create scratch folder");
        Scratch(dir)
    }

    /// Writes `text` to `name` in the folder and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).expect("write scratch file");
        p
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
