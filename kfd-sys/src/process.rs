//! Process-level hooks the thunk needs from libc.

use crate::Errno;

extern "C" {
    // POSIX, from libc (glibc links it from libc_nonshared.a with the
    // calling object's `__dso_handle`).
    fn pthread_atfork(
        prepare: Option<extern "C" fn()>,
        parent: Option<extern "C" fn()>,
        child: Option<extern "C" fn()>,
    ) -> libc::c_int;
}

/// Registers `handler` to run in the child after every `fork()` (POSIX
/// `pthread_atfork` with only a child handler). The handler runs in a
/// process that may have been forked from a multithreaded parent: it must
/// only do async-signal-safe work (an atomic store is fine; locks and
/// allocation are not).
pub fn on_fork_child(handler: extern "C" fn()) -> Result<(), Errno> {
    // SAFETY: `handler` is a plain function pointer, valid for the life of
    // the process; no prepare/parent handlers are registered.
    let r = unsafe { pthread_atfork(None, None, Some(handler)) };
    if r == 0 {
        Ok(())
    } else {
        Err(Errno(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    static SEEN: AtomicU32 = AtomicU32::new(0);

    extern "C" fn child() {
        SEEN.store(1, Ordering::Relaxed);
    }

    #[test]
    fn child_handler_runs_in_the_child_only() {
        on_fork_child(child).unwrap();
        // SAFETY: the child only reads an atomic and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = if SEEN.load(Ordering::Relaxed) == 1 {
                0
            } else {
                1
            };
            // SAFETY: exit the child without running the parent's atexit
            // handlers or test harness.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        assert_eq!(SEEN.load(Ordering::Relaxed), 0, "not in the parent");
    }
}
