//! Simulated time: an integer count of nanoseconds since the start of the run.
//!
//! Integer time keeps runs byte-identical across machines (no float rounding in the event
//! order). Events at equal times are ordered by their insertion sequence number (see `queue`).

/// Nanoseconds since the start of the simulation.
pub type Time = u64;

pub const NS: Time = 1;
pub const US: Time = 1_000;
pub const MS: Time = 1_000_000;
pub const S: Time = 1_000_000_000;

/// Renders a duration with a unit that keeps three significant digits, e.g. `1.26ms`.
pub fn format_duration(ns: Time) -> String {
    if ns < US {
        format!("{ns}ns")
    } else if ns < MS {
        format!("{:.2}us", ns as f64 / US as f64)
    } else if ns < S {
        format!("{:.2}ms", ns as f64 / MS as f64)
    } else {
        format!("{:.3}s", ns as f64 / S as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_render_with_their_unit() {
        assert_eq!(format_duration(999), "999ns");
        assert_eq!(format_duration(1_259_000), "1.26ms");
        assert_eq!(format_duration(150 * US), "150.00us");
        assert_eq!(format_duration(2 * S + 500 * MS), "2.500s");
    }
}
