//! "Did you mean …?": the known names closest to a mistyped one, for the
//! hints of metric names, workloads, tags and keys. One measure and one
//! threshold for all of them. A leaf, so any stage can suggest without
//! depending on the commands.

/// How alike (Jaro-Winkler, 0 to 1) a known name must be to a typed one to
/// be offered as what was meant.
pub(crate) const THRESHOLD: f64 = 0.9;

/// The names among `known` close enough to `name` to be what was meant,
/// closest first (`name` itself first when it is known).
pub(crate) fn ranked<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut scored: Vec<(f64, &str)> = known
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score > THRESHOLD)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().map(|(_, k)| k).collect()
}

/// The name among `known` closest to `name` (other than `name` itself), if
/// one is close enough to be a typo.
pub(crate) fn closest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    ranked(name, known.filter(|k| *k != name))
        .into_iter()
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_gets_the_name_it_meant_and_a_stranger_nothing() {
        let known = ["train", "infer", "sm__inst_executed.sum"];
        assert_eq!(closest("trian", known.into_iter()), Some("train"));
        assert_eq!(closest("train", known.into_iter()), None);
        assert_eq!(closest("zzz", known.into_iter()), None);
        assert_eq!(
            ranked("sm__inst_exectued.sum", known.into_iter()),
            ["sm__inst_executed.sum"]
        );
    }
}
