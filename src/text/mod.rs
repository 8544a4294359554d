//! Text as ncugate writes it for people and CI logs: [`escape`] makes text
//! from outside printable in every report format.

pub(crate) mod escape;
pub(crate) mod secret;
