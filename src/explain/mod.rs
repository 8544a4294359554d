//! Per-line attribution of a failing kernel: its source-counter profile
//! against the baseline's, line by line.
//!
//! A source profile ([`page`]) holds, per CUDA (or Python) line, a few of the
//! counters ncu's `SourceCounters` section collects — instructions executed,
//! warp-stall samples, long-scoreboard stalls, L1 requests and L2 sectors of
//! global accesses — summed over the line's instructions; and the same counters
//! per opcode. Lines are matched by file name, line number and text, then by
//! text where the code moved, then by line number (see `matched_lines`); a
//! kernel without line information is compared per opcode, with a hint to
//! build with `-lineinfo`.

pub mod page;

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// When a check explains kernels by their source lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExplainMode {
    /// The failing kernels (the worst first, at most --explain-kernels).
    #[default]
    OnFail,
    /// Every kernel with a source profile on both sides.
    Always,
    /// None.
    Never,
}

/// Counter (short name) → value.
pub(crate) type Counters = BTreeMap<String, f64>;

/// The page's columns kept, with the short names used in profiles and reports.
pub(crate) const COUNTERS: [(&str, &str); 5] = [
    ("Instructions Executed", "instructions"),
    ("Warp Stall Sampling (All Samples)", "stall samples"),
    ("stall_long_sb", "long-scoreboard stalls"),
    ("L1 Tag Requests Global", "L1 requests"),
    ("L2 Theoretical Sectors Global", "L2 sectors"),
];

/// One kernel's source-counter profile (one launch).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceProfile {
    /// The kernel key.
    pub kernel: String,
    /// Per source line; empty without line information.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<Line>,
    /// Per opcode, over all instructions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub opcodes: BTreeMap<String, Counters>,
    /// Which launch was profiled, when ncugate chose one (a check's explain
    /// run); absent for source pages given to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) launch: Option<ProfiledLaunch>,
}

/// The launch of a kernel an explain run profiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfiledLaunch {
    /// Its place among the kernel's launches in a run, from 0.
    pub(crate) index: u64,
    /// The kernel's launches per run.
    pub(crate) of: u64,
    /// ncu's `--launch-skip` for it.
    pub(crate) skip: u64,
}

impl ProfiledLaunch {
    /// `launch 3 of 3` (counted from 1).
    pub(crate) fn label(&self) -> String {
        format!("launch {} of {}", self.index + 1, self.of)
    }
}

/// One source line's counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Line {
    /// The file's name, without its folders.
    pub(crate) file: String,
    pub line: u64,
    /// The line's text as ncu showed it (empty when ncu had no source).
    pub text: String,
    pub counters: Counters,
}

/// One line (or opcode) whose counters changed, for the reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangedLine {
    /// `graph_app.cu:123`, or an opcode (`DFMA`) without line information.
    pub place: String,
    /// The source text, when known.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) text: String,
    /// Counters that changed: name, baseline, current.
    pub(crate) counters: Vec<(String, f64, f64)>,
}

/// What the explain step found for one kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Explained {
    pub(crate) kernel: String,
    /// `true` when lines were compared, `false` when opcodes were (no line information).
    pub by_line: bool,
    /// The top changes, largest first (at most [`TOP`]).
    pub changes: Vec<ChangedLine>,
    /// The launch of this run that was profiled, when ncugate chose it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) launch: Option<ProfiledLaunch>,
}

/// Lines named per kernel.
pub(crate) const TOP: usize = 3;

/// The smallest relative change of a counter that names a line (10%).
pub(crate) const MOVED: f64 = 0.1;

/// The counter that ranks lines for a failing rule of `unit`: instructions
/// for instruction counts, L2 sectors for bytes, stall samples for the rest
/// (time, throughput).
pub(crate) fn ranking_counter(unit: &str) -> &'static str {
    match unit {
        "inst" => "instructions",
        "byte" => "L2 sectors",
        _ => "stall samples",
    }
}

