//! Distributions over nanoseconds and over keys, sampled from our own streams.
//!
//! Transcendental functions come from `libm` (a pure-Rust port of musl's libm) rather than the
//! platform's libm, so the same seed gives the same samples on every machine.

use crate::error::FieldError;
use crate::rng::RngStream;
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// A distribution of durations (link delays, service times, think times), in nanoseconds.
///
/// Scenario JSON: `{"dist":"constant","ns":150000}`, `{"dist":"uniform","min_ns":..,"max_ns":..}`,
/// `{"dist":"exponential","mean_ns":..,"min_ns":..}`,
/// `{"dist":"lognormal","mean_ns":..,"sigma":..,"min_ns":..,"max_ns":..}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum DurationDist {
    /// Always `ns`.
    Constant { ns: Time },
    /// Uniform over `min_ns..=max_ns`.
    Uniform { min_ns: Time, max_ns: Time },
    /// `min_ns` plus an exponential tail; the mean of the samples is `mean_ns`.
    Exponential {
        mean_ns: Time,
        #[serde(default)]
        min_ns: Time,
    },
    /// `min_ns` plus a log-normal body with shape `sigma`; the mean of the samples is `mean_ns`
    /// (before the optional cap `max_ns`). Heavy-tailed for `sigma` ≳ 1.
    Lognormal {
        mean_ns: Time,
        sigma: f64,
        #[serde(default)]
        min_ns: Time,
        #[serde(default)]
        max_ns: Option<Time>,
    },
}

/// Compared and hashed by value (the float `sigma` by its bits), so node state that holds a
/// distribution stays `Eq + Hash` for model checkers.
impl PartialEq for DurationDist {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for DurationDist {}

impl std::hash::Hash for DurationDist {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl DurationDist {
    fn key(&self) -> (u8, Time, Time, u64, Option<Time>) {
        match *self {
            DurationDist::Constant { ns } => (0, ns, 0, 0, None),
            DurationDist::Uniform { min_ns, max_ns } => (1, min_ns, max_ns, 0, None),
            DurationDist::Exponential { mean_ns, min_ns } => (2, mean_ns, min_ns, 0, None),
            DurationDist::Lognormal { mean_ns, sigma, min_ns, max_ns } => (3, mean_ns, min_ns, sigma.to_bits(), max_ns),
        }
    }

    pub const ZERO: DurationDist = DurationDist::Constant { ns: 0 };

    pub fn constant(ns: Time) -> DurationDist {
        DurationDist::Constant { ns }
    }

    /// Checks the parameters; the error names the offending field.
    pub fn validate(&self) -> Result<(), FieldError> {
        match *self {
            DurationDist::Constant { .. } => Ok(()),
            DurationDist::Uniform { min_ns, max_ns } => {
                if min_ns > max_ns {
                    return Err(FieldError::new("max_ns", format!("max_ns ({max_ns}) must be ≥ min_ns ({min_ns})")));
                }
                Ok(())
            }
            DurationDist::Exponential { mean_ns, min_ns } => {
                if mean_ns < min_ns {
                    return Err(FieldError::new("mean_ns", format!("mean_ns ({mean_ns}) must be ≥ min_ns ({min_ns})")));
                }
                Ok(())
            }
            DurationDist::Lognormal { mean_ns, sigma, min_ns, max_ns } => {
                if !(sigma.is_finite() && sigma > 0.0 && sigma <= 10.0) {
                    return Err(FieldError::new("sigma", format!("sigma must be in (0, 10], got {sigma}")));
                }
                if mean_ns <= min_ns {
                    return Err(FieldError::new("mean_ns", format!("mean_ns ({mean_ns}) must be > min_ns ({min_ns})")));
                }
                if let Some(max) = max_ns
                    && max < min_ns
                {
                    return Err(FieldError::new("max_ns", format!("max_ns ({max}) must be ≥ min_ns ({min_ns})")));
                }
                Ok(())
            }
        }
    }

    /// The mean of the distribution (ignoring a log-normal cap), for reports.
    pub fn mean_ns(&self) -> f64 {
        match *self {
            DurationDist::Constant { ns } => ns as f64,
            DurationDist::Uniform { min_ns, max_ns } => (min_ns as f64 + max_ns as f64) / 2.0,
            DurationDist::Exponential { mean_ns, .. } | DurationDist::Lognormal { mean_ns, .. } => mean_ns as f64,
        }
    }

