//! The whole-file diagnostics: a file with nothing to model, a topology without drives.

use super::Draft;
use crate::topology::{RawTopology, Sink};

/// Reports a file with no host, node, drive, part or workload; true if it is one.
pub(crate) fn nothing_to_model(sink: &mut Sink, raw: &RawTopology) -> bool {
    if raw.host.is_none()
        && raw.node.is_empty()
        && raw.drive.is_empty()
        && raw.part.is_empty()
        && raw.workload.is_empty()
    {
        let message = if raw.name.is_none() && raw.description.is_none() && raw.source.is_none() {
            "the file is empty: it has no [[drive]], no [[node]] and no [host]"
        } else {
            "the file has a name but no [[drive]], no [[node]] and no [host]"
        };
        sink.at(None, "drive", message, Some(minimal_topology_help()));
        return true;
    }
    false
}

/// Reports a topology without drives (unless some [[drive]] was rejected already).
pub(crate) fn no_drives(sink: &mut Sink, d: &Draft) {
    let Draft { nodes, drives_complete, .. } = d;
    if nodes.iter().filter(|n| n.is_drive()).count() == 0 && *drives_complete {
        sink.at(
            None,
            "drive",
            "the topology has no drives",
            Some(
                "add a [[drive]] with id, part, parent and port, e.g.\n      [[drive]]\n      id = \"d\"\n      part = \"kingston-dc600m-1920\"\n      parent = \"hba\"\n      port = 0"
                    .into(),
            ),
        );
    }
}

/// The help for a file with nothing to model: a complete minimal topology.
fn minimal_topology_help() -> String {
    [
        "a minimal topology has a host, a controller and a drive:",
        "[host]",
        "part = \"amd-am5\"",
        "",
        "[[node]]",
        "id = \"hba\"",
        "part = \"asm1166\"",
        "parent = \"host\"",
        "",
        "[[drive]]",
        "id = \"d\"",
        "part = \"kingston-dc600m-1920\"",
        "parent = \"hba\"",
        "port = 0",
        "",
        "`iopath catalog` lists the parts; configs/ holds complete examples",
    ]
    .join("\n      ")
}
