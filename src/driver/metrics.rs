//! Measurements the driver takes: process memory. (The records they fill are in
//! [`crate::types::stats`].)
//!
//! ```
//! let (current, peak) = ripples::driver::metrics::memory();
//! if std::path::Path::new("/proc/self/status").exists() {
//!     assert!(current > 0 && peak >= current);
//! } else {
//!     assert_eq!((current, peak), (0, 0));
//! }
//! ```

pub use crate::types::stats::{EpochStats, LatencySummary};

/// Resident memory of this process in bytes: `(current, peak)` from `/proc/self/status`
/// (`VmRSS`, `VmHWM`); `(0, 0)` where that file does not exist.
pub fn memory() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
