//! How a rule's metric name finds its row on the details page: by metric ID
//! or label (`Duration`), by a Speed-of-Light label's ID
//! (`gpu__time_duration.sum` reads `Duration`), or qualified by the section
//! or chart the row is in: `"Section: Label"`, `"Body Item Label: Label"`,
//! `"Section: Body Item Label: Label"` (21-column exports name a row's chart
//! in `Body Item Label`; one label can be in several charts of a section).

/// Speed-of-Light labels of the details page and the metric each one shows
/// (checked against the raw and details pages of one H200 report in tests).
pub(crate) const LABELS: &[(&str, &str)] = &[
    ("gpu__time_duration.sum", "Duration"),
    ("gpc__cycles_elapsed.max", "Elapsed Cycles"),
    ("sm__cycles_active.avg", "SM Active Cycles"),
    ("gpc__cycles_elapsed.avg.per_second", "SM Frequency"),
    ("dram__cycles_elapsed.avg.per_second", "DRAM Frequency"),
    (
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "Memory Throughput",
    ),
    (
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "DRAM Throughput",
    ),
    (
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "Compute (SM) Throughput",
    ),
    (
        "l1tex__throughput.avg.pct_of_peak_sustained_active",
        "L1/TEX Cache Throughput",
    ),
    (
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "L2 Cache Throughput",
    ),
];

/// The section that shows the labels above: its name since ncu 2021, and
/// before (ncu 2019.5–2020.3 print `GPU Speed Of Light`).
pub(crate) const SOL: &[&str] = &["GPU Speed Of Light Throughput", "GPU Speed Of Light"];
/// Where a requested metric's row may be, besides its `Metric Name`.
pub(crate) enum Place {
    Anywhere,
    /// `"A: Label"`: in section A, or under the body item labelled A.
    SectionOrItem(String),
    /// `"Section: Body Item Label: Label"`.
    SectionAndItem(String, String),
    /// A Speed-of-Light label alias of a metric ID.
    Sol,
}

/// How a requested metric is found in the page.
pub(crate) struct Wanted {
    /// The `Metric Name` that is this metric.
    pub(crate) name: String,
    pub(crate) place: Place,
}

impl Wanted {
    pub(crate) fn matches(&self, name: &[u8], section: &str, item: &str) -> bool {
        self.name.as_bytes() == name
            && match &self.place {
                Place::Anywhere => true,
                Place::SectionOrItem(a) => a == section || (!item.is_empty() && a == item),
                Place::SectionAndItem(s, i) => s == section && i == item,
                Place::Sol => SOL.contains(&section),
            }
    }
}

/// The ways a rule's metric name can name a row, in order of priority: the
/// name itself, then `"Section: Label"` / `"Body Item Label: Label"`, then
/// `"Section: Body Item Label: Label"`, then a Speed-of-Light label alias.
pub(crate) fn wanted(metric: &str) -> Vec<Wanted> {
    let mut out = vec![Wanted {
        name: metric.to_string(),
        place: Place::Anywhere,
    }];
    let parts: Vec<&str> = metric.split(": ").collect();
    match parts.as_slice() {
        [a, label] => out.push(Wanted {
            name: (*label).to_string(),
            place: Place::SectionOrItem((*a).to_string()),
        }),
        [section, item, label] => out.push(Wanted {
            name: (*label).to_string(),
            place: Place::SectionAndItem((*section).to_string(), (*item).to_string()),
        }),
        _ => {}
    }
    for (id, label) in LABELS {
        if *id == metric {
            out.push(Wanted {
                name: (*label).to_string(),
                place: Place::Sol,
            });
        }
    }
    out
}

/// Where a row sits in a launch: its section and body item label (`""`
/// where the page has no such column or the row has none).
#[derive(Clone, PartialEq)]
pub(crate) struct Spot {
    pub(crate) section: String,
    pub(crate) item: String,
}

impl Spot {
    pub(crate) fn show(&self) -> String {
        if self.item.is_empty() {
            self.section.clone()
        } else {
            format!("{}: {}", self.section, self.item)
        }
    }
}
