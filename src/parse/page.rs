//! What people save as "the ncu CSV": finding the header in it.
//!
//! `ncu --csv ./app > out.csv` writes whatever the app and ncu print before
//! the CSV: program output, Python tracebacks, `==PROF==`, `==WARNING==` and
//! `==ERROR==` lines, blank lines, text in any language. Windows tools add a
//! UTF-8 byte-order mark and CRLF line ends. This module reads such a file
//! into memory (details pages and metrics-only exports are small; raw pages
//! stream through [`super::raw`] instead), skips everything before the first
//! row that names ncu's columns, and says which page that row belongs to.

use super::scan::RowSource;
use crate::error::{Error, Result};
use crate::model::ExportPage;
use std::path::Path;

/// The UTF-8 byte-order mark.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Lines looked at for a header before giving up (preambles seen in real
/// exports run to a few hundred lines).
const MAX_PREAMBLE_LINES: usize = 100_000;

/// The raw page's kernel-name column, one of the two that identify it.
pub(super) const KERNEL_NAME: &str = "Kernel Name";

/// Recognizes the page from its header row.
pub(crate) fn detect_page(header: &[String]) -> Option<ExportPage> {
    let has = |name: &str| header.iter().any(|h| h == name);
    if has("Section Name") && has("Metric Name") && has("Metric Value") {
        Some(ExportPage::Details)
    } else if has("ID") && has(KERNEL_NAME) {
        Some(ExportPage::Raw)
    } else {
        None
    }
}

/// Where the header row of a per-kernel summary (`ncu --csv --print-summary
/// per-kernel`) starts in `data`, when the first CSV row is one.
pub(crate) fn summary_start(data: &[u8]) -> Option<usize> {
    let mut start = 0;
    for _ in 0..MAX_PREAMBLE_LINES {
        if start >= data.len() {
            return None;
        }
        let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
        let line = &data[start..end];
        let line = line.strip_prefix(BOM).unwrap_or(line);
        if line.starts_with(b"\"") {
            let fields = header_fields(line);
            return super::summary::is_summary(&fields)
                .then(|| line.as_ptr() as usize - data.as_ptr() as usize);
        }
        start = end + 1;
    }
    None
}

/// Whether `header` is a table copied from the Nsight Compute GUI's Summary
/// page (one row per result, names in `Function Name`/`Demangled Name`, values
/// rounded for reading), not a command-line export.
fn is_gui_summary(header: &[String]) -> bool {
    let has = |name: &str| header.iter().any(|h| h == name);
    has("ID") && (has("Demangled Name") || has("Function Name")) && !has(KERNEL_NAME)
}

/// A CSV export with its preamble removed.
pub(crate) struct Located<'a> {
    /// The bytes from the header row on.
    pub(crate) csv: &'a [u8],
    pub(crate) page: ExportPage,
    /// Lines skipped before the header (the preamble test reads it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) skipped: usize,
}

