//! **The snapshot policy**: when the sequencer writes a snapshot of the multiset
//! (`--snapshot-every N`), and what it holds.
//!
//! A snapshot is due at epoch `e` when `e` is at least `N` epochs past the newest snapshot on
//! disk (or, without one, when `e >= N`). It is considered when the epoch after `e` closes, and
//! describes the multiset as of `e`. It is only taken once the dataflow has completed (and the
//! driver has written the changes of) every epoch up to `e`: a restart resumes from the snapshot
//! and must be able to reproduce the change log of every later epoch individually. The dataflow is
//! at most `--max-behind` epochs behind and usually one, so the sequencer *waits* for it — woken
//! by [`Progress::complete`](super::Progress::complete) or `stop`, never polling — but for at
//! most [`SNAPSHOT_WAIT`]; a snapshot that would have to wait longer is skipped (the next closed
//! epoch tries again).
//!
//! In a windowed stream the snapshot holds the static edges plus the timed copies still alive at
//! the watermark's frontier; a copy that left its window before the frontier can change no
//! result that is still to be written (the one at `frontier - 1` included), so it is dropped from
//! the sequencer's `alive` set and not kept. A failed snapshot write is fatal: it leaves the
//! state directory refusing further appends.

use std::time::Duration;

use super::backpressure::wait_completed;
use super::error::SequencerError;
use super::multiset::edge_update;
use super::sequencer::Sequencer;
use crate::types::{Edge, Time, Update};

/// The longest the sequencer waits for the dataflow to complete a snapshot's epoch.
const SNAPSHOT_WAIT: Duration = Duration::from_secs(60);

impl Sequencer {
    /// Writes the snapshot of `epoch` if one is due (see the module docs).
    pub(super) fn snapshot(&mut self, epoch: Time) -> Result<(), SequencerError> {
        let (Some(state), Some(every)) = (self.state.as_mut(), self.snapshot_every) else {
            return Ok(());
        };

        let due = match state.snapshot_epochs().last() {
            Some(&last) => epoch >= last + every,
            None => epoch >= every,
        };
        if !due {
            return Ok(());
        }
        // Let the dataflow finish `epoch` first (it is at most `max_behind` epochs behind, and
        // usually one): the snapshot must not run ahead of the change log.
        if !wait_completed(&self.progress, epoch, SNAPSHOT_WAIT) {
            return Ok(());
        }
        let mut copies: Vec<(Edge, u64)> = self.edges.iter().map(|(&e, &n)| (e, n)).collect();
        copies.sort_unstable();
        let mut entries: Vec<(Update, Option<Time>, u64)> =
            copies.into_iter().map(|(e, n)| (edge_update(e), None, n)).collect();
        if let Some(clock) = &self.clock {
            // A copy that left its window before the frontier can change no result that is
            // still to be written (the one at `frontier - 1` included): it is not kept.
            let frontier = clock.frontier();
            self.alive = self.alive.split_off(&(frontier, (0, 0, 0), 0));
            entries.extend(self.alive.iter().map(|(&(_, e, t), &n)| (edge_update(e), Some(t), n)));
        }
        // Fatal: a failed snapshot write leaves the state directory refusing further appends.
        let started = std::time::Instant::now();
        let records = self.records.iter().map(|(text, &n)| (text.clone(), n)).collect();
        state
            .snapshot_with_records(epoch, &entries, records)
            .map_err(|source| SequencerError::Snapshot { epoch, source })?;
        let c = &self.progress.counters;
        let ordering = std::sync::atomic::Ordering::Relaxed;
        c.last_snapshot_nanos.store(started.elapsed().as_nanos() as u64, ordering);
        c.last_snapshot_entries.store(entries.len() as u64, ordering);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        c.last_snapshot_unix_ms.store(now.as_millis() as u64, ordering);
        c.snapshots.fetch_add(1, ordering);
        Ok(())
    }
}
