//! `--shard K/N`: which workloads runner K of N profiles. Every runner
//! computes the same split from the same inputs (the workload names and the
//! costs recorded in the baselines), so no coordination is needed.
//!
//! The split is longest-processing-time-first: workloads by cost, largest
//! first (ties by name), each to the shard with the least load so far (ties to
//! the lowest shard). A workload with no recorded cost counts as the mean of
//! the known costs (1 s when none is known), so new workloads spread by name.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Shard `index` of `count` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = Error;

    fn from_str(s: &str) -> Result<Shard> {
        let bad = || Error::Usage {
            message: format!("--shard {s}: expected K/N with 1 ≤ K ≤ N (e.g. 2/4)"),
            hint: "run shard 1/N … N/N on N runners, then `ncugate merge` their JSON reports"
                .into(),
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Shard {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Shard, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(|e: Error| serde::de::Error::custom(e))
    }
}

/// Cost assumed for every workload when none has a recorded cost.
const UNKNOWN_COST: f64 = 1.0;

/// The split: for each shard (index 0 = shard 1), its workload names in the
/// order given. `workloads` is `(name, recorded cost in seconds)`.
pub fn plan(workloads: &[(String, Option<f64>)], count: u32) -> Vec<Vec<String>> {
    let count = count.max(1) as usize;
    let known: Vec<f64> = workloads
        .iter()
        .filter_map(|(_, c)| c.filter(|c| c.is_finite() && *c >= 0.0))
        .collect();
    let fill = if known.is_empty() {
        UNKNOWN_COST
    } else {
        known.iter().sum::<f64>() / known.len() as f64
    };
    let mut order: Vec<(usize, f64)> = workloads
        .iter()
        .enumerate()
        .map(|(i, (_, c))| (i, c.filter(|c| c.is_finite() && *c >= 0.0).unwrap_or(fill)))
        .collect();
    order.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| workloads[a.0].0.cmp(&workloads[b.0].0))
    });
    let mut load = vec![0.0_f64; count];
    let mut member = vec![usize::MAX; workloads.len()];
    for (i, cost) in order {
        let mut best = 0;
        for s in 1..count {
            if load[s] < load[best] {
                best = s;
            }
        }
        load[best] += cost;
        member[i] = best;
    }
    let mut shards = vec![Vec::new(); count];
    for (i, (name, _)) in workloads.iter().enumerate() {
        shards[member[i]].push(name.clone());
    }
    shards
}

/// The largest shard load of a plan, in the costs' unit (for the simulation).
pub fn makespan(workloads: &[(String, Option<f64>)], shards: &[Vec<String>]) -> f64 {
    shards
        .iter()
        .map(|names| {
            names
                .iter()
                .filter_map(|n| workloads.iter().find(|(w, _)| w == n))
                .map(|(_, c)| c.unwrap_or(UNKNOWN_COST))
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(list: &[(&str, Option<f64>)]) -> Vec<(String, Option<f64>)> {
        list.iter().map(|(n, c)| (n.to_string(), *c)).collect()
    }

    #[test]
    fn parses_k_of_n() {
        assert_eq!(
            "2/4".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 4 }
        );
        for bad in ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn longest_first_to_the_least_loaded_shard() {
        let list = w(&[
            ("a", Some(5.0)),
            ("b", Some(4.0)),
            ("c", Some(3.0)),
            ("d", Some(3.0)),
            ("e", Some(2.0)),
            ("f", Some(2.0)),
        ]);
        // a→1, b→2, c→2 (4 < 5), d→1 (5 < 7), e→2 (7 < 8), f→1 (8 < 9): loads 10 and 9.
        let p = plan(&list, 2);
        assert_eq!(p[0], ["a", "d", "f"]);
        assert_eq!(p[1], ["b", "c", "e"]);
        assert_eq!(makespan(&list, &p), 10.0);
    }

    #[test]
    fn unknown_costs_and_ties_go_by_name_whatever_the_input_order() {
        let list = w(&[("c", None), ("a", None), ("b", None), ("d", None)]);
        let p = plan(&list, 3);
        assert_eq!(p, vec![vec!["a", "d"], vec!["b"], vec!["c"]]);
        let mut reversed = list.clone();
        reversed.reverse();
        let q = plan(&reversed, 3);
        for (x, y) in p.iter().zip(&q) {
            let (mut x, mut y) = (x.clone(), y.clone());
            x.sort();
            y.sort();
            assert_eq!(x, y);
        }
    }

    #[test]
    fn more_shards_than_workloads_leaves_shards_empty() {
        let p = plan(&w(&[("a", Some(1.0))]), 3);
        assert_eq!(p[0], ["a"]);
        assert!(p[1].is_empty() && p[2].is_empty());
    }
}
