//! Reading Graphalytics `<g>.properties` files.
//!
//! A Graphalytics graph `<g>` is described by a Java properties file `<g>.properties` whose keys
//! are prefixed `graph.<g>.`:
//!
//! | key (after the prefix)  | meaning                                   | field                |
//! |-------------------------|-------------------------------------------|----------------------|
//! | `directed`              | `true` / `false` (required)               | [`GraphSpec::directed`] |
//! | `algorithms`            | comma-separated list (required)           | [`GraphSpec::algorithms`] |
//! | `bfs.source-vertex`     | u64, required when BFS is listed          | [`GraphSpec::bfs_source`] |
//! | `sssp.source-vertex`    | u64, required when SSSP is listed         | [`GraphSpec::sssp_source`] |
//! | `cdlp.max-iterations`   | u32, required when CDLP is listed         | [`GraphSpec::cdlp_iterations`] |
//! | `pr.damping-factor`     | f64 in \[0, 1\], required when PR is listed | [`GraphSpec::pr_damping`] |
//! | `pr.num-iterations`     | u32, required when PR is listed           | [`GraphSpec::pr_iterations`] |
//!
//! Every other key (`meta.*`, `edge-properties.*`, `sssp.weight-property`, keys of other graphs)
//! is ignored. In particular the `vertex-file` and `edge-file` keys are ignored: the vertex and
//! edge files are always `<dir>/<g>.v` and `<dir>/<g>.e`, because two of the published
//! properties files (`test-wcc-directed`, `test-sssp-undirected`) name the `.v` file as their
//! `edge-file`.
//!
//! The file syntax is that of `java.util.Properties`: blank lines and lines whose first
//! non-blank character is `#` or `!` are skipped; a key ends at the first unescaped `=`, `:` or
//! whitespace, and the separator may be surrounded by whitespace; a line ending in an odd
//! number of backslashes continues on the next line; `\t`, `\n`, `\r`, `\f`, `\uXXXX` and
//! `\<any other char>` escapes are decoded. A key given twice takes its last value (as in Java).
//!
//! ```
//! use ripples::graphalytics::{Algorithm, GraphSpec};
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("tiny.v"), "1\n2\n").unwrap();
//! std::fs::write(dir.path().join("tiny.e"), "1 2\n").unwrap();
//! let properties = dir.path().join("tiny.properties");
//! std::fs::write(
//!     &properties,
//!     "graph.tiny.directed = false\n\
//!      graph.tiny.algorithms = wcc, bfs\n\
//!      graph.tiny.bfs.source-vertex = 2\n",
//! )
//! .unwrap();
//! let spec = GraphSpec::load(&properties).unwrap();
//! assert_eq!(spec.name, "tiny");
//! assert!(!spec.directed);
//! assert_eq!(spec.algorithms, vec![Algorithm::Wcc, Algorithm::Bfs]);
//! assert_eq!(spec.bfs_source, Some(2));
//! assert_eq!(spec.edge_file, dir.path().join("tiny.e"));
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{anyhow, bail, Context, Result};

/// One of the six Graphalytics algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// Breadth-first search: hop count from a source.
    Bfs,
    /// Community detection by label propagation.
    Cdlp,
    /// Local clustering coefficient.
    Lcc,
    /// PageRank.
    Pr,
    /// Single-source shortest paths.
    Sssp,
    /// Weakly connected components.
    Wcc,
}

impl Algorithm {
    /// All six algorithms, in the order of their names.
    pub const ALL: [Algorithm; 6] =
        [Algorithm::Bfs, Algorithm::Cdlp, Algorithm::Lcc, Algorithm::Pr, Algorithm::Sssp, Algorithm::Wcc];

