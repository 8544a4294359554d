//! Threshold rules: the TOML file that says what counts as a regression.
//!
//! The schema is fixed (see docs/src/thresholds.md); new keys may only be optional.
//! Unknown keys are an error, so a typo never disables a rule silently.
//! Added optional keys: `why` (a sentence shown next to a failure), `name`
//! (a label for reports) and `noise_floor` (an absolute change, in base
//! units, that is always allowed: tiny values such as 8 KB of DRAM reads
//! jitter by more than any sensible percentage).

use crate::error::{Error, Result};
use crate::model::Aggregate;
use regex::Regex;
use serde::Deserialize;
use std::path::Path;

/// The rules built into the binary, used when `--thresholds` is not given.
pub(crate) const DEFAULT_THRESHOLDS: &str = include_str!("../thresholds/default.toml");
/// How reports name the built-in rules: the file they are a copy of, built in.
pub(crate) const DEFAULT_SOURCE: &str = "thresholds/default.toml (built in)";
/// The rules built in for nvbench JSON inputs (its summaries' tags as
/// metrics), used instead of [`DEFAULT_THRESHOLDS`] when every input is one.
pub(crate) const NVBENCH_THRESHOLDS: &str = include_str!("../thresholds/nvbench.toml");
/// How reports name the built-in nvbench rules.
pub(crate) const NVBENCH_SOURCE: &str = "thresholds/nvbench.toml (built in)";
#[cfg(test)]
/// The file of ncugate's repository the built-in rules are.
const BUILT_IN_PATH: &str = "thresholds/default.toml";

/// Whether a line of a thresholds file opens a rule (`[[rule]]`).
fn opens_rule(line: &str) -> bool {
    line.trim_start().starts_with("[[rule]]")
}

/// The number of the built-in rule whose `[[rule]]` is on `line` (1-based,
/// in file order): reports say "built-in rule 3", as the user has no file.
pub(crate) fn builtin_rule_number(line: usize) -> Option<usize> {
    let lines: Vec<&str> = DEFAULT_THRESHOLDS.lines().take(line).collect();
    (lines.len() == line && lines.last().is_some_and(|l| opens_rule(l)))
        .then(|| lines.iter().filter(|l| opens_rule(l)).count())
}

/// The built-in rules as `ncugate init --print-thresholds` prints them: the
/// file, each `[[rule]]` preceded by `# built-in rule N`.
pub(crate) fn numbered_builtin() -> String {
    let mut out = String::with_capacity(DEFAULT_THRESHOLDS.len() + 1024);
    let mut n = 0;
    for line in DEFAULT_THRESHOLDS.lines() {
        if opens_rule(line) {
            n += 1;
            out.push_str(&format!("# built-in rule {n}\n"));
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Where a gate's threshold rules come from: a file, or the rules built into
/// the binary. Reports (and the JSON report's `thresholds`) name it as
/// [`Display`](std::fmt::Display) writes it: the path, or [`DEFAULT_SOURCE`].
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", from = "String")]
pub enum ThresholdsSource {
    /// [`DEFAULT_THRESHOLDS`], when no `--thresholds` or `[gate] thresholds` names a file.
    #[default]
    BuiltIn,
    File(std::path::PathBuf),
}

impl ThresholdsSource {
    #[cfg(test)]
    /// The file the rules were read from; for the built-in rules, the file
    /// of ncugate's repository they are a copy of (a path in the workspace
    /// when ncugate gates itself).
    pub(crate) fn path(&self) -> &Path {
        match self {
            ThresholdsSource::BuiltIn => Path::new(BUILT_IN_PATH),
            ThresholdsSource::File(path) => path,
        }
    }

    /// The file, if the rules come from one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            ThresholdsSource::BuiltIn => None,
            ThresholdsSource::File(path) => Some(path),
        }
    }
}

impl From<Option<std::path::PathBuf>> for ThresholdsSource {
    /// The file given, else the built-in rules.
    fn from(file: Option<std::path::PathBuf>) -> Self {
        file.map_or(ThresholdsSource::BuiltIn, ThresholdsSource::File)
    }
}

impl From<&str> for ThresholdsSource {
    /// As a report names it (the inverse of `Display`).
    fn from(name: &str) -> Self {
        if name == DEFAULT_SOURCE {
            ThresholdsSource::BuiltIn
        } else {
            ThresholdsSource::File(name.into())
        }
    }
}

impl From<String> for ThresholdsSource {
    fn from(name: String) -> Self {
        ThresholdsSource::from(name.as_str())
    }
}

impl From<ThresholdsSource> for String {
    fn from(source: ThresholdsSource) -> String {
        source.to_string()
    }
}

impl std::fmt::Display for ThresholdsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ThresholdsSource::BuiltIn => f.write_str(DEFAULT_SOURCE),
            ThresholdsSource::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// What to do about a structural difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    #[default]
    Fail,
    Warn,
    Ignore,
}

