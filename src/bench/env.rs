//! The environment every measurement carries (`ripples bench --json`, experiment records): the
//! code (git revision, dirty tree, rustc, profile, timely and differential versions), the machine
//! (CPU model, cores, memory, kernel), its load and the date.

use std::process::Command;

use serde::{Deserialize, Serialize};

/// The code and machine a record was measured with (the record's `env` field, the report's
/// environment table), captured once per run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    /// `git rev-parse HEAD` in the working directory (`unknown` outside a checkout).
    pub git_rev: String,
    /// Tracked files differ from the revision.
    pub git_dirty: bool,
    /// `$RUSTC --version` of the compiler that built this binary (captured by `build.rs`).
    pub rustc: String,
    /// `debug` or `release`: how this binary was built.
    pub profile: String,
    /// This crate's version (`CARGO_PKG_VERSION`).
    pub ripples_version: String,
    /// The `timely` version pinned in `Cargo.lock` at build time (`unknown` if absent).
    pub timely_version: String,
    /// The `differential-dataflow` version pinned in `Cargo.lock` at build time (`unknown` if
    /// absent).
    pub differential_version: String,
    /// The first `model name` of `/proc/cpuinfo` (`unknown` where there is none).
    pub cpu_model: String,
    /// Logical cores the process may use.
    pub cores: usize,
    /// Total physical memory in bytes (`MemTotal` of `/proc/meminfo`; 0 if unreadable).
    pub memory_bytes: u64,
    /// The kernel release (`/proc/sys/kernel/osrelease`; empty if unreadable).
    pub kernel: String,
    /// `uptime`'s load averages (1, 5, 15 minutes) when the measurement started.
    pub load_average: String,
    /// When it was captured, UTC (`2026-12-04T19:08:00Z`; empty in records made before).
    #[serde(default)]
    pub captured_at: String,
}

/// `secs` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (UTC; the proleptic Gregorian calendar).
pub fn utc(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days to a civil date (H. Hinnant's algorithm, for days since 1970-01-01).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// The lock file the binary was built with (the pinned versions of timely and differential).
const LOCK: &str = include_str!("../../Cargo.lock");

fn locked_version(name: &str) -> String {
    let needle = format!("name = \"{name}\"\nversion = \"");
    LOCK.find(&needle)
        .map(|at| LOCK[at + needle.len()..].split('"').next().unwrap_or("").to_string())
        .unwrap_or_else(|| "unknown".into())
}

fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Environment {
    /// The environment of this process, now.
    pub fn capture() -> Environment {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_bytes = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0);
        let git_rev = output("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
        let git_dirty =
            output("git", &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        Environment {
            git_rev,
            git_dirty,
            rustc: env!("RIPPLES_RUSTC_VERSION").into(),
            profile: if cfg!(debug_assertions) { "debug" } else { "release" }.into(),
            ripples_version: env!("CARGO_PKG_VERSION").into(),
            timely_version: locked_version("timely"),
            differential_version: locked_version("differential-dataflow"),
            cpu_model,
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            memory_bytes,
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string(),
            load_average: std::fs::read_to_string("/proc/loadavg")
                .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
            captured_at: utc(std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)),
        }
    }

    /// `(field, value)` rows for the report's table.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        vec![
            ("git revision", format!("{}{}", self.git_rev, if self.git_dirty { " (dirty)" } else { "" })),
            ("rustc", self.rustc.clone()),
            ("profile", self.profile.clone()),
            ("ripples", self.ripples_version.clone()),
            ("timely", self.timely_version.clone()),
            ("differential-dataflow", self.differential_version.clone()),
            ("CPU", self.cpu_model.clone()),
            ("cores", self.cores.to_string()),
            ("memory", format!("{:.1} GiB", self.memory_bytes as f64 / (1u64 << 30) as f64)),
            ("kernel", self.kernel.clone()),
            ("load average at start", self.load_average.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    /// Against dates known independently (`date -u -d @SECS`).
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::utc(1_291_640_400), "2010-12-06T13:00:00Z");
        assert_eq!(super::utc(1_796_425_689), "2026-12-04T23:08:09Z");
        assert_eq!(super::utc(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn pinned_versions_from_the_lock_file() {
        assert_eq!(super::locked_version("timely"), "0.32.0");
        assert_eq!(super::locked_version("differential-dataflow"), "0.26.0");
    }

    /// The compiler of the build, as `rustc --version` prints it.
    #[test]
    fn rustc_of_the_build() {
        let rustc = super::Environment::capture().rustc;
        assert!(
            rustc.starts_with("rustc ") && rustc.split_whitespace().nth(1).is_some_and(|v| v.contains('.')),
            "{rustc}"
        );
    }
}
