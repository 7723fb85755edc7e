//! The one progress style of every long command (`sweep`, `measure`, `report`): a bar with
//! the count or the seconds done, the rate and the time left, on stderr; none when stderr is
//! not a terminal or with `--quiet` (so scripts and CI logs never see control sequences).
use indicatif::{ProgressBar, ProgressStyle};

/// What a bar counts.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// Whole steps: points of a sweep, runs of a report (`unit` names them).
    Steps(&'static str),
    /// Seconds of a timed run (a measurement), counted in milliseconds.
    Seconds,
}

fn template(unit: Unit) -> String {
    // The same fields in the same order everywhere: spinner, bar, done of total, rate, time
    // left, message. A timed run's rate is its MB/s, which the caller puts in the message.
    match unit {
        Unit::Steps(what) => {
            format!("{{spinner}} [{{bar:30}}] {{pos}}/{{len}} {what} ({{per_sec}}, ETA {{eta}}) {{msg}}")
        }
        Unit::Seconds => "{spinner} [{bar:30}] {elapsed}/{duration} (ETA {eta}) {msg}".to_string(),
    }
}

/// A bar of `len` units, or `None` when progress is not shown (see [`super::show_progress`]).
/// For [`Unit::Seconds`], `len` is in milliseconds.
pub fn bar(quiet: bool, len: u64, unit: Unit) -> Option<ProgressBar> {
    if !super::show_progress(quiet) {
        return None;
    }
    let b = ProgressBar::new(len);
    b.set_style(ProgressStyle::with_template(&template(unit)).unwrap_or_else(|_| ProgressStyle::default_bar()));
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses_and_shows_rate_and_eta() {
        for unit in [Unit::Steps("points"), Unit::Steps("runs"), Unit::Seconds] {
            let t = template(unit);
            assert!(ProgressStyle::with_template(&t).is_ok(), "{t}");
            assert!(t.contains("{eta}"), "{t}");
        }
        assert!(template(Unit::Steps("points")).contains("{per_sec}"));
    }
}
