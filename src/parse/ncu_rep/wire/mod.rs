//! What decoding a message will allocate, told from its bytes before `prost`
//! decodes them.
//!
//! prost gives every element of a repeated field a slot of `size_of::<T>()`
//! in a `Vec`, whatever its bytes: an empty metric result is 2 bytes on the
//! wire and 104 bytes in memory, so a 4 MB file of empty entries decoded
//! to 694 MB. [`charge`] walks a message's protobuf wire format
//! (key, varint, length) following its [`Shape`] — the repeated fields of
//! [`super::schema`] and the messages that hold them — without allocating,
//! and adds up those slots; the reader takes every message's from a
//! [`Budget`] of the file before it decodes the first result. Optional
//! sub-messages and the bytes of strings and blobs are not charged (a
//! repeated string's slot is): prost keeps an optional message inline, and a
//! string's bytes are on the wire already.
//!
//! The walk reads each byte once and recurses only along the shapes (groups
//! of unknown fields are skipped in a loop). It is no stricter than prost (a
//! message it refuses prost refuses too; where prost decodes a message, the
//! walk charges exactly what prost allocated, which the tests check on
//! flipped bits of genuine results), so a genuine report is never refused
//! as malformed by it.

use super::schema::{
    DeviceAttribute, DeviceAttributes, ListElement, MetricResult, NvtxDomain, NvtxPushPopDomain,
    NvtxPushPopRange, NvtxStartEndDomain, NvtxStartEndRange, NvtxThread, RuleBodyItem, RuleResult,
    Section, SessionAttribute,
};
use std::mem::size_of;

/// The bytes decoding a report's messages may allocate for the slots of
/// repeated fields (and the launch each result becomes), per byte of the
/// file, and beyond that (so that no small file is refused).
///
/// The committed genuine reports charge at most 8.83 bytes per byte (the
/// test `genuine_reports_charge_a_few_bytes_per_byte` prints each; an
/// instance is a 144-byte slot: its correlation ID is decoded, so that a
/// damaged one is refused as NVIDIA's reader refuses it), so 20 leaves 2.26
/// times that. It cannot leave more and still refuse the
/// cheapest crafted entry: an empty rule result is 3 bytes on the wire and
/// a 72-byte slot, 24 per byte. The other crafted runs charge more: an empty
/// metric result 52 per byte, one with an empty instance 44, an empty range
/// result (a 320-byte launch from a 4-byte frame) 80.
///
/// Peak RSS of `ncugate baseline record --input` (release build) before
/// this budget → with it: a 4.18 MB report of 1,000,000 empty metric
/// results, each with an empty instance, 694 → 12 MB; 1,000,000 empty
/// metric results 116 → 12 MB; 1,000,000 empty rule results 93 → 12 MB;
/// 1,000,000 empty range results 328 → 12 MB (each refused before prost
/// decodes it; `tests/integration/hostile_reports.rs`).
pub(crate) const DECODED_PER_BYTE: usize = 20;
pub(crate) const DECODED_BEYOND: usize = 1 << 20;

/// Sub-messages nested deeper than this are refused (prost refuses them
/// at 100 too); the shapes below nest at most 5 deep.
const MAX_DEPTH: usize = 100;

/// The fields of one message whose decoding allocates per element, by field
/// number; every other field is skipped.
pub(crate) struct Shape {
    fields: &'static [(u64, Field)],
}

