//! **Event-time windows**: what `--window SPAN`, `--tumbling SPAN`, `--lateness L` and
//! `--late drop|error` mean, as plain functions that the file loader, the live front end and the
//! driver share.
//!
//! # Model
//!
//! In a windowed run every update line carries an event time (`1 2 @T`) and only inserts (an
//! edge leaves the window by itself, so a deletion line is an error). The **dataflow time is the
//! event time**: the result at time `t` is the algorithm applied to
//!
//! * **sliding** (`--window SPAN`): the edges whose event time `T` satisfies `t - SPAN < T <= t`;
//!   an edge with time `T` enters at `T` and is retracted at `T + SPAN` — one future retraction
//!   handed to differential dataflow together with the insertion, never a scan;
//! * **tumbling** (`--tumbling SPAN`): the edges whose event time lies in the same window
//!   `[k·SPAN, (k+1)·SPAN)` as `t`; an edge enters at its window's start and is retracted at its
//!   end, so results change only at window starts and each window's result describes that
//!   window alone;
//!
//! plus, in both cases, the static edges of `--graph` (present at every time).
//!
//! # Watermark and lateness
//!
//! The watermark moves once per epoch (an epoch is a batch of arriving lines: `--batch`,
//! `commit`, `--epoch-ms`): after epoch `e`, `W_e = M_e - L` (saturating at 0), `M_e` being the
//! largest event time accepted so far (`W = 0` before any). An update arriving in epoch `e` with
//! `T < W_{e-1}` is **late**: dropped and counted (`--late drop`, the default), an error
//! (`--late error`: a file run stops before anything is applied; a TCP producer is answered
//! `error N: late update ...`), or applied at the input frontier (`--late apply`: it enters at
//! `F = frontier(W_{e-1})` instead of its own time and keeps its original expiry, or is dropped
//! if that has passed; results before `F` are written and stay final, the correction appears as
//! ordinary changes from `F` on). `--late-output FILE` records every late line and its fate. Epoch-granular watermarks keep the decision a function of the
//! epochs alone, so a restart that replays the logged epochs reproduces it exactly.
//!
//! ```
//! use ripples::sources::window::{EventClock, WindowKind, WindowSpec};
//! // --window 10 --lateness 5
//! let spec = WindowSpec { lateness: 5, ..WindowSpec::new(WindowKind::Sliding, 10) };
//! // An edge with event time 4 is present at times 4..14.
//! assert_eq!(spec.lifetime(4), (4, Some(14)));
//! let mut clock = EventClock::new(spec);
//! assert_eq!(clock.watermark(), 0);
//! // The first epoch accepted updates with event times 3, 12 and 7: the watermark is 12 - 5.
//! clock.close_epoch([3, 12, 7]);
//! assert_eq!(clock.watermark(), 7);
//! assert!(clock.is_late(6) && !clock.is_late(7));
//! // Results before the frontier are final; at the end, every time up to 12 is.
//! assert_eq!(clock.frontier(), 7);
//! assert_eq!(clock.final_frontier(), 13);
//! ```
//!
//! # When results are written
//!
//! The driver advances the dataflow's input frontier to [`EventClock::frontier`] after each
//! epoch (`W` for sliding windows; the start of `W`'s window for tumbling ones) and writes the
//! results of a time only once the output frontier has passed it. No accepted update can ever
//! have an earlier dataflow time, so **a written result is final**: no late update changes it.
//! When the stream ends, [`EventClock::final_frontier`] closes every time up to the largest event
//! time seen (sliding) or the window that contains it (tumbling); `--output` is the result there.
//! Changes at later times (the retractions of the last window) are never written.

use crate::types::{Time, Update};

/// Sliding or tumbling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowKind {
    /// `--window SPAN`: an edge is present for `SPAN` time units from its own event time.
    Sliding,
    /// `--tumbling SPAN`: consecutive, disjoint windows `[k·SPAN, (k+1)·SPAN)`.
    Tumbling,
}

/// What happens to an update older than the watermark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LatePolicy {
    /// Drop it and count it (`late` in the stats).
    #[default]
    Drop,
    /// Reject it: a file run fails, a TCP producer gets `error N: ...`.
    Error,
    /// Apply it at the current input frontier (the watermark's): it enters there and keeps its
    /// original expiry if that is still ahead; otherwise it is dropped and counted. Written
    /// results stay final; the correction appears as ordinary changes at later times.
    Apply,
}