/// `[structure] launches`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LaunchPolicy {
    #[default]
    Exact,
    Ignore,
}

/// Which way is worse for a metric.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Worse {
    Higher,
    Lower,
}

impl Worse {
    /// The worst and the best of the recorded runs (`[max, min]` where higher is
    /// worse), when they are more than `allowance` apart: the rule then
    /// measures a value from them, not from the mean, since each recorded run
    /// would fail against the mean. A counter that is the same in every run of
    /// unchanged code never gets here; one that the app's own choices move does
    /// (seen on an H100: a CUDA app that picks its launch configuration by
    /// timing read 4.19M or 8.39M global-load sectors by its pick, and a check
    /// that picked the second failed +50% against the mean of 5.59M). `None`
    /// with fewer than two recorded runs.
    pub(crate) fn spread(
        self,
        stats: &crate::aggregate::Stats,
        allowance: Option<f64>,
    ) -> Option<[f64; 2]> {
        let apart = stats.max - stats.min;
        let ends = match self {
            Worse::Higher => [stats.max, stats.min],
            Worse::Lower => [stats.min, stats.max],
        };
        (stats.n >= 2 && apart.is_finite() && allowance.is_some_and(|a| apart > a)).then_some(ends)
    }

    /// How much worse than `mean` the value `x` is (negative: better).
    pub(crate) fn worse_by(self, x: f64, mean: f64) -> f64 {
        match self {
            Worse::Higher => x - mean,
            Worse::Lower => mean - x,
        }
    }

    /// Whether `x` is past `limit` on the worse side.
    pub(crate) fn past(self, x: f64, limit: f64) -> bool {
        match self {
            Worse::Higher => x > limit,
            Worse::Lower => x < limit,
        }
    }
}

/// Severity of a failed rule.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    #[default]
    Fail,
    Warn,
}

/// `environment = "sensitive" | "deterministic"`: whether another process
/// on the same GPU can move the metric without any change to the code.
/// Measured on an H200 beside a bf16 GEMM loop in another process
/// (fixtures/h200/shared/): instruction counts, launch counts and the
/// kernel's own L1 load sectors and requests did not move (±0.0%); durations
/// (+5% to +35%), DRAM bytes (+14% to +65,000%) and throughputs did, as
/// did elapsed cycles (−1% to −23%: the SM clock fell from 1.97 to
/// 1.26–1.48 GHz). When a run was shared, sensitive rules are not gated
/// (`[gate] shared_gpu`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Environment {
    /// Another context on the GPU can move it: times, cycles, DRAM and L2
    /// traffic, throughputs, anything device-wide.
    Sensitive,
    /// Counts of the kernel's own work: instructions, SASS counts, the
    /// sectors and requests of its own loads and stores.
    Deterministic,
}

impl Environment {
    /// The class of a metric whose rule does not say: deterministic for the
    /// kernel's own instruction, SASS and L1 load/store counts, sensitive
    /// for everything else (a metric ncugate does not know is assumed to be
    /// movable by a neighbour).
    pub(crate) fn of_metric(metric: &str) -> Environment {
        let own_work = [
            "sm__inst_executed",
            "smsp__inst_executed",
            "sm__sass_",
            "smsp__sass_",
            "derived__smsp__sass_",
            "l1tex__t_sectors_pipe_lsu_mem_",
            "l1tex__t_requests_pipe_lsu_mem_",
            "launch__",
        ];
        let rate = ["per_second", "pct_", "throughput", "per_cycle"];
        if own_work.iter().any(|p| metric.starts_with(p))
            && !rate.iter().any(|r| metric.contains(r))
        {
            Environment::Deterministic
        } else {
            Environment::Sensitive
        }
    }
}