/// Finds the header row of an ncu CSV export in `data`.
pub(crate) fn locate<'a>(path: &Path, data: &'a [u8]) -> Result<Located<'a>> {
    let bad = |problem: String| Error::malformed(crate::error::FileKind::Export, path, problem);
    let data = data.strip_prefix(BOM).unwrap_or(data);
    if data.is_empty() {
        return Err(Error::export(path, crate::error::ExportError::Empty));
    }
    let mut start = 0;
    let mut line_no = 0;
    // What ncu said when it wrote no CSV: its first `==ERROR==` line, or
    // "No kernels were profiled"; where it wrote its results instead
    // (`==PROF== Report: R.ncu-rep`); whether this is its text report.
    let mut complaint: Option<String> = None;
    let mut report: Option<String> = None;
    let mut text_report = false;
    while start < data.len() && line_no < MAX_PREAMBLE_LINES {
        let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
        let line = &data[start..end];
        let line = line.strip_prefix(BOM).unwrap_or(line);
        if line.contains(&0) {
            return Err(Error::export(path, crate::error::ExportError::Binary));
        }
        if complaint.is_none()
            && (line.starts_with(b"==ERROR==")
                || memchr::memmem::find(line, b"No kernels were profiled").is_some())
        {
            complaint = Some(String::from_utf8_lossy(line.trim_ascii_end()).into_owned());
        }
        if let Some(rep) = line.strip_prefix(b"==PROF== Report: ") {
            report = Some(String::from_utf8_lossy(rep.trim_ascii()).into_owned());
        }
        text_report |= line.trim_ascii_start().starts_with(b"Section: ");
        if line.starts_with(b"\"") {
            let fields = header_fields(line);
            if is_gui_summary(&fields) {
                return Err(Error::export(
                    path,
                    crate::error::ExportError::GuiSummaryPage,
                ));
            }
            if let Some(page) = detect_page(&fields) {
                let offset = line.as_ptr() as usize - data.as_ptr() as usize;
                return Ok(Located {
                    csv: &data[offset..],
                    page,
                    skipped: line_no,
                });
            }
        }
        start = end + 1;
        line_no += 1;
    }
    if let Some(said) = complaint {
        return Err(Error::export(
            path,
            crate::error::ExportError::NcuComplained {
                lines: line_no,
                said: said.to_string(),
            },
        ));
    }
    if let Some(rep) = report {
        return Err(Error::export(
            path,
            crate::error::ExportError::ResultsInReport {
                lines: line_no,
                report: rep.to_string(),
            },
        ));
    }
    if text_report {
        return Err(Error::export(
            path,
            crate::error::ExportError::TextReport { lines: line_no },
        ));
    }
    Err(bad(format!(
        "no ncu CSV header in {line_no} lines (no row naming \"ID\" and \"Kernel Name\", or \"Section Name\", \"Metric Name\" and \"Metric Value\")"
    )))
}

/// The fields of one header line (quoted, comma-separated, no embedded newlines).
fn header_fields(line: &[u8]) -> Vec<String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line);
    match reader.records().next() {
        Some(Ok(r)) => r
            .iter()
            .map(|f| f.trim_end_matches('\r').to_string())
            .collect(),
        _ => Vec::new(),
    }
}

/// Reads the first CSV row, skipping `==PROF==`-style lines that ncu prints
/// before the CSV when `--csv` output was captured from a profiling run.
pub(super) fn first_csv_row(scanner: &mut impl RowSource, path: &Path) -> Result<Vec<String>> {
    let io = |source: std::io::Error| Error::read(crate::error::FileKind::Export, path, source);
    loop {
        let Some(row) = scanner.next_row().map_err(io)? else {
            return Err(Error::export(path, crate::error::ExportError::Empty));
        };
        if row.is_blank() || row.is_ncu_message() {
            continue;
        }
        if row.is_binary() {
            return Err(Error::export(path, crate::error::ExportError::Binary));
        }
        return Ok(row.strings());
    }
}

