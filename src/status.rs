//! The status of one check and the gate's outcome: the words every gate
//! (metrics, compute-sanitizer, graph memory) and every report share. A leaf,
//! so the gates can produce statuses without depending on the report model.

use crate::exit;
use crate::rules::Severity;
use serde::{Deserialize, Serialize};

/// The status of one check.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not evaluated (an `optional` metric that is missing).
    Skipped,
    Pass,
    /// Moved by more than the allowance in the direction the rule does not
    /// gate, on a rule that does not say which way is better (passes; shown
    /// as "higher" or "lower", never counted as an improvement).
    Changed,
    /// Better than the baseline by more than the allowance, on a rule with
    /// `better` set (passes).
    Improved,
    /// Failed a rule whose severity is `warn`, or a structural check set to `warn`.
    Warn,
    /// A regression: exit code 1.
    Fail,
    /// Could not be evaluated: exit code 2.
    Error,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Skipped => "skipped",
            Status::Pass => "pass",
            Status::Changed => "changed",
            Status::Improved => "improved",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
            Status::Error => "ERROR",
        }
    }

    /// Failed, warned or could not be evaluated: what a reader must look at.
    pub(crate) fn needs_attention(self) -> bool {
        matches!(self, Status::Fail | Status::Warn | Status::Error)
    }

    /// The status of a failed check with `severity`.
    pub(crate) fn failed(severity: Severity) -> Status {
        match severity {
            Severity::Fail => Status::Fail,
            Severity::Warn => Status::Warn,
        }
    }
}

/// The gate's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Outcome {
    Pass,
    Regression,
    Error,
}

impl Outcome {
    /// The outcome as the JSON report and JUnit's properties spell it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Regression => "regression",
            Outcome::Error => "error",
        }
    }

    /// The outcome as a headline shouts it: `PASS`, `REGRESSION`, `ERROR`.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Regression => "REGRESSION",
            Outcome::Error => "ERROR",
        }
    }

    /// The worse of two outcomes (error, then regression, then pass): the
    /// outcome of several gates together, a suite's of its workloads'.
    pub(crate) fn worst(self, other: Outcome) -> Outcome {
        match (self, other) {
            (Outcome::Error, _) | (_, Outcome::Error) => Outcome::Error,
            (Outcome::Regression, _) | (_, Outcome::Regression) => Outcome::Regression,
            _ => Outcome::Pass,
        }
    }

    /// The process exit code for this outcome.
    pub(crate) fn exit_code(self) -> i32 {
        match self {
            Outcome::Pass => exit::PASS,
            Outcome::Regression => exit::REGRESSION,
            Outcome::Error => exit::ERROR,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Outcome;

    #[test]
    fn an_outcome_is_spelled_as_it_is_serialized() {
        for o in [Outcome::Pass, Outcome::Regression, Outcome::Error] {
            assert_eq!(serde_json::to_value(o).ok(), Some(o.as_str().into()));
            assert_eq!(o.title(), o.as_str().to_uppercase());
        }
    }
}