/// What happens to one late update (see [`WindowSpec::late_action`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LateAction {
    /// Dropped and counted (`--late drop`).
    Dropped,
    /// Rejected (`--late error`).
    Rejected,
    /// Applied (`--late apply`): it enters at `enter`, the input frontier.
    Applied {
        /// The dataflow time the update enters at (the input frontier, or its own window start
        /// if that is later).
        enter: Time,
    },
    /// `--late apply`, but its window had already ended at `leave`: dropped and counted.
    Expired {
        /// The dataflow time at which the update would have been retracted.
        leave: Time,
    },
}

impl LateAction {
    /// Whether the update is fed to the dataflow.
    pub fn is_applied(&self) -> bool {
        matches!(self, LateAction::Applied { .. })
    }

    /// How `--late-output` names what happened.
    pub fn describe(&self) -> String {
        match self {
            LateAction::Dropped => "dropped".into(),
            LateAction::Rejected => "rejected".into(),
            LateAction::Applied { enter } => format!("applied at time {enter}"),
            LateAction::Expired { leave } => format!("dropped: its window ended at {leave}"),
        }
    }
}

/// `--late-output FILE`: one line per late update, naming where it came from, why it is late and
/// what happened to it (`u.txt:6: late update: event time 5 is older than ...; dropped`).
pub struct LateOutput {
    path: std::path::PathBuf,
    out: std::io::BufWriter<std::fs::File>,
}

impl LateOutput {
    /// Creates (truncates) `path`; the error message names the file.
    pub fn create(path: &std::path::Path) -> std::io::Result<Self> {
        let file = std::fs::File::create(path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write {}: {}", path.display(), e)))?;
        Ok(LateOutput { path: path.to_path_buf(), out: std::io::BufWriter::new(file) })
    }

    /// Records one late update: `origin` (`file:line`, or the producer and its line), the reason
    /// and the action taken.
    pub fn record(&mut self, origin: &str, reason: &str, action: LateAction) -> std::io::Result<()> {
        self.record_described(origin, reason, &action.describe())
    }

    /// Like [`LateOutput::record`], with the action already described.
    pub fn record_described(&mut self, origin: &str, reason: &str, action: &str) -> std::io::Result<()> {
        use std::io::Write;
        writeln!(self.out, "{origin}: {reason}; {action}").map_err(|e| self.context(e))
    }

    /// Flushes what was recorded (after every epoch).
    pub fn flush(&mut self) -> std::io::Result<()> {
        use std::io::Write;
        self.out.flush().map_err(|e| self.context(e))
    }

    fn context(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(e.kind(), format!("cannot write {}: {}", self.path.display(), e))
    }
}

/// The window flags of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSpec {
    /// Sliding (`--window`) or tumbling (`--tumbling`).
    pub kind: WindowKind,
    /// Window length in event-time units (at least 1).
    pub span: Time,
    /// `--lateness L`: the watermark trails the largest event time seen by this much.
    pub lateness: Time,
    /// `--late drop|error|apply`: what happens to an update older than the watermark.
    pub late: LatePolicy,
}

impl WindowSpec {
    /// A spec with lateness 0 and the drop policy.
    pub fn new(kind: WindowKind, span: Time) -> Self {
        WindowSpec { kind, span, lateness: 0, late: LatePolicy::Drop }
    }

    /// Checks the flags.
    pub fn validate(&self) -> Result<(), String> {
        if self.span == 0 {
            return Err(format!("{} must be at least 1", self.flag()));
        }
        Ok(())
    }

