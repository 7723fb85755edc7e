//! A `[[part]]` table as a part file would hold it, for messages that show one.

use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct PartFileOut {
    pub(crate) part: Vec<crate::catalog::Part>,
}