/// How decoding one field allocates.
#[derive(Clone, Copy)]
enum Field {
    /// An optional sub-message: kept inline, its own fields walked.
    One(&'static Shape),
    /// A repeated sub-message: each element a slot of this many bytes, then
    /// its own fields walked.
    Many(&'static Shape, usize),
    /// A repeated string: each element a slot of this many bytes.
    Each(usize),
}

/// A message with nothing charged inside it (only scalars, strings, bytes
/// and optional sub-messages of the same).
pub(crate) static FLAT: Shape = Shape { fields: &[] };

/// `BlockHeader`.
pub(crate) static BLOCK_HEADER: Shape = Shape {
    fields: &[
        (3, Field::One(&SESSION_DETAILS)),
        (4, Field::One(&STRING_TABLE)),
    ],
};
static SESSION_DETAILS: Shape = Shape {
    fields: &[
        (
            6,
            Field::Many(&DEVICE_ATTRIBUTES, size_of::<DeviceAttributes>()),
        ),
        (8, Field::Many(&FLAT, size_of::<SessionAttribute>())),
    ],
};
static DEVICE_ATTRIBUTES: Shape = Shape {
    fields: &[(3, Field::Many(&FLAT, size_of::<DeviceAttribute>()))],
};
static STRING_TABLE: Shape = Shape {
    fields: &[(1, Field::Each(size_of::<String>()))],
};

/// `ProfileResult`: one kernel launch.
pub(crate) static PROFILE_RESULT: Shape = Shape {
    fields: &[
        (13, Field::Many(&METRIC_RESULT, size_of::<MetricResult>())),
        (17, Field::Many(&FLAT, size_of::<Section>())),
        (19, Field::Many(&RULE_RESULT, size_of::<RuleResult>())),
        (21, Field::One(&NVTX_STATE)),
    ],
};
/// `RangeResult`.
pub(crate) static RANGE_RESULT: Shape = Shape {
    fields: &[
        (4, Field::Many(&METRIC_RESULT, size_of::<MetricResult>())),
        (10, Field::One(&NVTX_STATE)),
        (20, Field::Many(&RULE_RESULT, size_of::<RuleResult>())),
    ],
};
/// `CmdlistResult`.
pub(crate) static CMDLIST_RESULT: Shape = Shape {
    fields: &[
        (4, Field::Many(&METRIC_RESULT, size_of::<MetricResult>())),
        (10, Field::One(&NVTX_STATE)),
        (21, Field::Many(&RULE_RESULT, size_of::<RuleResult>())),
    ],
};
/// `GraphResult`.
pub(crate) static GRAPH_RESULT: Shape = Shape {
    fields: &[
        (4, Field::Many(&METRIC_RESULT, size_of::<MetricResult>())),
        (10, Field::One(&NVTX_STATE)),
        (22, Field::Many(&RULE_RESULT, size_of::<RuleResult>())),
    ],
};
static METRIC_RESULT: Shape = Shape {
    fields: &[(3, Field::Many(&FLAT, size_of::<ListElement>()))],
};
static RULE_RESULT: Shape = Shape {
    fields: &[(3, Field::One(&RULE_BODY))],
};
static RULE_BODY: Shape = Shape {
    fields: &[(1, Field::Many(&FLAT, size_of::<RuleBodyItem>()))],
};
static NVTX_STATE: Shape = Shape {
    fields: &[
        (1, Field::Many(&FLAT, size_of::<NvtxDomain>())),
        (2, Field::Many(&NVTX_THREAD, size_of::<NvtxThread>())),
        (
            3,
            Field::Many(&START_END_DOMAIN, size_of::<NvtxStartEndDomain>()),
        ),
    ],
};
static NVTX_THREAD: Shape = Shape {
    fields: &[(
        2,
        Field::Many(&PUSH_POP_DOMAIN, size_of::<NvtxPushPopDomain>()),
    )],
};
static PUSH_POP_DOMAIN: Shape = Shape {
    fields: &[(3, Field::Many(&FLAT, size_of::<NvtxPushPopRange>()))],
};
static START_END_DOMAIN: Shape = Shape {
    fields: &[(3, Field::Many(&FLAT, size_of::<NvtxStartEndRange>()))],
};

/// Where and why a message's bytes are not protobuf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed {
    /// The byte of the message where the walk stopped.
    pub(crate) at: usize,
    pub(crate) why: &'static str,
}

/// The bytes prost will allocate for the slots of `message`'s repeated
/// fields (nested ones included), or where its bytes are not protobuf.
pub(crate) fn charge(message: &[u8], shape: &Shape) -> Result<usize, Malformed> {
    let mut total = 0;
    walk(message, 0, shape, 0, &mut total)?;
    Ok(total)
}

/// Walks the fields of `bytes` (at byte `base` of the outermost message).
fn walk(
    bytes: &[u8],
    base: usize,
    shape: &Shape,
    depth: usize,
    total: &mut usize,
) -> Result<(), Malformed> {
    if depth >= MAX_DEPTH {
        return Err(Malformed {
            at: base,
            why: "sub-messages nest deeper than 100",
        });
    }
    let mut r = Reader {
        bytes,
        pos: 0,
        base,
    };
    while !r.at_end() {
        let (tag, wire) = r.key()?;
        if wire != 2 {
            r.skip(tag, wire)?;
            continue;
        }
        let body = r.len_delimited()?;
        let body_at = r.pos - body.len();
        match shape
            .fields
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, f)| *f)
        {
            Some(Field::One(inner)) => walk(body, base + body_at, inner, depth + 1, total)?,
            Some(Field::Many(inner, slot)) => {
                *total = total.saturating_add(slot);
                if !inner.fields.is_empty() {
                    walk(body, base + body_at, inner, depth + 1, total)?;
                }
            }
            Some(Field::Each(slot)) => *total = total.saturating_add(slot),
            None => {}
        }
    }
    Ok(())
}