    /// The flag that set this window, for messages.
    pub fn flag(&self) -> &'static str {
        match self.kind {
            WindowKind::Sliding => "--window",
            WindowKind::Tumbling => "--tumbling",
        }
    }

    /// The start of the tumbling window holding `t` (`t` itself for sliding windows).
    pub fn window_start(&self, t: Time) -> Time {
        match self.kind {
            WindowKind::Sliding => t,
            WindowKind::Tumbling => t - t % self.span,
        }
    }

    /// What `--late` does with an update with event time `t` that is late, the dataflow's input
    /// frontier being `frontier` (see [`LatePolicy::Apply`]).
    pub fn late_action(&self, t: Time, frontier: Time) -> LateAction {
        match self.late {
            LatePolicy::Drop => LateAction::Dropped,
            LatePolicy::Error => LateAction::Rejected,
            LatePolicy::Apply => match self.lifetime(t) {
                (enter, Some(leave)) if leave <= enter.max(frontier) => LateAction::Expired { leave },
                (enter, _) => LateAction::Applied { enter: enter.max(frontier) },
            },
        }
    }

    /// The dataflow times of an accepted insertion with event time `t` when the input is at
    /// `frontier`: as [`WindowSpec::lifetime`], but entering no earlier than `frontier` (a late
    /// update applied at the watermark); `None` when it would leave before it enters.
    ///
    /// ```
    /// use ripples::sources::window::{WindowKind, WindowSpec};
    /// let spec = WindowSpec::new(WindowKind::Sliding, 10);
    /// // On time: its own lifetime.
    /// assert_eq!(spec.lifetime_from(20, 12), Some((20, Some(30))));
    /// // Late, applied at frontier 12: enters there, keeps its expiry 5 + 10.
    /// assert_eq!(spec.lifetime_from(5, 12), Some((12, Some(15))));
    /// // Late and already expired (2 + 10 <= 12): nothing to apply.
    /// assert_eq!(spec.lifetime_from(2, 12), None);
    /// ```
    pub fn lifetime_from(&self, t: Time, frontier: Time) -> Option<(Time, Option<Time>)> {
        let (enter, leave) = self.lifetime(t);
        let enter = enter.max(frontier);
        match leave {
            Some(leave) if leave <= enter => None,
            _ => Some((enter, leave)),
        }
    }

    /// The dataflow times of an accepted insertion with event time `t`: it enters at the first
    /// and is retracted at the second (`None` when that lies beyond `u64::MAX`: never retracted).
    ///
    /// ```
    /// use ripples::sources::window::{WindowKind, WindowSpec};
    /// // A tumbling window of 10 holds an edge with time 25 during [20, 30).
    /// assert_eq!(WindowSpec::new(WindowKind::Tumbling, 10).lifetime(25), (20, Some(30)));
    /// assert_eq!(WindowSpec::new(WindowKind::Sliding, 10).lifetime(u64::MAX - 3), (u64::MAX - 3, None));
    /// ```
    pub fn lifetime(&self, t: Time) -> (Time, Option<Time>) {
        let enter = self.window_start(t);
        (enter, enter.checked_add(self.span))
    }
}

/// Checks one update line of a stream against the window flags (`spec` is `None` without
/// them). Returns the event time to use (`None` outside windowed runs), or a message saying
/// what breaks the window rules.
///
/// ```
/// use ripples::sources::window::{check_update, WindowKind, WindowSpec};
/// use ripples::types::Update;
/// let spec = WindowSpec::new(WindowKind::Sliding, 3);
/// assert_eq!(check_update(Some(&spec), &Update::insert(1, 2), Some(9)), Ok(Some(9)));
/// let err = check_update(Some(&spec), &Update::delete(1, 2), Some(9)).unwrap_err();
/// assert!(err.starts_with("deletion of edge 1 2 in a windowed stream"));
/// ```
pub fn check_update(spec: Option<&WindowSpec>, update: &Update, time: Option<Time>) -> Result<Option<Time>, String> {
    match (spec, time) {
        (None, None) => Ok(None),
        (None, Some(t)) => Err(format!(
            "event time @{t} given, but the run has no window (use --window SPAN or --tumbling SPAN, \
             or drop the @ field)"
        )),
        (Some(spec), None) => Err(format!(
            "missing event time: with {} every update line ends with @T (as in \"{} {} @17\")",
            spec.flag(),
            update.src,
            update.dst
        )),
        (Some(spec), Some(_)) if update.diff < 0 => Err(format!(
            "deletion of edge {} {} in a windowed stream: with {} edges leave the window by \
             themselves, so update lines only insert",
            update.src,
            update.dst,
            spec.flag()
        )),
        (Some(_), Some(t)) => Ok(Some(t)),
    }
}

/// The watermark of a windowed stream, advanced epoch by epoch (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventClock {
    spec: WindowSpec,
    max_seen: Option<Time>,
}

impl EventClock {
    /// A clock that has seen no event time yet (watermark 0).
    pub fn new(spec: WindowSpec) -> Self {
        EventClock { spec, max_seen: None }
    }

    /// The window flags the clock applies.
    pub fn spec(&self) -> &WindowSpec {
        &self.spec
    }

    /// The largest event time accepted so far.
    pub fn max_seen(&self) -> Option<Time> {
        self.max_seen
    }

    /// Updates with an event time below this are late.
    pub fn watermark(&self) -> Time {
        self.max_seen.map_or(0, |m| m.saturating_sub(self.spec.lateness))
    }

    /// Whether an update with event time `t` arriving now is late.
    pub fn is_late(&self, t: Time) -> bool {
        t < self.watermark()
    }

    /// Why an update with event time `t` is late (for `--late error`).
    pub fn late_reason(&self, t: Time) -> String {
        format!(
            "late update: event time {t} is older than the watermark {} (largest event time seen {}, --lateness {})",
            self.watermark(),
            self.max_seen.map_or_else(|| "none".to_string(), |m| m.to_string()),
            self.spec.lateness
        )
    }

