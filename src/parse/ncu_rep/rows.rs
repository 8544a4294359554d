//! A report's raw page as rows for the raw-page fold ([`crate::parse::raw`]):
//! the cells `ncu --import R --csv --page raw --print-units base` prints,
//! made a row at a time and only for the columns the fold keeps. A report
//! is folded by the same code as its CSV, through the same row interface
//! ([`RowSource`]), without its page being written as CSV text and split
//! again; and a row costs the cells the fold reads, not every column of a
//! `--set full` page.

use super::container::{Launch, Report};
use super::{Fixed, dims, fixed_cell, print, units};
use crate::parse::scan::{Row, RowSource, Wanted};
use std::collections::{BTreeMap, HashMap};

/// A slot no column is kept in.
const UNKEPT: usize = usize::MAX;

/// The raw page of a report, row by row: the header, the units, then one
/// row per result (see [`super::raw_page`] for what the cells are).
pub(crate) struct RawRows<'r> {
    report: &'r Report,
    fixed: Vec<Fixed>,
    /// Each metric column's index, by metric name.
    columns: HashMap<&'r str, usize>,
    header: Vec<String>,
    units: Vec<String>,
    /// Rows given so far: the header, the units, then a result each.
    given: usize,
    /// The columns kept, in slot order; `None`: every column.
    kept: Option<Vec<usize>>,
    /// Each column's slot among `kept` ([`UNKEPT`] if not kept).
    slot_of: Vec<usize>,
    /// The grid and block a graph result repeats: the previous result's.
    grid: String,
    block: String,
    /// The cells of the row given last, by slot.
    cells: Vec<String>,
    sha256: String,
}

impl<'r> RawRows<'r> {
    /// The rows of `report`, whose file's SHA-256 is `sha256` (a run's
    /// digest is its report's, as when ncu converts it). Metric columns are
    /// sorted by name, as ncu sorts them; a metric the table of [`units`]
    /// does not know gets an empty unit. ncu leaves out the report's
    /// section-helper entries (`breakdown:…`, `group:…`, names with a `:`):
    /// they list metric names, not values.
    pub(crate) fn new(report: &'r Report, sha256: String) -> RawRows<'r> {
        let fixed = Fixed::columns(report);
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        for launch in &report.launches {
            for m in &launch.metrics {
                if !m.name.contains(':') {
                    names.entry(m.name.as_str()).or_default();
                }
            }
        }
        for (i, slot) in names.values_mut().enumerate() {
            *slot = fixed.len() + i;
        }
        let mut header: Vec<String> = fixed.iter().map(|f| f.title().to_string()).collect();
        header.extend(names.keys().map(ToString::to_string));
        let mut units = vec![String::new(); fixed.len()];
        units.extend(
            names
                .keys()
                .map(|m| units::unit(m).unwrap_or("").to_string()),
        );
        RawRows {
            report,
            fixed,
            columns: names.into_iter().collect(),
            header,
            units,
            given: 0,
            kept: None,
            slot_of: Vec::new(),
            grid: String::new(),
            block: String::new(),
            cells: Vec::new(),
            sha256,
        }
    }

    /// The header row: the fixed columns, then the metrics.
    pub(crate) fn header(&self) -> &[String] {
        &self.header
    }

    /// The whole page, every cell of every row.
    pub(crate) fn into_page(mut self) -> super::RawPage {
        self.want(Wanted::All);
        let mut rows = Vec::with_capacity(self.report.launches.len());
        for (id, launch) in self.report.launches.iter().enumerate() {
            self.result_row(id, launch);
            rows.push(std::mem::take(&mut self.cells));
        }
        super::RawPage {
            header: self.header,
            units: self.units,
            rows,
        }
    }

    /// The slot of column `col`, if it is kept.
    fn slot(&self, col: usize) -> Option<usize> {
        match &self.kept {
            None => Some(col),
            Some(_) => self.slot_of.get(col).copied().filter(|&s| s != UNKEPT),
        }
    }

    /// Keeps the kept cells of a row given whole (the header or the units).
    fn given_row(&mut self, row: &[String]) {
        self.cells = match &self.kept {
            None => row.to_vec(),
            Some(kept) => kept
                .iter()
                .map(|&c| row.get(c).cloned().unwrap_or_default())
                .collect(),
        };
    }

    /// Makes the kept cells of result `id`.
    fn result_row(&mut self, id: usize, launch: &Launch) {
        if let Some(g) = launch.grid {
            self.grid = dims(g);
        }
        if let Some(b) = launch.block {
            self.block = dims(b);
        }
        let n = self.kept.as_ref().map_or(self.header.len(), Vec::len);
        self.cells.clear();
        self.cells.resize(n, String::new());
        // The reader refuses a result that lists a metric twice ([`super::container`]).
        for m in &launch.metrics {
            if let Some(slot) = self
                .columns
                .get(m.name.as_str())
                .and_then(|&col| self.slot(col))
            {
                self.cells[slot] = print::cell(m);
            }
        }
        for (col, f) in self.fixed.iter().enumerate() {
            if let Some(slot) = self.slot(col) {
                self.cells[slot] = fixed_cell(*f, id, launch, &self.grid, &self.block);
            }
        }
    }
}

impl RowSource for RawRows<'_> {
    fn want(&mut self, wanted: Wanted) {
        match wanted {
            Wanted::All => {
                self.kept = None;
                self.slot_of.clear();
            }
            Wanted::Columns(columns) => {
                // The fold keeps columns the header names: each is on every row.
                self.slot_of = vec![UNKEPT; self.header.len()];
                for (slot, &col) in columns.iter().enumerate() {
                    if let Some(s) = self.slot_of.get_mut(col) {
                        *s = slot;
                    }
                }
                self.kept = Some(columns);
            }
        }
    }