/// `per = "kernel" | "total"`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    #[default]
    Kernel,
    Total,
}

/// `[structure]`.
#[derive(Debug, Clone, Copy, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Structure {
    #[serde(default)]
    pub(crate) launches: LaunchPolicy,
    #[serde(default)]
    pub(crate) new_kernels: Policy,
    #[serde(default)]
    pub(crate) missing_kernels: Policy,
}

/// `[findings]`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FindingsPolicy {
    #[serde(default = "warn")]
    pub(crate) new: Policy,
}

fn warn() -> Policy {
    Policy::Warn
}

impl Default for FindingsPolicy {
    fn default() -> Self {
        FindingsPolicy { new: Policy::Warn }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    metric: String,
    #[serde(default)]
    per: Per,
    #[serde(default)]
    aggregate: Aggregate,
    worse: Worse,
    better: Option<Worse>,
    max_change: Option<MaxChange>,
    max_drift: Option<String>,
    noise: Option<f64>,
    noise_floor: Option<f64>,
    limit: Option<f64>,
    kernels: Option<String>,
    #[serde(default)]
    severity: Severity,
    #[serde(default)]
    optional: bool,
    name: Option<String>,
    why: Option<String>,
    environment: Option<Environment>,
}

/// `max_change` as written: a quoted percentage, or a bare number that the
/// parser refuses with the text to write instead.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum MaxChange {
    Text(String),
    Number(f64),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThresholdsSpec {
    #[serde(default)]
    structure: Structure,
    #[serde(default)]
    findings: FindingsPolicy,
    #[serde(default)]
    rule: Vec<toml::Spanned<RuleSpec>>,
}

/// Which kernel keys a rule applies to.
#[derive(Debug, Clone)]
pub(crate) enum KernelFilter {
    All,
    Exact(String),
    Regex(Regex),
}

impl KernelFilter {
    pub(crate) fn matches(&self, key: &str) -> bool {
        match self {
            KernelFilter::All => true,
            KernelFilter::Exact(k) => k == key,
            KernelFilter::Regex(r) => r.is_match(key),
        }
    }
}

/// One validated `[[rule]]`.
#[derive(Debug, Clone)]
pub struct Rule {
    pub(crate) metric: String,
    pub(crate) per: Per,
    pub(crate) aggregate: Aggregate,
    pub(crate) worse: Worse,
    /// Which way is better, when the rule says so (`better = "lower"`): only
    /// then is a change beyond the allowance the other way an improvement.
    /// Without it such a change is reported as "higher"/"lower": a utilization
    /// that rises while the kernel gets slower is not better.
    pub(crate) better: Option<Worse>,
    /// Allowed relative change as a fraction (`"20%"` → 0.2); `None`: only `limit` applies.
    pub(crate) max_change: Option<f64>,
    /// Allowed change since the history's anchor run as a fraction
    /// (`max_drift = "25%"`): the creep that steps within `max_change` add
    /// up to. Checked only when a check has a history and an anchor.
    pub(crate) max_drift: Option<f64>,
    pub(crate) noise: f64,
    /// An absolute change (base units) that is always allowed; 0 by default.
    pub(crate) noise_floor: f64,
    pub(crate) limit: Option<f64>,
    pub(crate) kernels: KernelFilter,
    /// The `kernels` value as written, for reports.
    pub(crate) kernels_text: Option<String>,
    pub(crate) severity: Severity,
    pub(crate) optional: bool,
    pub(crate) name: Option<String>,
    pub(crate) why: Option<String>,
    /// Whether another process on the GPU can move the metric: the rule's
    /// `environment`, else [`Environment::of_metric`].
    pub(crate) environment: Environment,
    /// 1-based line of the rule's `[[rule]]` table in its file.
    pub(crate) line: usize,
}

impl Rule {
    /// A short label: the `name`, else `metric (aggregate, per)`.
    pub(crate) fn label(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => format!(
                "{} ({}{})",
                self.metric,
                self.aggregate,
                if self.per == Per::Total {
                    ", total"
                } else {
                    ""
                }
            ),
        }
    }
}