    /// Closes an epoch whose accepted updates had these event times.
    pub fn close_epoch(&mut self, times: impl IntoIterator<Item = Time>) {
        if let Some(m) = times.into_iter().max() {
            self.max_seen = Some(self.max_seen.map_or(m, |x| x.max(m)));
        }
    }

    /// The dataflow input frontier: every time below it is final.
    pub fn frontier(&self) -> Time {
        self.spec.window_start(self.watermark())
    }

    /// The frontier once the stream has ended: every time up to the largest event time seen (or
    /// to the end of its tumbling window) is final; without any event time, only time 0.
    pub fn final_frontier(&self) -> Time {
        match self.max_seen {
            None => 1,
            Some(m) => match self.spec.kind {
                WindowKind::Sliding => m.saturating_add(1),
                WindowKind::Tumbling => self.spec.window_start(m).saturating_add(self.spec.span),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_clock() {
        let spec = WindowSpec { lateness: 5, ..WindowSpec::new(WindowKind::Sliding, 10) };
        let mut c = EventClock::new(spec);
        assert_eq!((c.watermark(), c.frontier(), c.final_frontier()), (0, 0, 1));
        assert!(!c.is_late(0));
        c.close_epoch([3, 12, 7]);
        assert_eq!((c.watermark(), c.frontier(), c.final_frontier()), (7, 7, 13));
        assert!(c.is_late(6) && !c.is_late(7));
        c.close_epoch([]);
        assert_eq!(c.max_seen(), Some(12));
        c.close_epoch([9]);
        assert_eq!(c.watermark(), 7, "the watermark never goes back");
        assert_eq!(spec.lifetime(4), (4, Some(14)));
        assert_eq!(spec.lifetime(u64::MAX - 3), (u64::MAX - 3, None));
        assert!(c.late_reason(2).contains("event time 2 is older than the watermark 7"));
    }

    #[test]
    fn tumbling_clock() {
        let spec = WindowSpec::new(WindowKind::Tumbling, 10);
        let mut c = EventClock::new(spec);
        c.close_epoch([25]);
        assert_eq!((c.watermark(), c.frontier(), c.final_frontier()), (25, 20, 30));
        assert_eq!(spec.lifetime(25), (20, Some(30)));
        assert_eq!(spec.lifetime(30), (30, Some(40)));
        c.close_epoch([u64::MAX]);
        assert_eq!(c.final_frontier(), u64::MAX);
    }

    #[test]
    fn late_actions() {
        let apply = WindowSpec { late: LatePolicy::Apply, ..WindowSpec::new(WindowKind::Sliding, 10) };
        assert_eq!(apply.late_action(5, 12), LateAction::Applied { enter: 12 });
        assert_eq!(apply.late_action(2, 12), LateAction::Expired { leave: 12 });
        assert_eq!(apply.lifetime_from(5, 12), Some((12, Some(15))));
        assert_eq!(apply.lifetime_from(2, 12), None);
        assert_eq!(apply.lifetime_from(20, 12), Some((20, Some(30))), "on time: its own lifetime");
        let tumbling = WindowSpec { late: LatePolicy::Apply, ..WindowSpec::new(WindowKind::Tumbling, 10) };
        // The watermark's window [20, 30) is still open: a late 25 enters at its own window start.
        assert_eq!(tumbling.late_action(25, 20), LateAction::Applied { enter: 20 });
        assert_eq!(tumbling.late_action(15, 20), LateAction::Expired { leave: 20 });
        let drop = WindowSpec::new(WindowKind::Sliding, 10);
        assert_eq!(drop.late_action(5, 12), LateAction::Dropped);
        assert_eq!(LateAction::Applied { enter: 12 }.describe(), "applied at time 12");
    }

    #[test]
    fn line_rules() {
        let spec = WindowSpec::new(WindowKind::Sliding, 3);
        assert_eq!(check_update(None, &Update::insert(1, 2), None), Ok(None));
        assert!(check_update(None, &Update::insert(1, 2), Some(4)).unwrap_err().contains("has no window"));
        assert!(check_update(Some(&spec), &Update::insert(1, 2), None).unwrap_err().contains("missing event time"));
        assert!(check_update(Some(&spec), &Update::delete(1, 2), Some(1)).unwrap_err().starts_with("deletion"));
        assert_eq!(check_update(Some(&spec), &Update::insert(1, 2), Some(9)), Ok(Some(9)));
        assert!(WindowSpec::new(WindowKind::Tumbling, 0).validate().is_err());
    }
}
