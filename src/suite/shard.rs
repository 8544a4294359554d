//! `--shard K/N`: which workloads runner K of N profiles. Every runner
//! computes the same split from the same inputs (the workload names and the
//! costs recorded in the baselines), so no coordination is needed.
//!
//! The split is longest-processing-time-first: workloads by cost, largest
//! first (ties by name), each to the shard with the least load so far (ties to
//! the lowest shard); then, while it shortens the longest shard, a workload of
//! that shard moves to another shard or trades places with a cheaper one there
//! (candidates in shard and name order, the best kept). A workload with no
//! recorded cost counts as the mean of the known costs (1 s when none is known),
//! so new workloads spread by name.
//!
//! With skipping on, the workloads a `--planned-skips` file names (those
//! `ncugate check --predict-skips` found unchanged) count 0 ([`with_skips`]),
//! so the shards balance the work that runs. The file is the plan's only
//! input beside the names and the baselines: every runner given the same
//! file computes the same plan, and the shards stay a partition whatever
//! each runner's own verdict cache holds (a runner's digest may differ:
//! its GPU, driver, build or cache); a workload predicted to skip that
//! does run on its shard only costs balance, never a run or a drop.

/// Cost assumed for every workload when none has a recorded cost.
const UNKNOWN_COST: f64 = 1.0;

/// Cost of a workload predicted to skip: about nothing (its digest, a few
/// milliseconds), yet not 0, so that skipped workloads spread over the
/// shards by name instead of all joining the first (a prediction that
/// proves wrong then costs one shard less).
const SKIPPED_COST: f64 = 0.001;

/// The split: for each shard that gets work (index 0 = shard 1), its workload
/// names in the order given; shards past the returned ones get none (at most
/// one shard per workload is built, so `--shard 1/4294967295` costs nothing).
/// `workloads` is `(name, recorded cost in seconds)`.
pub fn plan(workloads: &[(String, Option<f64>)], count: u32) -> Vec<Vec<String>> {
    let count = (count.max(1) as usize).min(workloads.len());
    if count == 0 {
        return Vec::new();
    }
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
    let costs: Vec<f64> = {
        let mut c = vec![0.0; workloads.len()];
        for (i, (_, cost)) in workloads.iter().enumerate() {
            c[i] = cost.filter(|c| c.is_finite() && *c >= 0.0).unwrap_or(fill);
        }
        c
    };
    let mut by_name: Vec<usize> = (0..workloads.len()).collect();
    by_name.sort_by(|a, b| workloads[*a].0.cmp(&workloads[*b].0));
    refine(&mut member, &mut load, &costs, &by_name);
    let mut shards = vec![Vec::new(); count];
    for (i, (name, _)) in workloads.iter().enumerate() {
        shards[member[i]].push(name.clone());
    }
    shards
}

/// Improves the split while the longest shard gets shorter: the move of one of
/// its workloads to another shard, or a trade with a cheaper workload there,
/// that leaves both shards below its old load, the lowest such pair max kept.
fn refine(member: &mut [usize], load: &mut [f64], costs: &[f64], by_name: &[usize]) {
    const EPS: f64 = 1e-9;
    // Each step lowers the longest shard and keeps the other below it: it ends; the cap is a guard.
    for _ in 0..10_000 {
        let mut top = 0;
        for s in 1..load.len() {
            if load[s] > load[top] + EPS {
                top = s;
            }
        }
        // (resulting max of the two shards, workload moved out, workload moved in, target shard)
        let mut best: Option<(f64, usize, Option<usize>, usize)> = None;
        for &a in by_name.iter().filter(|&&a| member[a] == top) {
            for s in (0..load.len()).filter(|&s| s != top) {
                let mut consider = |delta: f64, b: Option<usize>| {
                    let pair = (load[top] - delta).max(load[s] + delta);
                    if delta > EPS
                        && pair < load[top] - EPS
                        && best.is_none_or(|(p, ..)| pair < p - EPS)
                    {
                        best = Some((pair, a, b, s));
                    }
                };
                consider(costs[a], None);
                for &b in by_name.iter().filter(|&&b| member[b] == s) {
                    consider(costs[a] - costs[b], Some(b));
                }
            }
        }
        let Some((_, a, b, s)) = best else {
            return;
        };
        let delta = costs[a] - b.map_or(0.0, |b| costs[b]);
        load[top] -= delta;
        load[s] += delta;
        member[a] = s;
        if let Some(b) = b {
            member[b] = top;
        }
    }
}