/// A whole thresholds file.
#[derive(Debug, Clone)]
pub struct Thresholds {
    /// The file path, or [`DEFAULT_SOURCE`].
    pub(crate) source: String,
    pub(crate) structure: Structure,
    pub(crate) findings: FindingsPolicy,
    pub(crate) rules: Vec<Rule>,
}

impl Thresholds {
    /// Whether another process on the GPU can move what the rule at `line`
    /// of these thresholds measures: the one notion of "sensitive" (the
    /// shared-GPU policy's, which leaves such rules ungated). The rule's
    /// `environment` when it has one, else its metric's class — and a
    /// result whose rule is not here (a report made with other rules)
    /// gets its metric's class, as a rule that does not say would.
    pub(crate) fn sensitive(&self, line: usize, metric: &str) -> bool {
        let environment = self
            .rules
            .iter()
            .find(|rule| rule.line == line && rule.metric == metric)
            .map_or_else(|| Environment::of_metric(metric), |rule| rule.environment);
        environment == Environment::Sensitive
    }

    /// The built-in default rules.
    pub fn builtin() -> Result<Thresholds> {
        Thresholds::parse(DEFAULT_THRESHOLDS, DEFAULT_SOURCE)
    }

    /// Loads `path`, or when `None` the built-in rules: those for nvbench
    /// JSON when `nvbench` (every input is one), else the default ones.
    pub(crate) fn load_for(path: Option<&Path>, nvbench: bool) -> Result<Thresholds> {
        match (path, nvbench) {
            (None, true) => Thresholds::parse(NVBENCH_THRESHOLDS, NVBENCH_SOURCE),
            _ => Thresholds::load(path),
        }
    }

    /// Loads `path`, or the built-in rules when `None`.
    pub fn load(path: Option<&Path>) -> Result<Thresholds> {
        let Some(path) = path else {
            return Thresholds::builtin();
        };
        let text = crate::io::bounded::read_to_string(crate::error::FileKind::Thresholds, path)?;
        Thresholds::parse(&text, &path.display().to_string())
    }

