//! HSA signals: an `amd_signal_t` in GPU-visible memory whose completion
//! by the GPU raises a KFD event that host waiters sleep on.

use std::fmt;
use std::mem::offset_of;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kfd_fmm::{Buffer, Fmm, MemFlags};
use kfd_sys::hsa::{
    amd_signal_t, hsa_signal_t, AMD_SIGNAL_KIND_USER, HSA_SIGNAL_CONDITION_EQ,
    HSA_SIGNAL_CONDITION_GTE, HSA_SIGNAL_CONDITION_LT, HSA_SIGNAL_CONDITION_NE,
};
use zerocopy::IntoBytes;

use crate::error::EventError;
use crate::event::{Event, EventDescriptor, EventType};
use crate::events::{Events, WaitMode};

/// Byte offset of the value in `amd_signal_t`.
const VALUE: u64 = offset_of!(amd_signal_t, value) as u64;

/// Bytes allocated per signal: the memory manager hands out whole pages.
const SIGNAL_ALLOC: u64 = 4096;

/// The longest single kernel wait: one millisecond short of
/// [`crate::TIMEOUT_INFINITE`], so that a long timeout is waited out in
/// finite steps and the value re-checked between them.
const LONGEST_WAIT_MS: u32 = 0xFFFF_FFFE;

/// `hsa_signal_condition_t`: how a signal's value is compared with the
/// value a waiter gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Condition {
    /// The value equals the compare value.
    Eq,
    /// The value differs from it.
    Ne,
    /// The value is less than it.
    Lt,
    /// The value is greater than or equal to it.
    Gte,
}

impl Condition {
    /// The `HSA_SIGNAL_CONDITION_*` value (barrier-value packets carry it).
    pub fn raw(self) -> u32 {
        match self {
            Condition::Eq => HSA_SIGNAL_CONDITION_EQ,
            Condition::Ne => HSA_SIGNAL_CONDITION_NE,
            Condition::Lt => HSA_SIGNAL_CONDITION_LT,
            Condition::Gte => HSA_SIGNAL_CONDITION_GTE,
        }
    }

    /// True if `value` meets the condition against `compare`.
    pub fn holds(self, value: i64, compare: i64) -> bool {
        match self {
            Condition::Eq => value == compare,
            Condition::Ne => value != compare,
            Condition::Lt => value < compare,
            Condition::Gte => value >= compare,
        }
    }
}

/// An HSA signal of kind USER, as ROCr's interrupt signals are: an
/// `amd_signal_t` in host memory mapped to every GPU, with the mailbox
/// (`event_mailbox_ptr`, the event's slot in the event page) and id
/// (`event_id`) of an auto-reset signal event of its own. When the GPU
/// completes the signal (a packet's completion signal, a queue error
/// written into a queue's inactive signal) it changes the value, writes
/// the event id into the mailbox and raises the event interrupt; host
/// waiters sleep in the kernel until then.
///
/// # Waking up
///
/// The kernel finds the event an interrupt is for through its mailbox
/// slot (the CP wrote the event id there; a slot still reading
/// "unsignaled" is not looked at), puts the slot back to "unsignaled",
/// which re-arms it for the next completion, and sets the event. The
/// signal never writes the slot itself. An auto-reset event set while
/// nobody waits stays set until the next wait consumes it, and a set
/// that wakes a waiter is consumed by that wake. A waiter that checked the value and then went
/// to sleep could therefore miss a completion that happened between the
/// two if the event had been consumed by an earlier wake. The waits of
/// this type cannot: they pass the event age (`hsaKmtWaitOnEvent_Ext`),
/// starting from the creation age, so every set since the last wait this
/// signal's waiter returned from ends the next wait at once, and the
/// value is re-checked after every wake (a wake is a hint, never the
/// answer). A host [`Signal::store`] sets the event itself (the mailbox
/// is the GPU's path), as ROCr's stores do.
///
/// # Memory
///
/// One page per signal, from the context's memory manager; the handle
/// ([`Signal::handle`]) is its GPU address (equal to the CPU address).
/// Dropping the signal destroys its event and frees the page: the GPU
/// must be done with it (wait for the packets that name it first).
pub struct Signal {
    events: Arc<Events>,
    event: Event,
    memory: Buffer,
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signal")
            .field("handle", &format_args!("{:#x}", self.memory.addr()))
            .field("event", &self.event)
            .finish()
    }
}

