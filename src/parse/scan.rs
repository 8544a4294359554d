//! A streaming CSV row scanner that only materializes the columns it is asked for.
//!
//! A `--set full` raw export has ~2,200 quoted columns per row and the gate
//! needs a handful. Splitting every field (what `csv::ByteRecord` does) caps
//! throughput at ~400 MB/s; this scanner instead classifies 64 bytes at a time
//! into bit masks of quotes, commas and newlines, derives the "inside quotes"
//! mask with a prefix XOR (the simdjson/simdcsv technique: a doubled `""`
//! toggles twice, so RFC 4180 escapes need no special case), and walks only the
//! separator bits. Wanted fields are recorded as byte spans into the buffer.
//!
//! Memory is one buffer that holds at least one whole row (grown if a row is
//! longer), independent of the file size. Every byte read is also fed to a
//! SHA-256 hasher so the input's digest costs no second pass.
//!
//! ## Why not `simd-csv`
//!
//! `simd-csv` 0.14 (medialab, the engine of `xan`) was measured against this
//! scanner doing the same work: `read_raw_rows` behind the [`RowSource`]
//! interface, once on [`RowScanner`] and once on `simd_csv::ZeroCopyReader`
//! (`benches/record/simd_rows.rs`), with the gate's `set-full` metrics, on a
//! 1,100 MB `--set full` raw export (`cargo bench --bench record`, best of 5,
//! page cache, one core; 2026-12-01 on a 16-vCPU Intel Xeon host with AVX-512
//! and SHA-NI): 942 MB/s and 4.9 MB peak RSS here, 543 MB/s and 5.5 MB with
//! `simd-csv` — 58% of this scanner's throughput (the same 58% on 256 MB),
//! below the 90% a swap would need. Its own record loop, which finds every
//! separator and does nothing else, reads 883 MB/s: slower than this whole
//! parse. The reason is the data: ncu quotes every field, the case its
//! documentation names as its worst (a quote state machine with a `memchr`
//! per ~10-byte field), while this scanner's cost per 64 bytes does not depend
//! on the quoting and it skips whole blocks of unwanted columns. So the
//! scanner stays; the bench keeps measuring both.

use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::io::Read;

const BLOCK: usize = 64;
const INITIAL_BUFFER: usize = 1 << 20;
const UNWANTED: u32 = u32::MAX;

/// Which fields of each row to keep.
pub enum Wanted {
    /// Keep every field (header and units rows).
    All,
    /// Keep the fields at these column indices, in this order (slot = position).
    Columns(Vec<usize>),
}

/// A source of CSV rows that keeps only the fields it is asked for: what the
/// raw-page reader needs from a CSV reader. [`RowScanner`] is the one ncugate
/// uses; `benches/record` implements it over `simd-csv` to measure the two on
/// the same work.
pub trait RowSource {
    /// Sets the fields kept from the next row on.
    fn want(&mut self, wanted: Wanted);
    /// The next row, or `None` at the end of the input.
    fn next_row(&mut self) -> std::io::Result<Option<Row<'_>>>;
    /// The SHA-256 of every byte read so far (the whole input once `next_row` returned `None`).
    fn sha256_hex(&self) -> String;
}

/// Streams rows out of a reader, see the module docs.
pub struct RowScanner<R> {
    reader: R,
    hasher: Sha256,
    buf: Vec<u8>,
    len: usize,
    eof: bool,
    /// Next byte not yet classified.
    pos: usize,
    /// Separator bits of the current block not yet consumed, and its start.
    pending: u64,
    block_base: usize,
    /// All ones while the scan is inside a quoted field at a block boundary.
    in_quote: u64,
    row_start: usize,
    field_start: usize,
    field_idx: usize,
    /// Column index → slot (`UNWANTED` when not kept). Empty in `All` mode.
    slot_of: Vec<u32>,
    all: bool,
    /// Spans of kept fields of the current row, by slot; `None` if the row was shorter.
    spans: Vec<Option<(usize, usize)>>,
    bytes_read: u64,
    /// Newline bits of `pending`.
    pending_nl: u64,
    /// Column index → the smallest wanted column index ≥ it (usize::MAX if none). Columns mode.
    next_stop: Vec<usize>,
}

