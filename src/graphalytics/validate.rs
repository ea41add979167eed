//! The official Graphalytics output validation rules.
//!
//! An output is one `vertex value` line per vertex. Values are kept as text ([`read_output`])
//! and interpreted only by the [`Rule`] that compares them ([`validate`]):
//!
//! * the vertex sets of expected and actual output must be identical (every missing or extra
//!   vertex is a mismatch);
//! * [`Rule::Exact`] (BFS, CDLP): equal values. Values that both parse as integers are compared
//!   numerically (`"07"` equals `"7"`, `"9223372036854775807"` is fine); otherwise as strings;
//! * [`Rule::Equivalence`] (WCC): the labels need not be equal, but there must be a one-to-one
//!   map between expected and actual labels, checked in both directions (giving every vertex the
//!   same label fails when the expected output has several components). Labels that parse as
//!   integers are compared numerically, others as strings;
//! * [`Rule::Epsilon`]`(eps)` (PR, LCC, SSSP with eps = 1e-4): values parsed as `f64` by
//!   [`parse_f64`] must satisfy `|expected - actual| <= eps * |expected|`. Hence infinity only
//!   matches infinity of the same sign, an expected 0 needs an actual of exactly 0, and NaN
//!   (expected or actual) never matches.
//!
//! ```
//! use ripples::graphalytics::validate::{parse_output, validate, Rule};
//! let expected = parse_output("1 1\n2 1\n3 3\n").unwrap();
//! // WCC labels may differ as long as they name the same components.
//! let relabelled = parse_output("1 7\n2 7\n3 9\n").unwrap();
//! assert!(validate(Rule::Equivalence, &expected, &relabelled).pass);
//! let merged = parse_output("1 7\n2 7\n3 7\n").unwrap();
//! let v = validate(Rule::Equivalence, &expected, &merged);
//! assert!(!v.pass && v.mismatches > 0);
//! // PageRank values within 1e-4 relative pass.
//! let want = parse_output("1 0.25\n2 infinity\n").unwrap();
//! let got = parse_output("1 2.50001e-1\n2 inf\n").unwrap();
//! assert!(validate(Rule::Epsilon(1e-4), &want, &got).pass);
//! // A vertex given twice is an error naming the line.
//! assert!(parse_output("1 1\n1 2\n").is_err());
//! ```

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

use super::properties::Algorithm;

/// The tolerance of the official epsilon rule.
pub const EPSILON: f64 = 1e-4;

/// How expected and actual values are compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// Every value equal (numerically if both are integers, else as strings).
    Exact,
    /// A bijection between expected and actual labels.
    Equivalence,
    /// `|expected - actual| <= eps * |expected|` on `f64` values.
    Epsilon(f64),
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Exact => f.write_str("exact"),
            Rule::Equivalence => f.write_str("equivalence"),
            Rule::Epsilon(eps) => write!(f, "epsilon {eps:e}"),
        }
    }
}

impl Algorithm {
    /// The official rule: BFS and CDLP [`Rule::Exact`], WCC [`Rule::Equivalence`], PR, LCC and
    /// SSSP [`Rule::Epsilon`]`(1e-4)`.
    pub fn rule(self) -> Rule {
        match self {
            Algorithm::Bfs | Algorithm::Cdlp => Rule::Exact,
            Algorithm::Wcc => Rule::Equivalence,
            Algorithm::Pr | Algorithm::Lcc | Algorithm::Sssp => Rule::Epsilon(EPSILON),
        }
    }
}

/// The outcome of comparing an actual output with the expected one.
#[derive(Clone, Debug, PartialEq)]
pub struct Validation {
    /// True iff the vertex sets are identical and every value matches.
    pub pass: bool,
    /// Number of vertices present in both outputs, whose values were compared.
    pub vertices_checked: usize,
    /// Number of failing vertices: missing + extra + compared vertices whose value failed.
    pub mismatches: usize,
    /// Vertices of the expected output absent from the actual one.
    pub missing: usize,
    /// Vertices of the actual output absent from the expected one.
    pub extra: usize,
    /// A human description of the first failure (lowest vertex id; vertex-set differences are
    /// reported before value differences). `None` when `pass`.
    pub first_mismatch: Option<String>,
    /// Epsilon rule only: the largest relative deviation `|e - a| / |e|` over compared vertices
    /// (infinite when the values cannot match at all, e.g. `e = 0 != a`, infinity vs finite,
    /// NaN or unparseable). 0 for the other rules.
    pub worst_deviation: f64,
}