    fn next_row(&mut self) -> std::io::Result<Option<Row<'_>>> {
        let at = self.given;
        match at {
            0 => {
                let header = std::mem::take(&mut self.header);
                self.given_row(&header);
                self.header = header;
            }
            1 => {
                let units = std::mem::take(&mut self.units);
                self.given_row(&units);
                self.units = units;
            }
            n => {
                let report = self.report;
                let Some(launch) = report.launches.get(n - 2) else {
                    return Ok(None);
                };
                self.result_row(n - 2, launch);
            }
        }
        self.given += 1;
        Ok(Some(Row::cells(&self.cells, self.header.len())))
    }

    fn sha256_hex(&self) -> String {
        self.sha256.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{container, details_page, raw_page, rule_rows, run_of};
    use crate::model::KernelKeyMode;
    use std::path::Path;

    /// Reports of every shape the corpus has: kernels, graphs, several
    /// processes, NVTX ranges, range results, a full set with rules, an
    /// older ncu's report with rules.
    const REPORTS: [&str; 8] = [
        "h200/graph_app.base.fast.run1.ncu-rep",
        "h200/graph_app.base.graph.ncu-rep",
        "h200/ncu-rep/graph_app.multi-process.ncu-rep",
        "h200/ncu-rep/nvtx_app.nvtx.ncu-rep",
        "h200/ncu-rep/nvtx_app.range-step.ncu-rep",
        "h200/ncu-rep/e2e/F.ncu-rep",
        "public-ncu-rep/ncar-gpu-workshop.MW_Baseline.ncu-rep",
        "public-ncu-rep/ncar-gpu-workshop.MW_DivToMult.ncu-rep",
    ];

    fn metrics() -> Vec<String> {
        let mut m: Vec<String> = [
            "gpu__time_duration.sum",
            "dram__bytes.sum",
            "sm__inst_executed.sum",
            "launch__grid_size",
            // A fixed column's metric, a fixed column's name, an absent one.
            "device__attribute_multiprocessor_count",
            "Device",
            "no__such_metric.sum",
        ]
        .map(String::from)
        .to_vec();
        m.extend(crate::shared_gpu::clock::METRICS.map(String::from));
        m
    }

    /// The run the reader made before its rows: the page printed as CSV
    /// and folded by the CSV reader.
    fn through_csv(
        path: &Path,
        report: &container::Report,
        metrics: &[String],
        key_mode: KernelKeyMode,
    ) -> String {
        let csv = raw_page(report).to_csv();
        format!(
            "{:?}",
            crate::parse::raw::read_raw(path, &csv[..], metrics, key_mode).map(|mut r| {
                r.sha256 = "digest".into();
                r
            })
        )
    }

    fn direct(
        path: &Path,
        report: &container::Report,
        metrics: &[String],
        key_mode: KernelKeyMode,
    ) -> String {
        // The profiler version is the report's alone: a CSV does not say it.
        let run = run_of(path, report, "digest".into(), metrics, key_mode).map(|mut run| {
            run.profiler_version = None;
            run
        });
        format!("{:?}", run.map_err(super::super::Refusal::into_error))
    }

    /// Rows and the CSV round trip agree on every report, whole or with a
    /// bit flipped (runs and errors alike), and so do the findings.
    #[test]
    fn rows_fold_as_the_printed_page_does() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let metrics = metrics();
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut compared = 0;
        for name in REPORTS {
            let path = fixtures.join(name);
            let data = std::fs::read(&path).expect("fixture");
            let mut variants = vec![data.clone()];
            for _ in 0..25 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mut bad = data.clone();
                let at = (seed % data.len() as u64) as usize;
                bad[at] ^= 1 << ((seed >> 32) % 8);
                variants.push(bad);
            }
            for bytes in variants {
                let Ok(report) = container::read(&bytes) else {
                    continue;
                };
                for key_mode in [KernelKeyMode::Demangled, KernelKeyMode::Function] {
                    let known: Vec<String> = metrics
                        .iter()
                        .filter(|m| super::units::unit(m).is_some())
                        .cloned()
                        .collect();
                    assert_eq!(
                        direct(&path, &report, &known, key_mode),
                        through_csv(&path, &report, &known, key_mode),
                        "{name} ({key_mode})"
                    );
                    let csv = details_page(&report).to_csv();
                    let findings = crate::parse::details::read_details(&path, &csv[..], key_mode)
                        .expect("a report's details page reads");
                    assert_eq!(rule_rows(&report).findings(key_mode), findings, "{name}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 200, "only {compared} reads compared");
    }
}
