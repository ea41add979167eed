//! How `--shards` times a forest's apply: on this thread's CPU clock, and on the wall clock
//! ([`Spent`]). The figures use the CPU clock: on a shared machine the wall clock also counts the
//! time the thread waited for a core (stalls of whole seconds were seen while another build
//! ran), which is no forest's work; the wall clock is kept beside it to show how far apart they
//! are. Reading the CPU clock is a system call (a fraction of a microsecond, half of it inside
//! the timed span), small against the applies it times (tens of microseconds and up).

use std::time::Instant;

/// Seconds spent, on the two clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    /// This thread's CPU time (user and system): the work.
    pub cpu: f64,
    /// Wall-clock time.
    pub wall: f64,
}

/// A moment on both clocks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stamp {
    wall: Instant,
    cpu: f64,
}

impl Stamp {
    /// Now.
    pub(super) fn now() -> Stamp {
        // CPU first, wall last: the wall span then contains the CPU span.
        let cpu = thread_cpu_secs();
        Stamp { wall: Instant::now(), cpu }
    }

    /// The time spent since `self`.
    pub(super) fn spent(self) -> Spent {
        let wall = self.wall.elapsed().as_secs_f64();
        Spent { cpu: (thread_cpu_secs() - self.cpu).max(0.0), wall }
    }
}

/// This thread's CPU time in seconds (`CLOCK_THREAD_CPUTIME_ID`); elsewhere than on Unix, the
/// wall clock since the first call.
fn thread_cpu_secs() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `clock_gettime` writes one `timespec` through a pointer to a live local.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
        if ok {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}
