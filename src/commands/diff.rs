//! `ncugate baseline diff OLD NEW`.

use crate::baseline::{self, Baseline};
use crate::error::Result;
use crate::gated::Text;
use crate::rules::Thresholds;
use crate::status::Outcome;
use std::path::Path;

/// `ncugate baseline diff OLD NEW`: a regression when they differ (exit 1, like `diff`).
pub fn diff(old: &Path, new: &Path, file_diff: bool) -> Result<Text> {
    let read = |p: &Path| crate::io::bounded::read_to_string(crate::error::FileKind::Baseline, p);
    let (a, b) = (Baseline::load(old)?, Baseline::load(new)?);
    let (ta, tb) = (read(old)?, read(new)?);
    // The rules the new baseline was recorded for, when that file is at hand;
    // else the built-in ones.
    let thresholds = match Path::new(&b.thresholds) {
        p if p.is_file() => Thresholds::load(Some(p)).ok(),
        _ => Thresholds::builtin().ok(),
    };
    Ok(Text {
        outcome: if ta == tb {
            Outcome::Pass
        } else {
            Outcome::Regression
        },
        ..Text::pass(baseline::diff::render(
            &a,
            &b,
            &ta,
            &tb,
            thresholds.as_ref(),
            file_diff,
        ))
    })
}
