//! The data directory's lock: one server per directory.

use std::fs::File;
use std::path::Path;

use super::LOCK_FILE;

/// Takes the directory's lock, or says who holds it.
pub(super) fn lock_dir(dir: &Path) -> Result<File, String> {
    use std::io::Write;
    use std::os::unix::io::AsRawFd;
    let path = dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // SAFETY: flock on a file descriptor we own; no memory is shared.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let holder = std::fs::read_to_string(&path).unwrap_or_default();
        return Err(format!(
            "data directory {} is in use by another Retsu server{} (lock {}); stop it or choose another --data-dir",
            dir.display(),
            match holder.trim() {
                "" => String::new(),
                pid => format!(" (pid {pid})"),
            },
            path.display()
        ));
    }
    let _ = file.set_len(0);
    let _ = write!(file, "{}", std::process::id());
    let _ = file.sync_all();
    Ok(file)
}
