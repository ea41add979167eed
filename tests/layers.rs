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
        // The global allocator (feature `mimalloc`): imports no module of the crate.
        ("allocator", vec![]),
        ("sources", vec!["types"]),
        ("oracle", vec!["types"]),
        ("dataflow", vec!["types", "sources"]),
        ("live", vec!["types", "sources"]),
        ("sinks", vec!["types"]),
        ("driver", vec!["types", "sources", "dataflow", "live", "sinks"]),
        // Beside the driver: it implements `driver::observe::Observer` (the driver never imports it).
        ("serve", vec!["types", "sinks", "live", "driver"]),
        // Beside the driver too: an observer, and a reader of the driver's profiler.
        ("monitor", vec!["types", "sinks", "live", "driver"]),
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
                "monitor",
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

/// `serve` and `monitor` sit beside the driver: of it they use only its hooks, the observer
/// trait and the profiler, and its memory reading.
#[test]
fn serve_and_monitor_use_only_the_hooks_of_the_driver() {
    let mut all = Vec::new();
    for module in ["src/serve", "src/monitor"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(module);
        let before = all.len();
        files(&dir, &mut all);
        assert!(all.len() > before, "{module} is missing");
    }
    for path in all {
        let text = std::fs::read_to_string(&path).expect("read source");
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (at, _) in line.match_indices("crate::driver") {
                assert!(
                    ["observe", "profile", "metrics"]
                        .iter()
                        .any(|m| line[at..].starts_with(&format!("crate::driver::{m}"))),
                    "{}:{}: serve and monitor may import only driver::observe, driver::profile and driver::metrics: {}",
                    path.display(),
                    i + 1,
                    line.trim()
                );
            }
        }
    }
}

/// The code of a source file a check reads: the part before its `#[cfg(test)]` section, without
/// comment lines.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if !code.starts_with("//") {
            out.push_str(line.split(" //").next().unwrap_or(""));
            out.push('\n');
        }
    }
    out
}

/// The module path of a file under `src/`: `dataflow/wcc.rs` → `["dataflow", "wcc"]`,
/// `serve/wire/mod.rs` → `["serve", "wire"]`, `lib.rs` → `[]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// Reads one path tree at the start of `s` (`a::b::{c, super::d::{e}}`, after a `crate::` or a
/// module's `super::`) onto `prefix`, pushing each full path; returns how much of `s` it read.
fn path_tree(s: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    let mut rest = s.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut end = group.len();
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    end = i;
                    break;
                }
            }
            let inner = &group[..end];
            let (mut depth, mut start) = (0, 0);
            for (i, c) in inner.char_indices().chain(std::iter::once((inner.len(), ','))) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        let item = inner[start..i].trim();
                        if item == "self" {
                            out.push(path.clone());
                        } else if !item.is_empty() {
                            path_tree(item, path.clone(), out);
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return s.len() - group.len() + end + 1;
        }
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if name.is_empty() || name == "self" {
            break;
        }
        if name == "super" {
            path.pop();
        } else {
            path.push(name.clone());
        }
        rest = &rest[name.len()..];
        match rest.strip_prefix("::") {
            Some(more) => rest = more.trim_start(),
            None => break,
        }
    }
    out.push(path);
    s.len() - rest.len()
}

/// Every module path `code` (of the module `module`) names through `crate::`, `super::` or
/// `self::`.
fn paths_named(code: &str, module: &[String], is_mod_file: bool) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut starts: Vec<(usize, &str)> =
        ["crate::", "super::", "self::"].iter().flat_map(|p| code.match_indices(*p).map(|(at, _)| (at, *p))).collect();
    starts.sort();
    // The end of the last path tree read: a `super::` inside a `use` group is part of it.
    let mut read_to = 0;
    for (at, start) in starts {
        {
            if at < read_to
                || (at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b':'))
            {
                continue;
            }
            let (mut base, mut rest) = match start {
                "crate::" => (Vec::new(), &code[at + start.len()..]),
                // A `mod.rs` (or `lib.rs`) file is its module; another file is a child of its
                // directory's module.
                _ => (module.to_vec(), &code[at..]),
            };
            if start != "crate::" {
                if !is_mod_file && start == "super::" {
                    base.pop();
                    rest = &rest["super::".len()..];
                } else if start == "self::" {
                    rest = &rest["self::".len()..];
                } else {
                    base.pop();
                    rest = &rest["super::".len()..];
                }
                while let Some(more) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = more;
                }
            }
            let offset = code.len() - rest.len();
            read_to = offset + path_tree(rest, base, &mut out);
        }
    }
    out
}