/// True when `metric` is in the export at `path` but every value of it is
/// `n/a` (ncu could not collect it on that GPU or with that ncu): the rows or
/// the column are there, the numbers are not. False when the file cannot be
/// read again (standard input) or the metric has a number anywhere.
pub(crate) fn only_not_available(path: &Path, metric: &str) -> bool {
    // Read again only when it can be: a named pipe was read once already.
    if !crate::io::bounded::can_reopen(path) {
        return false;
    }
    let Ok(data) = crate::io::bounded::read_io(path) else {
        return false;
    };
    let Ok(located) = locate(path, &data) else {
        return false;
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(located.csv);
    let mut records = reader.byte_records().filter_map(|r| r.ok());
    let Some(header) = records.next() else {
        return false;
    };
    let col = |name: &str| header.iter().position(|h| h == name.as_bytes());
    // Details page: the metric's rows; raw page: its column, after the units row.
    let (value, name) = match located.page {
        ExportPage::Details | ExportPage::Summary => {
            match (col("Metric Value"), col("Metric Name")) {
                (Some(v), Some(n)) => (v, Some(n)),
                _ => return false,
            }
        }
        ExportPage::Raw => match col(metric) {
            Some(v) => (v, None),
            None => return false,
        },
        ExportPage::Nvbench => return false,
    };
    let mut na = 0usize;
    for (i, record) in records.enumerate() {
        if located.page == ExportPage::Raw && i == 0 {
            continue; // the units row
        }
        if let Some(n) = name
            && record.get(n) != Some(metric.as_bytes())
        {
            continue;
        }
        match record.get(value).map(<[u8]>::trim_ascii) {
            Some(b"n/a") => na += 1,
            Some(_) => return false,
            None => {}
        }
    }
    na > 0
}

/// An export as [`read_run`](super::read_run) reads it when it does not
/// start with a raw page's header: a preamble, then maybe a raw page.
pub(crate) enum Stream<R> {
    /// A raw page: the header line on, streamed.
    Raw(Hashed<R>),
    /// Anything else, read whole (a details page is matched across its rows).
    Whole(Vec<u8>),
}

/// An export from a raw page's header line on, hashing every byte of the
/// input (the preamble too) as it is read: the SHA-256 of the whole file or stream.
pub(crate) struct Hashed<R> {
    header: std::io::Cursor<Vec<u8>>,
    rest: std::io::BufReader<R>,
    hasher: sha2::Sha256,
}

impl<R> Hashed<R> {
    /// SHA-256 of everything read so far, hex.
    pub(crate) fn sha256_hex(&self) -> String {
        use sha2::Digest;
        crate::format::hex(&self.hasher.clone().finalize())
    }
}

impl<R: std::io::Read> std::io::Read for Hashed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use sha2::Digest;
        let n = match self.header.read(buf)? {
            0 => {
                let n = self.rest.read(buf)?;
                self.hasher.update(&buf[..n]);
                n
            }
            n => n,
        };
        Ok(n)
    }
}

/// Reads `input` up to the first CSV header line (at most the preamble
/// lines [`locate`] looks through): a raw page's header streams on from
/// there, anything else is read whole. A pipe of any length, or a file with
/// `==PROF==` lines before the CSV, is read in constant memory.
pub(crate) fn raw_or_whole<R: std::io::Read>(path: &Path, input: R) -> Result<Stream<R>> {
    use sha2::Digest;
    use std::io::{BufRead, Read};
    let err = |source| Error::read(crate::error::FileKind::Export, path, source);
    let mut rest = std::io::BufReader::with_capacity(1 << 16, input);
    let mut head = Vec::new();
    let mut lines = 0;
    loop {
        let start = head.len();
        let n = rest.read_until(b'\n', &mut head).map_err(err)?;
        lines += 1;
        let line = head[start..].strip_prefix(BOM).unwrap_or(&head[start..]);
        let raw = line.starts_with(b"\"")
            && detect_page(&header_fields(line.trim_ascii_end())) == Some(ExportPage::Raw);
        if raw && line.ends_with(b"\n") {
            // What `locate` would say of the preamble (ncu's errors) it says here too.
            let located = locate(path, &head)?;
            if located.page == ExportPage::Raw {
                let mut hasher = sha2::Sha256::new();
                hasher.update(&head);
                let header = head[head.len() - located.csv.len()..].to_vec();
                return Ok(Stream::Raw(Hashed {
                    header: std::io::Cursor::new(header),
                    rest,
                    hasher,
                }));
            }
        }
        if n == 0 || lines >= MAX_PREAMBLE_LINES || line.starts_with(b"\"") {
            break;
        }
    }
    rest.read_to_end(&mut head).map_err(err)?;
    Ok(Stream::Whole(head))
}

