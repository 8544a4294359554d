//! The explain stage of `check`: which kernels it names source lines for
//! (`--explain`), and the clap side of the domain's
//! [`ExplainMode`](crate::compare::explain::ExplainMode).

use super::value_enum;
use crate::compare::explain::ExplainMode;

value_enum!(ExplainMode {
    OnFail = "on-fail": "The failing kernels (the worst first, at most --explain-kernels)",
    Always = "always": "Every kernel with a source profile on both sides",
    Never = "never": "None",
});
