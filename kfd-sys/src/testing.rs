//! Test support, not part of the supported API: a fake KFD [`Driver`] for
//! unit tests of the crates above that need requests kfd-sim does not
//! model (yet), or failures it cannot inject.
//!
//! [`FakeKfd`] does what every such fake needs: hands out `/dev/null`
//! descriptors, answers `AMDKFD_IOC_GET_VERSION` with
//! [`FakeState::version`], records every call (ioctl nr plus, for
//! `AMDKFD_IOC_DBG_TRAP`, the operation), fails calls on request
//! ([`FakeKfd::fail`]) and, like amdkfd, answers requests nobody handles
//! with `ENOTTY`. Everything else goes to a test-specific [`Model`], the
//! part that differs between test suites.
//!
//! ```
//! use kfd_sys::testing::{FakeKfd, Model, ANY_OP};
//! use kfd_sys::Errno;
//!
//! #[derive(Debug, Default)]
//! struct Nothing;
//! impl Model for Nothing {}
//!
//! let fake = FakeKfd::new(1, 17, Nothing);
//! let file = fake.open();
//! assert_eq!(file.kfd_version(), Ok((1, 17)));
//! fake.fail(0x01, ANY_OP, Errno::EIO);
//! assert_eq!(file.kfd_version(), Err(Errno::EIO));
//! assert_eq!(fake.calls(), vec![(0x01, ANY_OP), (0x01, ANY_OP)]);
//! ```

use std::collections::HashMap;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::ioctl::ioc_nr;
use crate::kfd::{self, kfd_ioctl_dbg_trap_args};
use crate::sync::lock;
use crate::{DeviceFile, Driver, Errno};

/// The operation recorded for requests other than `AMDKFD_IOC_DBG_TRAP`;
/// as a failure key, "every operation of this request".
pub const ANY_OP: u32 = u32::MAX;

/// The test-specific part of a [`FakeKfd`].
pub trait Model: fmt::Debug + Send + 'static {
    /// Answers request number `nr` (everything but GET_VERSION and
    /// injected failures). The default refuses it with `ENOTTY`.
    ///
    /// # Safety
    ///
    /// `arg` points at the argument struct of request `nr`, and every
    /// pointer in it is valid as that request's ABI says (the code under
    /// test set it up).
    unsafe fn ioctl(
        &mut self,
        version: (u32, u32),
        nr: u8,
        arg: *mut libc::c_void,
    ) -> Result<i32, Errno> {
        let _ = (version, nr, arg);
        Err(Errno::ENOTTY)
    }
}

/// The state of a [`FakeKfd`]; dereferences to its model.
#[derive(Debug, Default)]
pub struct FakeState<M> {
    /// What GET_VERSION answers.
    pub version: (u32, u32),
    /// Injected failures by `(nr, op)`; `op` [`ANY_OP`] matches all.
    pub fail: HashMap<(u8, u32), Errno>,
    /// Every call, in order, as `(nr, op)`.
    pub calls: Vec<(u8, u32)>,
    /// The test-specific part.
    pub model: M,
}

impl<M> Deref for FakeState<M> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.model
    }
}

impl<M> DerefMut for FakeState<M> {
    fn deref_mut(&mut self) -> &mut M {
        &mut self.model
    }
}

/// A fake KFD driver; see the [module docs](self).
#[derive(Debug)]
pub struct FakeKfd<M> {
    /// Its state (lock it to set the model up or inspect it).
    pub state: Mutex<FakeState<M>>,
}

impl<M: Model> FakeKfd<M> {
    /// A fake answering GET_VERSION with `major.minor`.
    pub fn new(major: u32, minor: u32, model: M) -> Arc<FakeKfd<M>> {
        Arc::new(FakeKfd {
            state: Mutex::new(FakeState {
                version: (major, minor),
                fail: HashMap::new(),
                calls: Vec::new(),
                model,
            }),
        })
    }

    /// Locks the state.
    pub fn lock(&self) -> MutexGuard<'_, FakeState<M>> {
        lock(&self.state)
    }

    /// Makes request `nr` (operation `op`, or [`ANY_OP`]) fail with `errno`.
    pub fn fail(&self, nr: u8, op: u32, errno: Errno) {
        self.lock().fail.insert((nr, op), errno);
    }

    /// Every call so far, as `(nr, op)`.
    pub fn calls(&self) -> Vec<(u8, u32)> {
        self.lock().calls.clone()
    }

    /// Opens a KFD file on this fake.
    pub fn open(self: &Arc<Self>) -> Arc<DeviceFile> {
        Arc::new(DeviceFile::open_kfd(self.clone()).expect("/dev/null opens"))
    }
}

impl<M: Model> Driver for FakeKfd<M> {
    fn open_kfd(&self) -> Result<OwnedFd, Errno> {
        Ok(std::fs::File::open("/dev/null")
            .map_err(|_| Errno::ENOENT)?
            .into())
    }

    fn open_render_node(&self, _minor: u32) -> Result<OwnedFd, Errno> {
        Err(Errno::ENOENT)
    }

    unsafe fn ioctl(
        &self,
        _fd: BorrowedFd<'_>,
        request: libc::c_ulong,
        arg: *mut libc::c_void,
    ) -> Result<i32, Errno> {
        let nr = ioc_nr(request as u32);
        let op = if nr == kfd::AMDKFD_IOC_DBG_TRAP.nr() {
            // SAFETY: the caller passes the request's argument, a
            // kfd_ioctl_dbg_trap_args for AMDKFD_IOC_DBG_TRAP.
            unsafe { (*(arg as *const kfd_ioctl_dbg_trap_args)).op }
        } else {
            ANY_OP
        };
        let mut s = self.lock();
        s.calls.push((nr, op));
        if let Some(e) = s.fail.get(&(nr, op)).or_else(|| s.fail.get(&(nr, ANY_OP))) {
            return Err(*e);
        }
        if nr == kfd::AMDKFD_IOC_GET_VERSION.nr() {
            // SAFETY: GET_VERSION's argument.
            let a = unsafe { &mut *(arg as *mut kfd::kfd_ioctl_get_version_args) };
            (a.major_version, a.minor_version) = s.version;
            return Ok(0);
        }
        let version = s.version;
        // SAFETY: forwarded from this function's contract.
        unsafe { s.model.ioctl(version, nr, arg) }
    }

    fn root(&self) -> &Path {
        Path::new("/")
    }
}

/// The cause of an error as the tests of the crates above name it: the
/// name of its variant (its `Debug` form up to the first character that
/// cannot be in an identifier). Their C statuses are the `hsakmt`
/// border's, tested there.
pub trait Cause {
    /// The variant name.
    fn cause(&self) -> String;
}

impl<E: fmt::Debug> Cause for E {
    fn cause(&self) -> String {
        let debug = format!("{self:?}");
        let end = debug
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(debug.len());
        debug[..end].to_string()
    }
}
