//! LDBC Graphalytics support: the benchmark's graph descriptions and its output validation rules.
//!
//! * [`properties`] reads a `<g>.properties` file into a [`GraphSpec`] (directedness, algorithms
//!   to run and their parameters, vertex and edge file) and [`discover`]s every graph of a
//!   directory.
//! * [`mod@validate`] reads output files ([`read_output`]) and compares an actual output with the
//!   expected one under the official rule of each algorithm ([`Algorithm::rule`], [`validate()`]).
//! * [`runner`] runs the built-in dataflows on every graph of a dataset and validates their
//!   outputs (`ripples graphalytics`).
//! * [`format_value_f64`] is the one way this crate writes a floating-point output value.
//!
//! The validation data and a short statement of the specification live in
//! `tests/data/graphalytics/` (see its `SPEC.md`, `README.md` and `NOTICE`).
//!
//! # Example
//!
//! ```
//! use ripples::graphalytics::{format_value_f64, parse_f64, Algorithm, Rule};
//! // What this crate writes, the validator reads back exactly.
//! for x in [0.14776291666666667, f64::INFINITY, 0.0] {
//!     assert_eq!(parse_f64(&format_value_f64(x)), Some(x));
//! }
//! // The official rules per algorithm.
//! assert_eq!(Algorithm::Wcc.rule(), Rule::Equivalence);
//! assert_eq!(Algorithm::Pr.rule(), Rule::Epsilon(1e-4));
//! assert_eq!("cdlp".parse::<Algorithm>().unwrap(), Algorithm::Cdlp);
//! ```

pub mod properties;
pub mod runner;
pub mod validate;

pub use properties::{discover, Algorithm, GraphSpec};
pub use validate::{parse_f64, read_output, validate, Rule, Validation};

pub use crate::types::format::format_value_f64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_value_f64_round_trips() {
        assert_eq!(format_value_f64(0.5), "5e-1");
        assert_eq!(format_value_f64(0.0), "0e0");
        assert_eq!(format_value_f64(1.0), "1e0");
        assert_eq!(format_value_f64(f64::INFINITY), "infinity");
        assert_eq!(format_value_f64(f64::NEG_INFINITY), "-infinity");
        assert_eq!(format_value_f64(f64::NAN), "NaN");
        for x in [
            0.14776291666666667,
            1.0 / 3.0,
            1e-300,
            1.7976931348623157e308,
            f64::MIN_POSITIVE,
            5e-324,
            -2.5,
            123456789.0,
            0.1 + 0.2,
        ] {
            let s = format_value_f64(x);
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{s}");
            assert_eq!(parse_f64(&s).unwrap().to_bits(), x.to_bits(), "{s}");
        }
        assert_eq!(parse_f64(&format_value_f64(f64::INFINITY)), Some(f64::INFINITY));
        assert_eq!(parse_f64(&format_value_f64(f64::NEG_INFINITY)), Some(f64::NEG_INFINITY));
        assert!(parse_f64(&format_value_f64(f64::NAN)).unwrap().is_nan());
    }
}
