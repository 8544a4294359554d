//! The unit of each metric, which the report does not store.
//!
//! A `.ncu-rep` keeps metric names and values; ncu takes the units from its
//! own metric tables when it prints them. `units.tsv` holds, for every metric
//! name of a `--set full` report and of the fast and graph-mode reports in
//! `fixtures/h200/` (all of `kernels/graph_app` on an H200), the unit
//! `ncu --import R --csv --page raw --print-units base` (Nsight Compute
//! 2025.3.1, GH100) prints for it (empty: dimensionless); the integration
//! tests check it against the units row of every committed raw page of those
//! reports. A gated metric whose name is not there makes the native read
//! refuse the report rather than guess a unit.

use std::collections::HashMap;
use std::sync::OnceLock;

const TABLE: &str = include_str!("units.tsv");

/// The base unit ncu prints for `metric`, or `None` when the table does not know it.
pub fn unit(metric: &str) -> Option<&'static str> {
    static UNITS: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    UNITS
        .get_or_init(|| {
            TABLE
                .lines()
                .filter_map(|line| line.split_once('\t'))
                .collect()
        })
        .get(metric)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_the_gated_metrics() {
        assert_eq!(unit("dram__bytes.sum"), Some("byte"));
        assert_eq!(unit("gpu__time_duration.sum"), Some("ns"));
        assert_eq!(
            unit("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
            Some("%")
        );
        assert_eq!(unit("device__attribute_display_name"), Some(""));
        assert_eq!(unit("no__such_metric.sum"), None);
    }
}
