//! Killing a child and everything it started: the timeout of
//! [`super::process`] and the cleanup of [`super::interrupt`] both end a
//! process group this way. A leaf of the runner: it uses only the process
//! tree ([`super::procfs`]).

use super::procfs::{alive, descendants};
use std::time::{Duration, Instant};

/// Kills the child's process group and every process descended from the
/// child (one that started a session of its own is not in the group), then
/// waits until they are gone. Descendants are collected before anything is
/// killed, so none is re-parented to init out of reach. Measured on the H200:
/// a killed app holding a CUDA context takes 1–3 s to go away; returning
/// before that would let the next CI step find the GPU still busy.
/// Returns how many processes it signalled.
pub(super) fn kill_group(pid: u32) -> usize {
    // The child first, so a shell does not report its killed jobs; the pids
    // of its descendants were taken before, so none escapes by re-parenting.
    let mut doomed = vec![pid];
    doomed.extend(descendants(pid));
    for &p in &doomed {
        if let Ok(p) = i32::try_from(p) {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe {
                libc::kill(p, libc::SIGKILL);
            }
        }
    }
    if let Ok(pgid) = i32::try_from(pid) {
        // SAFETY: as above; a negative pid signals the process group we created.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline && doomed.iter().any(|&p| p != pid && alive(p)) {
        std::thread::sleep(Duration::from_millis(100));
    }
    doomed.len()
}
