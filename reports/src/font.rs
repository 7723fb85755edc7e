//! The font that plots draw their text with, bundled so that no system font is needed.
//!
//! plotters' `ab_glyph` text backend finds fonts only in its own registry, and panics on
//! bitmap text when the registry has none. [`ensure_registered`] puts DejaVu Sans (see
//! `assets/LICENSE-DejaVu.txt`) under the family names plotters asks for, exactly once per
//! process; every drawing function calls it first.

use crate::error::ReportError;
use plotters::style::{FontStyle, register_font};
use std::sync::OnceLock;

/// DejaVu Sans 2.37, unmodified, from Debian's fonts-dejavu-core.
static DEJAVU_SANS: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// The family names charts use; all map to the bundled font.
const FAMILIES: [&str; 3] = ["sans-serif", "serif", "monospace"];

/// Registers the bundled font once; later calls return the first call's outcome.
pub(crate) fn ensure_registered() -> Result<(), ReportError> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE
        .get_or_init(|| FAMILIES.iter().all(|family| register_font(family, FontStyle::Normal, DEJAVU_SANS).is_ok()));
    if ok { Ok(()) } else { Err(ReportError::Font { asset: "reports/assets/DejaVuSans.ttf" }) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_font_registers_and_is_small() {
        ensure_registered().unwrap();
        ensure_registered().unwrap();
        assert!(DEJAVU_SANS.len() < 1_000_000, "keep the bundled font under 1 MB");
    }
}
