//! Statistics over repetitions: median, a seeded bootstrap 95% confidence interval of the
//! median, the coefficient of variation, and outlier flags by the modified z-score (Iglewicz
//! and Hoaglin: `0.6745 (x - median) / MAD`, flagged beyond 3.5). Outliers are flagged, never
//! dropped.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Resamples of [`bootstrap_ci`].
pub const RESAMPLES: usize = 2000;

/// The median (mean of the two middle values for an even count); NaN for no values.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The `q` quantile (0..=1) of sorted values, by linear interpolation between closest ranks.
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Sample standard deviation over mean; 0 for fewer than two values or a zero mean.
pub fn cv(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    if mean == 0.0 {
        return 0.0;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
    var.sqrt() / mean.abs()
}

/// The percentile bootstrap 95% confidence interval of `stat` over `xs`, from [`RESAMPLES`]
/// resamples drawn with a ChaCha8 generator seeded by `seed`.
pub fn bootstrap_ci(xs: &[f64], seed: u64, stat: impl Fn(&[f64]) -> f64) -> (f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sample = vec![0.0; xs.len()];
    let mut stats: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            for s in sample.iter_mut() {
                *s = xs[rng.gen_range(0..xs.len())];
            }
            stat(&sample)
        })
        .collect();
    stats.sort_by(f64::total_cmp);
    (quantile_sorted(&stats, 0.025), quantile_sorted(&stats, 0.975))
}

/// The modified z-score of each value (0 everywhere when the MAD is 0).
pub fn modified_z(xs: &[f64]) -> Vec<f64> {
    let m = median(xs);
    let deviations: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    let mad = median(&deviations);
    xs.iter().map(|x| if mad > 0.0 { 0.6745 * (x - m) / mad } else { 0.0 }).collect()
}

/// Indices of outliers: modified z-score beyond 3.5.
pub fn outliers(xs: &[f64]) -> Vec<usize> {
    modified_z(xs).iter().enumerate().filter(|(_, z)| z.abs() > 3.5).map(|(i, _)| i).collect()
}

/// Median, its bootstrap CI, CV and outliers of one metric over repetitions.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    /// How many values (successful repetitions with this metric) were summarised.
    pub n: usize,
    /// The median of the values (NaN for none).
    pub median: f64,
    /// The lower end of the median's bootstrap 95% confidence interval.
    pub ci_low: f64,
    /// The upper end of the median's bootstrap 95% confidence interval.
    pub ci_high: f64,
    /// The coefficient of variation: sample standard deviation over mean (0 for fewer than two
    /// values or a zero mean).
    pub cv: f64,
    /// Indices (into the values given) of flagged outliers.
    pub outliers: Vec<usize>,
}

impl Summary {
    /// Summarises `xs` (one metric over repetitions), the bootstrap seeded by `seed`; outliers have
    /// a modified z-score above 3.5.
    pub fn of(xs: &[f64], seed: u64) -> Summary {
        let (ci_low, ci_high) = bootstrap_ci(xs, seed, median);
        Summary { n: xs.len(), median: median(xs), ci_low, ci_high, cv: cv(xs), outliers: outliers(xs) }
    }
}

/// The ratio `median(b) / median(a)` with a bootstrap 95% CI (both samples resampled, seeded).
pub fn ratio_ci(a: &[f64], b: &[f64], seed: u64) -> (f64, f64, f64) {
    let ratio = median(b) / median(a);
    if a.is_empty() || b.is_empty() {
        return (ratio, f64::NAN, f64::NAN);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut sa, mut sb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            sa.iter_mut().for_each(|s| *s = a[rng.gen_range(0..a.len())]);
            sb.iter_mut().for_each(|s| *s = b[rng.gen_range(0..b.len())]);
            median(&sb) / median(&sa)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    (ratio, quantile_sorted(&ratios, 0.025), quantile_sorted(&ratios, 0.975))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values worked out by hand (and with numpy: `np.median`, `np.std(ddof=1) / np.mean`).
    #[test]
    fn known_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
        // mean 5, sample variance 32/7 for 2 4 4 4 5 5 7 9.
        let x = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert!((cv(&x) - (32.0f64 / 7.0).sqrt() / 5.0).abs() < 1e-12);
        assert_eq!(cv(&[7.0]), 0.0);
        // median 5, MAD 1 (absolute deviations 0 0 0 1 1 1 95): z(100) = 0.6745 * 95.
        let y = [4.0, 5.0, 4.0, 5.0, 4.0, 5.0, 100.0];
        assert_eq!(median(&y), 5.0);
        assert_eq!(outliers(&y), vec![6]);
        assert!((modified_z(&y)[6] - 0.6745 * 95.0 / 1.0).abs() < 1e-9);
        // x: median 4.5, MAD 0.5; z(9) = 0.6745 * 4.5 / 0.5 = 6.07 (flagged), z(2) = z(7) = -+3.37 (not).
        assert_eq!(outliers(&x), vec![7]);
        assert!((modified_z(&x)[0] + 3.3725).abs() < 1e-9);
        assert!(outliers(&[1.0, 2.0, 3.0, 4.0, 5.0]).is_empty());
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_median() {
        let x: Vec<f64> = (1..=21).map(|i| i as f64).collect();
        let (lo, hi) = bootstrap_ci(&x, 7, median);
        assert_eq!((lo, hi), bootstrap_ci(&x, 7, median), "same seed, same interval");
        assert!(lo <= 11.0 && 11.0 <= hi && lo >= 6.0 && hi <= 16.0, "{lo} {hi}");
        assert_eq!(bootstrap_ci(&[3.0, 3.0, 3.0], 1, median), (3.0, 3.0));
        let (r, lo, hi) = ratio_ci(&[10.0, 10.0, 10.0], &[20.0, 20.0, 20.0], 3);
        assert_eq!((r, lo, hi), (2.0, 2.0, 2.0));
    }
}