    /// Parses and validates thresholds text; `source` names it in messages.
    pub(crate) fn parse(text: &str, source: &str) -> Result<Thresholds> {
        let err = |message: String| Error::Thresholds {
            path: source.to_string(),
            message,
            keys: rule_keys().iter().map(|k| k.to_string()).collect(),
        };
        let spec: ThresholdsSpec = toml::from_str(text).map_err(|e| {
            Error::toml(crate::error::FileKind::Thresholds, source, &e, rule_keys())
        })?;
        let mut rules = Vec::with_capacity(spec.rule.len());
        for spanned in spec.rule {
            // The line of the rule's `[[rule]]` header: newlines before the span, plus one
            // (`lines()` of the text before it counted one less).
            let before = &text.as_bytes()[..spanned.span().start.min(text.len())];
            let line = memchr::memchr_iter(b'\n', before).count() + 1;
            let r = spanned.into_inner();
            let at = |m: &str| err(format!("rule for `{}` (line {line}): {m}", r.metric));
            if r.metric.trim().is_empty() {
                return Err(at("`metric` is empty"));
            }
            let max_change = match &r.max_change {
                None => None,
                Some(MaxChange::Text(text)) => Some(parse_percent(text).map_err(|m| at(&m))?),
                Some(MaxChange::Number(n)) => {
                    return Err(at(&format!(
                        "`max_change = {n}` is a bare number: write `max_change = \"{n}%\"` (a quoted percentage)"
                    )));
                }
            };
            let max_drift = r
                .max_drift
                .as_deref()
                .map(|t| parse_percent(t).map_err(|m| m.replace("max_change", "max_drift")))
                .transpose()
                .map_err(|m| at(&m))?;
            if max_change.is_none() && r.limit.is_none() {
                return Err(at("needs `max_change` (e.g. \"20%\"), `limit`, or both"));
            }
            let noise = r.noise.unwrap_or(0.0);
            if !noise.is_finite() || noise < 0.0 {
                return Err(at("`noise` must be a number of standard deviations ≥ 0"));
            }
            let noise_floor = r.noise_floor.unwrap_or(0.0);
            if !noise_floor.is_finite() || noise_floor < 0.0 {
                return Err(at(
                    "`noise_floor` must be an absolute amount in base units ≥ 0",
                ));
            }
            if r.limit.is_some_and(|l| !l.is_finite()) {
                return Err(at("`limit` must be a finite number"));
            }
            if r.better == Some(r.worse) {
                return Err(at(&format!(
                    "`better = \"{0}\"` and `worse = \"{0}\"` contradict each other",
                    match r.worse {
                        Worse::Higher => "higher",
                        Worse::Lower => "lower",
                    }
                )));
            }
            if r.per == Per::Total && r.kernels.is_some() {
                return Err(at(
                    "`kernels` selects kernels, but `per = \"total\"` gates the whole run",
                ));
            }
            let kernels = match r.kernels.as_deref() {
                None => KernelFilter::All,
                Some(k) => match k.strip_prefix("regex:") {
                    Some(pattern) => KernelFilter::Regex(
                        Regex::new(pattern)
                            .map_err(|e| at(&format!("bad `kernels` regex: {e}")))?,
                    ),
                    None => KernelFilter::Exact(k.to_string()),
                },
            };
            let environment = r
                .environment
                .unwrap_or_else(|| Environment::of_metric(&r.metric));
            rules.push(Rule {
                environment,
                metric: r.metric,
                per: r.per,
                aggregate: r.aggregate,
                worse: r.worse,
                better: r.better,
                max_change,
                max_drift,
                noise,
                noise_floor,
                limit: r.limit,
                kernels,
                kernels_text: r.kernels,
                severity: r.severity,
                optional: r.optional,
                name: r.name,
                why: r.why,
                line,
            });
        }
        if rules.is_empty() {
            return Err(err(
                "no [[rule]]: a gate without rules would pass everything".into(),
            ));
        }
        Ok(Thresholds {
            source: source.to_string(),
            structure: spec.structure,
            findings: spec.findings,
            rules,
        })
    }

    /// Every metric the rules name, deduplicated, in rule order.
    pub fn metrics(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for rule in &self.rules {
            if !out.contains(&rule.metric) {
                out.push(rule.metric.clone());
            }
        }
        out
    }
}

/// The keys a `[[rule]]` table takes, read from its definition (so the list
/// in messages cannot fall behind the parser).
pub(crate) fn rule_keys() -> &'static [&'static str] {
    serde_aux::serde_introspection::serde_introspect::<RuleSpec>()
}

