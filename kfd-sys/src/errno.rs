//! The errno newtype used at the ioctl layer.

use std::fmt;

/// A raw `errno` value returned by the kernel (or the simulator) for a
/// failed system call.
///
/// This is deliberately a plain newtype: the ioctl layer reports what the
/// kernel said, and the crates above translate it into their own typed
/// errors or into `HSAKMT_STATUS` codes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Errno(pub i32);

macro_rules! errno_consts {
    ($($name:ident),* $(,)?) => {
        impl Errno {
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                pub const $name: Errno = Errno(libc::$name);
            )*
        }

        /// Every errno this crate names, with its name: the one list that
        /// traces print and fault plans parse.
        const NAMES: &[(Errno, &str)] = &[
            $((Errno::$name, stringify!($name)),)*
            (Errno::ENOTSUPP, "ENOTSUPP"),
        ];
    };
}

errno_consts!(
    EPERM, ENOENT, ESRCH, EINTR, EIO, ENXIO, E2BIG, EBADF, EAGAIN, ENOMEM, EACCES, EFAULT, EBUSY,
    EEXIST, ENODEV, EINVAL, ENFILE, EMFILE, ENOTTY, ENOSPC, ERANGE, ENOSYS, EOPNOTSUPP, ETIMEDOUT,
    EALREADY, ECANCELED, EOVERFLOW, EPROTO, ENODATA, ETIME, EADDRINUSE,
);

impl Errno {
    /// `ENOTSUPP` (524): a kernel-internal errno that some drivers return
    /// to user space (the KFD does for an unknown queue type). libc has
    /// no name for it; it is not `EOPNOTSUPP`.
    pub const ENOTSUPP: Errno = Errno(524);

    /// The symbolic name (`"EINVAL"`), if this crate declares the errno.
    ///
    /// ```
    /// use kfd_sys::Errno;
    ///
    /// assert_eq!(Errno::ENOMEM.name(), Some("ENOMEM"));
    /// assert_eq!(Errno(4095).name(), None);
    /// ```
    pub fn name(self) -> Option<&'static str> {
        NAMES.iter().find(|(e, _)| *e == self).map(|(_, n)| *n)
    }

    /// The errno named `name` (exactly as [`Errno::name`] spells it).
    ///
    /// ```
    /// use kfd_sys::Errno;
    ///
    /// assert_eq!(Errno::from_name("EINVAL"), Some(Errno::EINVAL));
    /// assert_eq!(Errno::from_name("einval"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Errno> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(e, _)| *e)
    }
}

impl Errno {
    /// The `errno` of the calling thread, as left by the last failed libc call.
    pub fn last() -> Errno {
        Errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }

    /// The raw value.
    pub const fn raw(self) -> i32 {
        self.0
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Errno({}: {})", self.0, self)
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let io = std::io::Error::from_raw_os_error(self.0);
        // io::Error's Display appends " (os error N)"; keep only the text.
        let text = io.to_string();
        let text = text.split(" (os error").next().unwrap_or(&text);
        f.write_str(text)
    }
}

impl std::error::Error for Errno {}

impl From<Errno> for std::io::Error {
    fn from(e: Errno) -> Self {
        std::io::Error::from_raw_os_error(e.0)
    }
}

impl From<nix::errno::Errno> for Errno {
    fn from(e: nix::errno::Errno) -> Self {
        Errno(e as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_strerror_text() {
        assert_eq!(Errno::ENOTTY.to_string(), "Inappropriate ioctl for device");
        assert_eq!(Errno::EINVAL.raw(), 22);
        assert!(format!("{:?}", Errno::ENOMEM).starts_with("Errno(12"));
    }

    #[test]
    fn names_are_unique_and_round_trip() {
        for (i, (e, n)) in NAMES.iter().enumerate() {
            assert_eq!(e.name(), Some(*n), "{n}: value named twice");
            assert_eq!(Errno::from_name(n), Some(*e), "{n}: name listed twice");
            assert!(NAMES[..i].iter().all(|(_, m)| m != n));
        }
        assert_eq!(Errno::ENOTSUPP.name(), Some("ENOTSUPP"));
        assert_eq!(Errno::EADDRINUSE.raw(), libc::EADDRINUSE);
    }
}