/// A bounds-checked reader of one message's wire format.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    fn malformed(&self, why: &'static str) -> Malformed {
        Malformed {
            at: self.base + self.pos,
            why,
        }
    }

    /// A varint of at most 10 bytes.
    fn varint(&mut self) -> Result<u64, Malformed> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(self.malformed("a varint runs past the end (truncated?)"));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.malformed("a varint is longer than 10 bytes"))
    }

    /// A field's key: its number and wire type.
    fn key(&mut self) -> Result<(u64, u8), Malformed> {
        let key = self.varint()?;
        let (tag, wire) = (key >> 3, (key & 7) as u8);
        if tag == 0 {
            return Err(self.malformed("a field numbered 0"));
        }
        Ok((tag, wire))
    }

    /// The next `n` bytes.
    fn bytes(&mut self, n: u64) -> Result<&'a [u8], Malformed> {
        let left = self.bytes.len() - self.pos;
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= left)
            .ok_or_else(|| self.malformed("a field runs past the end (truncated?)"))?;
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// A length-delimited field's bytes.
    fn len_delimited(&mut self) -> Result<&'a [u8], Malformed> {
        let n = self.varint()?;
        self.bytes(n)
    }

    /// Skips a field of wire type `wire` (not length-delimited, which
    /// [`walk`] reads): a varint, 8 or 4 bytes, or a group to its end.
    fn skip(&mut self, tag: u64, wire: u8) -> Result<(), Malformed> {
        match wire {
            0 => self.varint().map(drop),
            1 => self.bytes(8).map(drop),
            5 => self.bytes(4).map(drop),
            3 => self.skip_group(tag),
            4 => Err(self.malformed("a group ends that did not start")),
            _ => Err(self.malformed("a field of wire type 6 or 7")),
        }
    }

    /// Skips the fields of a group that `tag` started, nested groups too, to
    /// its end: counted, not recursed into, to at most [`MAX_DEPTH`] levels.
    fn skip_group(&mut self, tag: u64) -> Result<(), Malformed> {
        let mut open = 1usize;
        while open > 0 {
            if self.at_end() {
                return Err(self.malformed("a group runs past the end (truncated?)"));
            }
            let (inner, wire) = self.key()?;
            match wire {
                2 => self.len_delimited().map(drop)?,
                3 if open >= MAX_DEPTH => {
                    return Err(self.malformed("groups nest deeper than 100"));
                }
                3 => open += 1,
                4 if open == 1 && inner != tag => {
                    return Err(self.malformed("a group ends with another group's number"));
                }
                4 => open -= 1,
                w => self.skip(inner, w)?,
            }
        }
        Ok(())
    }
}

/// What is left of a file's budget for decoded slots ([`DECODED_PER_BYTE`]).
pub(crate) struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    /// The budget of a file of `file` bytes.
    pub(crate) fn of(file: usize) -> Budget {
        Budget::limited(
            file.saturating_mul(DECODED_PER_BYTE)
                .saturating_add(DECODED_BEYOND),
        )
    }

    pub(crate) fn limited(limit: usize) -> Budget {
        Budget { left: limit, limit }
    }

    /// Takes `n` bytes of the budget before they are allocated; `Err` with
    /// the budget when they are more than is left.
    pub(crate) fn take(&mut self, n: usize) -> Result<(), usize> {
        self.left = self.left.checked_sub(n).ok_or(self.limit)?;
        Ok(())
    }

    /// The bytes taken so far.
    pub(crate) fn spent(&self) -> usize {
        self.limit - self.left
    }
}

#[cfg(test)]
mod tests;