/// One row: its kept fields and how many fields it had. The fields are
/// either spans of CSV text (a [`RowScanner`]'s buffer) or cells already
/// apart (a report's page, which has no text to split: see
/// [`crate::parse::ncu_rep::rows`]); the readers see the same row either way.
pub struct Row<'a> {
    kept: Kept<'a>,
    /// Number of fields in the row (kept or not).
    pub(crate) fields: usize,
}

/// Where a row's kept fields are.
enum Kept<'a> {
    /// Byte ranges into `buf`, quotes included, by slot; and the row's
    /// bytes, for what is said about the line as a whole.
    Csv {
        buf: &'a [u8],
        spans: &'a [Option<(usize, usize)>],
        line: &'a [u8],
    },
    /// The fields themselves, by slot.
    Cells(&'a [String]),
}

impl<R: Read> RowScanner<R> {
    /// A scanner that keeps every field until [`RowScanner::want`] says otherwise.
    pub fn new(reader: R) -> Self {
        RowScanner {
            reader,
            hasher: Sha256::new(),
            buf: vec![0; INITIAL_BUFFER],
            len: 0,
            eof: false,
            pos: 0,
            pending: 0,
            block_base: 0,
            in_quote: 0,
            row_start: 0,
            field_start: 0,
            field_idx: 0,
            slot_of: Vec::new(),
            all: true,
            spans: Vec::new(),
            bytes_read: 0,
            pending_nl: 0,
            next_stop: Vec::new(),
        }
    }

    /// Sets the fields kept from the next row on.
    pub(crate) fn want(&mut self, wanted: Wanted) {
        match wanted {
            Wanted::All => {
                self.all = true;
                self.slot_of.clear();
                self.spans.clear();
            }
            Wanted::Columns(columns) => {
                self.all = false;
                let width = columns.iter().copied().max().map_or(0, |m| m + 1);
                self.slot_of = vec![UNWANTED; width];
                for (slot, &column) in columns.iter().enumerate() {
                    self.slot_of[column] = slot as u32;
                }
                self.spans = vec![None; columns.len()];
                self.next_stop = vec![usize::MAX; width + 1];
                let mut next = usize::MAX;
                for i in (0..width).rev() {
                    if self.slot_of[i] != UNWANTED {
                        next = i;
                    }
                    self.next_stop[i] = next;
                }
            }
        }
    }

    /// The SHA-256 of every byte read so far (the whole input once `next_row` returned `None`).
    pub(crate) fn sha256_hex(&self) -> String {
        let digest = self.hasher.clone().finalize();
        crate::format::hex(&digest)
    }