/// The costs to plan on: the workloads named in `skipped` at
/// [`SKIPPED_COST`] (about 0), the others' as recorded; an unknown cost is
/// the mean of the known costs of the workloads that will run (not lowered
/// by the skipped ones'), else [`UNKNOWN_COST`].
pub fn with_skips(
    workloads: &[(String, Option<f64>)],
    skipped: &[String],
) -> Vec<(String, Option<f64>)> {
    let runs = |name: &String| !skipped.contains(name);
    let known: Vec<f64> = workloads
        .iter()
        .filter(|(n, _)| runs(n))
        .filter_map(|(_, c)| c.filter(|c| c.is_finite() && *c >= 0.0))
        .collect();
    let fill = if known.is_empty() {
        UNKNOWN_COST
    } else {
        known.iter().sum::<f64>() / known.len() as f64
    };
    workloads
        .iter()
        .map(|(n, c)| {
            let cost = if runs(n) {
                c.filter(|c| c.is_finite() && *c >= 0.0).unwrap_or(fill)
            } else {
                SKIPPED_COST
            };
            (n.clone(), Some(cost))
        })
        .collect()
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
    fn longest_first_to_the_least_loaded_shard() {
        let list = w(&[
            ("a", Some(5.0)),
            ("b", Some(4.0)),
            ("c", Some(3.0)),
            ("d", Some(3.0)),
            ("e", Some(2.0)),
            ("f", Some(2.0)),
        ]);
        // a→1, b→2, c→2 (4 < 5), d→1 (5 < 7), e→2 (7 < 8), f→1 (8 < 9): loads 10 and 9,
        // and no move or trade shortens shard 1 without making shard 2 as long.
        let p = plan(&list, 2);
        assert_eq!(p[0], ["a", "d", "f"]);
        assert_eq!(p[1], ["b", "c", "e"]);
        assert_eq!(makespan(&list, &p), 10.0);
    }

    #[test]
    fn a_trade_fixes_what_longest_first_gets_wrong() {
        // Longest first: a→1, b→2, c→1, d→2, e→1: loads 7 and 5. Trading a (3) of shard 1 for
        // d (2) of shard 2 gives 6 and 6, the best split.
        let list = w(&[
            ("a", Some(3.0)),
            ("b", Some(3.0)),
            ("c", Some(2.0)),
            ("d", Some(2.0)),
            ("e", Some(2.0)),
        ]);
        let p = plan(&list, 2);
        assert_eq!(makespan(&list, &p), 6.0, "{p:?}");
        assert_eq!(p, vec![vec!["c", "d", "e"], vec!["a", "b"]]);
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

    /// Four of six workloads predicted to skip: the two that run go to
    /// different shards, and every workload is in exactly one shard.
    #[test]
    fn predicted_skips_cost_about_nothing_and_the_shards_balance_the_rest() {
        let list = w(&[
            ("a", Some(9.0)),
            ("b", Some(8.0)),
            ("c", Some(7.0)),
            ("d", Some(2.0)),
            ("e", Some(1.0)),
            ("f", None),
        ]);
        let skipped: Vec<String> = ["a", "b", "c", "e"].map(String::from).to_vec();
        let costs = with_skips(&list, &skipped);
        // f's unknown cost is d's (the mean of what runs), not lowered by the zeros.
        assert_eq!(costs[5], ("f".to_string(), Some(2.0)));
        let p = plan(&costs, 2);
        let with = |n: &str| p.iter().position(|s| s.iter().any(|x| x == n));
        assert_ne!(with("d"), with("f"), "{p:?}");
        // The skipped ones spread by name over both.
        assert_eq!(p, [["a", "c", "d"], ["b", "e", "f"]]);
        assert!((makespan(&costs, &p) - 2.002).abs() < 1e-9, "{p:?}");
        let mut all: Vec<&String> = p.iter().flatten().collect();
        all.sort();
        assert_eq!(all, ["a", "b", "c", "d", "e", "f"]);
        // Planned on recorded costs alone, d and f share a shard.
        let q = plan(&list, 2);
        assert!(
            q.iter()
                .any(|s| s.contains(&"d".to_string()) && s.contains(&"f".to_string()))
        );
    }

    #[test]
    fn more_shards_than_workloads_leaves_shards_empty() {
        let p = plan(&w(&[("a", Some(1.0))]), 3);
        assert_eq!(p, [["a"]], "shards 2 and 3 get nothing");
        // No allocation per shard: a huge count plans as many shards as workloads.
        let p = plan(&w(&[("a", Some(1.0)), ("b", None)]), u32::MAX);
        assert_eq!(p.len(), 2);
        assert!(plan(&[], u32::MAX).is_empty());
    }
}