/// The source file a module path lives in: its longest prefix that is a file under `src/`.
fn file_of(src: &Path, path: &[String]) -> Option<std::path::PathBuf> {
    (1..=path.len()).rev().find_map(|n| {
        let dir = path[..n].iter().fold(src.to_path_buf(), |p, s| p.join(s));
        let file = dir.with_extension("rs");
        let module = dir.join("mod.rs");
        [file, module].into_iter().find(|f| f.is_file())
    })
}

/// The file-level import graph of `src/`: an edge from a file to every other file whose module
/// it names, except its own descendants (a module using its parts is how a module is built, not
/// a circle). Naming a module from outside it uses its parts too: an edge to each of them.
fn import_graph(src: &Path) -> BTreeMap<std::path::PathBuf, Vec<std::path::PathBuf>> {
    let mut all = Vec::new();
    files(src, &mut all);
    let modules: Vec<(std::path::PathBuf, Vec<String>)> =
        all.iter().map(|p| (p.clone(), module_of(p.strip_prefix(src).expect("under src")))).collect();
    let mut graph = BTreeMap::new();
    for path in all {
        let rel = path.strip_prefix(src).expect("under src").to_path_buf();
        let module = module_of(&rel);
        let name = rel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let is_mod_file = matches!(name.as_str(), "mod.rs" | "lib.rs" | "main.rs");
        let text = std::fs::read_to_string(&path).expect("read source");
        let mut targets = Vec::new();
        for named in paths_named(&code_of(&text), &module, is_mod_file) {
            let Some(file) = file_of(src, &named) else { continue };
            let target = module_of(file.strip_prefix(src).expect("under src"));
            let descendant = target.len() > module.len() && target.starts_with(&module);
            if file == path || descendant {
                continue;
            }
            let inside = module.starts_with(&target);
            let parts = modules.iter().filter(|(_, m)| !inside && m.len() > target.len() && m.starts_with(&target));
            for file in std::iter::once(file.clone()).chain(parts.map(|(p, _)| p.clone())) {
                if !targets.contains(&file) {
                    targets.push(file);
                }
            }
        }
        graph.insert(path, targets);
    }
    graph
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn circles(graph: &BTreeMap<std::path::PathBuf, Vec<std::path::PathBuf>>) -> Vec<Vec<std::path::PathBuf>> {
    struct State<'g> {
        graph: &'g BTreeMap<std::path::PathBuf, Vec<std::path::PathBuf>>,
        index: BTreeMap<&'g Path, (usize, usize)>,
        stack: Vec<&'g Path>,
        on_stack: std::collections::BTreeSet<&'g Path>,
        next: usize,
        out: Vec<Vec<std::path::PathBuf>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g Path) {
        s.index.insert(v, (s.next, s.next));
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).map(|t| t.as_slice()).unwrap_or(&[]) {
            let w = w.as_path();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.index[w].1.min(s.index[v].1);
                s.index.get_mut(v).expect("visited").1 = low;
            } else if s.on_stack.contains(w) {
                let low = s.index[w].0.min(s.index[v].1);
                s.index.get_mut(v).expect("visited").1 = low;
            }
        }
        if s.index[v].0 == s.index[v].1 {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_path_buf());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: Default::default(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_path()) {
            visit(&mut s, v.as_path());
        }
    }
    s.out
}

