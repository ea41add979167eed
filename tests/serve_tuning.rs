//! `--serve-nice N` and `--serve-commit-interval-ms MS`: the serving threads run at a lower
//! scheduling priority than the dataflow, and the mirror commits several completed epochs at
//! once; every epoch stays readable (`AS OF`) and the last one is served. Bad values are clear
//! errors.

mod common;

use std::fs;

use common::pg::*;
use common::process::*;

#[test]
fn bad_tuning_values_are_refused() {
    let files = Files::new();
    let updates = files.write("u.txt", "+ 1 2\n");
    let port = free_port().to_string();
    for (flag, value) in [
        ("--serve-nice", "20"),
        ("--serve-nice", "-1"),
        ("--serve-nice", "low"),
        ("--serve-commit-interval-ms", "-5"),
        ("--serve-commit-interval-ms", "soon"),
    ] {
        let out = bin()
            .args(["run", "wcc", "--updates", &s(&updates), "-q", "--serve", &port, "--serve-trust"])
            .arg(format!("{flag}={value}"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(err.contains(flag) && err.contains(&format!("'{value}'")), "{flag} {value}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = bin()
        .args(["run", "wcc", "--updates", &s(&updates), "-q", "--serve", &port, "--serve-trust", "--serve-nice=25"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("0..=19"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The nice value of each thread of process `pid`, by thread name (Linux's `/proc`).
#[cfg(target_os = "linux")]
fn thread_nice(pid: u32) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for task in fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let Ok(stat) = fs::read_to_string(task.unwrap().path().join("stat")) else { continue };
        // `tid (name) state ...`: the nice value is field 19, the 17th after the name.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
        let name = stat[open + 1..close].to_string();
        let nice = stat[close + 1..].split_whitespace().nth(16).and_then(|n| n.parse().ok());
        out.extend(nice.map(|n| (name, n)));
    }
    out
}

#[test]
fn tuned_serving_runs_below_the_dataflow_and_serves_every_epoch() {
    if !clients() {
        return;
    }
    let files = Files::new();
    // Four epochs (one line each); the components after each, worked out by hand:
    // 1-2 | 3-4 | 2-3 joins them | 5-6.
    let updates = files.write("u.txt", "+ 1 2\n+ 3 4\n+ 2 3\n+ 5 6\n");
    let mut server = start(
        &files,
        &[
            "wcc".into(),
            "--updates".into(),
            s(&updates),
            "--batch".into(),
            "1".into(),
            "--serve-nice".into(),
            "7".into(),
            // Longer than the whole run: the epochs share few commits.
            "--serve-commit-interval-ms".into(),
            "300".into(),
            "--serve-linger".into(),
        ],
        1,
        Auth::Password,
    );
    wait_line(&server.stderr.clone(), "still serving", server.child());
    #[cfg(target_os = "linux")]
    {
        let threads = thread_nice(server.child().id());
        let serving: Vec<_> = threads.iter().filter(|(n, _)| n.starts_with("ripples-")).collect();
        assert!(serving.iter().any(|(n, _)| n == "ripples-mirror"), "{threads:?}");
        assert!(serving.iter().any(|(n, _)| n == "ripples-serve"), "{threads:?}");
        assert!(serving.iter().all(|(_, nice)| *nice == 7), "serving threads at nice 7: {threads:?}");
        // The process's main thread keeps the run's own priority (this test's).
        let nice_of =
            |stat: String| stat[stat.rfind(')').unwrap() + 1..].split_whitespace().nth(16).unwrap().to_string();
        let pid = server.child().id();
        let main = nice_of(fs::read_to_string(format!("/proc/{pid}/stat")).unwrap());
        assert_eq!(main, nice_of(fs::read_to_string("/proc/self/stat").unwrap()), "{threads:?}");
    }
    let port = server.port;
    let last = psql(port, "SELECT max(epoch) FROM epochs").trim().to_string();
    assert_eq!(psql(port, "SELECT ripples_epoch()").trim(), last, "the last epoch is served");
    let last: u64 = last.parse().unwrap();
    assert!(last >= 4, "{last}");
    let want = ["1|1\n2|1\n3|3\n4|3\n", "1|1\n2|1\n3|1\n4|1\n", "1|1\n2|1\n3|1\n4|1\n5|5\n6|5\n"];
    for (k, want) in want.iter().enumerate() {
        let e = last - 2 + k as u64;
        assert_eq!(psql(port, &format!("SELECT vertex, value FROM wcc AS OF {e} ORDER BY vertex")), *want, "AS OF {e}");
    }
    assert_eq!(psql(port, "SELECT vertex, value FROM wcc ORDER BY vertex"), want[2]);
    let mut child = server.children.remove(0);
    let _ = child.kill();
    let _ = child.wait();
}
