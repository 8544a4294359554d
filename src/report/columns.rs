//! Plain-text columns that fit a width: two spaces between columns, no box
//! drawing (it turns into noise in a CI log viewer), and text that does not
//! fit shortened in the middle, where names differ least (`void scale<0>(…,
//! long, int)` keeps its start and its end).

/// The gap between two columns.
const GAP: &str = "  ";
/// A shortened column keeps at least this many characters.
const MIN_SHORT: usize = 12;

/// One column: its width in characters.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub(crate) width: usize,
}

impl Column {
    /// A column as wide as its widest cell (or its title).
    pub(crate) fn new(title: &str, widest_cell: usize) -> Column {
        Column {
            width: widest_cell.max(title.chars().count()),
        }
    }
}

/// Narrows column `flexible` so that all columns fit in `width` (never
/// below `MIN_SHORT` characters: a table wider than a very narrow terminal beats one
/// whose names are unreadable).
pub(crate) fn fit(columns: &mut [Column], flexible: usize, width: usize) {
    let gaps = GAP.len() * columns.len().saturating_sub(1);
    let others: usize = columns
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != flexible)
        .map(|(_, c)| c.width)
        .sum();
    let room = width.saturating_sub(gaps + others).max(MIN_SHORT);
    if let Some(c) = columns.get_mut(flexible) {
        c.width = c.width.min(room);
    }
}

/// One line of cells laid out in `columns`, shortened where they do not fit,
/// without trailing spaces.
pub(crate) fn line(columns: &[Column], cells: &[String]) -> String {
    let mut out = String::new();
    for (i, (column, cell)) in columns.iter().zip(cells).enumerate() {
        if i > 0 {
            out.push_str(GAP);
        }
        let text = shorten_middle(cell, column.width);
        out.push_str(&text);
        let n = text.chars().count();
        if n < column.width {
            out.push_str(&" ".repeat(column.width - n));
        }
    }
    out.trim_end().to_string()
}

/// `text` in at most `width` characters: whole when it fits, else its start,
/// `…` and its end.
pub(crate) fn shorten_middle(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let keep = width - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// `text` wrapped at spaces to lines of at most `width` characters: the first
/// line starts with `first`, the others with `rest`. A word longer than a
/// line (a path, a kernel name) stays whole on a line of its own.
pub(crate) fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let used = line.chars().count();
        let needed = word.chars().count() + usize::from(!empty);
        if !empty && used + needed > width {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_fit_and_keep_their_indent() {
        let text = "sm__inst_executed.sum (sum) [FAIL]: +100.0% (110.10M inst vs baseline 55.05M inst), allowed +20.0%";
        let wrapped = wrap(text, 40, "  ", "      ");
        assert!(
            wrapped.lines().all(|l| l.chars().count() <= 40),
            "{wrapped}"
        );
        assert!(wrapped.starts_with("  sm__inst_executed.sum"));
        assert!(wrapped.lines().skip(1).all(|l| l.starts_with("      ")));
        assert_eq!(
            wrapped.split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
        assert_eq!(wrap("a-very-long-word", 5, "", "  "), "a-very-long-word");
    }

    #[test]
    fn long_names_keep_their_start_and_end() {
        let name = "void scale<0>(const float *, float *, long, int)";
        assert_eq!(shorten_middle(name, 100), name);
        let short = shorten_middle(name, 21);
        assert_eq!(short, "void scale…long, int)");
        assert_eq!(short.chars().count(), 21);
        assert_eq!(shorten_middle("abc", 1), "…");
        assert_eq!(shorten_middle("abc", 0), "");
    }

    #[test]
    fn the_flexible_column_gives_way_and_the_others_stay_whole() {
        let mut columns = vec![Column::new("metric", 70), Column::new("change", 7)];
        fit(&mut columns, 0, 40);
        assert_eq!(columns[0].width, 40 - 2 - 7);
        let text = line(&columns, &["x".repeat(70), "+100.0%".into()]);
        assert_eq!(text.chars().count(), 40);
        assert!(text.ends_with("  +100.0%"), "{text}");
        // Never narrower than MIN_SHORT, even when that overflows.
        fit(&mut columns, 0, 10);
        assert_eq!(columns[0].width, MIN_SHORT);
    }
}
