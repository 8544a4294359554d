//! Files as ncugate writes them: [`atomic`] — every file a run leaves
//! (baselines, reports, trend pages, history exports) is written to a temp
//! file in the same folder and renamed, so a reader never sees half of one.
//! And files as ncugate reads them: [`bounded`] — every file a user names is
//! read within a size limit.

pub mod atomic;
pub mod bounded;

pub(crate) use atomic::write_atomic;