impl fmt::Display for Validation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pass {
            write!(f, "pass ({} vertices", self.vertices_checked)?;
        } else {
            write!(
                f,
                "FAIL ({} mismatches of {} compared vertices, {} missing, {} extra",
                self.mismatches, self.vertices_checked, self.missing, self.extra
            )?;
        }
        if self.worst_deviation != 0.0 {
            write!(f, ", worst relative deviation {:e}", self.worst_deviation)?;
        }
        f.write_str(")")?;
        if let Some(m) = &self.first_mismatch {
            write!(f, ": {m}")?;
        }
        Ok(())
    }
}

/// Reads an output file: one `vertex value` per line, separated by whitespace and/or a comma.
/// Blank lines are skipped. Fails, naming the file and line, on an unreadable file, a line
/// without exactly two fields, a vertex that is not a u64, or a vertex given twice.
pub fn read_output(path: &Path) -> Result<BTreeMap<u64, String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read output file {}", path.display()))?;
    parse_output(&text).with_context(|| format!("in output file {}", path.display()))
}

/// Parses the text of an output file (see [`read_output`]); errors name the line.
pub fn parse_output(text: &str) -> Result<BTreeMap<u64, String>> {
    let mut out = BTreeMap::new();
    let mut first_line = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let fields: Vec<&str> = line.split(|c: char| c.is_whitespace() || c == ',').filter(|f| !f.is_empty()).collect();
        match fields.as_slice() {
            [] => continue,
            [vertex, value] => {
                let v: u64 = vertex
                    .parse()
                    .map_err(|_| anyhow!("line {line_no}: vertex {vertex:?} is not an unsigned 64-bit id"))?;
                match out.entry(v) {
                    Entry::Occupied(_) => {
                        bail!("line {line_no}: vertex {v} appears again (first on line {})", first_line[&v])
                    }
                    Entry::Vacant(e) => {
                        e.insert(value.to_string());
                        first_line.insert(v, line_no);
                    }
                }
            }
            _ => bail!("line {line_no}: expected `vertex value`, found {} fields in {line:?}", fields.len()),
        }
    }
    Ok(out)
}