    #[cfg(test)]
    /// Bytes read from the input so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The next row, or `None` at the end of the input.
    pub(crate) fn next_row(&mut self) -> std::io::Result<Option<Row<'_>>> {
        loop {
            // Fast path: a block whose separators are all commas ending fields
            // nobody wants is skipped whole (~12 of 2,238 columns are wanted).
            if !self.all
                && self.pending != 0
                && self.field_idx > 0
                && self.pending_nl & self.pending == 0
            {
                let n = self.pending.count_ones() as usize;
                let stop = self
                    .next_stop
                    .get(self.field_idx)
                    .copied()
                    .unwrap_or(usize::MAX);
                if self.field_idx + n <= stop {
                    let last = 63 - self.pending.leading_zeros() as usize;
                    self.field_idx += n;
                    self.field_start = self.block_base + last + 1;
                    self.pending = 0;
                }
            }
            while self.pending != 0 {
                let bit = self.pending.trailing_zeros() as usize;
                self.pending &= self.pending - 1;
                let at = self.block_base + bit;
                self.end_field(at);
                if self.buf[at] == b'\n' {
                    return Ok(Some(self.finish_row(at, at + 1)));
                }
            }
            if self.pos + BLOCK <= self.len {
                self.classify_at(self.pos, BLOCK);
            } else if self.eof {
                if self.pos < self.len {
                    self.classify_at(self.pos, self.len - self.pos);
                } else if self.row_start < self.len {
                    // Last row without a trailing newline.
                    let end = self.len;
                    self.end_field(end);
                    return Ok(Some(self.finish_row(end, end)));
                } else {
                    return Ok(None);
                }
            } else {
                self.refill()?;
            }
        }
    }

    fn classify_at(&mut self, at: usize, n: usize) {
        let mut block = [0u8; BLOCK];
        let masks = if n == BLOCK {
            classify(&self.buf[at..at + BLOCK])
        } else {
            block[..n].copy_from_slice(&self.buf[at..at + n]);
            classify(&block)
        };
        let inside = prefix_xor(masks.quotes) ^ self.in_quote;
        self.in_quote = 0u64.wrapping_sub(inside >> 63);
        self.pending = (masks.commas | masks.newlines) & !inside;
        self.pending_nl = masks.newlines & !inside;
        self.block_base = at;
        self.pos = at + n;
    }

    fn end_field(&mut self, at: usize) {
        if self.field_idx == 0 {
            // A new row: forget the previous row's spans (its `Row` borrow has ended).
            if self.all {
                self.spans.clear();
            } else {
                self.spans.fill(None);
            }
        }
        if self.all {
            self.spans.push(Some((self.field_start, at)));
        } else if let Some(&slot) = self.slot_of.get(self.field_idx)
            && slot != UNWANTED
        {
            self.spans[slot as usize] = Some((self.field_start, at));
        }
        self.field_idx += 1;
        self.field_start = at + 1;
    }

    fn finish_row(&mut self, end: usize, next: usize) -> Row<'_> {
        let start = self.row_start;
        let fields = self.field_idx;
        self.row_start = next;
        self.field_start = next;
        self.field_idx = 0;
        // The spans are cleared when the next row's first field ends (see `end_field`).
        Row::new(&self.buf, &self.spans, fields, &self.buf[start..end])
    }

    fn refill(&mut self) -> std::io::Result<()> {
        if self.row_start > 0 {
            let shift = self.row_start;
            self.buf.copy_within(shift..self.len, 0);
            self.len -= shift;
            self.pos -= shift;
            self.block_base = self.block_base.saturating_sub(shift);
            self.field_start -= shift;
            self.row_start = 0;
            // Spans left from an already returned row may point before the
            // shift; they are cleared before use, so saturating is enough.
            for (s, e) in self.spans.iter_mut().flatten() {
                *s = s.saturating_sub(shift);
                *e = e.saturating_sub(shift);
            }
        }
        if self.len == self.buf.len() {
            let grown = self.buf.len() * 2;
            self.buf.resize(grown, 0);
        }
        let n = self.reader.read(&mut self.buf[self.len..])?;
        self.hasher.update(&self.buf[self.len..self.len + n]);
        self.bytes_read += n as u64;
        self.len += n;
        if n == 0 {
            self.eof = true;
        }
        Ok(())
    }
}

impl<R: Read> RowSource for RowScanner<R> {
    fn want(&mut self, wanted: Wanted) {
        RowScanner::want(self, wanted);
    }

    fn next_row(&mut self) -> std::io::Result<Option<Row<'_>>> {
        RowScanner::next_row(self)
    }

    fn sha256_hex(&self) -> String {
        RowScanner::sha256_hex(self)
    }
}

impl<'a> Row<'a> {
    /// A row of `fields` fields whose bytes are `line`, with the kept fields at
    /// `spans` (by slot: byte ranges into `buf`, quotes included; `None` for a
    /// field the row does not have).
    pub fn new(
        buf: &'a [u8],
        spans: &'a [Option<(usize, usize)>],
        fields: usize,
        line: &'a [u8],
    ) -> Self {
        Row {
            kept: Kept::Csv { buf, spans, line },
            fields,
        }
    }

    /// A row of `fields` fields whose kept fields are `cells`, by slot, as
    /// they are (nothing to unquote).
    pub(crate) fn cells(cells: &'a [String], fields: usize) -> Self {
        Row {
            kept: Kept::Cells(cells),
            fields,
        }
    }