    /// The lower-case name used in properties files: `"bfs"`, `"cdlp"`, `"lcc"`, `"pr"`,
    /// `"sssp"`, `"wcc"`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Bfs => "bfs",
            Algorithm::Cdlp => "cdlp",
            Algorithm::Lcc => "lcc",
            Algorithm::Pr => "pr",
            Algorithm::Sssp => "sssp",
            Algorithm::Wcc => "wcc",
        }
    }

    /// The suffix of the expected-output file `<g>-<SUFFIX>`: `"BFS"`, `"CDLP"`, `"LCC"`,
    /// `"PR"`, `"SSSP"`, `"WCC"`.
    pub fn expected_suffix(self) -> &'static str {
        match self {
            Algorithm::Bfs => "BFS",
            Algorithm::Cdlp => "CDLP",
            Algorithm::Lcc => "LCC",
            Algorithm::Pr => "PR",
            Algorithm::Sssp => "SSSP",
            Algorithm::Wcc => "WCC",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = anyhow::Error;

    /// Parses an algorithm name case-insensitively (`"bfs"`, `"BFS"`, `"Pr"`, ...), ignoring
    /// surrounding whitespace.
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| anyhow!("unknown algorithm {s:?} (expected one of bfs, cdlp, lcc, pr, sssp, wcc)"))
    }
}

/// Everything a `<g>.properties` file says about graph `<g>`.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphSpec {
    /// The graph name `<g>` (the file name without `.properties`).
    pub name: String,
    /// The directory holding the properties, vertex, edge and expected-output files.
    pub dir: PathBuf,
    /// The properties file itself.
    pub properties_file: PathBuf,
    /// Whether the graph is directed. An undirected graph lists each edge once; a loader adds
    /// the reverse direction.
    pub directed: bool,
    /// The algorithms to run, in the order the file lists them (duplicates removed).
    pub algorithms: Vec<Algorithm>,
    /// `bfs.source-vertex` (always `Some` when BFS is listed).
    pub bfs_source: Option<u64>,
    /// `sssp.source-vertex` (always `Some` when SSSP is listed).
    pub sssp_source: Option<u64>,
    /// `cdlp.max-iterations`: the exact number of CDLP iterations (always `Some` when CDLP is
    /// listed).
    pub cdlp_iterations: Option<u32>,
    /// `pr.damping-factor` (always `Some` when PR is listed).
    pub pr_damping: Option<f64>,
    /// `pr.num-iterations`: the exact number of PageRank iterations (always `Some` when PR is
    /// listed).
    pub pr_iterations: Option<u32>,
    /// `<dir>/<g>.v`, whatever the `vertex-file` key says.
    pub vertex_file: PathBuf,
    /// `<dir>/<g>.e`, whatever the `edge-file` key says.
    pub edge_file: PathBuf,
}

