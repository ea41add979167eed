//! The fully dynamic WCC path's tuning: [`ForestParams`], which [`super::WccDynamic`] and
//! [`Wcc`](struct@super::super::wcc::Wcc) hold. The dataflow layer takes them as values; where they come from
//! (the command line, the environment, an embedding program) is the application's business.

/// The default fallback budget factor: a time's searches may take `links + vertices` steps.
pub const DEFAULT_BUDGET: f64 = 1.0;

/// Where the fully dynamic path keeps its forests (see the module docs of [`super`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ForestLayout {
    /// One forest of every link, at worker 0: every record is sent there.
    #[default]
    Single,
    /// With several workers, every worker keeps the forest of its share of the vertex pairs and
    /// forwards only its forest's changes to worker 0, which keeps the forest of their union.
    Shares,
}

impl ForestLayout {
    /// Where the layout's dataflow sends the input edges first ([`crate::dataflow::InputRoute`]):
    /// every record to worker 0's forest, or each pair to its share's worker.
    pub fn route(self) -> crate::dataflow::InputRoute {
        match self {
            ForestLayout::Single => crate::dataflow::InputRoute::First,
            ForestLayout::Shares => crate::dataflow::InputRoute::By(super::pair_share),
        }
    }

    /// [`ForestLayout::Shares`] when `shares`, else [`ForestLayout::Single`].
    pub fn from_shares(shares: bool) -> Self {
        if shares {
            ForestLayout::Shares
        } else {
            ForestLayout::Single
        }
    }
}

/// The fully dynamic WCC path's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForestParams {
    /// The fallback budget factor, a number ≥ 0: a time's replacement searches may take
    /// `budget × (links + vertices)` steps before the forest is rebuilt from scratch (0: at the
    /// first forest-edge deletion of every time). Default [`DEFAULT_BUDGET`].
    pub budget: f64,
    /// Where the forests are kept. Default [`ForestLayout::Single`].
    pub layout: ForestLayout,
    /// When every edge's lifetime is known (event-time windows) and one forest holds every link,
    /// the forest is rebuilt newest link first once the links created since its last build reach
    /// half the present ones and at least this many (see [`super::DynamicForest::with_renewal`]);
    /// 0: never. Default [`super::RENEW_MIN`].
    pub renew_min: u64,
}

impl ForestParams {
    /// The defaults: budget [`DEFAULT_BUDGET`], a single forest at worker 0, renewal from
    /// [`super::RENEW_MIN`] links.
    pub const DEFAULT: ForestParams =
        ForestParams { budget: DEFAULT_BUDGET, layout: ForestLayout::Single, renew_min: super::RENEW_MIN };

    /// These parameters with the fallback budget factor `budget` (see [`ForestParams::budget`]).
    pub fn with_budget(self, budget: f64) -> Self {
        ForestParams { budget, ..self }
    }

    /// These parameters with the layout `layout`.
    pub fn with_layout(self, layout: ForestLayout) -> Self {
        ForestParams { layout, ..self }
    }

    /// These parameters with the renewal threshold `renew_min` (see [`ForestParams::renew_min`]).
    pub fn with_renew_min(self, renew_min: u64) -> Self {
        ForestParams { renew_min, ..self }
    }

    /// Checks the values: the budget must be a number ≥ 0 (not NaN, not negative; infinity is
    /// allowed: no rebuild ever). The forest itself treats a budget this rejects as 0.
    pub fn validate(&self) -> Result<(), ForestParamsError> {
        if self.budget >= 0.0 {
            Ok(())
        } else {
            Err(ForestParamsError::Budget(self.budget))
        }
    }
}

impl Default for ForestParams {
    fn default() -> Self {
        ForestParams::DEFAULT
    }
}

/// Why [`ForestParams::validate`] rejects parameters.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum ForestParamsError {
    /// The budget factor is negative or NaN.
    #[error("the fallback budget factor must be a number >= 0, got {0}")]
    Budget(f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_below_zero_and_nan_are_rejected() {
        for ok in [0.0, DEFAULT_BUDGET, 0.05, 1e9, f64::INFINITY] {
            assert_eq!(ForestParams::DEFAULT.with_budget(ok).validate(), Ok(()), "{ok}");
        }
        for bad in [-1.0, -0.001, f64::NAN, f64::NEG_INFINITY] {
            let err = ForestParams::DEFAULT.with_budget(bad).validate().expect_err("rejected");
            assert!(err.to_string().contains("budget factor must be a number >= 0"), "{err}");
        }
    }
}
