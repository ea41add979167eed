//! **Waking the workers**: the channel an epoch travels to a worker unparks that worker.
//!
//! A worker waiting for its next epoch parks (timely's `step_or_park`) instead of polling, so an
//! idle live run takes no CPU. Its [`Waker`] holds the worker's thread once the worker has
//! [registered](Waker::register) it; every send on the worker's [`EpochSender`], and the
//! sender's end, unparks that thread. A wake-up that comes before the worker parks is not lost:
//! a thread's unpark token makes its next park return at once.
//!
//! ```
//! use ripples::live::Waker;
//! let waker = Waker::default();
//! waker.wake(); // nobody registered yet: nothing to do
//! waker.register();
//! waker.wake(); // this thread's next park returns at once
//! std::thread::park();
//! ```

use std::sync::mpsc::{SendError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::Thread;

use super::EpochBatch;

/// The thread of the worker that receives one epoch channel, once it has registered.
#[derive(Clone, Debug, Default)]
pub struct Waker(Arc<Mutex<Option<Thread>>>);

impl Waker {
    /// Registers the calling thread as the one to wake.
    pub fn register(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::thread::current());
    }

    /// Unparks the registered thread, if any.
    pub fn wake(&self) {
        if let Some(thread) = self.0.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            thread.unpark();
        }
    }
}

/// The sending half of a worker's epoch channel: each send, and the end of the channel, wakes
/// the worker.
pub(crate) struct EpochSender {
    sender: Option<Sender<EpochBatch>>,
    waker: Waker,
}

impl EpochSender {
    /// A sender on `sender` that wakes through `waker`.
    pub(crate) fn new(sender: Sender<EpochBatch>, waker: Waker) -> Self {
        EpochSender { sender: Some(sender), waker }
    }

    /// Sends `batch` and wakes the worker.
    pub(crate) fn send(&self, batch: EpochBatch) -> Result<(), SendError<EpochBatch>> {
        let sent = match &self.sender {
            Some(sender) => sender.send(batch),
            None => Err(SendError(batch)),
        };
        self.waker.wake();
        sent
    }
}

impl Drop for EpochSender {
    fn drop(&mut self) {
        // The channel ends first, so that the woken worker sees it ended.
        drop(self.sender.take());
        self.waker.wake();
    }
}