/// The top changes between two profiles of one kernel, ranked by `rank`.
pub fn compare(baseline: &SourceProfile, current: &SourceProfile, rank: &str) -> Explained {
    let by_line = !baseline.lines.is_empty() && !current.lines.is_empty();
    let mut rows: Vec<(String, String, &Counters, &Counters)> = Vec::new();
    let empty = Counters::new();
    if by_line {
        for (b, a) in matched_lines(&baseline.lines, &current.lines) {
            let line = a.or(b);
            let place = match (b, a) {
                (Some(b), Some(a)) if b.line != a.line => {
                    format!("{}:{} (was {})", a.file, a.line, b.line)
                }
                _ => line
                    .map(|l| format!("{}:{}", l.file, l.line))
                    .unwrap_or_default(),
            };
            rows.push((
                place,
                line.map(|l| l.text.clone()).unwrap_or_default(),
                b.map_or(&empty, |l| &l.counters),
                a.map_or(&empty, |l| &l.counters),
            ));
        }
    } else {
        let ops: BTreeSet<&String> = baseline
            .opcodes
            .keys()
            .chain(current.opcodes.keys())
            .collect();
        for op in ops {
            rows.push((
                op.clone(),
                String::new(),
                baseline.opcodes.get(op).unwrap_or(&empty),
                current.opcodes.get(op).unwrap_or(&empty),
            ));
        }
    }
    let delta = |b: &Counters, a: &Counters, c: &str| {
        (a.get(c).copied().unwrap_or(0.0) - b.get(c).copied().unwrap_or(0.0)).abs()
    };
    // A line counts as changed when its ranking counter moved by a tenth of
    // its baseline value or more (or appeared, or went): stall samples are
    // sampled, and a launch that runs the same code moves them by a few
    // percent (measured on the H200: -2% to +7% for the redundant-node
    // variant, whose lines are unchanged).
    rows.retain(|(_, _, b, a)| {
        let before = b.get(rank).copied().unwrap_or(0.0).abs();
        delta(b, a, rank) > MOVED * before.max(f64::MIN_POSITIVE)
    });
    rows.sort_by(|x, y| {
        delta(y.2, y.3, rank)
            .total_cmp(&delta(x.2, x.3, rank))
            .then(x.0.cmp(&y.0))
    });
    let changes = rows
        .into_iter()
        .take(TOP)
        .map(|(place, text, b, a)| ChangedLine {
            place,
            text,
            counters: changed_counters(b, a, rank),
        })
        .collect();
    Explained {
        kernel: current.kernel.clone(),
        by_line,
        changes,
        launch: current.launch,
    }
}

/// A line of the baseline paired with a line of this run, in three passes:
/// the same file, line number and text; then, for code that moved (an edit
/// above it shifted it), the same file and text where that text is on one
/// unpaired line only of each side; then the same file and line number (the
/// line's text changed). The rest are alone (gone, or new).
type Paired<'a> = (Option<&'a Line>, Option<&'a Line>);

fn matched_lines<'a>(before: &'a [Line], after: &'a [Line]) -> Vec<Paired<'a>> {
    matched_lines_counted(before, after).0
}

/// [`matched_lines`], and the work it did: lines looked at and looked up
/// (a few per line and pass; a 40,000-line source page once took 40 s of
/// pairwise comparisons).
///
/// Each pass keys the unpaired lines (a pass's key: `None` never pairs): a
/// baseline line pairs with the one unpaired line of this run of its key,
/// when there is exactly one (and, for a pass that wants it unique on both
/// sides, the baseline has one too); the first baseline line of a key takes
/// it, as the baseline's order is walked.
fn matched_lines_counted<'a>(before: &'a [Line], after: &'a [Line]) -> (Vec<Paired<'a>>, u64) {
    let mut left = Unpaired {
        before: before.iter().collect(),
        after: after.iter().collect(),
        work: 0,
    };
    let mut out: Vec<Paired<'a>> = Vec::new();
    left.pass(&mut out, false, |l| {
        Some((&l.file, l.line, l.text.as_str()))
    });
    left.pass(&mut out, true, |l| {
        (!l.text.is_empty()).then_some((&l.file, 0, l.text.as_str()))
    });
    left.pass(&mut out, false, |l| Some((&l.file, l.line, "")));
    out.extend(left.before.into_iter().map(|b| (Some(b), None)));
    out.extend(left.after.into_iter().map(|a| (None, Some(a))));
    (out, left.work)
}

/// The lines of each side not paired yet, and the work done pairing.
struct Unpaired<'a> {
    before: Vec<&'a Line>,
    after: Vec<&'a Line>,
    work: u64,
}

/// A pass's key of a line: its file, line number (or 0) and text (or "").
type Key<'a> = (&'a String, u64, &'a str);