    /// The kept field in `slot` (the column's position in `Wanted::Columns`,
    /// or the column index in `Wanted::All`), unquoted; `None` if the row had
    /// no such field.
    pub(crate) fn field(&self, slot: usize) -> Option<Cow<'a, [u8]>> {
        match self.kept {
            Kept::Csv { buf, spans, .. } => {
                let (s, e) = (*spans.get(slot)?)?;
                Some(unquote(&buf[s..e]))
            }
            Kept::Cells(cells) => cells.get(slot).map(|c| Cow::Borrowed(c.as_bytes())),
        }
    }

    /// Every kept field as text (for the header and units rows).
    pub(crate) fn strings(&self) -> Vec<String> {
        match self.kept {
            Kept::Csv { spans, .. } => (0..spans.len())
                .map(|i| {
                    self.field(i)
                        .map(|f| String::from_utf8_lossy(&f).into_owned())
                        .unwrap_or_default()
                })
                .collect(),
            Kept::Cells(cells) => cells.to_vec(),
        }
    }

    /// True for an empty line.
    pub(crate) fn is_blank(&self) -> bool {
        match self.kept {
            Kept::Csv { line, .. } => {
                self.fields <= 1 && line.iter().all(|b| b.is_ascii_whitespace())
            }
            Kept::Cells(_) => self.fields == 0,
        }
    }

    /// True for a line ncu prints about itself (`==PROF== …`), which a
    /// captured `--csv` run has before its CSV. Cells are never one.
    pub(crate) fn is_ncu_message(&self) -> bool {
        match self.kept {
            Kept::Csv { line, .. } => line.starts_with(b"=="),
            Kept::Cells(_) => false,
        }
    }

    /// True for a row that is not text: a NUL byte, or bytes that are not
    /// UTF-8 (cells are UTF-8 already; a NUL in one is refused as in a file).
    pub(crate) fn is_binary(&self) -> bool {
        match self.kept {
            Kept::Csv { line, .. } => line.contains(&0) || std::str::from_utf8(line).is_err(),
            Kept::Cells(cells) => cells.iter().any(|c| c.as_bytes().contains(&0)),
        }
    }
}

/// Strips a trailing `\r` and the surrounding quotes; `""` becomes `"`.
fn unquote(field: &[u8]) -> Cow<'_, [u8]> {
    let field = field.strip_suffix(b"\r").unwrap_or(field);
    match field {
        [b'"', inner @ .., b'"'] => {
            if memchr::memchr(b'"', inner).is_some() {
                let mut out = Vec::with_capacity(inner.len());
                let mut i = 0;
                while i < inner.len() {
                    out.push(inner[i]);
                    i += if inner[i] == b'"' && inner.get(i + 1) == Some(&b'"') {
                        2
                    } else {
                        1
                    };
                }
                Cow::Owned(out)
            } else {
                Cow::Borrowed(inner)
            }
        }
        _ => Cow::Borrowed(field),
    }
}

struct Masks {
    quotes: u64,
    commas: u64,
    newlines: u64,
}

/// Bit i of each mask is set when byte i of the 64-byte block is that character.
#[cfg(target_arch = "x86_64")]
fn classify(block: &[u8]) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    assert!(block.len() >= BLOCK);
    let (mut quotes, mut commas, mut newlines) = (0u64, 0u64, 0u64);
    // SAFETY: SSE2 is part of the x86_64 baseline, and the assert above keeps
    // the four unaligned 16-byte loads inside `block`.
    unsafe {
        let q = _mm_set1_epi8(b'"' as i8);
        let c = _mm_set1_epi8(b',' as i8);
        let n = _mm_set1_epi8(b'\n' as i8);
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            let shift = 16 * k;
            quotes |= u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)) as u16) << shift;
            commas |= u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, c)) as u16) << shift;
            newlines |= u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, n)) as u16) << shift;
        }
    }
    Masks {
        quotes,
        commas,
        newlines,
    }
}