/// Reads a file, or standard input for `-`, whole.
pub(crate) fn read_all(path: &Path) -> Result<Vec<u8>> {
    let read = |path: &Path| {
        if path == Path::new("-") {
            let mut buf = Vec::new();
            let mut stdin = crate::io::bounded::Bounded::new(std::io::stdin().lock());
            std::io::Read::read_to_end(&mut stdin, &mut buf).map(|_| buf)
        } else {
            crate::io::bounded::read_io(path)
        }
    };
    read(path).map_err(|source| Error::read(crate::error::FileKind::Export, path, source))
}

/// An export cut short ends without a line break (ncu ends every row with
/// one); a details page cut mid-row would drop a finding or a metric.
pub(crate) fn check_complete(path: &Path, data: &[u8]) -> Result<()> {
    let trimmed = data.trim_ascii_end();
    let ends_cleanly = data.len() > trimmed.len() && data[trimmed.len()..].contains(&b'\n');
    if trimmed.is_empty() || ends_cleanly {
        return Ok(());
    }
    let mut quotes = 0usize;
    for &b in trimmed {
        quotes += usize::from(b == b'"');
    }
    if quotes % 2 == 1 || !trimmed.ends_with(b"\"") && !trimmed.ends_with(b",") {
        return Err(Error::export(path, crate::error::ExportError::Truncated));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preambles_boms_and_crlf_are_skipped() {
        let data = "\u{feff}hello from the app\r\n\r\n==PROF== Connected to process 1\r\nTraceback (most recent call last):\r\n  ¿qué? 日本語\r\n\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\r\n\"0\",\"k\",\"s\",\"m\",\"ns\",\"1\"\r\n";
        let located = locate(Path::new("x"), data.as_bytes()).unwrap();
        assert_eq!(located.page, ExportPage::Details);
        assert_eq!(located.skipped, 5);
        assert!(located.csv.starts_with(b"\"ID\""));
        assert!(locate(Path::new("x"), b"just text\n").is_err());
        assert!(locate(Path::new("x"), b"").is_err());
        assert!(locate(Path::new("x"), b"\"ID\0\"").is_err());
    }

    #[test]
    fn an_export_without_csv_quotes_what_ncu_said() {
        let data = b"app output\n==ERROR== Option '--section X' did not match any section.\n==ERROR== Use --list-sections to see the list of available sections.\n";
        let Err(e) = locate(Path::new("x"), data) else {
            panic!("no header accepted")
        };
        let text = e.to_string();
        assert!(
            text.contains("ncu said: ==ERROR== Option '--section X' did not match any section."),
            "{text}"
        );
        let data = b"==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n";
        let Err(e) = locate(Path::new("x"), data) else {
            panic!("no header accepted")
        };
        assert!(e.to_string().contains("No kernels were profiled"), "{e}");
        let data = b"==PROF== Profiling \"k\" - 0: 0%....50%....100% - 9 passes\n==PROF== Disconnected from process 7\n==PROF== Report: /tmp/r.ncu-rep\n";
        let Err(e) = locate(Path::new("x"), data) else {
            panic!("no header accepted")
        };
        assert!(
            e.to_string()
                .contains("ncu wrote its results to /tmp/r.ncu-rep"),
            "{e}"
        );
        let data = b"[7] app@127.0.0.1\n  k() (1, 1, 1)x(32, 1, 1), Context 1, Stream 7, Device 0, CC 8.6\n    Section: GPU Speed Of Light Throughput\n    Duration  us  99.68\n";
        let Err(e) = locate(Path::new("x"), data) else {
            panic!("no header accepted")
        };
        assert!(e.to_string().contains("ncu's text report"), "{e}");
    }

    #[test]
    fn a_row_cut_short_is_refused() {
        assert!(check_complete(Path::new("x"), b"\"a\",\"b\"\n\"1\",\"2\"\n").is_ok());
        assert!(check_complete(Path::new("x"), b"\"a\",\"b\"\n\"1\",\"2\"").is_ok());
        assert!(check_complete(Path::new("x"), b"\"a\",\"b\"\n\"1\",\"tr").is_err());
        assert!(check_complete(Path::new("x"), b"\"a\",\"b\"\n\"1\",\"2\"\n\"3").is_err());
    }
}
