//! The two NVTX cells of a result (`ncu --nvtx`), as ncu prints them.
//!
//! A result's `NvtxState` holds the push/pop stacks of the threads and the
//! open start/end ranges when it was profiled. ncu prints the launching
//! thread's stack as its thread ID and a space, then ` "Domain:Range:PL_Type:
//! PL_Value:CLR_Type:Color:Msg_Type:Msg" ` per level, outermost first; the
//! open start/end ranges the same way with each range's ID first; an empty
//! stack or no open range is an empty cell. A range pushed with no attributes
//! prints `none` in its six attribute fields. A range with attributes
//! (payload, color or message) is refused as unsupported: no recording shows
//! how ncu spells them, and `ncu --import` can still read such a report.

use std::collections::HashMap;

use super::schema::NvtxState;

/// Why a result's NVTX state cannot be printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NvtxError {
    /// A range has attributes (payload, color or message): unsupported.
    Attributes,
    /// A range names a domain the state does not list: corrupt.
    UnknownDomain(u64),
}

impl NvtxError {
    /// What went wrong, in words.
    pub(crate) fn message(&self) -> String {
        match self {
            NvtxError::Attributes => "an NVTX range has attributes (payload, color or message), which this reader does not print yet".into(),
            NvtxError::UnknownDomain(id) => {
                format!("an NVTX range names domain {id}, which the report does not list")
            }
        }
    }
}

/// The push/pop and start/end cells of one result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct NvtxCells {
    pub(crate) push_pop: String,
    pub(crate) start_end: String,
}

const NO_ATTRIBUTES: &str = "none:none:none:none:none:none";

/// The cells of `state` for a result launched by thread `thread`.
pub(crate) fn cells(state: &NvtxState, thread: Option<u32>) -> Result<NvtxCells, NvtxError> {
    // One map per state: a lookup per range in the domain list would make a
    // state with many domains and many ranges quadratic. The first listing of
    // a domain ID wins, as a search of the list would find it.
    let mut names: HashMap<Option<u64>, Option<&str>> = HashMap::with_capacity(state.domains.len());
    for d in &state.domains {
        names.entry(d.id).or_insert(d.name.as_deref());
    }
    let domain = |id: Option<u64>| -> Result<&str, NvtxError> {
        names
            .get(&id)
            .copied()
            .flatten()
            .ok_or(NvtxError::UnknownDomain(id.unwrap_or_default()))
    };
    let plain = |attributes: &Option<Vec<u8>>| match attributes {
        Some(_) => Err(NvtxError::Attributes),
        None => Ok(()),
    };
    let mut push_pop = String::new();
    if let Some(t) = state
        .threads
        .iter()
        .find(|t| t.tid.is_some() && t.tid == thread)
    {
        for d in &t.push_pop_domains {
            for range in &d.stack {
                plain(&range.attributes)?;
                let name = range.name.as_deref().unwrap_or_default();
                push_pop.push_str(&format!(" \"{}:{name}:{NO_ATTRIBUTES}\" ", domain(d.id)?));
            }
        }
        if !push_pop.is_empty() {
            push_pop = format!("{} {push_pop}", t.tid.unwrap_or_default());
        }
    }
    let mut start_end = String::new();
    for d in &state.start_end_domains {
        for range in &d.ranges {
            plain(&range.attributes)?;
            let name = range.name.as_deref().unwrap_or_default();
            start_end.push_str(&format!(
                " \"{}:{}:{name}:{NO_ATTRIBUTES}\" ",
                range.id.unwrap_or_default(),
                domain(d.id)?
            ));
        }
    }
    Ok(NvtxCells {
        push_pop,
        start_end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::ncu_rep::schema::{
        NvtxDomain, NvtxPushPopDomain, NvtxPushPopRange, NvtxThread,
    };

    fn state(attributes: Option<Vec<u8>>, domain: u64) -> NvtxState {
        NvtxState {
            domains: vec![NvtxDomain {
                id: Some(0),
                name: Some("<default domain>".into()),
            }],
            threads: vec![NvtxThread {
                tid: Some(7),
                push_pop_domains: vec![NvtxPushPopDomain {
                    id: Some(domain),
                    stack: vec![NvtxPushPopRange {
                        name: Some("train".into()),
                        attributes,
                    }],
                }],
            }],
            start_end_domains: Vec::new(),
        }
    }

    #[test]
    fn cells_as_ncu_prints_them() {
        let got = cells(&state(None, 0), Some(7)).expect("cells");
        assert_eq!(
            got.push_pop,
            "7  \"<default domain>:train:none:none:none:none:none:none\" "
        );
        assert_eq!(got.start_end, "");
        // Another thread's stack is not this launch's.
        assert_eq!(cells(&state(None, 0), Some(8)).expect("cells").push_pop, "");
    }

    #[test]
    fn attributes_are_unsupported_and_unknown_domains_corrupt() {
        assert_eq!(
            cells(&state(Some(vec![8, 1]), 0), Some(7)),
            Err(NvtxError::Attributes)
        );
        assert_eq!(
            cells(&state(None, 3), Some(7)),
            Err(NvtxError::UnknownDomain(3))
        );
    }

    #[test]
    fn domains_are_looked_up_by_id_first_listing_first() {
        // Many domains and a stack of many ranges: one map, not a search of
        // the list per range. The first listing of a repeated ID wins.
        let mut s = state(None, 0);
        s.domains = (1..=5_000u64)
            .map(|id| NvtxDomain {
                id: Some(id),
                name: Some(format!("d{id}")),
            })
            .collect();
        s.domains.push(NvtxDomain {
            id: Some(1),
            name: Some("later".into()),
        });
        s.threads[0].push_pop_domains[0].id = Some(5_000);
        s.threads[0].push_pop_domains[0].stack = vec![
            NvtxPushPopRange {
                name: Some("r".into()),
                attributes: None,
            };
            5_000
        ];
        let got = cells(&s, Some(7)).expect("cells");
        assert_eq!(got.push_pop.matches("\"d5000:r:").count(), 5_000);
        s.threads[0].push_pop_domains[0].id = Some(1);
        let got = cells(&s, Some(7)).expect("cells");
        assert!(got.push_pop.contains("\"d1:r:") && !got.push_pop.contains("later"));
        s.threads[0].push_pop_domains[0].id = Some(0);
        assert_eq!(cells(&s, Some(7)), Err(NvtxError::UnknownDomain(0)));
    }
}