/// Parses a floating-point output value. Accepts everything Rust's `f64` parser accepts
/// (decimal and scientific notation, optional sign) plus, case-insensitively and with an
/// optional `+` or `-`, `inf`, `infinity` and `nan`. Returns `None` for anything else.
pub fn parse_f64(s: &str) -> Option<f64> {
    let t = s.trim();
    let (negative, body) = match t.as_bytes().first() {
        Some(b'+') => (false, &t[1..]),
        Some(b'-') => (true, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let special = match lower.as_str() {
        "inf" | "infinity" => Some(f64::INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    };
    match special {
        Some(x) if negative => Some(-x),
        Some(x) => Some(x),
        None => t.parse::<f64>().ok(),
    }
}

/// An integer reading of a value, wide enough for every u64 and i64.
fn parse_int(s: &str) -> Option<i128> {
    s.trim().parse::<i128>().ok()
}

/// A label normalised for the equivalence rule: integers by value, anything else as text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Label {
    Int(i128),
    Text(String),
}

impl Label {
    fn of(s: &str) -> Label {
        match parse_int(s) {
            Some(i) => Label::Int(i),
            None => Label::Text(s.to_string()),
        }
    }
}

/// Compares `actual` with `expected` under `rule`; see the module documentation for the rules.
pub fn validate(rule: Rule, expected: &BTreeMap<u64, String>, actual: &BTreeMap<u64, String>) -> Validation {
    let missing: Vec<u64> = expected.keys().filter(|v| !actual.contains_key(v)).copied().collect();
    let extra: Vec<u64> = actual.keys().filter(|v| !expected.contains_key(v)).copied().collect();

    let mut first_mismatch = None;
    if let Some(v) = missing.first() {
        first_mismatch = Some(format!(
            "vertex {v} (expected value {}) is missing from the actual output \
             ({} missing, {} extra vertices)",
            expected[v],
            missing.len(),
            extra.len()
        ));
    } else if let Some(v) = extra.first() {
        first_mismatch = Some(format!(
            "vertex {v} (actual value {}) is not in the expected output ({} extra vertices)",
            actual[v],
            extra.len()
        ));
    }

    let mut value_mismatches = 0usize;
    let mut vertices_checked = 0usize;
    let mut worst_deviation = 0.0f64;
    // Equivalence rule: the label maps built so far, with the vertex that fixed each pair.
    let mut forward: BTreeMap<Label, (Label, u64)> = BTreeMap::new();
    let mut backward: BTreeMap<Label, (Label, u64)> = BTreeMap::new();

    for (&v, e) in expected {
        let Some(a) = actual.get(&v) else { continue };
        vertices_checked += 1;
        let failure: Option<String> = match rule {
            Rule::Exact => {
                let equal = match (parse_int(e), parse_int(a)) {
                    (Some(x), Some(y)) => x == y,
                    _ => e == a,
                };
                (!equal).then(|| format!("vertex {v}: expected {e}, actual {a}"))
            }
            Rule::Equivalence => {
                let (le, la) = (Label::of(e), Label::of(a));
                let mut problem = None;
                match forward.get(&le) {
                    Some((prev, w)) if *prev != la => {
                        problem = Some(format!(
                            "vertex {v}: expected label {e} maps to actual label {a}, but vertex \
                             {w} with the same expected label has a different actual label"
                        ))
                    }
                    Some(_) => {}
                    None => {
                        forward.insert(le.clone(), (la.clone(), v));
                    }
                }
                if problem.is_none() {
                    match backward.get(&la) {
                        Some((prev, w)) if *prev != le => {
                            problem = Some(format!(
                                "vertex {v}: actual label {a} is also given to vertex {w}, \
                                 which has a different expected label"
                            ))
                        }
                        Some(_) => {}
                        None => {
                            backward.insert(la, (le, v));
                        }
                    }
                }
                problem
            }
            Rule::Epsilon(eps) => match (parse_f64(e), parse_f64(a)) {
                (None, _) => {
                    worst_deviation = f64::INFINITY;
                    Some(format!("vertex {v}: expected value {e:?} is not a number"))
                }
                (_, None) => {
                    worst_deviation = f64::INFINITY;
                    Some(format!("vertex {v}: actual value {a:?} is not a number"))
                }
                (Some(x), Some(y)) => {
                    let ok = if x.is_nan() || y.is_nan() {
                        false
                    } else if x.is_infinite() || y.is_infinite() {
                        x == y
                    } else {
                        (x - y).abs() <= eps * x.abs()
                    };
                    let deviation = if x.is_finite() && y.is_finite() {
                        if x == y {
                            0.0
                        } else if x == 0.0 {
                            f64::INFINITY
                        } else {
                            (x - y).abs() / x.abs()
                        }
                    } else if ok {
                        0.0
                    } else {
                        f64::INFINITY
                    };
                    worst_deviation = worst_deviation.max(deviation);
                    (!ok).then(|| {
                        format!(
                            "vertex {v}: expected {e}, actual {a} (relative deviation {deviation:e} \
                             > {eps:e})"
                        )
                    })
                }
            },
        };
        if let Some(text) = failure {
            value_mismatches += 1;
            if first_mismatch.is_none() {
                first_mismatch = Some(text);
            }
        }
    }

    let mismatches = missing.len() + extra.len() + value_mismatches;
    Validation {
        pass: mismatches == 0,
        vertices_checked,
        mismatches,
        missing: missing.len(),
        extra: extra.len(),
        first_mismatch,
        worst_deviation: if matches!(rule, Rule::Epsilon(_)) { worst_deviation } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn out(pairs: &[(u64, &str)]) -> BTreeMap<u64, String> {
        pairs.iter().map(|&(v, s)| (v, s.to_string())).collect()
    }

    fn matching_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphalytics/matching")
    }

    /// The comparator cases shipped with Graphalytics: `X_actual1.csv` passes against
    /// `X_expected.csv` under rule X, `X_actual2.csv` fails.
    #[test]
    fn graphalytics_matching_cases() {
        let dir = matching_dir();
        for (prefix, rule) in
            [("exact", Rule::Exact), ("equivalence", Rule::Equivalence), ("epsilon", Rule::Epsilon(EPSILON))]
        {
            let expected = read_output(&dir.join(format!("{prefix}_expected.csv"))).unwrap();
            let good = read_output(&dir.join(format!("{prefix}_actual1.csv"))).unwrap();
            let bad = read_output(&dir.join(format!("{prefix}_actual2.csv"))).unwrap();
            assert!(!expected.is_empty());
            let r = validate(rule, &expected, &good);
            assert!(r.pass, "{prefix}_actual1 must pass: {r}");
            assert_eq!(r.vertices_checked, expected.len());
            assert_eq!(r.first_mismatch, None);
            let r = validate(rule, &expected, &bad);
            assert!(!r.pass, "{prefix}_actual2 must fail: {r}");
            assert!(r.mismatches > 0 && r.first_mismatch.is_some());
            // Every file matches itself.
            assert!(validate(rule, &expected, &expected).pass);
        }
    }

    #[test]
    fn every_matching_file_is_covered() {
        let mut names: Vec<String> =
            std::fs::read_dir(matching_dir()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "epsilon_actual1.csv",
                "epsilon_actual2.csv",
                "epsilon_expected.csv",
                "equivalence_actual1.csv",
                "equivalence_actual2.csv",
                "equivalence_expected.csv",
                "exact_actual1.csv",
                "exact_actual2.csv",
                "exact_expected.csv"
            ]
        );
    }

    #[test]
    fn rules_of_algorithms() {
        assert_eq!(Algorithm::Bfs.rule(), Rule::Exact);
        assert_eq!(Algorithm::Cdlp.rule(), Rule::Exact);
        assert_eq!(Algorithm::Wcc.rule(), Rule::Equivalence);
        for a in [Algorithm::Pr, Algorithm::Lcc, Algorithm::Sssp] {
            assert_eq!(a.rule(), Rule::Epsilon(1e-4));
        }
    }

    #[test]
    fn parse_output_formats_and_errors() {
        let m = parse_output("1 3\n\n2,4\n  3 ,\t5  \n18446744073709551615 x\n").unwrap();
        assert_eq!(m, out(&[(1, "3"), (2, "4"), (3, "5"), (u64::MAX, "x")]));
        let e = format!("{:#}", parse_output("1 3\n2 4\n1 5\n").unwrap_err());
        assert!(e.contains("line 3") && e.contains("vertex 1") && e.contains("line 1"), "{e}");
        let e = format!("{:#}", parse_output("1 3\n2\n").unwrap_err());
        assert!(e.contains("line 2"), "{e}");
        let e = format!("{:#}", parse_output("1 3 4\n").unwrap_err());
        assert!(e.contains("line 1"), "{e}");
        let e = format!("{:#}", parse_output("-1 3\n").unwrap_err());
        assert!(e.contains("line 1") && e.contains("-1"), "{e}");
    }

    #[test]
    fn read_output_names_file() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("out-BFS");
        std::fs::write(&p, "1 0\nfoo 1\n").unwrap();
        let e = format!("{:#}", read_output(&p).unwrap_err());
        assert!(e.contains("out-BFS") && e.contains("line 2") && e.contains("foo"), "{e}");
        let e = format!("{:#}", read_output(&tmp.path().join("nope")).unwrap_err());
        assert!(e.contains("nope"), "{e}");
    }

    #[test]
    fn vertex_sets_must_match() {
        let e = out(&[(1, "1"), (2, "2")]);
        for rule in [Rule::Exact, Rule::Equivalence, Rule::Epsilon(EPSILON)] {
            let r = validate(rule, &e, &out(&[(1, "1")]));
            assert!(!r.pass);
            assert_eq!((r.missing, r.extra, r.mismatches, r.vertices_checked), (1, 0, 1, 1));
            assert!(r.first_mismatch.unwrap().contains("vertex 2"));
            let r = validate(rule, &e, &out(&[(1, "1"), (2, "2"), (3, "3")]));
            assert!(!r.pass);
            assert_eq!((r.missing, r.extra), (0, 1));
            assert!(r.first_mismatch.unwrap().contains("vertex 3"));
            assert!(validate(rule, &BTreeMap::new(), &BTreeMap::new()).pass);
        }
    }

    #[test]
    fn exact_rule() {
        let e = out(&[(1, "7"), (2, "9223372036854775807"), (3, "abc"), (4, "18446744073709551615")]);
        let a = out(&[(1, "07"), (2, "9223372036854775807"), (3, "abc"), (4, "18446744073709551615")]);
        assert!(validate(Rule::Exact, &e, &a).pass);
        let a2 = out(&[(1, "7"), (2, "9223372036854775806"), (3, "abd"), (4, "18446744073709551615")]);
        let r = validate(Rule::Exact, &e, &a2);
        assert_eq!(r.mismatches, 2);
        assert!(r.first_mismatch.unwrap().contains("vertex 2"));
        // Not integers: string comparison, so "7.0" is not "7".
        assert!(!validate(Rule::Exact, &out(&[(1, "7")]), &out(&[(1, "7.0")])).pass);
    }

    #[test]
    fn equivalence_rule_checks_both_directions() {
        let e = out(&[(1, "1"), (2, "1"), (3, "3")]);
        assert!(validate(Rule::Equivalence, &e, &out(&[(1, "9"), (2, "9"), (3, "4")])).pass);
        assert!(validate(Rule::Equivalence, &e, &out(&[(1, "a"), (2, "a"), (3, "b")])).pass);
        // One label for everything: fails (actual -> expected not a function).
        let r = validate(Rule::Equivalence, &e, &out(&[(1, "5"), (2, "5"), (3, "5")]));
        assert!(!r.pass);
        assert!(r.first_mismatch.unwrap().contains("vertex 3"));
        // Splitting a component: fails (expected -> actual not a function).
        let r = validate(Rule::Equivalence, &e, &out(&[(1, "1"), (2, "2"), (3, "3")]));
        assert!(!r.pass);
        assert!(r.first_mismatch.unwrap().contains("vertex 2"));
        // Integer labels are compared by value.
        assert!(validate(Rule::Equivalence, &e, &out(&[(1, "01"), (2, "1"), (3, "3")])).pass);
    }

    #[test]
    fn epsilon_rule() {
        let rule = Rule::Epsilon(EPSILON);
        let check = |e: &str, a: &str| validate(rule, &out(&[(1, e)]), &out(&[(1, a)]));
        assert!(check("0.3", "0.30002").pass);
        assert!(check("0.3", "0.29997").pass);
        assert!(!check("0.3", "0.30004").pass);
        assert!(check("1.0", "1.0001").pass);
        assert!(check("0", "0.0").pass);
        assert!(check("0", "-0e0").pass);
        assert!(!check("0", "1e-300").pass);
        assert_eq!(check("0", "1e-300").worst_deviation, f64::INFINITY);
        for inf in ["infinity", "Infinity", "+Infinity", "inf", "INF", "+inf", "INFINITY"] {
            assert!(check("infinity", inf).pass, "{inf}");
            assert!(check(inf, "infinity").pass, "{inf}");
        }
        assert!(!check("infinity", "-infinity").pass);
        assert!(!check("infinity", "1.79769e+308").pass);
        assert!(!check("1.79769e+308", "infinity").pass);
        assert!(!check("NaN", "NaN").pass);
        assert!(!check("1", "nan").pass);
        assert!(!check("1", "one").pass);
        assert!(!check("one", "1").pass);
        assert!(check("-2.0", "-2.0001").pass);
        let r = check("0.23", "0.229997");
        assert!(r.pass);
        assert!((r.worst_deviation - 0.000003 / 0.23).abs() < 1e-9, "{}", r.worst_deviation);
        let r = check("0.45", "0.46");
        assert!(!r.pass);
        assert!(r.first_mismatch.unwrap().contains("vertex 1"));
    }

    #[test]
    fn parse_f64_spellings() {
        assert_eq!(parse_f64("1.5e-1"), Some(0.15));
        assert_eq!(parse_f64(" 2 "), Some(2.0));
        assert_eq!(parse_f64("+Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_f64("-Inf"), Some(f64::NEG_INFINITY));
        assert!(parse_f64("NaN").unwrap().is_nan());
        assert_eq!(parse_f64("infinit"), None);
        assert_eq!(parse_f64(""), None);
        assert_eq!(parse_f64("+-1"), None);
    }
}