impl Signal {
    /// Creates a signal with value `initial`: its event through `events`
    /// and its memory through `fmm` (pinned host memory, mapped to every
    /// GPU), both of one context.
    ///
    /// [`EventError::NoMailbox`] if the event got no slot in the event
    /// page (the GPU could not raise it); [`EventError::SignalMemory`] if
    /// the memory could not be allocated, written or mapped.
    pub fn new(events: &Arc<Events>, fmm: &Arc<Fmm>, initial: i64) -> Result<Signal, EventError> {
        let mut desc = EventDescriptor::new(EventType::Signal);
        desc.sync_var_size = std::mem::size_of::<i64>() as u64;
        let event = events.create(&desc)?;
        // From here on a failure destroys the event with the signal.
        let flags = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        let memory = match fmm.alloc_buffer(0, SIGNAL_ALLOC, 0, flags) {
            Ok(m) => m,
            Err(e) => {
                let _ = events.destroy(&event);
                return Err(EventError::SignalMemory(e));
            }
        };
        let signal = Signal {
            events: events.clone(),
            event,
            memory,
        };
        let mailbox = signal.event.slot_address();
        if mailbox == 0 {
            return Err(EventError::NoMailbox(signal.event.id()));
        }
        let raw = amd_signal_t {
            kind: AMD_SIGNAL_KIND_USER,
            value: initial,
            event_mailbox_ptr: mailbox,
            event_id: signal.event.id(),
            ..Default::default()
        };
        signal
            .memory
            .write(0, raw.as_bytes())
            .and_then(|()| signal.memory.map())
            .and_then(|_| signal.memory.atomic_u64(VALUE))
            .map_err(EventError::SignalMemory)?;
        Ok(signal)
    }

    /// The handle AQL packets carry (completion and dependency signals).
    pub fn handle(&self) -> hsa_signal_t {
        hsa_signal_t {
            handle: self.memory.addr(),
        }
    }

    /// The event the GPU raises on completion (to wait on it together
    /// with other events).
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// The value word (checked to be accessible when the signal was made).
    fn cell(&self) -> Result<&AtomicU64, EventError> {
        self.memory
            .atomic_u64(VALUE)
            .map_err(EventError::SignalMemory)
    }

    /// The value, with acquire ordering: what the producer wrote before
    /// it released the value is visible.
    pub fn load(&self) -> Result<i64, EventError> {
        Ok(self.cell()?.load(Ordering::Acquire) as i64)
    }

    /// The value, without ordering (relaxed).
    pub fn value(&self) -> Result<i64, EventError> {
        Ok(self.cell()?.load(Ordering::Relaxed) as i64)
    }

    /// Stores `value` with release ordering and sets the event, waking
    /// host waiters (GPU packets waiting on the signal see the value).
    pub fn store(&self, value: i64) -> Result<(), EventError> {
        self.cell()?.store(value as u64, Ordering::Release);
        self.events.set(&self.event)
    }

    /// Sleeps until the value meets `condition` against `compare` and
    /// returns it (acquire ordering), or fails with
    /// [`EventError::SignalTimeout`] after `timeout`
    /// ([`Duration::MAX`]: never). See the type's notes on waking up.
    pub fn wait_until(
        &self,
        condition: Condition,
        compare: i64,
        timeout: Duration,
    ) -> Result<i64, EventError> {
        self.wait_until_or(condition, compare, timeout, &[], || Ok(()))
    }

    /// As [`Signal::wait_until`], also woken by any event of `also`
    /// (exception events, other signals' events); `check` runs whenever
    /// the value does not meet the condition and ends the wait with its
    /// error (a queue that stopped, a memory fault that a memory event
    /// reported: its data is in the event after the wake that reported
    /// it, see [`Event::exception`]). A value that meets the condition
    /// wins over an error.
    pub fn wait_until_or<E: From<EventError>>(
        &self,
        condition: Condition,
        compare: i64,
        timeout: Duration,
        also: &[Event],
        mut check: impl FnMut() -> Result<(), E>,
    ) -> Result<i64, E> {
        let start = Instant::now();
        let mut list = Vec::with_capacity(1 + also.len());
        list.push(self.event.clone());
        list.extend_from_slice(also);
        // Creation ages: the first wait ends at once if any event was
        // set since it was created.
        let mut ages = vec![1u64; list.len()];
        loop {
            let value = self.load()?;
            if condition.holds(value, compare) {
                return Ok(value);
            }
            check()?;
            let waited = start.elapsed();
            let Some(left) = timeout.checked_sub(waited).filter(|l| !l.is_zero()) else {
                return Err(EventError::SignalTimeout { value, waited }.into());
            };
            let ms = left.as_nanos().div_ceil(1_000_000);
            let ms = u32::try_from(ms).map_or(LONGEST_WAIT_MS, |m| m.min(LONGEST_WAIT_MS));
            self.events
                .wait_with_age(&list, WaitMode::Any, ms, &mut ages)?;
        }
    }

    /// Destroys the event and frees the memory, reporting a failure to
    /// destroy the event (dropping the signal does the same silently).
    pub fn destroy(self) -> Result<(), EventError> {
        // The drop that follows finds the event destroyed and frees the
        // memory.
        self.events.destroy(&self.event)
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        if self.event.obj.is_live() {
            let _ = self.events.destroy(&self.event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions() {
        let table = [
            (Condition::Eq, [false, true, false]),
            (Condition::Ne, [true, false, true]),
            (Condition::Lt, [true, false, false]),
            (Condition::Gte, [false, true, true]),
        ];
        for (c, want) in table {
            let got = [-1, 0, 1].map(|v| c.holds(v, 0));
            assert_eq!(got, want, "{c:?}");
        }
        assert_eq!(Condition::Gte.raw(), 3);
        assert_eq!(Condition::Eq.raw(), 0);
    }
}
