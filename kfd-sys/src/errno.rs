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
    };
}

errno_consts!(
    EPERM, ENOENT, ESRCH, EINTR, EIO, ENXIO, E2BIG, EBADF, EAGAIN, ENOMEM, EACCES, EFAULT, EBUSY,
    EEXIST, ENODEV, EINVAL, ENFILE, EMFILE, ENOTTY, ENOSPC, ERANGE, ENOSYS, EOPNOTSUPP, ETIMEDOUT,
    EALREADY, ECANCELED, EOVERFLOW, EPROTO, ENODATA, ETIME,
);

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
}
