//! [`RowSource`] over `simd-csv`'s `ZeroCopyReader`: the candidate measured
//! against `parse::scan` by this bench, doing the scanner's whole job.
//!
//! The reader finds every field separator (SSE2/AVX2 string search plus a
//! quote state machine); the kept fields are then taken by column index.
//! `ZeroCopyByteRecord` lends its fields only for the borrow of the record, so
//! the kept fields (a few hundred bytes of a ~27 KB row) are copied into a
//! buffer the returned [`Row`] can point into; the whole row is copied only
//! where the scanner's callers read it (every field kept, or a one-field row
//! that may be blank). The input's SHA-256 is taken by a reader adapter, as
//! the scanner hashes what it reads. Blank lines never come out: simd-csv
//! skips them, as the raw-page reader does.

use ncugate::parse::scan::{Row, RowSource, Wanted};
use sha2::{Digest, Sha256};
use simd_csv::{ZeroCopyReader, ZeroCopyReaderBuilder};
use std::cell::RefCell;
use std::io::{self, Read};
use std::rc::Rc;

/// The same read size as the scanner's initial buffer.
const BUFFER: usize = 1 << 20;

/// Feeds every byte read to a shared hasher.
struct Hashing<R> {
    inner: R,
    hasher: Rc<RefCell<Sha256>>,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        self.hasher.borrow_mut().update(&out[..n]);
        Ok(n)
    }
}

/// Rows of a CSV read with `simd_csv::ZeroCopyReader`.
pub struct SimdCsvRows<R: Read> {
    reader: ZeroCopyReader<Hashing<R>>,
    hasher: Rc<RefCell<Sha256>>,
    /// Column index of each slot; `None` keeps every field.
    columns: Option<Vec<usize>>,
    /// The kept fields of the current row (then, where needed, the row itself).
    kept: Vec<u8>,
    spans: Vec<Option<(usize, usize)>>,
}

impl<R: Read> SimdCsvRows<R> {
    pub fn new(reader: R) -> Self {
        let hasher = Rc::new(RefCell::new(Sha256::new()));
        let reader = ZeroCopyReaderBuilder::with_capacity(BUFFER)
            .has_headers(false)
            .flexible(true)
            .from_reader(Hashing {
                inner: reader,
                hasher: Rc::clone(&hasher),
            });
        SimdCsvRows {
            reader,
            hasher,
            columns: None,
            kept: Vec::new(),
            spans: Vec::new(),
        }
    }
}

impl<R: Read> RowSource for SimdCsvRows<R> {
    fn want(&mut self, wanted: Wanted) {
        self.columns = match wanted {
            Wanted::All => None,
            Wanted::Columns(columns) => Some(columns),
        };
    }

    fn next_row(&mut self) -> io::Result<Option<Row<'_>>> {
        let Some(record) = self.reader.read_byte_record().map_err(io::Error::other)? else {
            return Ok(None);
        };
        let (kept, spans) = (&mut self.kept, &mut self.spans);
        kept.clear();
        spans.clear();
        let mut keep = |field: Option<&[u8]>| {
            spans.push(field.map(|f| {
                let start = kept.len();
                kept.extend_from_slice(f);
                (start, kept.len())
            }));
        };
        match &self.columns {
            None => record.iter().for_each(|f| keep(Some(f))),
            Some(columns) => columns.iter().for_each(|&c| keep(record.get(c))),
        }
        let fields = record.len();
        let line_start = kept.len();
        if self.columns.is_none() || fields <= 1 {
            kept.extend_from_slice(record.as_slice());
        }
        Ok(Some(Row::new(
            &self.kept,
            &self.spans,
            fields,
            &self.kept[line_start..],
        )))
    }

    fn sha256_hex(&self) -> String {
        let digest = self.hasher.borrow().clone().finalize();
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}
