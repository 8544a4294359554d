//! The bench's input: a real `--set full` raw export's data rows repeated to a
//! given size, with the `ID` column renumbered.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The fixture split into its header + units rows and its data rows (without their `ID` field).
pub struct Fixture {
    head: Vec<u8>,
    /// Each data row after its first field, from the comma on, newline included.
    rows: Vec<Vec<u8>>,
}

impl Fixture {
    pub fn read(path: &Path) -> io::Result<Fixture> {
        let text = fs::read(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
        if lines.len() < 3 {
            return Err(io::Error::other(format!(
                "{}: expected a header, a units row and data rows",
                path.display()
            )));
        }
        let head = lines[..2].concat();
        let mut rows = Vec::new();
        for line in &lines[2..] {
            // The ID field is a quoted integer such as "0": no comma inside it.
            let comma = line
                .iter()
                .position(|&b| b == b',')
                .ok_or_else(|| io::Error::other("a data row without commas"))?;
            let mut row = line[comma..].to_vec();
            if !row.ends_with(b"\n") {
                row.push(b'\n');
            }
            rows.push(row);
        }
        Ok(Fixture { head, rows })
    }

    /// Writes (or reuses) the file of at least `mb` MB; returns its path and launch count.
    pub fn ensure_file(&self, dir: &Path, mb: u64) -> io::Result<(PathBuf, u64)> {
        let path = dir.join(format!("full-set-{mb}mb.raw.csv"));
        let mut counter = CountingSink(0);
        let rows = self.write(&mut counter, mb)?;
        if fs::metadata(&path).is_ok_and(|m| m.len() == counter.0) {
            return Ok((path, rows));
        }
        eprintln!("writing {} ({} bytes)", path.display(), counter.0);
        let tmp = path.with_extension("tmp");
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        self.write(&mut out, mb)?;
        out.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .sync_all()?;
        fs::rename(&tmp, &path)?;
        Ok((path, rows))
    }

    /// Header, units, then data rows until at least `mb` MB are written; returns the row count.
    fn write(&self, out: &mut impl Write, mb: u64) -> io::Result<u64> {
        let target = mb * 1_000_000;
        out.write_all(&self.head)?;
        let mut written = self.head.len() as u64;
        let mut id = 0u64;
        for row in self.rows.iter().cycle() {
            if written >= target {
                break;
            }
            let quoted_id = format!("\"{id}\"");
            out.write_all(quoted_id.as_bytes())?;
            out.write_all(row)?;
            written += (quoted_id.len() + row.len()) as u64;
            id += 1;
        }
        Ok(id)
    }
}

/// A writer that only counts, to know a file's size without writing it.
struct CountingSink(u64);

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads the file once so the timed runs read it from the page cache.
pub fn warm_page_cache(path: &Path) -> io::Result<()> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    while file.read(&mut buf)? > 0 {}
    Ok(())
}
