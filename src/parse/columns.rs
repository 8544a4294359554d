//! The columns of an export's header row that the readers of every page
//! share: what makes a header unreadable whatever the page (a column named
//! twice, the units missing). A leaf: the page readers use it, it uses none.

use crate::error::{Error, Result};
use std::path::Path;

/// Why a details page or summary without its `Metric Unit` column is refused.
pub(crate) const NO_UNIT_COLUMN: &str = "no \"Metric Unit\" column: ncu writes each value in a unit of its own row (Mbyte on one, Gbyte on another), so without it the values cannot be compared";

/// `Err` when `header` names a column that `read` says is read more than
/// once. ncu names each column once; a reader that took the first of two
/// copies let whichever copy came first decide the verdict (a better first
/// `Metric Value` hid a regression).
pub(crate) fn no_repeated_column(
    path: &Path,
    header: &[String],
    read: impl Fn(&str) -> bool,
) -> Result<()> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, name) in header.iter().enumerate() {
        if !read(name) {
            continue;
        }
        if let Some(first) = seen.insert(name, i) {
            return Err(Error::malformed(
                crate::error::FileKind::Export,
                path,
                format!(
                    "the header names the column \"{}\" twice (fields {} and {}): which one holds the data cannot be told",
                    crate::text::escape::printable(name.clone()),
                    first + 1,
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}
