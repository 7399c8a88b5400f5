//! Writing a saved archive so that a file being replaced keeps its old bytes.
//!
//! Loading maps archives copy-on-write (`Archive::open`), so tensors loaded earlier in the
//! process may still view the old file's pages. Truncating and rewriting that file in place
//! would change those tensors under the user (or fault, past the new end). Saving therefore
//! writes a sibling temporary file and renames it over the target: the old inode, and every
//! mapping of it, stays intact until the last view goes away.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Result, SerializeError};

/// Writes `bytes` to `path`, replacing any existing file atomically (a rename over it).
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |e: std::io::Error| SerializeError::io(path.display(), e);
    // Replace the file a symlink points to, not the link, as an in-place write would.
    let target = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(_) => path.to_path_buf(),
    };
    let tmp = temporary_sibling(&target);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.flush()?;
        if let Ok(meta) = std::fs::metadata(&target) {
            // Keep the replaced file's permissions.
            f.set_permissions(meta.permissions())?;
        }
        drop(f);
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

/// `dir/.name.tsrs-<pid>-<n>.tmp` next to `target` (same file system, so rename is atomic).
fn temporary_sibling(target: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = target
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "archive".to_owned());
    let tmp_name = format!(".{name}.tsrs-{}-{n}.tmp", std::process::id());
    match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(tmp_name),
        _ => PathBuf::from(tmp_name),
    }
}
