//! [`FaultWatch`]: the memory-exception event through which a queue
//! learns that its GPU faulted.

use std::sync::Arc;

use std::time::Duration;

use kfd_event::{Condition, Event, EventDescriptor, EventType, Events, ExceptionData, Signal};

use crate::error::QueueError;

/// A memory-exception event on one GPU node, owned by a queue of that
/// node: the kernel sets it on a GPU memory fault (which stops the
/// process's queues on that GPU) with the fault's node and page. A wait
/// that also sleeps on [`FaultWatch::event`] wakes on the fault, and
/// [`FaultWatch::check`] turns it into [`QueueError::MemoryFault`].
/// Dropping it destroys the event.
#[derive(Debug)]
pub(crate) struct FaultWatch {
    events: Arc<Events>,
    event: Event,
    node_id: u32,
}

impl FaultWatch {
    /// Creates the memory event of node `node_id` through `events`.
    pub fn new(events: &Arc<Events>, node_id: u32) -> Result<FaultWatch, QueueError> {
        let desc = EventDescriptor::new(EventType::Memory).on_node(node_id);
        let event = events.create(&desc)?;
        Ok(FaultWatch {
            events: events.clone(),
            event,
            node_id,
        })
    }

    /// The event, to sleep on together with a signal's.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// [`QueueError::MemoryFault`] if a wait saw a fault on this node.
    /// The kernel sets every memory event of the process on a fault; one
    /// on another GPU stopped that GPU's queues, not this node's.
    pub fn check(&self) -> Result<(), QueueError> {
        match self.event.exception() {
            Some(ExceptionData::Memory(m)) if m.node_id == self.node_id => {
                Err(QueueError::MemoryFault {
                    node_id: m.node_id,
                    address: m.virtual_address,
                })
            }
            _ => Ok(()),
        }
    }

    /// As [`FaultWatch::check`], after looking at the event without
    /// sleeping (a wait of 0 ms, which stores a pending fault's data in
    /// the event): for a producer that waits for room in a ring no
    /// signal wait is looking at the event.
    pub fn poll(&self) -> Result<(), QueueError> {
        self.events.wait_one(&self.event, 0)?;
        self.check()
    }
}

impl FaultWatch {
    /// Sleeps until `signal` meets `condition` against `compare` and
    /// returns its value, as [`Signal::wait_until`] does, but also wakes
    /// on this node's fault and returns it ([`FaultWatch::check`]).
    pub fn wait(
        &self,
        signal: &Signal,
        condition: Condition,
        compare: i64,
        timeout: Duration,
    ) -> Result<i64, QueueError> {
        let also = [self.event.clone()];
        signal.wait_until_or(condition, compare, timeout, &also, || self.check())
    }
}

impl Drop for FaultWatch {
    fn drop(&mut self) {
        let _ = self.events.destroy(&self.event);
    }
}
