//! How the command line names what libraries describe in words: the knobs an engine error
//! suggests changing and the permissions the write gate asks for. Libraries carry them as
//! typed values ([`Knob`], [`Permission`]) and word them without iopath's option names;
//! these are the option names.
use iopath_validate::engine::Knob;
use iopath_validate::safety::Permission;

/// An engine knob as the option that sets it.
pub fn knob(k: Knob) -> String {
    match k {
        Knob::BlockSize => "a --bs",
        Knob::Region => "--region",
        Knob::ThreadEngine => "--engine threads",
    }
    .to_string()
}

/// A write-gate permission as the option that grants it.
pub fn permission(p: &Permission) -> String {
    match p {
        Permission::Write => "--allow-write".to_string(),
        Permission::DestroyDataOn(Some(d)) => format!("--destroy-data-on {}", d.display()),
        Permission::DestroyDataOn(None) => "--destroy-data-on".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_validate::safety::{Fix, Refusal, RefusalKind};

    #[test]
    fn a_refusal_names_the_options() {
        let r = Refusal {
            device: "/dev/sdz".into(),
            kind: RefusalKind::Signature,
            reason: "it holds data".into(),
            found: "ext4".into(),
            fix: Fix::around("add ", Permission::DestroyDataOn(Some("/dev/sdz".into())), "; or not"),
        };
        assert_eq!(r.message(&permission).lines().last(), Some("  to proceed: add --destroy-data-on /dev/sdz; or not"));
        assert!(r.to_string().ends_with("add the permission to destroy the data on /dev/sdz; or not"), "{r}");
    }
}