/// `"20%"` → 0.2. A bare number is refused: `20` would mean 2000%.
fn parse_percent(text: &str) -> std::result::Result<f64, String> {
    let Some(number) = text.trim().strip_suffix('%') else {
        return Err(format!(
            "`max_change = \"{text}\"` must be a percentage such as \"20%\""
        ));
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v / 100.0),
        _ => Err(format!(
            "`max_change = \"{text}\"` must be a percentage ≥ 0 such as \"20%\""
        )),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn built_in_rules_are_numbered_as_printed() {
        let rules = Thresholds::builtin().expect("built in").rules;
        for (i, r) in rules.iter().enumerate() {
            assert_eq!(builtin_rule_number(r.line), Some(i + 1), "{}", r.metric);
        }
        assert_eq!(builtin_rule_number(rules[0].line + 1), None);
        let printed = numbered_builtin();
        let third = printed.find("# built-in rule 3\n").expect("numbered");
        assert!(printed[third..].lines().nth(1).is_some_and(opens_rule));
        let again = Thresholds::parse(&printed, "p.toml").expect("still the rules");
        assert_eq!(again.metrics(), Thresholds::builtin().expect("b").metrics());
    }

    #[test]
    fn each_rule_names_the_line_of_its_table_header() {
        let text = "# comment\n\n[[rule]]\nmetric = \"a\"\nmax_change = \"20%\"\nworse = \"higher\"\n\n[[rule]]\nmetric = \"b\"\nmax_change = \"20%\"\nworse = \"higher\"\n[[rule]]\n\nmetric = \"c\"\nmax_change = \"20%\"\nworse = \"higher\"\n";
        let t = Thresholds::parse(text, "t.toml").expect("valid");
        let lines: Vec<usize> = t.rules.iter().map(|r| r.line).collect();
        assert_eq!(lines, [3, 8, 12]);
    }
    use super::*;

    #[test]
    fn a_bare_max_change_number_says_what_to_write() {
        for (value, write) in [("20", "\"20%\""), ("0.2", "\"0.2%\"")] {
            let text =
                format!("[[rule]]\nmetric = \"a\"\nworse = \"higher\"\nmax_change = {value}\n");
            let message = Thresholds::parse(&text, "t.toml")
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                message.contains(&format!("`max_change = {value}` is a bare number"))
                    && message.contains(&format!("write `max_change = {write}`")),
                "{message}"
            );
        }
        assert!(
            Thresholds::parse(
                "[[rule]]\nmetric = \"a\"\nworse = \"higher\"\nmax_change = \"20%\"\n",
                "t.toml"
            )
            .is_ok()
        );
    }

    #[test]
    fn a_thresholds_source_is_named_as_reports_name_it_and_read_back() {
        assert!(DEFAULT_SOURCE.starts_with(BUILT_IN_PATH));
        for source in [
            ThresholdsSource::BuiltIn,
            ThresholdsSource::File("t/rules.toml".into()),
        ] {
            let name = source.to_string();
            assert_eq!(ThresholdsSource::from(name.as_str()), source);
        }
        assert_eq!(ThresholdsSource::BuiltIn.to_string(), DEFAULT_SOURCE);
        assert_eq!(ThresholdsSource::from(None), ThresholdsSource::BuiltIn);
    }

    #[test]
    fn the_builtin_rules_parse_and_name_the_instruction_gate() {
        let t = Thresholds::builtin().unwrap();
        let inst: Vec<&Rule> = t
            .rules
            .iter()
            .filter(|r| r.metric == "sm__inst_executed.sum")
            .collect();
        assert_eq!(inst.len(), 2, "per kernel and per total");
        assert!(
            inst.iter()
                .all(|r| r.max_change == Some(0.2) && r.worse == Worse::Higher)
        );
        assert!(t.rules.iter().all(|r| r.line > 1));
    }

    #[test]
    fn the_fixed_ratio_gate_parses() {
        let text = include_str!("../thresholds/fixed-ratio.toml");
        let t = Thresholds::parse(text, "fixed-ratio.toml").unwrap();
        assert!(
            t.rules
                .iter()
                .any(|r| r.limit == Some(75.0) && r.worse == Worse::Lower)
        );
    }

    #[test]
    fn mistakes_are_errors_with_the_line() {
        let bad = |text: &str| {
            let e = Thresholds::parse(text, "t.toml").unwrap_err();
            format!("{e}\n{}", e.detail().join("\n"))
        };
        let rule = "[[rule]]\nmetric = \"m\"\nworse = \"higher\"\n";
        assert!(bad(&format!("{rule}max_change = 20\n")).contains("write `max_change = \"20%\"`"));
        assert!(bad(&format!("{rule}max_change = \"20\"\n")).contains("percentage"));
        assert!(bad(&format!("{rule}max_chnage = \"20%\"\n")).contains("unknown field"));
        assert!(bad(rule).contains("line 1"));
        assert!(
            bad(&format!(
                "{rule}max_change = \"5%\"\nkernels = \"regex:(\"\n"
            ))
            .contains("regex")
        );
        assert!(
            bad(&format!(
                "{rule}max_change = \"5%\"\nper = \"total\"\nkernels = \"x\"\n"
            ))
            .contains("whole run")
        );
        assert!(bad("[structure]\nlaunches = \"exact\"\n").contains("no [[rule]]"));
        assert!(
            bad(&format!("{rule}max_change = \"5%\"\nworse = \"lower\"\n")).contains("duplicate")
        );
    }

    #[test]
    fn the_hint_lists_every_rule_key() {
        let keys = rule_keys();
        for key in ["metric", "max_change", "noise_floor", "name", "why"] {
            assert!(keys.contains(&key), "{keys:?}");
        }
        let rule = "[[rule]]\nmetric = \"m\"\nworse = \"higher\"\n";
        for text in [rule.to_string(), format!("{rule}max_chnage = \"20%\"\n")] {
            let hint = Thresholds::parse(&text, "t.toml").unwrap_err().hint();
            assert!(hint.ends_with(&keys.join(", ")), "{hint}");
        }
    }

    #[test]
    fn every_builtin_rule_is_classified_in_its_file_as_measured() {
        for (name, text) in [
            ("default.toml", DEFAULT_THRESHOLDS),
            (
                "fixed-ratio.toml",
                include_str!("../thresholds/fixed-ratio.toml"),
            ),
            ("set-full.toml", include_str!("../thresholds/set-full.toml")),
        ] {
            let t = Thresholds::parse(text, name).unwrap();
            let rules = text.matches("[[rule]]").count();
            assert_eq!(text.matches("\nenvironment = ").count(), rules, "{name}");
            for r in &t.rules {
                // The file says what the name-based default would say too.
                assert_eq!(
                    r.environment,
                    Environment::of_metric(&r.metric),
                    "{name}: {}",
                    r.metric
                );
            }
        }
        let t = Thresholds::builtin().unwrap();
        let of = |m: &str| {
            t.rules
                .iter()
                .find(|r| r.metric == m)
                .map(|r| r.environment)
        };
        assert_eq!(
            of("sm__inst_executed.sum"),
            Some(Environment::Deterministic)
        );
        assert_eq!(of("gpu__time_duration.sum"), Some(Environment::Sensitive));
        assert_eq!(of("dram__bytes.sum"), Some(Environment::Sensitive));
        assert_eq!(
            of("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
            Some(Environment::Deterministic)
        );
        assert_eq!(
            Environment::of_metric("sm__inst_executed.avg.per_cycle_active"),
            Environment::Sensitive
        );
        let own = Thresholds::parse(
            "[[rule]]\nmetric = \"gpu__time_duration.sum\"\nworse = \"higher\"\nmax_change = \"1%\"\nenvironment = \"deterministic\"\n",
            "t",
        )
        .unwrap();
        assert_eq!(own.rules[0].environment, Environment::Deterministic);
    }

    #[test]
    fn kernel_filters() {
        let t = Thresholds::parse("[[rule]]\nmetric = \"m\"\nworse = \"higher\"\nmax_change = \"1%\"\nkernels = \"regex:^scale\"\n", "t").unwrap();
        assert!(t.rules[0].kernels.matches("scale(float *)"));
        assert!(!t.rules[0].kernels.matches("produce"));
    }

    #[test]
    fn a_rule_is_sensitive_as_it_says_else_as_its_metric_is() {
        let t = Thresholds::parse(
            "[[rule]]\nmetric = \"gpu__time_duration.sum\"\nworse = \"higher\"\nmax_change = \"1%\"\nenvironment = \"deterministic\"\n\n[[rule]]\nmetric = \"dram__bytes.sum\"\nworse = \"higher\"\nmax_change = \"1%\"\n",
            "t.toml",
        )
        .expect("thresholds");
        let line = |metric: &str| t.rules.iter().find(|r| r.metric == metric).map(|r| r.line);
        let (time, dram) = (line("gpu__time_duration.sum"), line("dram__bytes.sum"));
        assert!(!t.sensitive(time.unwrap_or_default(), "gpu__time_duration.sum"));
        assert!(t.sensitive(dram.unwrap_or_default(), "dram__bytes.sum"));
        // A result of a rule these thresholds do not have: its metric's class.
        assert!(t.sensitive(999, "gpu__time_duration.sum"));
        assert!(!t.sensitive(999, "sm__inst_executed.sum"));
    }
}
