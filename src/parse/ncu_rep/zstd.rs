//! `.ncu-repz`: a `.ncu-rep` compressed with Zstandard, which Nsight Compute
//! writes since 2025.4.
//!
//! NVIDIA's own reader (the `ncu_report` package, 2026.3.1) reads a
//! `.ncu-repz` as a Zstandard stream whose content is the bytes of a
//! `.ncu-rep`: one frame or several, with skippable frames anywhere, with or
//! without the content size in the frame header; the plain bytes of a
//! `.ncu-rep` named `.ncu-repz` it refuses (each layout was made from a
//! committed `.ncu-rep` and read with it; `tests/integration/oracle.rs`
//! holds ncugate's reading of such files to its reading). So the stream is
//! inflated here, and the bytes go to the `.ncu-rep` reader
//! ([`super::container`]) as they are.
//!
//! A file is told to be compressed by its first bytes (a Zstandard frame's
//! or a skippable frame's magic number), not by its name: a renamed report
//! reads alike, and an `.ncu-rep` that is compressed or a `.ncu-repz` that
//! is not is never read as what its name says.
//!
//! The inflated bytes are bounded before they are allocated: at most
//! [`INFLATED_PER_BYTE`] per byte of the compressed file and
//! [`INFLATED_BEYOND`] more, and never more than the input size limit
//! ([`crate::io::bounded::limit`]); a Zstandard "bomb" (a few kilobytes that
//! would inflate to gigabytes) is refused once the budget is spent, in
//! memory of the order of the budget.

use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use std::borrow::Cow;

/// The first bytes of a Zstandard frame (`0xFD2FB528`, little-endian).
pub const FRAME_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The bytes a compressed report may inflate to, per byte of the file, and
/// beyond that (so that no small file is refused).
///
/// The committed reports compress 11.8 to 14.1 times with `zstd -3` and
/// 13.7 to 17.9 times with `zstd --ultra -22 --long=27`; content that
/// repeats compresses further (three of them, each twice in a row, 7.7 MB,
/// 43 times with `zstd -19`), as a report of many alike launches may. 256
/// leaves 6 times that. A crafted stream of run-length blocks inflates
/// 32,768 times (4 bytes for each 128 KiB block).
pub const INFLATED_PER_BYTE: usize = 256;
pub const INFLATED_BEYOND: usize = 16 << 20;

/// Why a Zstandard stream was not inflated (the reader's
/// [`super::container::Failure`] carries it on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Cut or damaged: what is wrong, and where.
    Corrupt(String),
    /// It inflates past its budget of `limit` bytes ([`budget`]).
    OverBudget { limit: usize },
}

/// How much is decoded between two checks of the budget.
const STEP: usize = 1 << 20;

/// True when `head` (a file's first bytes) starts a Zstandard stream: a
/// frame, or a skippable frame (`0x184D2A50` to `0x184D2A5F`).
pub fn is_compressed(head: &[u8]) -> bool {
    head.starts_with(&FRAME_MAGIC) || skippable(head)
}

fn skippable(head: &[u8]) -> bool {
    matches!(head, [m, 0x2a, 0x4d, 0x18, ..] if m & 0xf0 == 0x50)
}

/// The budget of a compressed file of `file` bytes: [`INFLATED_PER_BYTE`]
/// per byte and [`INFLATED_BEYOND`] more, at most `input_limit`.
pub fn budget(file: usize, input_limit: u64) -> usize {
    let cap = usize::try_from(input_limit).unwrap_or(usize::MAX);
    file.saturating_mul(INFLATED_PER_BYTE)
        .saturating_add(INFLATED_BEYOND)
        .min(cap)
}

/// The report's bytes: `data` itself when it is not compressed, else its
/// Zstandard stream inflated within [`budget`] (with the input size limit
/// in force).
pub fn inflate(data: &[u8]) -> Result<Cow<'_, [u8]>, Refused> {
    if !is_compressed(data) {
        return Ok(Cow::Borrowed(data));
    }
    let limit = budget(data.len(), crate::io::bounded::limit());
    inflate_within(data, limit).map(Cow::Owned)
}

/// Every frame of the stream `data`, inflated, refused past `limit` bytes.
pub fn inflate_within(mut data: &[u8], limit: usize) -> Result<Vec<u8>, Refused> {
    let total = data.len();
    let mut out = Vec::new();
    // A frame declaring a window over 128 MiB is refused before it is
    // allocated, as libzstd's decoder refuses it by default (its
    // `windowLogMax` is 27); the window fills only as the frame is decoded,
    // so the budget bounds it too.
    let mut decoder = FrameDecoder::new();
    while !data.is_empty() {
        let at = total - data.len();
        if skippable(data) {
            data = skip_frame(data, at)?;
            continue;
        }
        if data.len() < 4 || !data.starts_with(&FRAME_MAGIC) {
            return Err(corrupt(at, "no Zstandard frame starts here"));
        }
        decoder
            .reset(&mut data)
            .map_err(|e| corrupt(at, &e.to_string()))?;
        frame(&mut decoder, &mut data, &mut out, limit, at)?;
    }
    Ok(out)
}