    /// True when every sample is the same number (no random draw needed).
    pub fn is_constant(&self) -> bool {
        match *self {
            DurationDist::Constant { .. } => true,
            DurationDist::Uniform { min_ns, max_ns } => min_ns == max_ns,
            DurationDist::Exponential { mean_ns, min_ns } => mean_ns == min_ns,
            DurationDist::Lognormal { .. } => false,
        }
    }

    pub fn sample(&self, rng: &mut RngStream) -> Time {
        self.sample_given_mu(rng, None)
    }

    /// The log-normal's location: for X = exp(mu + sigma Z), E[X] = exp(mu + sigma²/2).
    fn lognormal_mu(&self) -> f64 {
        match *self {
            DurationDist::Lognormal { mean_ns, sigma, min_ns, .. } => libm::log((mean_ns - min_ns) as f64) - sigma * sigma / 2.0,
            _ => 0.0,
        }
    }

    /// Samples; `mu`, when given, is `lognormal_mu()` worked out beforehand.
    fn sample_given_mu(&self, rng: &mut RngStream, mu: Option<f64>) -> Time {
        match *self {
            DurationDist::Constant { ns } => ns,
            DurationDist::Uniform { min_ns, max_ns } => rng.between(min_ns, max_ns),
            DurationDist::Exponential { mean_ns, min_ns } => {
                let tail_mean = (mean_ns - min_ns) as f64;
                if tail_mean == 0.0 {
                    return min_ns;
                }
                min_ns.saturating_add(to_ns(-libm::log(rng.unit_open_zero()) * tail_mean))
            }
            DurationDist::Lognormal { sigma, min_ns, max_ns, .. } => {
                let mu = mu.unwrap_or_else(|| self.lognormal_mu());
                let z = standard_normal(rng);
                let sample = min_ns.saturating_add(to_ns(libm::exp(mu + sigma * z)));
                match max_ns {
                    Some(max) => sample.min(max),
                    None => sample,
                }
            }
        }
    }
}

/// A duration distribution with its constants worked out once, for hot paths (a log-normal
/// sample otherwise pays one more logarithm). Samples exactly as [`DurationDist::sample`].
#[derive(Clone, Debug)]
pub struct Sampler {
    dist: DurationDist,
    lognormal_mu: f64,
}

impl Sampler {
    pub fn new(dist: DurationDist) -> Sampler {
        let lognormal_mu = dist.lognormal_mu();
        Sampler { dist, lognormal_mu }
    }

    pub fn sample(&self, rng: &mut RngStream) -> Time {
        self.dist.sample_given_mu(rng, Some(self.lognormal_mu))
    }

    pub fn dist(&self) -> &DurationDist {
        &self.dist
    }
}

/// A standard normal deviate by the Box–Muller transform.
fn standard_normal(rng: &mut RngStream) -> f64 {
    let u1 = rng.unit_open_zero();
    let u2 = rng.unit();
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
}

/// Rounds a non-negative float of nanoseconds to an integer, saturating at 4·10^18 ns (about
/// 127 years): a time (at most 10^18 ns, as scenarios are checked) plus a few such samples
/// (a service time, then a delay) stays below 2^64.
fn to_ns(x: f64) -> Time {
    if x.is_nan() || x < 0.0 {
        return 0;
    }
    if x >= 4.0e18 {
        return 4_000_000_000_000_000_000;
    }
    libm::round(x) as Time
}

/// Samples ranks `0..n` with probability proportional to `1 / (rank + 1)^theta`.
///
/// Rejection-inversion (Hörmann and Derflinger, "Rejection-inversion to generate variates from
/// monotone discrete distributions", 1996): O(1) expected time and O(1) memory, so a Zipf over
/// a million keys needs no table. `theta = 0` is uniform.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: u64,
    theta: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Result<Zipf, String> {
        if n == 0 {
            return Err("a Zipf distribution needs at least one key".into());
        }
        if !(theta.is_finite() && (0.0..=10.0).contains(&theta)) {
            return Err(format!("Zipf theta must be in [0, 10], got {theta}"));
        }
        let mut z = Zipf { n, theta, h_integral_x1: 0.0, h_integral_n: 0.0, s: 0.0 };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        Ok(z)
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// A rank in `0..n`; rank 0 is the most popular.
    pub fn sample(&self, rng: &mut RngStream) -> u64 {
        if self.theta == 0.0 {
            return rng.below(self.n);
        }
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = libm::round(x).clamp(1.0, self.n as f64);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }

    /// The exact probability of `rank`, for tests and reports (O(n)).
    pub fn probability(&self, rank: u64) -> f64 {
        let norm: f64 = (1..=self.n).map(|k| libm::pow(k as f64, -self.theta)).sum();
        libm::pow((rank + 1) as f64, -self.theta) / norm
    }

    fn h(&self, x: f64) -> f64 {
        libm::exp(-self.theta * libm::log(x))
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = libm::log(x);
        expm1_over_x((1.0 - self.theta) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.theta)).max(-1.0);
        libm::exp(log1p_over_x(t) * x)
    }
}

fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 { libm::log1p(x) / x } else { 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x)) }
}

fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 { libm::expm1(x) / x } else { 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    fn rng() -> RngStream {
        RngStream::new(11, StreamId::Workload)
    }

    #[test]
    fn a_sampler_draws_exactly_what_its_distribution_draws() {
        let dists = [
            DurationDist::Constant { ns: 7 },
            DurationDist::Uniform { min_ns: 3, max_ns: 90 },
            DurationDist::Exponential { mean_ns: 500, min_ns: 20 },
            DurationDist::Lognormal { mean_ns: 75_000, sigma: 0.4, min_ns: 40_000, max_ns: Some(200_000) },
        ];
        for d in dists {
            let sampler = Sampler::new(d.clone());
            let (mut a, mut b) = (rng(), rng());
            for _ in 0..1000 {
                assert_eq!(d.sample(&mut a), sampler.sample(&mut b), "{d:?}");
            }
        }
    }

    fn sample_mean(d: &DurationDist, n: usize) -> f64 {
        let mut r = rng();
        (0..n).map(|_| d.sample(&mut r) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn duration_means_match_their_parameters() {
        let cases = [
            DurationDist::Constant { ns: 500 },
            DurationDist::Uniform { min_ns: 100, max_ns: 300 },
            DurationDist::Exponential { mean_ns: 1000, min_ns: 200 },
            DurationDist::Lognormal { mean_ns: 1000, sigma: 0.5, min_ns: 100, max_ns: None },
        ];
        for d in cases {
            let mean = sample_mean(&d, 200_000);
            let want = d.mean_ns();
            assert!((mean - want).abs() / want < 0.02, "{d:?}: sample mean {mean}, want {want}");
        }
    }

    #[test]
    fn bounds_are_respected() {
        let mut r = rng();
        let u = DurationDist::Uniform { min_ns: 10, max_ns: 20 };
        let e = DurationDist::Exponential { mean_ns: 50, min_ns: 40 };
        let l = DurationDist::Lognormal { mean_ns: 100, sigma: 2.0, min_ns: 5, max_ns: Some(400) };
        for _ in 0..50_000 {
            assert!((10..=20).contains(&u.sample(&mut r)));
            assert!(e.sample(&mut r) >= 40);
            assert!((5..=400).contains(&l.sample(&mut r)));
        }
    }

    #[test]
    fn invalid_parameters_name_their_field() {
        let bad = DurationDist::Uniform { min_ns: 5, max_ns: 1 };
        assert_eq!(bad.validate().unwrap_err().path, "max_ns");
        let bad = DurationDist::Lognormal { mean_ns: 10, sigma: -1.0, min_ns: 0, max_ns: None };
        assert_eq!(bad.validate().unwrap_err().path, "sigma");
    }

    #[test]
    fn zipf_frequencies_match_the_exact_distribution() {
        for theta in [0.0, 0.5, 0.99, 1.0, 1.5] {
            let zipf = Zipf::new(20, theta).unwrap();
            let mut r = rng();
            let draws = 400_000;
            let mut counts = [0u64; 20];
            for _ in 0..draws {
                counts[zipf.sample(&mut r) as usize] += 1;
            }
            // Pearson's chi-square with 19 degrees of freedom: 43.8 is the 0.999 quantile.
            let chi2: f64 = (0..20)
                .map(|k| {
                    let expected = zipf.probability(k) * draws as f64;
                    (counts[k as usize] as f64 - expected).powi(2) / expected
                })
                .sum();
            assert!(chi2 < 43.8, "theta {theta}: chi-square {chi2}, counts {counts:?}");
        }
    }

    #[test]
    fn zipf_over_a_million_keys_favours_low_ranks() {
        let zipf = Zipf::new(1_000_000, 1.0).unwrap();
        let mut r = rng();
        let draws = 100_000;
        let hits0 = (0..draws).filter(|_| zipf.sample(&mut r) == 0).count() as f64 / draws as f64;
        // P(rank 0) = 1 / H(10^6) ≈ 1 / 14.39 ≈ 0.0695.
        assert!((hits0 - 0.0695).abs() < 0.005, "{hits0}");
        assert!(Zipf::new(0, 1.0).is_err());
        assert!(Zipf::new(10, f64::NAN).is_err());
    }
}