#[test]
fn no_file_level_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = import_graph(&src);
    let edges: usize = graph.values().map(Vec::len).sum();
    assert!(edges > 100, "found only {} file imports: is the scan broken?", edges);
    let found: Vec<String> = circles(&graph)
        .into_iter()
        .map(|c| {
            c.iter().map(|p| p.strip_prefix(&src).unwrap_or(p).display().to_string()).collect::<Vec<_>>().join(" → ")
        })
        .collect();
    assert!(
        found.is_empty(),
        "files that import each other (directly or through the others of their line):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_file_scan_resolves_paths_and_finds_a_circle() {
    let module = vec!["bench".to_string(), "systems".to_string(), "general".to_string()];
    let code = "use super::{recompute::R, super::system::{System, Kind}};\nuse crate::driver::{self, RunOptions};\nlet x = self::helper();";
    let found = paths_named(code, &module, false);
    let s = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(found.contains(&s(&["bench", "systems", "recompute", "R"])), "{found:?}");
    assert!(found.contains(&s(&["bench", "system", "System"])), "{found:?}");
    assert!(found.contains(&s(&["bench", "system", "Kind"])), "{found:?}");
    assert!(found.contains(&s(&["driver"])), "{found:?}");
    assert!(found.contains(&s(&["driver", "RunOptions"])), "{found:?}");
    assert!(found.contains(&s(&["bench", "systems", "general", "helper"])), "{found:?}");
    let p = |s: &str| std::path::PathBuf::from(s);
    let graph = BTreeMap::from([
        (p("a.rs"), vec![p("b.rs")]),
        (p("b.rs"), vec![p("c.rs")]),
        (p("c.rs"), vec![p("a.rs")]),
        (p("d.rs"), vec![p("a.rs")]),
    ]);
    assert_eq!(circles(&graph), vec![vec![p("a.rs"), p("b.rs"), p("c.rs")]]);
}

/// Lines of code: not blank, not only a comment.
fn code_lines(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//")).count()
}

/// Each function of `text` and its length in lines, from its `fn` line to its closing brace.
fn functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let strip = |line: &str| -> String {
        // Drop string and character literals and the comment, so their braces do not count.
        let mut out = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    while let Some(d) = chars.next() {
                        match d {
                            '\\' => {
                                chars.next();
                            }
                            '"' => break,
                            _ => {}
                        }
                    }
                }
                '\'' => {
                    let ahead: String = chars.clone().take(3).collect();
                    if ahead.starts_with('\\') {
                        for d in chars.by_ref() {
                            if d == '\'' {
                                break;
                            }
                        }
                    } else if ahead.chars().nth(1) == Some('\'') {
                        chars.next();
                        chars.next();
                    }
                }
                '/' if chars.peek() == Some(&'/') => break,
                _ => out.push(c),
            }
        }
        out
    };
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = strip(line);
        let Some(at) = code.find("fn ") else { continue };
        if at > 0 && !code[..at].ends_with(|c: char| c.is_whitespace()) {
            continue;
        }
        let name: String = code[at + 3..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        let (mut depth, mut opened) = (0i64, false);
        for (j, later) in lines.iter().enumerate().skip(i) {
            let later = if j == i { code[at..].to_string() } else { strip(later) };
            for c in later.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if !opened && later.trim_end().ends_with(';') {
                break;
            }
            if opened && depth <= 0 {
                out.push((i + 1, name.clone(), j - i + 1));
                break;
            }
        }
    }
    out
}

#[test]
fn files_and_functions_stay_readable() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut long = Vec::new();
    for path in all {
        let text = std::fs::read_to_string(&path).expect("read source");
        let rel = path.strip_prefix(&src).expect("under src").display().to_string();
        let n = code_lines(&text);
        if n > 700 {
            long.push(format!("src/{}: {} lines of code (at most 700: one concept per file)", rel, n));
        }
        for (line, name, len) in functions(&text) {
            if len > 150 {
                long.push(format!("src/{}:{}: fn {} is {} lines (at most 150: name its steps)", rel, line, name, len));
            }
        }
    }
    assert!(long.is_empty(), "too long:\n{}", long.join("\n"));
}

#[test]
fn the_function_scan_measures_functions() {
    let text = "fn a() {\n    let s = \"}}\";\n    let c = '{';\n}\nfn b<'x>(v: &'x str) -> usize { v.len() }\ntrait T { fn c(&self); }\n";
    let found: Vec<(String, usize)> = functions(text).into_iter().map(|(_, n, len)| (n, len)).collect();
    assert_eq!(found, [("a".to_string(), 4), ("b".to_string(), 1)]);
}

#[test]
fn the_library_reads_no_environment() {
    // Tuning knobs are parameters (flags in the application layer), so that every process of a
    // cluster can check that it builds the same dataflow.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut found = Vec::new();
    for path in all {
        let rel = path.strip_prefix(&src).expect("under src");
        let top = rel.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned()).unwrap_or_default();
        if matches!(top.as_str(), "cli" | "bench" | "experiment" | "graphalytics" | "main.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read source");
        for (i, line) in code_of(&text).lines().enumerate() {
            if line.contains("env::var") {
                found.push(format!("src/{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "the library layers read the environment:\n{}", found.join("\n"));
}