/// Decodes the frame `decoder` was reset to, a step at a time, appending
/// its bytes to `out` and checking the budget after each step.
fn frame(
    decoder: &mut FrameDecoder,
    data: &mut &[u8],
    out: &mut Vec<u8>,
    limit: usize,
    at: usize,
) -> Result<(), Refused> {
    loop {
        let finished = decoder
            .decode_blocks(&mut *data, BlockDecodingStrategy::UptoBytes(STEP))
            .map_err(|e| corrupt(at, &e.to_string()))?;
        // What the decoder holds back (its window) counts too: it is in memory.
        let held = decoder.can_collect();
        if out.len().saturating_add(held) > limit {
            return Err(Refused::OverBudget { limit });
        }
        if let Some(bytes) = decoder.collect() {
            out.extend_from_slice(&bytes);
        }
        if finished {
            break;
        }
    }
    match (
        decoder.get_checksum_from_data(),
        decoder.get_calculated_checksum(),
    ) {
        (Some(stored), Some(computed)) if stored != computed => Err(corrupt(
            at,
            &format!("its checksum is {stored:#010x}, its content's {computed:#010x}"),
        )),
        _ => Ok(()),
    }
}

/// The bytes after the skippable frame at the start of `data`.
fn skip_frame(data: &[u8], at: usize) -> Result<&[u8], Refused> {
    let size = data
        .get(4..8)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| corrupt(at, "a skippable frame ends inside its header"))?;
    data.get(8usize.saturating_add(size)..).ok_or_else(|| {
        corrupt(
            at,
            &format!("a skippable frame of {size} bytes is cut short"),
        )
    })
}

fn corrupt(at: usize, why: &str) -> Refused {
    Refused::Corrupt(format!(
        "the Zstandard stream (a .ncu-repz) is corrupt: the frame at byte {at}: {why}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Zstandard frame made by hand (the format's RFC 8878, section 3.1.1):
    /// no content size, a 1 MiB window, then `blocks` run-length blocks of
    /// 128 KiB of `byte` each (4 bytes apiece).
    fn rle_frame(byte: u8, blocks: usize) -> Vec<u8> {
        let mut out = FRAME_MAGIC.to_vec();
        out.extend([0x00, 0x50]);
        for i in 0..blocks {
            let last = u32::from(i + 1 == blocks);
            let header = (128u32 << 10 << 3) | (1 << 1) | last;
            out.extend(&header.to_le_bytes()[..3]);
            out.push(byte);
        }
        out
    }

    #[test]
    fn magic_numbers_tell_a_stream() {
        assert!(is_compressed(&FRAME_MAGIC));
        assert!(is_compressed(&[0x5e, 0x2a, 0x4d, 0x18, 0, 0, 0, 0]));
        assert!(!is_compressed(b"NVR\0"));
        assert!(!is_compressed(b"\"ID\",\"Process ID\""));
        assert!(!is_compressed(&[0x28, 0xb5]));
    }

    #[test]
    fn an_uncompressed_report_is_borrowed() {
        let data = b"NVR\0rest";
        assert!(matches!(inflate(data), Ok(Cow::Borrowed(b)) if b == data));
    }

    #[test]
    fn run_length_frames_and_skippable_frames_inflate() {
        let mut data = vec![0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3];
        data.extend(rle_frame(7, 2));
        data.extend(rle_frame(9, 1));
        let out = inflate_within(&data, 1 << 30).expect("inflates");
        assert_eq!(out.len(), 3 << 17);
        assert!(out[..2 << 17].iter().all(|&b| b == 7));
        assert!(out[2 << 17..].iter().all(|&b| b == 9));
    }

    #[test]
    fn a_stream_past_its_budget_is_refused_before_it_is_kept() {
        // 8,192 blocks: 1 GiB from 32 KiB.
        let bomb = rle_frame(0, 8192);
        assert!(bomb.len() < 33_000);
        let limit = budget(bomb.len(), 1 << 40);
        assert_eq!(limit, bomb.len() * 256 + (16 << 20));
        assert_eq!(
            inflate_within(&bomb, limit),
            Err(Refused::OverBudget { limit })
        );
        // The input size limit caps the budget.
        assert_eq!(budget(bomb.len(), 1000), 1000);
    }

    #[test]
    fn cut_and_damaged_streams_are_corrupt() {
        let frame = rle_frame(1, 3);
        for cut in [5, 6, 9, frame.len() - 1] {
            let e = inflate_within(&frame[..cut], 1 << 30).expect_err("cut");
            assert!(
                matches!(&e, Refused::Corrupt(m) if m.contains("Zstandard")),
                "{e:?}"
            );
        }
        let mut trailing = frame.clone();
        trailing.extend(b"NVR\0");
        let e = inflate_within(&trailing, 1 << 30).expect_err("trailing bytes");
        assert!(
            matches!(&e, Refused::Corrupt(m) if m.contains("at byte 18: no Zstandard frame")),
            "{e:?}"
        );
        let short_skip = [0x50, 0x2a, 0x4d, 0x18, 9, 0, 0, 0, 1];
        let e = inflate_within(&short_skip, 1 << 30).expect_err("cut skippable frame");
        assert!(
            matches!(&e, Refused::Corrupt(m) if m.contains("cut short")),
            "{e:?}"
        );
    }
}
