//! Every system `ripples bench` can measure, one file per kind, and the registry: the systems in
//! one list ([`all`]), looked up by name in one place ([`by_name`]).
//!
//! * [`dataflow`] — `ripples`, `ripples-general`, `dd-propagate`: dataflows under the driver;
//! * [`window`] — `ripples-window`: the `wcc-window` stream as an event-time window;
//! * [`union_find`] — `uf-hash`, `uf-dense`: one sequential union-find pass (insert-only WCC);
//! * [`recompute`] — `recompute`: from scratch over the live graph at every epoch.
//!
//! # Example
//!
//! ```
//! use ripples::bench::{systems, Scenario};
//! assert!(systems::names().contains(&"uf-hash"));
//! let uf = systems::by_name("uf-hash").unwrap();
//! // Union-find handles insertions only; the defaults of a churn scenario leave it out.
//! assert!(uf.applies_to(&Scenario::new("wcc-insert").unwrap()));
//! assert!(!uf.applies_to(&Scenario::new("wcc-churn").unwrap()));
//! assert!(!systems::defaults(&Scenario::new("wcc-churn").unwrap()).contains(&"uf-hash"));
//! assert!(systems::by_name("spark").is_err());
//! ```

pub mod dataflow;
pub mod recompute;
pub mod sequential;
pub mod union_find;
pub mod window;

use super::scenario::Scenario;
use super::system::System;
use super::BenchError;

/// `ripples bench --profile DIR`: writes the profile the run collected (see [`Scenario::profile`]).
fn write_profile(scenario: &Scenario, profiler: Option<crate::driver::profile::Profiler>) -> Result<(), BenchError> {
    let (Some(path), Some(profile)) = (&scenario.profile, profiler.and_then(|p| p.final_profile())) else {
        return Ok(());
    };
    super::plot::write_profile(path, &profile).map_err(BenchError::Profile)
}

/// Every system, in the order of the default lists and of `unknown system` messages.
pub fn all() -> Vec<Box<dyn System>> {
    vec![
        Box::new(dataflow::Ripples),
        Box::new(window::RipplesWindow),
        Box::new(dataflow::RipplesGeneral),
        Box::new(dataflow::DdPropagate),
        Box::new(union_find::UfHash),
        Box::new(union_find::UfDense),
        Box::new(recompute::Recompute),
        Box::new(sequential::Sequential),
    ]
}

/// The names of [`all`].
pub fn names() -> Vec<&'static str> {
    all().iter().map(|s| s.name()).collect()
}

/// The system called `name`.
pub fn by_name(name: &str) -> Result<Box<dyn System>, BenchError> {
    all()
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| BenchError::UnknownSystem { name: name.to_string(), known: names() })
}

/// The systems measured on `scenario` by default.
pub fn defaults(scenario: &Scenario) -> Vec<&'static str> {
    all().iter().filter(|s| s.by_default(scenario)).map(|s| s.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_and_default_lists() {
        assert_eq!(
            names(),
            [
                "ripples",
                "ripples-window",
                "ripples-general",
                "dd-propagate",
                "uf-hash",
                "uf-dense",
                "recompute",
                "sequential"
            ]
        );
        let defaults_of = |name: &str| defaults(&Scenario::new(name).unwrap());
        assert_eq!(defaults_of("spanner-insert"), ["ripples", "sequential"]);
        assert_eq!(defaults_of("matching-insert"), ["ripples", "sequential"]);
        assert_eq!(defaults_of("wcc-insert"), ["ripples", "ripples-general", "dd-propagate", "uf-hash", "uf-dense"]);
        assert_eq!(
            defaults_of("wcc-window"),
            ["ripples", "ripples-window", "ripples-general", "dd-propagate", "recompute"]
        );
        assert_eq!(defaults_of("wcc-churn"), ["ripples", "ripples-general", "dd-propagate", "recompute"]);
        for churn in crate::bench::SCENARIOS.iter().filter(|s| s.ends_with("-churn") && **s != "wcc-churn") {
            assert_eq!(defaults_of(churn), ["ripples", "recompute"], "{}", churn);
        }
        assert_eq!(
            by_name("nope").err().unwrap().to_string(),
            "unknown system 'nope' (known: ripples, ripples-window, ripples-general, dd-propagate, uf-hash, uf-dense, recompute, sequential)"
        );
    }
}
