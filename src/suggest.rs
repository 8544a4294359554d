//! "Did you mean …?": the known name closest to a mistyped one, for the
//! hints of metric names, workloads and keys. A leaf, so any stage can
//! suggest without depending on the commands.

/// The name among `known` closest to `name`, if one is close enough to be a typo.
pub fn closest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        .filter(|k| *k != name)
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score > 0.9)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}