/// Portable version of the x86_64 classifier.
#[cfg(not(target_arch = "x86_64"))]
fn classify(block: &[u8]) -> Masks {
    classify_portable(block)
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_portable(block: &[u8]) -> Masks {
    let (mut quotes, mut commas, mut newlines) = (0u64, 0u64, 0u64);
    for (i, &b) in block[..BLOCK].iter().enumerate() {
        quotes |= u64::from(b == b'"') << i;
        commas |= u64::from(b == b',') << i;
        newlines |= u64::from(b == b'\n') << i;
    }
    Masks {
        quotes,
        commas,
        newlines,
    }
}

/// Bit i of the result is the XOR of bits 0..=i of `x`: set inside quotes.
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of `data` as the scanner sees it in `All` mode.
    fn scan_all(data: &[u8]) -> Vec<Vec<String>> {
        let mut scanner = RowScanner::new(data);
        let mut rows = Vec::new();
        while let Some(row) = scanner.next_row().unwrap() {
            // The csv crate skips empty lines; the raw parser does too.
            if !row.is_blank() {
                rows.push(row.strings());
            }
        }
        rows
    }

    /// The same rows as read by the `csv` crate.
    fn csv_all(data: &[u8]) -> Vec<Vec<String>> {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(data)
            .byte_records()
            .map(|r| {
                r.unwrap()
                    .iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn agrees_with_the_csv_crate_on_tricky_rows() {
        let data = b"\"ID\",\"Kernel Name\",\"x\"\n\
\"0\",\"void f<(int)1>(float *, \"\"q\"\", int)\",\"65,536\"\n\
\"1\",\"multi\nline\",\"n/a\"\n\
plain,,\"\"\n\
\"last\",\"no newline\",\"1\"";
        assert_eq!(scan_all(data), csv_all(data));
        assert_eq!(scan_all(data)[1][1], "void f<(int)1>(float *, \"q\", int)");
    }

    #[test]
    fn agrees_with_the_csv_crate_on_every_h200_export() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/ncu-reference");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "csv") {
                let data = std::fs::read(&path).unwrap();
                assert_eq!(scan_all(&data), csv_all(&data), "{}", path.display());
                seen += 1;
            }
        }
        assert!(seen >= 5, "fixtures missing");
    }

    #[test]
    fn rows_longer_than_the_buffer_and_split_across_reads() {
        // A reader that returns 7 bytes at a time exercises every refill path.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(out.len()).min(7);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut data = Vec::new();
        for r in 0..50 {
            let fields: Vec<String> = (0..40_000).map(|c| format!("\"{r},{c}\"")).collect();
            data.extend_from_slice(fields.join(",").as_bytes());
            data.push(b'\n');
        }
        let mut scanner = RowScanner::new(Trickle(&data));
        scanner.want(Wanted::Columns(vec![39_999, 0, 12_345]));
        let mut n = 0;
        while let Some(row) = scanner.next_row().unwrap() {
            assert_eq!(row.fields, 40_000);
            assert_eq!(&*row.field(0).unwrap(), format!("{n},39999").as_bytes());
            assert_eq!(&*row.field(1).unwrap(), format!("{n},0").as_bytes());
            assert_eq!(&*row.field(2).unwrap(), format!("{n},12345").as_bytes());
            n += 1;
        }
        assert_eq!(n, 50);
        assert_eq!(scanner.bytes_read(), data.len() as u64);
        let expected = crate::format::hex(&Sha256::digest(&data));
        assert_eq!(scanner.sha256_hex(), expected);
    }

    #[test]
    fn short_rows_report_their_field_count() {
        let mut scanner = RowScanner::new(&b"\"a\",\"b\",\"c\"\n\"1\",\"2"[..]);
        scanner.want(Wanted::Columns(vec![2]));
        assert_eq!(scanner.next_row().unwrap().unwrap().fields, 3);
        let row = scanner.next_row().unwrap().unwrap();
        assert_eq!(row.fields, 2);
        assert!(row.field(0).is_none());
        assert!(scanner.next_row().unwrap().is_none());
    }

    #[test]
    fn the_sse2_and_portable_classifiers_agree() {
        let block: Vec<u8> = (0..64u8).map(|i| b"\",\nab"[usize::from(i) % 5]).collect();
        let (a, b) = (classify(&block), classify_portable(&block));
        assert_eq!(
            (a.quotes, a.commas, a.newlines),
            (b.quotes, b.commas, b.newlines)
        );
    }
}