impl<'a> Unpaired<'a> {
    /// One pass: pairs what `key` pairs, in the baseline's order.
    fn pass(
        &mut self,
        out: &mut Vec<Paired<'a>>,
        unique: bool,
        key: impl Fn(&'a Line) -> Option<Key<'a>>,
    ) {
        use std::collections::HashMap;
        // Per key: how many unpaired lines of this run have it, and the last.
        let mut after: HashMap<Key<'a>, (usize, usize)> = HashMap::new();
        for (j, a) in self.after.iter().enumerate() {
            if let Some(k) = key(a) {
                let e = after.entry(k).or_insert((0, j));
                *e = (e.0 + 1, j);
            }
        }
        let mut rivals: HashMap<Key<'a>, usize> = HashMap::new();
        if unique {
            for k in self.before.iter().filter_map(|b| key(b)) {
                *rivals.entry(k).or_default() += 1;
            }
        }
        self.work += 2 * (self.before.len() + self.after.len()) as u64;
        let mut taken = vec![false; self.after.len()];
        let mut rest = Vec::with_capacity(self.before.len());
        for b in std::mem::take(&mut self.before) {
            let k = key(b);
            let fit = k.and_then(|k| after.get_mut(&k).map(|e| (k, e)));
            match fit {
                Some((k, e)) if e.0 == 1 && (!unique || rivals.get(&k) == Some(&1)) => {
                    *e = (0, e.1);
                    taken[e.1] = true;
                    out.push((Some(b), Some(self.after[e.1])));
                }
                _ => rest.push(b),
            }
        }
        self.before = rest;
        let mut j = 0;
        self.after.retain(|_| {
            j += 1;
            !taken[j - 1]
        });
    }
}

/// The ranking counter, then every other that moved by 10% or more.
fn changed_counters(b: &Counters, a: &Counters, rank: &str) -> Vec<(String, f64, f64)> {
    let mut out = Vec::new();
    for (_, name) in COUNTERS {
        let (x, y) = (
            b.get(name).copied().unwrap_or(0.0),
            a.get(name).copied().unwrap_or(0.0),
        );
        let moved = (y - x).abs() > MOVED * x.abs().max(1.0);
        if name == rank || moved {
            out.push((name.to_string(), x, y));
        }
    }
    // The ranking counter first.
    out.sort_by_key(|(n, _, _)| n != rank);
    out
}

impl ChangedLine {
    /// `graph_app.cu:87  return (i * 33) % n;  instructions 0 → 14.2M (new), …`.
    pub(crate) fn summary(&self) -> String {
        let counters: Vec<String> = self
            .counters
            .iter()
            .map(|(name, b, a)| {
                let change = if *b == 0.0 {
                    "new".to_string()
                } else {
                    format!("{:+.0}%", (a - b) / b * 100.0)
                };
                format!(
                    "{name} {} → {} ({change})",
                    crate::format::format_value(*b, ""),
                    crate::format::format_value(*a, "")
                )
            })
            .collect();
        let text = if self.text.is_empty() {
            String::new()
        } else {
            format!("  {}", self.text)
        };
        format!("{}{text}  {}", self.place, counters.join(", "))
    }
}

impl Explained {
    /// The lines (or opcodes) for the *why*, one per change.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self.changes.iter().map(ChangedLine::summary).collect();
        if !self.by_line {
            out.push(if self.changes.is_empty() {
                "no line information and no instruction counters: build with -lineinfo (nvcc) to see the source lines".into()
            } else {
                "no line information: per opcode; build with -lineinfo (nvcc) to see the source lines".into()
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(samples: &[(u64, f64)]) -> SourceProfile {
        SourceProfile {
            kernel: "scale".into(),
            lines: samples
                .iter()
                .map(|&(line, n)| Line {
                    file: "graph_app.cu".into(),
                    line,
                    text: format!("line {line}"),
                    counters: Counters::from([("stall samples".to_string(), n)]),
                })
                .collect(),
            opcodes: BTreeMap::new(),
            launch: None,
        }
    }

    /// The pairing as it was before it was keyed: every unpaired line of
    /// one side compared with every one of the other, pass by pass.
    fn pairwise<'a>(before: &'a [Line], after: &'a [Line]) -> Vec<Paired<'a>> {
        let mut b_left: Vec<&Line> = before.iter().collect();
        let mut a_left: Vec<&Line> = after.iter().collect();
        let mut out: Vec<Paired<'a>> = Vec::new();
        let same_place = |x: &Line, y: &Line| x.file == y.file && x.line == y.line;
        let same_text =
            |x: &Line, y: &Line| x.file == y.file && x.text == y.text && !x.text.is_empty();
        type Pass<'f> = (&'f dyn Fn(&Line, &Line) -> bool, bool);
        let passes: [Pass; 3] = [
            (&|x, y| same_place(x, y) && x.text == y.text, false),
            (&same_text, true),
            (&same_place, false),
        ];
        for (same, unique) in passes {
            let mut i = 0;
            while i < b_left.len() {
                let b = b_left[i];
                let fits: Vec<usize> = (0..a_left.len()).filter(|&j| same(b, a_left[j])).collect();
                let rivals = b_left.iter().filter(|o| same(o, b)).count();
                match fits[..] {
                    [j] if !unique || rivals == 1 => {
                        out.push((Some(b), Some(a_left.remove(j))));
                        b_left.remove(i);
                    }
                    _ => i += 1,
                }
            }
        }
        out.extend(b_left.into_iter().map(|b| (Some(b), None)));
        out.extend(a_left.into_iter().map(|a| (None, Some(a))));
        out
    }

    /// A source page of `copies` copies of a real page's lines (Triton's
    /// softmax, 13 lines),
    /// numbered on; `shift` lines inserted after every 50th line (code
    /// that moved), every 7th line's text edited with `edit`.
    fn big_page(copies: usize, shift: u64, edit: &str) -> SourceProfile {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/h200/explain/triton.twice.softmax.sourcecounters.csv"
        );
        let data = std::fs::read(fixture).expect("fixture");
        let real = page::read_source_page(&data, crate::model::KernelKeyMode::Demangled)
            .expect("the real page reads");
        assert!(real.lines.len() > 10, "{}", real.lines.len());
        let mut profile = real.clone();
        profile.lines.clear();
        let mut number: u64 = 0;
        for copy in 0..copies {
            for (i, line) in real.lines.iter().enumerate() {
                number += 1 + u64::from(number.is_multiple_of(50)) * shift;
                let mut line = line.clone();
                line.line = number;
                if (copy * real.lines.len() + i).is_multiple_of(7) {
                    line.text = format!("{} {edit}{copy}", line.text);
                }
                profile.lines.push(line);
            }
        }
        profile
    }

    #[test]
    fn lines_pair_as_they_did_pairwise() {
        for (shift, edit) in [(0, ""), (3, "/* edited */"), (1, "")] {
            let (before, after) = (big_page(40, 0, ""), big_page(40, shift, edit));
            let keyed = matched_lines(&before.lines, &after.lines);
            assert_eq!(
                keyed,
                pairwise(&before.lines, &after.lines),
                "{shift} {edit}"
            );
            assert!(keyed.iter().any(|(b, a)| b.is_some() && a.is_some()));
        }
    }

    #[test]
    fn pairing_a_40000_line_page_is_linear_work() {
        // A 40,000-line page and the same code moved and edited: the
        // pairwise pairing compared ~10^9 pairs of lines (40 s).
        let copies = 40_000 / big_page(1, 0, "").lines.len() + 1;
        let (before, after) = (big_page(copies, 0, ""), big_page(copies, 2, "// moved"));
        let n = (before.lines.len() + after.lines.len()) as u64;
        assert!(n >= 80_000, "{n}");
        let (paired, work) = matched_lines_counted(&before.lines, &after.lines);
        assert!(work <= 8 * n, "{work} steps for {n} lines");
        let both = paired
            .iter()
            .filter(|(b, a)| b.is_some() && a.is_some())
            .count();
        assert!(both * 2 > before.lines.len(), "{both} paired");
    }

    #[test]
    fn sampling_noise_names_no_line() {
        // The stall samples of `scale` in the baseline and in a redundant-node
        // run on the H200 (same code, same launch): 5170 → 5049, 140 → 150,
        // 323 → 318. None moved by a tenth.
        let before = profile(&[(126, 5170.0), (127, 140.0), (108, 323.0)]);
        let after = profile(&[(126, 5049.0), (127, 150.0), (108, 318.0)]);
        assert!(compare(&before, &after, "stall samples").changes.is_empty());
        // A line whose samples grew by half is named; a new one too.
        let after = profile(&[(126, 7755.0), (127, 150.0), (108, 318.0), (130, 40.0)]);
        let named: Vec<String> = compare(&before, &after, "stall samples")
            .changes
            .iter()
            .map(|c| c.place.clone())
            .collect();
        assert_eq!(named, ["graph_app.cu:126", "graph_app.cu:130"]);
    }
}
