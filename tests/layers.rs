//! The layers of `src/lib.rs` are kept true: no module imports a module of a higher layer.
//!
//! Reads every source file under `src/`, takes the code before its `#[cfg(test)]` section
//! (unit tests may use the oracle), skips comment lines, and checks every `crate::<module>` path
//! against the layer table below, which is the table of `src/lib.rs`.

use std::collections::BTreeMap;
use std::path::Path;

/// Each top-level module and the modules it may import.
fn allowed() -> BTreeMap<&'static str, Vec<&'static str>> {
    BTreeMap::from([
        ("types", vec![]),
        ("sources", vec!["types"]),
        ("oracle", vec!["types"]),
        ("dataflow", vec!["types", "sources"]),
        ("live", vec!["types", "sources"]),
        ("sinks", vec!["types"]),
        ("driver", vec!["types", "sources", "dataflow", "live", "sinks"]),
        // Beside the driver: it implements `driver::observe::Observer` (the driver never imports it).
        ("serve", vec!["types", "sinks", "live", "driver"]),
        ("job", vec!["types", "sources", "dataflow", "driver", "live", "sinks"]),
        ("graphalytics", vec!["types", "sources", "dataflow", "driver", "sinks"]),
        // The bench's from-scratch baseline and agreement check use the oracle (see bench docs).
        ("bench", vec!["types", "sources", "dataflow", "driver", "sinks", "live", "oracle"]),
        // Experiments reuse the bench's plot setup and agreement check, and the oracle as reference.
        ("experiment", vec!["types", "sources", "dataflow", "driver", "sinks", "live", "oracle", "bench"]),
        (
            "cli",
            vec![
                "types",
                "sources",
                "dataflow",
                "driver",
                "sinks",
                "live",
                "job",
                "graphalytics",
                "bench",
                "experiment",
                "serve",
            ],
        ),
    ])
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `crate::<module>` paths in the non-test, non-comment code of `text`.
fn imports(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if rest.starts_with('{') {
                // `crate::{a, b::c}`: every name in the group.
                let group = &rest[1..rest.find('}').unwrap_or(rest.len())];
                for item in group.split(',') {
                    let item = item.trim().split("::").next().unwrap_or("").to_string();
                    if !item.is_empty() {
                        out.push((i + 1, item));
                    }
                }
            } else if !name.is_empty() {
                out.push((i + 1, name));
            }
        }
    }
    out
}

#[test]
fn no_module_imports_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed = allowed();
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut violations = Vec::new();
    let mut checked = 0;
    for path in all {
        let rel = path.strip_prefix(&src).expect("under src");
        let top = rel
            .components()
            .next()
            .expect("component")
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let Some(may) = allowed.get(top.as_str()) else {
            assert!(matches!(top.as_str(), "lib" | "main"), "{} is in no layer: add it to the table", rel.display());
            continue;
        };
        let text = std::fs::read_to_string(&path).expect("read source");
        for (line, module) in imports(&text) {
            checked += 1;
            if module != top && !may.contains(&module.as_str()) {
                violations.push(format!("src/{}:{}: {} imports crate::{}", rel.display(), line, top, module));
            }
        }
    }
    assert!(checked > 50, "found only {} crate paths: is the scan broken?", checked);
    assert!(violations.is_empty(), "imports against the layers:\n{}", violations.join("\n"));
}

#[test]
fn the_scan_sees_imports() {
    let text = "use crate::driver::Layout;\n// crate::cli in a comment\nuse crate::{sinks::X, types};\n#[cfg(test)]\nuse crate::oracle;\n";
    let found: Vec<String> = imports(text).into_iter().map(|(_, m)| m).collect();
    assert_eq!(found, ["driver", "sinks", "types"]);
}

#[test]
fn serve_uses_only_the_observer_hook_of_the_driver() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/serve");
    let mut all = Vec::new();
    files(&dir, &mut all);
    assert!(!all.is_empty(), "src/serve is missing");
    for path in all {
        let text = std::fs::read_to_string(&path).expect("read source");
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (at, _) in line.match_indices("crate::driver") {
                assert!(
                    line[at..].starts_with("crate::driver::observe"),
                    "{}:{}: serve may import only driver::observe: {}",
                    path.display(),
                    i + 1,
                    line.trim()
                );
            }
        }
    }
}