impl GraphSpec {
    /// Reads the properties file at `path` (named `<g>.properties`). Fails, naming the file, if
    /// it cannot be read or parsed, if a required key is missing or malformed, or if `<g>.v` or
    /// `<g>.e` does not exist beside it.
    pub fn load(path: &Path) -> Result<GraphSpec> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".properties"))
            .filter(|n| !n.is_empty())
            .ok_or_else(|| anyhow!("{}: a properties file must be named <graph>.properties", path.display()))?
            .to_string();
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let spec = Self::from_text(&name, &dir, &text)
            .with_context(|| format!("{}: invalid graph description", path.display()))?;
        let spec = GraphSpec { properties_file: path.to_path_buf(), ..spec };
        for file in [&spec.vertex_file, &spec.edge_file] {
            if !file.is_file() {
                bail!("{}: graph file {} does not exist", path.display(), file.display());
            }
        }
        Ok(spec)
    }

    /// Builds the spec of graph `name` in directory `dir` from the text of its properties file
    /// (no file-system access; `properties_file` is set to `<dir>/<name>.properties`).
    pub fn from_text(name: &str, dir: &Path, text: &str) -> Result<GraphSpec> {
        let props = parse_properties(text)?;
        let prefix = format!("graph.{name}.");
        let get = |key: &str| -> Option<(&str, usize)> {
            props.get(&format!("{prefix}{key}")).map(|(v, line)| (v.as_str(), *line))
        };
        fn parse<T: FromStr>(prefix: &str, key: &str, entry: Option<(&str, usize)>, what: &str) -> Result<Option<T>> {
            match entry {
                None => Ok(None),
                Some((value, line)) => value
                    .trim()
                    .parse::<T>()
                    .map(Some)
                    .map_err(|_| anyhow!("line {line}: {prefix}{key} = {value:?} is not {what}")),
            }
        }

        let directed = match get("directed") {
            None => bail!("missing key {prefix}directed"),
            Some((v, line)) => match v.trim().to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => bail!("line {line}: {prefix}directed = {v:?} is not true or false"),
            },
        };

        let mut algorithms = Vec::new();
        match get("algorithms") {
            None => bail!("missing key {prefix}algorithms"),
            Some((v, line)) => {
                for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let alg: Algorithm = item.parse().with_context(|| format!("line {line}: {prefix}algorithms"))?;
                    if !algorithms.contains(&alg) {
                        algorithms.push(alg);
                    }
                }
            }
        }

        let bfs_source = parse::<u64>(&prefix, "bfs.source-vertex", get("bfs.source-vertex"), "a vertex id")?;
        let sssp_source = parse::<u64>(&prefix, "sssp.source-vertex", get("sssp.source-vertex"), "a vertex id")?;
        let cdlp_iterations =
            parse::<u32>(&prefix, "cdlp.max-iterations", get("cdlp.max-iterations"), "an iteration count")?;
        let pr_iterations = parse::<u32>(&prefix, "pr.num-iterations", get("pr.num-iterations"), "an iteration count")?;
        let pr_damping = parse::<f64>(&prefix, "pr.damping-factor", get("pr.damping-factor"), "a number")?;
        if let Some(d) = pr_damping {
            if !(0.0..=1.0).contains(&d) {
                bail!("{prefix}pr.damping-factor = {d} is not between 0 and 1");
            }
        }

        let required: [(Algorithm, bool, &str); 5] = [
            (Algorithm::Bfs, bfs_source.is_some(), "bfs.source-vertex"),
            (Algorithm::Sssp, sssp_source.is_some(), "sssp.source-vertex"),
            (Algorithm::Cdlp, cdlp_iterations.is_some(), "cdlp.max-iterations"),
            (Algorithm::Pr, pr_damping.is_some(), "pr.damping-factor"),
            (Algorithm::Pr, pr_iterations.is_some(), "pr.num-iterations"),
        ];
        for (alg, present, key) in required {
            if algorithms.contains(&alg) && !present {
                bail!("algorithm {alg} is listed but key {prefix}{key} is missing");
            }
        }

        Ok(GraphSpec {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            properties_file: dir.join(format!("{name}.properties")),
            directed,
            algorithms,
            bfs_source,
            sssp_source,
            cdlp_iterations,
            pr_damping,
            pr_iterations,
            vertex_file: dir.join(format!("{name}.v")),
            edge_file: dir.join(format!("{name}.e")),
        })
    }

    /// The expected-output file of `algorithm`: `<dir>/<g>-<SUFFIX>` (e.g. `example-directed-PR`).
    pub fn expected_file(&self, algorithm: Algorithm) -> PathBuf {
        self.dir.join(format!("{}-{}", self.name, algorithm.expected_suffix()))
    }
}

/// Finds every `*.properties` file directly in `dir` and loads it with [`GraphSpec::load`];
/// the result is sorted by file name. A directory without properties files gives an empty list.
pub fn discover(dir: &Path) -> Result<Vec<GraphSpec>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list directory {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list directory {}", dir.display()))?;
        let path = entry.path();
        let is_properties = path.extension().is_some_and(|e| e == "properties");
        if is_properties && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    files.iter().map(|f| GraphSpec::load(f)).collect()
}

/// Parses Java properties text into `key -> (value, line number of the key)`.
fn parse_properties(text: &str) -> Result<BTreeMap<String, (String, usize)>> {
    let mut map = BTreeMap::new();
    let mut lines = text.lines().enumerate();
    while let Some((index, first)) = lines.next() {
        let line_no = index + 1;
        let trimmed = first.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        // Join continuation lines: a line ending in an odd number of backslashes continues,
        // and the next line's leading whitespace is dropped.
        let mut logical = String::new();
        let mut current = trimmed.to_string();
        loop {
            let trailing = current.chars().rev().take_while(|&c| c == '\\').count();
            if trailing % 2 == 1 {
                current.pop();
                logical.push_str(&current);
                match lines.next() {
                    Some((_, next)) => current = next.trim_start().to_string(),
                    None => {
                        current = String::new();
                        break;
                    }
                }
            } else {
                break;
            }
        }
        logical.push_str(&current);

        let (key, value) = split_key_value(&logical).with_context(|| format!("line {line_no}"))?;
        map.insert(key, (value, line_no));
    }
    Ok(map)
}

