//! Files as ncugate writes them: [`atomic`] — every file a run leaves
//! (baselines, reports, trend pages, history exports) is written to a temp
//! file in the same folder and renamed, so a reader never sees half of one.

pub mod atomic;

pub(crate) use atomic::write_atomic;