/// Splits a logical line into its decoded key and value.
fn split_key_value(line: &str) -> Result<(String, String)> {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    // The key ends at the first unescaped '=', ':' or whitespace.
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '=' | ':' => break,
            c if c.is_whitespace() => break,
            _ => i += 1,
        }
    }
    let key_end = i.min(chars.len());
    // Skip whitespace, at most one '=' or ':', then whitespace again.
    let mut j = key_end;
    while j < chars.len() && chars[j].is_whitespace() {
        j += 1;
    }
    if j < chars.len() && (chars[j] == '=' || chars[j] == ':') {
        j += 1;
    }
    while j < chars.len() && chars[j].is_whitespace() {
        j += 1;
    }
    let key = unescape(&chars[..key_end])?;
    let value = unescape(&chars[j..])?;
    Ok((key, value.trim_end().to_string()))
}

/// Decodes Java properties escapes.
fn unescape(chars: &[char]) -> Result<String> {
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        i += 1;
        let Some(&c) = chars.get(i) else { break };
        i += 1;
        match c {
            't' => out.push('\t'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            'f' => out.push('\u{c}'),
            'u' => {
                let hex: String = chars.get(i..i + 4).map(|h| h.iter().collect()).unwrap_or_default();
                let decoded = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .and_then(char::from_u32)
                    .ok_or_else(|| anyhow!("malformed \\u escape \"\\u{hex}\""))?;
                out.push(decoded);
                i += 4;
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphalytics/graphs")
    }

    #[test]
    fn algorithm_names() {
        for alg in Algorithm::ALL {
            assert_eq!(alg.name().parse::<Algorithm>().unwrap(), alg);
            assert_eq!(alg.expected_suffix().parse::<Algorithm>().unwrap(), alg);
            assert_eq!(alg.expected_suffix(), alg.name().to_uppercase());
        }
        assert_eq!(" Pr ".parse::<Algorithm>().unwrap(), Algorithm::Pr);
        let err = "pagerank".parse::<Algorithm>().unwrap_err().to_string();
        assert!(err.contains("pagerank"), "{err}");
    }

    #[test]
    fn java_properties_syntax() {
        let text = "# comment\n  ! another\n\n\
                    a = 1\n\
                    b:2\n\
                    c 3\n\
                    \td   =   spaced value   \n\
                    e = con\\\n     tinued\n\
                    f\\ g = esc\\u0041\\tx\n\
                    a = last\n";
        let p = parse_properties(text).unwrap();
        let v = |k: &str| p.get(k).map(|(v, _)| v.as_str());
        assert_eq!(v("a"), Some("last"));
        assert_eq!(v("b"), Some("2"));
        assert_eq!(v("c"), Some("3"));
        assert_eq!(v("d"), Some("spaced value"));
        assert_eq!(v("e"), Some("continued"));
        assert_eq!(v("f g"), Some("escA\tx"));
        assert_eq!(p.len(), 6);
    }

    #[test]
    fn spec_from_text() {
        let text = "graph.g.directed = FALSE\n\
                    graph.g.algorithms = BFS, pr ,wcc,bfs\n\
                    graph.g.bfs.source-vertex = 18446744073709551615\n\
                    graph.g.pr.damping-factor = 0.85\n\
                    graph.g.pr.num-iterations = 3\n\
                    graph.g.edge-file = wrong.v\n\
                    graph.other.directed = true\n";
        let s = GraphSpec::from_text("g", Path::new("/d"), text).unwrap();
        assert!(!s.directed);
        assert_eq!(s.algorithms, vec![Algorithm::Bfs, Algorithm::Pr, Algorithm::Wcc]);
        assert_eq!(s.bfs_source, Some(u64::MAX));
        assert_eq!(s.sssp_source, None);
        assert_eq!(s.pr_damping, Some(0.85));
        assert_eq!(s.pr_iterations, Some(3));
        assert_eq!(s.cdlp_iterations, None);
        assert_eq!(s.vertex_file, Path::new("/d/g.v"));
        assert_eq!(s.edge_file, Path::new("/d/g.e"));
        assert_eq!(s.expected_file(Algorithm::Pr), Path::new("/d/g-PR"));
    }

    #[test]
    fn spec_errors_name_the_problem() {
        let err = |text: &str| GraphSpec::from_text("g", Path::new("."), text).unwrap_err();
        let e = format!("{:#}", err("graph.g.algorithms = wcc\n"));
        assert!(e.contains("graph.g.directed"), "{e}");
        let e = format!("{:#}", err("graph.g.directed = yes\ngraph.g.algorithms = wcc\n"));
        assert!(e.contains("line 1") && e.contains("yes"), "{e}");
        let e = format!("{:#}", err("graph.g.directed = true\ngraph.g.algorithms = bfs\n"));
        assert!(e.contains("bfs.source-vertex"), "{e}");
        let e = format!("{:#}", err("graph.g.directed = true\ngraph.g.algorithms = wcc, foo\n"));
        assert!(e.contains("line 2") && e.contains("foo"), "{e}");
        let e = format!(
            "{:#}",
            err("graph.g.directed = true\ngraph.g.algorithms = sssp\ngraph.g.sssp.source-vertex = -1\n")
        );
        assert!(e.contains("line 3") && e.contains("sssp.source-vertex"), "{e}");
    }

    #[test]
    fn load_reports_missing_files() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("h.properties");
        std::fs::write(&path, "graph.h.directed = true\ngraph.h.algorithms = wcc\n").unwrap();
        let e = format!("{:#}", GraphSpec::load(&path).unwrap_err());
        assert!(e.contains("h.properties") && e.contains("h.v"), "{e}");
        std::fs::write(tmp.path().join("h.v"), "1\n").unwrap();
        std::fs::write(tmp.path().join("h.e"), "").unwrap();
        let spec = GraphSpec::load(&path).unwrap();
        assert_eq!(spec.name, "h");
        assert_eq!(spec.properties_file, path);

        std::fs::write(tmp.path().join("bad.properties"), "graph.bad.directed = true\n").unwrap();
        let e = format!("{:#}", discover(tmp.path()).unwrap_err());
        assert!(e.contains("bad.properties") && e.contains("algorithms"), "{e}");
    }

    #[test]
    fn discover_shipped_graphs() {
        let specs = discover(&data_dir()).unwrap();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(specs.len(), 14, "{names:?}");
        assert!(names.windows(2).all(|w| w[0] < w[1]));
        for s in &specs {
            assert_eq!(s.vertex_file, s.dir.join(format!("{}.v", s.name)));
            assert_eq!(s.edge_file, s.dir.join(format!("{}.e", s.name)));
            for &alg in &s.algorithms {
                assert!(s.expected_file(alg).is_file(), "{}", s.expected_file(alg).display());
            }
        }
        let ex = specs.iter().find(|s| s.name == "example-directed").unwrap();
        assert!(ex.directed);
        assert_eq!(ex.algorithms, Algorithm::ALL.to_vec());
        assert_eq!(ex.bfs_source, Some(1));
        assert_eq!(ex.sssp_source, Some(1));
        assert_eq!(ex.cdlp_iterations, Some(2));
        assert_eq!(ex.pr_damping, Some(0.85));
        assert_eq!(ex.pr_iterations, Some(2));
        // The quirk: this file names test-wcc-directed.v as its edge file.
        let wcc = specs.iter().find(|s| s.name == "test-wcc-directed").unwrap();
        assert!(wcc.edge_file.ends_with("test-wcc-directed.e"));
        let pr = specs.iter().find(|s| s.name == "test-pr-undirected").unwrap();
        assert!(!pr.directed);
        assert_eq!(pr.pr_iterations, Some(26));
    }
}
