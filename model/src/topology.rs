//! Topologies: a tree of parts joined by links, written in TOML, loaded in two stages.
//!
//! Stage one ([`RawTopology`]) mirrors the file with serde (`deny_unknown_fields`) and keeps
//! the span of every value. Ports, counts and workload values stay TOML values there, so that
//! a wrong type is reported in stage two, in words and together with every other problem.
//! Stage two ([`Topology::from_raw`]) resolves part names against the catalog, checks the tree
//! (parents, ports, cycles, what may attach to what), applies per-node `params`, derives every
//! link, checks the named workloads against the drives, and reports *all* problems at once as
//! [`Diagnostic`]s with file, line, column, key path, what was expected and a suggestion.
//! The simulator accepts only the validated [`Topology`].
//!
//! ```toml
//! name = "ASM1166 with six SATA SSDs"
//! [host]
//! part = "amd-am5"
//! [[node]]
//! id = "hba"
//! part = "asm1166"
//! parent = "host"
//! [[drive]]
//! id = "D"
//! part = "kingston-dc600m-1920"
//! parent = "hba"
//! port = 0
//! ```

use crate::catalog::{Catalog, Figure, Kind, Value};
use crate::link::{GenerationFigures, LinkSpec};
use crate::load;
use crate::load::workloads::check_workloads;
use crate::parts::{DriveFigures, HostFigures, PartSpec};
use crate::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::ops::Range;
use toml::Spanned;

// ---------------------------------------------------------------------------------------
// Stage one: the file as written.

/// The topology file as written.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "iopath topology",
    description = "A storage I/O path for iopath: the host, the switches and controllers between it and the drives, the drives, pools, network clients and named workloads."
)]
pub struct RawTopology {
    /// A short name for reports.
    pub name: Option<String>,
    /// A sentence or two on what this setup is, shown at the top of reports.
    pub description: Option<String>,
    /// Where the setup comes from (a published measurement, a build log).
    pub source: Option<String>,
    /// The host: CPU root complex and operating system.
    pub host: Option<RawHost>,
    /// Switches, chipsets, controllers, port multipliers, expanders and network cards.
    #[serde(default)]
    pub node: Vec<RawNode>,
    /// Drives, one table each, or one table with count for several identical ones.
    #[serde(default)]
    pub drive: Vec<RawDrive>,
    /// Parts defined in this file, in the same form as the catalog (iopath discover writes
    /// unknown controllers and drives this way).
    #[serde(default)]
    #[schemars(with = "Vec<serde_json::Value>")]
    pub part: Vec<crate::catalog::Part>,
    /// Named workloads, one table each: [workload.seqread] with fio's option names.
    #[serde(default)]
    pub workload: BTreeMap<String, RawWorkload>,
    /// Network clients of the server's network cards (SMB, NFS or iSCSI).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client: Vec<load::clients::RawClient>,
    /// Pools of drives: md RAID, btrfs profiles, ZFS vdevs, unRAID parity.
    #[serde(default)]
    pub pool: Vec<RawPool>,
}

/// A key the file does not write (span 0..0, empty).
pub(crate) fn unwritten() -> Spanned<String> {
    Spanned::new(0..0, String::new())
}

pub(crate) fn is_unwritten(s: &Spanned<String>) -> bool {
    s.get_ref().is_empty() && s.span().end == 0
}

/// A list of ids as written, with its position and each id's.
pub type SpannedIds = Spanned<Vec<Spanned<String>>>;

/// A `[[pool]]` table as written: a layout over member drives.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[schemars(
    description = "A pool of drives: a Linux md array, a btrfs profile, a ZFS pool of vdevs or an unRAID array."
)]
#[serde(deny_unknown_fields)]
pub struct RawPool {
    /// Unique id, named by a workload's pool.
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// The layout: Linux md stripe, mirror, raid10, raid5 or raid6; a btrfs profile
    /// (btrfs-raid0, btrfs-raid1, btrfs-raid1c3, btrfs-raid10, btrfs-raid5, btrfs-raid6); a ZFS
    /// vdev (raidz1, raidz2, raidz3, zfs-mirror); or unraid.
    #[schemars(
        with = "String",
        extend("enum" = ["stripe", "mirror", "raid10", "raid5", "raid6", "btrfs-raid0", "btrfs-raid1", "btrfs-raid1c3", "btrfs-raid10", "btrfs-raid5", "btrfs-raid6", "raidz1", "raidz2", "raidz3", "zfs-mirror", "unraid"])
    )]
    pub layout: Spanned<String>,
    /// Member drives by id; the id of a drive table with count stands for all its drives.
    /// unRAID: the last members (as many as parity says) are the parity disks.
    #[schemars(with = "Option<Vec<String>>")]
    pub members: Option<Spanned<Vec<Spanned<String>>>>,
    /// ZFS: a pool of several vdevs, each a list of member ids; the layout applies to each
    /// vdev and the pool stripes over them: [["a0", "a1", "a2"], ["b0", "b1", "b2"]].
    #[schemars(with = "Option<Vec<Vec<String>>>")]
    pub vdevs: Option<Spanned<Vec<SpannedIds>>>,
    /// ZFS: split the members into vdevs of this many drives, in order (vdev_width = 2 with
    /// layout = "zfs-mirror": 2-way mirrors; without it the members are one vdev).
    #[schemars(with = "Option<u32>", range(min = 1))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vdev_width: Option<Spanned<i64>>,
    /// Linux md chunk (stripe, raid10, raid5, raid6): a power of two of at least 4k, default
    /// "512k" as mdadm's. btrfs's stripe element is fixed at 64 KiB.
    #[schemars(with = "Option<String>")]
    pub chunk: Option<Spanned<String>>,
    /// md raid5/raid6: the stripe cache, in stripe heads of one page per member, 17..32768
    /// (md(4)'s `stripe_cache_size` sysfs knob; default 256, raid5.h `NR_STRIPES`).
    #[schemars(with = "Option<u32>")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_cache_size: Option<Spanned<i64>>,
    /// ZFS recordsize, a power of two from 512 to 16m (default "128k").
    #[schemars(with = "Option<String>")]
    pub recordsize: Option<Spanned<String>>,
    /// ZFS ashift: sectors of 2 to the power ashift bytes, 9 to 16 (default 12: 4 KiB).
    #[schemars(with = "Option<u32>", range(min = 9, max = 16))]
    pub ashift: Option<Spanned<i64>>,
    /// unRAID parity disks: 1 or 2 (default 1), the last members.
    #[schemars(with = "Option<u32>", range(min = 1, max = 2))]
    pub parity: Option<Spanned<i64>>,
    /// unRAID write method: "rmw" (read-modify-write, the default) or "turbo" (reconstruct
    /// write, also spelt "reconstruct").
    #[schemars(with = "Option<String>", extend("enum" = ["rmw", "turbo", "reconstruct"]))]
    pub write_mode: Option<Spanned<String>>,
    /// Data checksum: ZFS fletcher4 (default), sha256, blake3 or off; btrfs crc32c (default),
    /// sha256 or blake3 (blake2 is read as blake3). Not for md or unRAID.
    #[schemars(with = "Option<String>", extend("enum" = ["fletcher4", "crc32c", "sha256", "blake2", "blake3", "off"]))]
    pub checksum: Option<Spanned<String>>,
    /// Compression: ZFS off (default), lz4 or zstd; btrfs off or zstd. Counted as CPU work
    /// only: the data is taken as incompressible.
    #[schemars(with = "Option<String>", extend("enum" = ["off", "lz4", "zstd"]))]
    pub compression: Option<Spanned<String>>,
    /// ZFS native encryption: off (default) or aes-gcm.
    #[schemars(with = "Option<String>", extend("enum" = ["off", "aes-gcm"]))]
    pub encryption: Option<Spanned<String>>,
}

/// A `[workload.NAME]` table as written, every value with its position. Values are kept as
/// TOML values so that a wrong type is reported in stage two, in words and with the others.
/// The schema attributes give an editor the types, values and ranges the loader accepts
/// (`WorkloadSpec::resolve`); `iopath schema` adds the patterns of sizes, durations and
/// percentages.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "A named workload, with fio's option names and meanings.")]
pub struct RawWorkload {
    /// The access pattern, as fio's rw: read, write, randread, randwrite, rw (or readwrite)
    /// for sequential mixed, randrw for random mixed.
    #[schemars(with = "Option<String>", extend("enum" = ["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"]))]
    pub rw: Option<Spanned<toml::Value>>,
    /// The size of each I/O, a multiple of 512 bytes up to 64m; k = 1024 as in fio: "4k", "128k", "1m".
    #[schemars(with = "Option<String>")]
    pub bs: Option<Spanned<toml::Value>>,
    /// I/Os each job keeps in flight (fio's queue depth), 1 to 65536. Default 1.
    #[schemars(with = "Option<u32>", range(min = 1, max = 65536))]
    pub iodepth: Option<Spanned<toml::Value>>,
    /// Jobs per drive, 1 to 4096. Default 1.
    #[schemars(with = "Option<u32>", range(min = 1, max = 4096))]
    pub numjobs: Option<Spanned<toml::Value>>,
    /// Percentage of I/Os that are reads for rw = "rw" or "randrw", 0 to 100. Default 50.
    #[schemars(with = "Option<u32>", range(min = 0, max = 100))]
    pub rwmixread: Option<Spanned<toml::Value>>,
    /// The part of each drive the I/O touches, from its start, as a percentage: "10%".
    #[schemars(with = "Option<String>")]
    pub region: Option<Spanned<toml::Value>>,
    /// How long to measure (or simulate): "20s", "500ms", "2m".
    #[schemars(with = "Option<String>")]
    pub runtime: Option<Spanned<toml::Value>>,
    /// Warm-up time before measuring: "2s"; "0" turns it off.
    #[schemars(with = "Option<String>")]
    pub ramp: Option<Spanned<toml::Value>>,
    /// Run on the first N drives in file order (at least 1). Give either active or drives.
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub active: Option<Spanned<toml::Value>>,
    /// Run on these drives, by id. Give either active or drives.
    #[schemars(with = "Option<Vec<String>>")]
    pub drives: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    /// Copies from one drive to another, each "SRC:DST" by drive id: SRC is read
    /// sequentially and the data written to DST.
    #[schemars(with = "Option<Vec<String>>")]
    pub copy: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    /// Seed of the random offsets, so that random workloads repeat exactly.
    #[schemars(with = "Option<u64>")]
    pub seed: Option<Spanned<toml::Value>>,
    /// File size for file targets in the hardware mode: "1g".
    #[schemars(with = "Option<String>")]
    pub size: Option<Spanned<toml::Value>>,
    /// A network client's id: the I/O is that client's requests over the network.
    #[schemars(with = "Option<String>")]
    pub client: Option<Spanned<toml::Value>>,
    /// A pool's id: the workload's I/O goes to the pool, not to single drives.
    #[schemars(with = "Option<String>")]
    pub pool: Option<Spanned<toml::Value>>,
    /// Failed members of the pool, by drive id: degraded I/O, or what a rebuild rebuilds.
    #[schemars(with = "Option<Vec<String>>")]
    pub failed: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    /// How full the pool is, as a percentage: "60%" (ZFS and btrfs scrub and rebuild only
    /// the allocated space). Default 100%.
    #[schemars(with = "Option<String>")]
    pub fill: Option<Spanned<toml::Value>>,
    /// What the pool does: io (the workload's own I/O, the default), scrub (or check), or
    /// rebuild (also resilver, resync, replace) of the failed members.
    #[schemars(with = "Option<String>", extend("enum" = ["io", "scrub", "check", "rebuild", "resilver", "resync", "replace"]))]
    pub task: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "The host: its CPU's root complex and operating system, or a board.")]
pub struct RawHost {
    /// A host part from the catalog, e.g. "amd-am5"; with a board, the board's by default.
    #[serde(default = "unwritten", skip_serializing_if = "is_unwritten")]
    #[schemars(with = "String")]
    pub part: Spanned<String>,
    /// A board from the catalog (iopath catalog --kind board lists them): its slots, M.2
    /// sockets, SATA ports and onboard controllers become the tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub board: Option<Spanned<String>>,
    /// The board's BIOS lane mode (iopath catalog BOARD lists them); default: as wired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub bios: Option<Spanned<String>>,
    /// Figures of the host part to override, e.g. { completion_bytes = 64 }.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub params: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// Declares a table that attaches a part to the tree (`[[node]]`, `[[drive]]`): the fields
/// both have (`id`, `part`, `parent`, `m2`, `port`, `link`, `params`), with their types and
/// serde/schema attributes written once here, each with the table's own doc comment, and the
/// table's own fields in braces where they sit in the file's field order (which is the order
/// `Topology::raw` writes them back in). Not `#[serde(flatten)]`: that loses toml's spans,
/// so every located error in a shared field would lose its line and column.
macro_rules! raw_attached {
    (
        $(#[$sm:meta])*
        pub struct $name:ident {
            $(#[$id:meta])* id,
            $(#[$part:meta])* part,
            $(#[$parent:meta])* parent,
            { $($after_parent:tt)* }
            $(#[$m2:meta])* m2,
            $(#[$port:meta])* port,
            { $($after_port:tt)* }
            $(#[$link:meta])* link,
            { $($after_link:tt)* }
            $(#[$params:meta])* params,
        }
    ) => {
        $(#[$sm])*
        #[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $(#[$id])*
            #[schemars(with = "String")]
            pub id: Spanned<String>,
            $(#[$part])*
            #[schemars(with = "String")]
            pub part: Spanned<String>,
            $(#[$parent])*
            #[serde(default = "unwritten", skip_serializing_if = "is_unwritten")]
            #[schemars(with = "String")]
            pub parent: Spanned<String>,
            $($after_parent)*
            $(#[$m2])*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(with = "Option<String>")]
            pub m2: Option<Spanned<String>>,
            $(#[$port])*
            #[schemars(with = "Option<u32>")]
            pub port: Option<Spanned<toml::Value>>,
            $($after_port)*
            $(#[$link])*
            #[schemars(with = "Option<String>")]
            pub link: Option<Spanned<String>>,
            $($after_link)*
            $(#[$params])*
            #[serde(default)]
            #[schemars(with = "BTreeMap<String, serde_json::Value>")]
            pub params: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
        }
    };
}

raw_attached! {
    // A `[[node]]` table: a switch, controller, port multiplier, expander or NIC.
    /// A switch, chipset, controller, port multiplier, expander or network card.
    pub struct RawNode {
        /// Unique id, named by the children's parent and by iopath's --set ID.FIGURE=VALUE.
        id,
        /// A switch, controller, port_multiplier or expander part from the catalog.
        part,
        /// Id of the parent: "host", a switch, a controller (for a port multiplier or expander),
        /// or an expander (cascade). Not for a card in a board's slot or M.2 socket.
        parent,
        {
            /// On a board: the slot the card sits in ("PCIE1").
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(with = "Option<String>")]
            pub slot: Option<Spanned<String>>,
        }
        /// On a board: the M.2 socket an M.2 card sits in ("M2_1").
        m2,
        /// Port on the parent, from 0 (a controller's port for a port multiplier or expander).
        port,
        {}
        /// The link to the parent when it differs from the part's own: a slot that trains an x2
        /// card at x1 ("pcie2x1"), an expander's wide port ("sas3x4").
        link,
        {}
        /// Figures of the part to override, e.g. { fbs = false } or { mps = 128 }.
        params,
    }
}

raw_attached! {
    // A `[[drive]]` table: one drive, or `count` identical ones.
    /// One drive, or several identical ones with count.
    pub struct RawDrive {
        /// Unique id; with count, the prefix of the drives' ids: id0, id1, ...
        id,
        /// A drive part from the catalog.
        part,
        /// Id of the controller, port multiplier, expander, switch or host it attaches to. Not
        /// for a drive on a board's named port or M.2 socket.
        parent,
        {}
        /// On a board: the M.2 socket the drive sits in ("M2_1").
        m2,
        /// Port on the parent, from 0; with count, the first of consecutive ports. Default: the
        /// next free one. On a board: a named port ("SATA3"), with count the first of several.
        port,
        {
            /// Declare many identical drives at once (24 bays), 1 to 4096. Each drive needs a
            /// device of its own for the hardware mode, so a table with count above 1 takes no dev.
            #[schemars(with = "Option<u32>", range(min = 1, max = 4096))]
            pub count: Option<Spanned<toml::Value>>,
        }
        /// The drive's own link when slower than both ends allow ("sata1").
        link,
        {
            /// Block device or file for the hardware mode ("/dev/sdb"); one drive's own.
            pub dev: Option<String>,
        }
        params,
    }
}

// ---------------------------------------------------------------------------------------
// Diagnostics.

/// One problem in a topology file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based; 0 when no position is known.
    pub line: usize,
    pub column: usize,
    /// TOML key path, e.g. `drive[2].port`.
    pub key: String,
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        } else {
            write!(f, "{}: ", self.file)?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        write!(f, "{}", self.message)?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

/// Every problem found in one file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConfigError {
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {d}")?;
        }
        Ok(())
    }
}

pub(crate) struct Sink<'a> {
    pub(crate) file: &'a str,
    pub(crate) text: &'a str,
    pub(crate) out: Vec<Diagnostic>,
    /// Ids of `[[part]]` tables that were rejected: uses of them are not reported again.
    pub(crate) broken_parts: HashSet<String>,
}

impl Sink<'_> {
    pub(crate) fn at(
        &mut self,
        span: Option<Range<usize>>,
        key: impl Into<String>,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        let (line, column) = span.map(|s| line_col(self.text, s.start)).unwrap_or((0, 0));
        let d =
            Diagnostic { file: self.file.to_string(), line, column, key: key.into(), message: message.into(), help };
        // The same problem from every drive of a `count` group is reported once.
        if !self.out.contains(&d) {
            self.out.push(d);
        }
    }

    /// A problem with a value given on the command line: `label` is the option as written.
    pub(crate) fn cli(&mut self, label: &str, message: impl Into<String>, help: Option<String>) {
        let d = Diagnostic {
            file: label.to_string(),
            line: 0,
            column: 0,
            key: String::new(),
            message: message.into(),
            help,
        };
        if !self.out.contains(&d) {
            self.out.push(d);
        }
    }

    /// Everything found, this sink's problems first, then `later`'s.
    fn into_error(self, later: Sink) -> ConfigError {
        let mut diagnostics = self.out;
        diagnostics.extend(later.out);
        ConfigError { diagnostics }
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map(|i| before[i + 1..].chars().count() + 1).unwrap_or(before.chars().count() + 1);
    (line, col)
}

// ---------------------------------------------------------------------------------------
// Stage two: the validated tree.

/// Index of a node in [`Topology::nodes`]. The host is always 0.
pub type NodeIx = usize;

/// A validated node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    pub id: String,
    pub kind: Kind,
    pub part: String,
    pub part_name: String,
    pub parent: Option<NodeIx>,
    pub children: Vec<NodeIx>,
    pub port: Option<u32>,
    /// The link to the parent (the host has none: `Internal`).
    pub link: LinkSpec,
    /// How the link was trained from its two ends (none for the host and internal paths).
    pub training: Option<crate::link::Training>,
    /// The part's figures with this node's overrides applied, as stated (for display and
    /// `check --json`; no logic reads it: use [`Node::spec`]).
    pub figures: BTreeMap<String, Figure>,
    pub dev: Option<String>,
    /// The typed figures: stated ones, else their declared defaults ([`crate::parts`]).
    #[serde(skip)]
    pub spec: PartSpec,
    /// The figures of `spec` that came from defaults and apply to this part (basis
    /// `default`, the default's reason as source).
    #[serde(skip)]
    pub defaults: BTreeMap<String, Figure>,
}

impl Node {
    pub fn is_drive(&self) -> bool {
        self.kind == Kind::Drive
    }
}

/// A validated topology: what the simulator, the bound and the reports consume.
#[derive(Debug, Clone, Serialize)]
pub struct Topology {
    pub name: String,
    pub description: String,
    pub source: String,
    pub file: String,
    pub nodes: Vec<Node>,
    /// Drive nodes in file order.
    pub drives: Vec<NodeIx>,
    #[serde(skip)]
    pub workloads: BTreeMap<String, WorkloadSpec>,
    /// Figures of every link generation in use, keyed `sata3`, `pcie3`, ...
    pub generations: BTreeMap<String, GenerationFigures>,
    /// Network clients, in file order ([`crate::net`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<crate::net::Client>,
    /// Pools of drives, in file order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<crate::pool::Pool>,
    /// The board, with its sharing rules applied: slot widths are the effective ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board: Option<crate::board::Board>,
    /// Where each card and drive on the board sits.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<(NodeIx, crate::board::Place)>,
    #[serde(skip)]
    raw: RawTopology,
    #[serde(skip)]
    text: String,
    #[serde(skip)]
    catalog: Catalog,
    /// The figure overrides this topology was loaded with and how each was written, kept so
    /// that a further override (a sweep point's `--vary`) keeps the `--set`s before it.
    #[serde(skip)]
    applied: Vec<(ParamOverride, String)>,
}

/// An override of one figure of one node: `--set pm.fbs=false`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamOverride {
    pub node: String,
    pub param: String,
    pub value: Value,
}

impl ParamOverride {
    /// How a problem of this override is labelled when its caller gave no origin (the CLI
    /// gives its option, `--set hba.uplink=bogus`): `hba.uplink=bogus`.
    pub fn label(&self) -> String {
        format!("{}.{}={}", self.node, self.param, self.value)
    }
}

impl std::str::FromStr for ParamOverride {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (lhs, rhs) =
            s.split_once('=').ok_or_else(|| format!("{s:?} is not NODE.PARAM=VALUE, e.g. pm.fbs=false"))?;
        let (node, param) =
            lhs.trim().split_once('.').ok_or_else(|| format!("{lhs:?} is not NODE.PARAM, e.g. hba.lanes"))?;
        if node.is_empty() || param.is_empty() || rhs.trim().is_empty() {
            return Err(format!("{s:?} is not NODE.PARAM=VALUE, e.g. pm.fbs=false"));
        }
        Ok(ParamOverride { node: node.to_string(), param: param.to_string(), value: Value::parse_cli(rhs) })
    }
}

impl Topology {
    /// Reads and validates a topology file.
    pub fn load(path: &std::path::Path, catalog: &Catalog) -> Result<Topology, ConfigError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| ConfigError {
            diagnostics: vec![Diagnostic {
                file: file.clone(),
                line: 0,
                column: 0,
                key: String::new(),
                message: format!("cannot read the file: {e}"),
                help: Some("check the path; `ls configs/` lists the built-in examples".to_string()),
            }],
        })?;
        Topology::parse_bytes(&file, &bytes, catalog)
    }

    /// Parses and validates a topology file's bytes: text that is not UTF-8 is reported at
    /// the first bad byte (offset, line and column), not as an unreadable file.
    pub fn parse_bytes(file: &str, bytes: &[u8], catalog: &Catalog) -> Result<Topology, ConfigError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Topology::parse(file, text, catalog),
            Err(e) => {
                let at = e.valid_up_to();
                // The valid prefix is text: count lines and columns in it.
                let prefix = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
                let (line, column) = line_col(prefix, at);
                Err(ConfigError {
                    diagnostics: vec![Diagnostic {
                        file: file.to_string(),
                        line,
                        column,
                        key: key_at(prefix, at),
                        message: format!(
                            "byte {at} (line {line}, column {column}): not valid UTF-8 (byte 0x{:02x})",
                            bytes[at]
                        ),
                        help: Some(
                            "a topology is UTF-8 text; re-save the file as UTF-8 or remove the byte (e.g. a Latin-1 character)"
                                .into(),
                        ),
                    }],
                })
            }
        }
    }

    /// Parses and validates topology text; `file` names it in messages.
    pub fn parse(file: &str, text: &str, catalog: &Catalog) -> Result<Topology, ConfigError> {
        let raw: RawTopology = match toml::from_str(text) {
            Ok(r) => r,
            Err(e) => {
                let mut sink = Sink { file, text, out: Vec::new(), broken_parts: HashSet::new() };
                let msg = e.message().trim().to_string();
                // The reader gives no position for nesting beyond its limit: point at the
                // most deeply nested header or key.
                let span = e.span().or_else(|| Some(deepest_line(text)));
                let key = span.clone().map(|s| key_at(text, s.start)).unwrap_or_default();
                let key = if key.len() > 80 { format!("{}...", key.chars().take(77).collect::<String>()) } else { key };
                let help = serde_help(&msg, &key);
                let msg = if msg.contains("recursion limit") {
                    "tables or values are nested too deeply for the TOML reader (recursion limit)".to_string()
                } else {
                    msg
                };
                sink.at(span, key, msg, Some(help));
                return Err(ConfigError { diagnostics: sink.out });
            }
        };
        Topology::from_raw(file, text, raw, catalog, &[], &[])
    }

    /// Returns a copy with figure overrides applied (`--set`, `--vary`, fitting), validated
    /// as if they had been written in the file.
    pub fn with_overrides(&self, overrides: &[ParamOverride]) -> Result<Topology, ConfigError> {
        self.with_changes(overrides, &[], &[], &[])
    }

    /// [`Topology::with_overrides`], naming in each problem the option that gave the
    /// override: `origins[i]` is how override `i` was written (`--vary hba.mps=nan`).
    pub fn with_overrides_from(
        &self,
        overrides: &[ParamOverride],
        origins: &[String],
    ) -> Result<Topology, ConfigError> {
        self.with_changes(overrides, origins, &[], &[])
    }

    /// [`Topology::with_overrides_from`] with pools' options changed too
    /// (`--vary pool.tank.layout=raidz1`, [`crate::pool::vary`]); `pool_origins[i]` is how
    /// pool override `i` was written. The overrides this topology was loaded with stay
    /// (a later one of the same figure wins).
    pub fn with_changes(
        &self,
        overrides: &[ParamOverride],
        origins: &[String],
        pools: &[crate::pool::vary::PoolOverride],
        pool_origins: &[String],
    ) -> Result<Topology, ConfigError> {
        let mut raw = self.raw.clone();
        crate::pool::vary::apply(&mut raw, pools, pool_origins)?;
        let mut all: Vec<ParamOverride> = self.applied.iter().map(|(o, _)| o.clone()).collect();
        let mut labels: Vec<String> = self.applied.iter().map(|(_, l)| l.clone()).collect();
        for (i, o) in overrides.iter().enumerate() {
            all.push(o.clone());
            labels.push(origins.get(i).cloned().unwrap_or_else(|| o.label()));
        }
        Topology::from_raw(&self.file, &self.text, raw.clone(), &self.catalog, &all, &labels)
            .map_err(|e| crate::pool::vary::relabel(e, &raw, pools, pool_origins))
    }

    /// Validates an edited copy of this file's topology (e.g. [`Topology::with_card_moved`]),
    /// as if it had been written so.
    pub fn with_raw(&self, raw: RawTopology) -> Result<Topology, ConfigError> {
        Topology::from_raw(&self.file, &self.text, raw, &self.catalog, &[], &[])
    }

    /// The catalog this topology was resolved against.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn raw(&self) -> &RawTopology {
        &self.raw
    }

    /// The pool with this id.
    pub fn pool(&self, id: &str) -> Option<&crate::pool::Pool> {
        self.pools.iter().find(|p| p.id == id)
    }

    pub fn node(&self, id: &str) -> Option<NodeIx> {
        self.nodes.iter().position(|n| n.id == id)
    }

    pub fn host(&self) -> &Node {
        &self.nodes[0]
    }

    /// The host's typed figures. Every node of a loaded topology is resolved, node 0 is the
    /// host.
    pub fn host_figures(&self) -> &HostFigures {
        self.nodes[0].spec.host().unwrap_or_else(|| panic!("the host of {:?} is not resolved", self.name))
    }

    /// A drive's typed figures; `ix` must be a drive (one of [`Topology::drives`]).
    pub fn drive_figures(&self, ix: NodeIx) -> &DriveFigures {
        self.nodes[ix].spec.drive().unwrap_or_else(|| panic!("node {:?} is not a drive", self.nodes[ix].id))
    }

    /// Nodes from `ix` up to the host, `ix` first, without collecting them: what setup
    /// walks several times per drive.
    pub fn up_from(&self, ix: NodeIx) -> impl Iterator<Item = NodeIx> + '_ {
        std::iter::successors(Some(ix), |&cur| self.nodes[cur].parent)
    }

    /// Nodes from `ix` up to the host, `ix` first.
    pub fn path_to_host(&self, ix: NodeIx) -> Vec<NodeIx> {
        // Trees are shallow (drive, a few expanders or a switch, a controller, the host):
        // one allocation instead of the two or three that growing from one (1, 4, 8) makes.
        let mut v = Vec::with_capacity(8);
        v.push(ix);
        let mut cur = ix;
        while let Some(p) = self.nodes[cur].parent {
            v.push(p);
            cur = p;
        }
        v
    }

    /// A client by id.
    pub fn client(&self, id: &str) -> Option<&crate::net::Client> {
        self.clients.iter().find(|c| c.id == id)
    }

    pub fn generation(&self, link: &LinkSpec) -> Option<&GenerationFigures> {
        match link.generation_name() {
            Some(name) => self.generations.get(name),
            None => self.generations.get(&link.generation_key()),
        }
    }

    fn from_raw(
        file: &str,
        text: &str,
        raw: RawTopology,
        catalog: &Catalog,
        overrides: &[ParamOverride],
        origins: &[String],
    ) -> Result<Topology, ConfigError> {
        let mut sink = Sink { file, text, out: Vec::new(), broken_parts: HashSet::new() };
        // Workload problems are collected apart and reported after the tree's, in file order.
        let mut wsink = Sink { file, text, out: Vec::new(), broken_parts: HashSet::new() };
        if load::diagnostics::nothing_to_model(&mut sink, &raw) {
            return Err(sink.into_error(wsink));
        }
        let mut cat = catalog.clone();
        // Parts defined in the file extend the catalog for this topology.
        load::parts::load_parts(&mut sink, &mut cat, &raw.part);
        // A board becomes nodes and links of the tree; the file as written is kept.
        let (written, raw) = (raw.clone(), load::boards::expand(&mut sink, &cat, raw));
        let (raw, layout) = (raw.0, raw.1);
        let mut d = load::nodes::collect(&mut sink, &cat, &raw);
        load::boards::after_nodes(&mut d);
        load::params::command_line(&mut sink, &mut d, overrides, origins);
        // Named workloads, validated now so a broken one is a config error, not a run-time one.
        let drive_ids: Vec<&str> = d.nodes.iter().filter(|n| n.is_drive()).map(|n| n.id.as_str()).collect();
        let workloads = check_workloads(&mut wsink, &raw.workload, &drive_ids, d.drives_complete);
        load::tree::parents(&mut sink, &mut d);
        load::tree::cycles(&mut sink, &d);
        if !sink.out.is_empty() {
            return Err(sink.into_error(wsink));
        }
        load::tree::link_children(&mut d);
        load::params::apply(&mut sink, &mut d, file);
        load::attach::check(&mut sink, &mut d);
        let generations = load::links::derive(&mut sink, &cat, &mut d);
        load::diagnostics::no_drives(&mut sink, &d);
        let clients = load::clients::check(&mut sink, &cat, &d, &raw);
        let pools = load::pools::build(&mut sink, &raw, &d);
        load::pools::check_workloads(&mut wsink, &raw, &workloads, &pools, &d);
        if !sink.out.is_empty() || !wsink.out.is_empty() {
            return Err(sink.into_error(wsink));
        }
        let (board, placement) = load::boards::placement(layout, &d);
        let nodes = d.nodes;
        let drives = (0..nodes.len()).filter(|&i| nodes[i].is_drive()).collect();
        Ok(Topology {
            name: raw
                .name
                .clone()
                .unwrap_or_else(|| file.rsplit('/').next().unwrap_or(file).trim_end_matches(".toml").to_string()),
            description: raw.description.clone().unwrap_or_default(),
            source: raw.source.clone().unwrap_or_default(),
            file: file.to_string(),
            nodes,
            drives,
            workloads,
            generations,
            clients,
            pools,
            board,
            placement,
            raw: written,
            text: text.to_string(),
            catalog: cat,
            applied: overrides
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    let label = origins.get(i).cloned().unwrap_or_else(|| o.label());
                    (o.clone(), label)
                })
                .collect(),
        })
    }
}

/// The span of a value written in the file; `None` for values made up by the loader or
/// given on the command line (span 0..0).
pub(crate) fn known<T>(v: &Spanned<T>) -> Option<Range<usize>> {
    let s = v.span();
    (s.end > 0).then_some(s)
}

/// A TOML value as a message names it: `2.5`, `the string "zero"`, `a table`.
pub(crate) fn found(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("the string {s:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => format!("{f:?}"),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => format!("the date {d}"),
        toml::Value::Array(_) => "a list".to_string(),
        toml::Value::Table(_) => "a table".to_string(),
    }
}

/// Help for a problem the TOML reader found (syntax, unknown or missing keys, types), given
/// the key path it is at ([`key_at`]).
fn serde_help(msg: &str, key: &str) -> String {
    let last = key.rsplit(['.', ']']).next().unwrap_or_default();
    if msg.contains("unknown field") {
        "remove the key or fix its spelling; `iopath schema` lists every key".to_string()
    } else if msg.contains("missing field `source`") {
        "every figure needs a source, e.g. figures.ports = { value = 4, source = \"datasheet, table 1\" }".to_string()
    } else if msg.contains("missing field") {
        "add the missing key: a [[node]] and a [[drive]] need id, part and parent; `iopath schema` lists what each table needs".to_string()
    } else if msg.contains("invalid type") && msg.contains("expected a string") {
        format!(
            "write {} in double quotes, e.g. {} = \"hba\"",
            if last.is_empty() { "the value" } else { last },
            if last.is_empty() { "parent" } else { last }
        )
    } else if msg.contains("invalid type") && msg.contains("expected a map") {
        "write a table, e.g. params = { fbs = false }".to_string()
    } else if msg.contains("invalid type") && msg.contains("expected a sequence") {
        "write a list in brackets, e.g. drives = [\"d0\", \"d1\"]".to_string()
    } else if msg.contains("invalid type") || msg.contains("invalid value") {
        "check the value's type: ids, parts, parents and links are strings in quotes; ports and counts are whole numbers".to_string()
    } else if msg.contains("string values must be quoted") {
        "put text in double quotes, e.g. part = \"asm1166\"".to_string()
    } else if msg.contains("duplicate key") {
        "a key may appear once per table; remove one of the two".to_string()
    } else if msg.contains("unclosed array table") {
        "close the header with ]], e.g. [[drive]]".to_string()
    } else if msg.contains("unclosed table") {
        "close the header with ], e.g. [host]".to_string()
    } else if msg.contains("basic string") {
        "close the string with a double quote on the same line".to_string()
    } else if msg.contains("recursion limit") {
        "nest tables and values a few levels deep at most; a topology needs no more than [[drive]] and params = { ... }"
            .to_string()
    } else {
        "fix the TOML syntax at this position".to_string()
    }
}

/// The span of the start of the line nested most deeply (dots, brackets and braces in a
/// header or before a value), for reader errors that come without a position.
fn deepest_line(text: &str) -> Range<usize> {
    let mut best = (0usize, 0usize);
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let depth = line.chars().filter(|c| matches!(c, '.' | '[' | '{')).count();
        let indent = line.len() - line.trim_start().len();
        if depth > best.0 {
            best = (depth, offset + indent);
        }
        offset += line.len();
    }
    best.1..best.1 + 1
}

/// The key path at a byte offset, read from the text around it: the table in effect (with
/// its index for `[[node]]`-style arrays) and the key on that line, e.g. `drive[1].count`.
/// For messages from the TOML reader, which knows positions but not key paths.
fn key_at(text: &str, offset: usize) -> String {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut lines: Vec<&str> = text[..end].split('\n').collect();
    let current = lines.pop().unwrap_or_default();
    // `[host]` -> "host"; the n-th `[[drive]]` -> "drive[n]".
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut header = |line: &str| {
        let t = line.trim();
        if let Some(h) = t.strip_prefix("[[") {
            let name = h.split(']').next().unwrap_or(h).trim().to_string();
            let n = seen.entry(name.clone()).or_insert(0);
            *n += 1;
            Some(format!("{name}[{}]", *n - 1))
        } else {
            t.strip_prefix('[').map(|h| h.split(']').next().unwrap_or(h).trim().to_string())
        }
    };
    let mut table = String::new();
    for line in lines {
        if let Some(h) = header(line) {
            table = h;
        }
    }
    if let Some(h) = header(current) {
        return h;
    }
    let key = match current.split_once('=') {
        Some((k, _)) if !k.trim().starts_with('#') && !k.contains('"') => k.trim(),
        _ => "",
    };
    match (table.is_empty(), key.is_empty()) {
        (_, true) => table,
        (true, false) => key.to_string(),
        (false, false) => format!("{table}.{key}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Family;

    const ASM: &str = r#"
name = "t"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "asm1166"
parent = "host"
[[drive]]
id = "d"
count = 6
part = "kingston-dc600m-1920"
parent = "hba"
port = 0
"#;

    #[test]
    fn loads_a_small_tree() {
        let t = Topology::parse("t.toml", ASM, &Catalog::builtin()).unwrap();
        assert_eq!(t.drives.len(), 6);
        let hba = &t.nodes[t.node("hba").unwrap()];
        assert_eq!(hba.link.family, Family::Pcie);
        assert_eq!((hba.link.generation, hba.link.lanes, hba.link.mps), (3, 2, 512));
        assert_eq!(t.nodes[t.drives[5]].port, Some(5));
    }

    #[test]
    fn reports_position_and_suggestion_for_a_misspelt_part() {
        let bad = ASM.replace("asm1166", "asm1116");
        let e = Topology::parse("t.toml", &bad, &Catalog::builtin()).unwrap_err();
        let d = &e.diagnostics[0];
        assert_eq!((d.line, d.key.as_str()), (7, "node[0].part"));
        assert!(d.message.contains("did you mean") && d.message.contains("\"asm1166\""), "{}", d.message);
    }

    #[test]
    fn too_many_drives_is_an_error() {
        let bad = ASM.replace("count = 6", "count = 7");
        let e = Topology::parse("t.toml", &bad, &Catalog::builtin()).unwrap_err();
        assert!(e.to_string().contains("port 6 does not exist"), "{e}");
    }

    #[test]
    fn overrides_apply_and_validate() {
        let t = Topology::parse("t.toml", ASM, &Catalog::builtin()).unwrap();
        let o: ParamOverride = "hba.lanes=1".parse().unwrap();
        let t2 = t.with_overrides(&[o]).unwrap();
        assert_eq!(t2.nodes[t2.node("hba").unwrap()].link.lanes, 1);
        let bad: ParamOverride = "hba.lanez=1".parse().unwrap();
        let e = t.with_overrides(&[bad]).unwrap_err();
        assert!(e.to_string().contains("did you mean \"lanes\""), "{e}");
    }

    fn errors(text: &str) -> Vec<Diagnostic> {
        match Topology::parse("t.toml", text, &Catalog::builtin()) {
            Ok(_) => panic!("loaded, but should fail:\n{text}"),
            Err(e) => e.diagnostics,
        }
    }

    #[test]
    fn a_link_wider_than_the_card_trains_at_the_cards_width() {
        // Was tests/bad-configs/pending/link-wider-than-card.toml: an x8 HBA in an x16 slot.
        let text = r#"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "lsi-sas3008"
parent = "host"
link = "pcie3x16"
[[drive]]
id = "d"
part = "kingston-dc600m-1920"
parent = "hba"
port = 0
"#;
        let t = Topology::parse("t.toml", text, &Catalog::builtin()).unwrap();
        let link = t.nodes[t.node("hba").unwrap()].link;
        assert_eq!((link.family, link.generation, link.lanes), (Family::Pcie, 3, 8));
        // A narrower slot still narrows the link, and an older one slows it.
        let t = Topology::parse("t.toml", &text.replace("pcie3x16", "pcie2x4"), &Catalog::builtin()).unwrap();
        let link = t.nodes[t.node("hba").unwrap()].link;
        assert_eq!((link.generation, link.lanes), (2, 4));
    }

    #[test]
    fn impossible_link_widths_are_errors() {
        let base = ASM.replace("parent = \"host\"", "parent = \"host\"\nlink = \"L\"");
        for (link, want) in [
            ("pcie3x0", "has no lanes"),
            ("pcie3x99", "not a PCIe width"),
            ("pcie3x99999999999999999999", "not a PCIe width"),
            ("pcie3x-1", "not a number of lanes"),
            ("pcie3x3", "x3 is not a PCIe width"),
            ("pcie9", "PCIe has generations 1 to 5"),
        ] {
            let d = errors(&base.replace("\"L\"", &format!("{link:?}")));
            assert!(d[0].message.contains(want), "{link}: {}", d[0]);
            assert_eq!((d[0].line, d[0].key.as_str()), (9, "node[0].link"));
        }
        let sata = ASM.replace("port = 0", "port = 0\nlink = \"sata3x2\"");
        assert!(errors(&sata)[0].message.contains("a SATA link has one"));
    }

    #[test]
    fn an_fbs_capable_pm_under_a_cbs_controller_loads_and_switches_by_command() {
        // Was tests/bad-configs/pending/fbs-capable-pm-on-cbs-controller.toml: the JMB575's
        // catalog figure fbs = true says what it can do, not what the user asked for.
        let text = r#"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "asm1062"
parent = "host"
[[node]]
id = "pm"
part = "jmb575"
parent = "hba"
port = 0
[[drive]]
id = "d"
part = "kingston-dc600m-1920"
parent = "pm"
port = 0
"#;
        let t = Topology::parse("t.toml", text, &Catalog::builtin()).unwrap();
        let pm = t.node("pm").unwrap();
        assert!(t.nodes[pm].spec.port_multiplier().is_some_and(|p| p.fbs), "the catalog figure stays");
        assert!(!crate::paths::pm_uses_fbs(&t, pm));
        // Asking for FBS explicitly is the error, in the file or with --set.
        let asked = text.replace("port = 0\n[[drive]]", "port = 0\nparams = { fbs = true }\n[[drive]]");
        let d = errors(&asked);
        assert_eq!((d.len(), d[0].line, d[0].key.as_str()), (1, 13, "node[1].params.fbs"));
        let set: ParamOverride = "pm.fbs=true".parse().unwrap();
        assert!(t.with_overrides(&[set]).is_err());
    }

    #[test]
    fn a_cycle_is_reported_once_and_not_for_the_nodes_below_it() {
        let text = r#"
[[node]]
id = "a"
part = "broadcom-sas3x28"
parent = "b"
[[node]]
id = "b"
part = "broadcom-sas3x28"
parent = "a"
[[drive]]
id = "d"
part = "kingston-dc600m-1920"
parent = "a"
"#;
        let d = errors(text);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].line, d[0].key.as_str()), (5, "node[0].parent"));
        assert!(d[0].message.contains("\"a\" -> \"b\" -> \"a\""), "{}", d[0]);
    }

    #[test]
    fn a_rejected_id_causes_no_follow_on_errors() {
        let bad = ASM.replace("id = \"hba\"", "id = \"hba 0\"").replace("parent = \"hba\"", "parent = \"hba 0\"");
        let d = errors(&bad);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].message.contains("must be letters"));
        // An invalid id with count is reported once, not once per drive.
        let bad = ASM.replace("id = \"d\"", "id = \"d x\"");
        assert_eq!(errors(&bad).len(), 1);
    }

    #[test]
    fn workloads_name_existing_drives_and_keep_their_positions() {
        let ok = format!("{ASM}\n[workload.w]\nrw = \"read\"\ndrives = [\"d0\", \"d5\"]\ncopy = [\"d1:d2\"]\n");
        let t = Topology::parse("t.toml", &ok, &Catalog::builtin()).unwrap();
        let w = &t.workloads["w"];
        assert_eq!(w.drives.as_deref(), Some(&["d0".to_string(), "d5".to_string()][..]));
        assert!(w.resolve().is_ok());
        let bad = format!("{ASM}\n[workload.w]\ndrives = [\"d0\", \"d9\"]\ncopy = [\"d1:dd2\"]\nactive = 7\n");
        let d = errors(&bad);
        let shown: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        assert!(
            shown[0].contains("t.toml:17:17: workload.w.drives[1]: no drive has id \"d9\"; did you mean"),
            "{shown:?}"
        );
        assert!(
            shown
                .iter()
                .any(|s| s.contains("t.toml:18:9: workload.w.copy[0]: copy \"d1:dd2\": no drive has id \"dd2\"")),
            "{shown:?}"
        );
        assert!(
            shown.iter().any(|s| s.contains("workload.w.active: active = 7, but the topology has only 6 drives")),
            "{shown:?}"
        );
        assert!(d.iter().all(|d| d.help.is_some()));
    }

    #[test]
    fn huge_and_negative_numbers_are_errors_not_panics() {
        for v in ["9223372036854775807", "-9223372036854775808", "4294967296", "-1"] {
            let port = ASM.replace("port = 0", &format!("port = {v}"));
            assert!(errors(&port)[0].message.contains("does not exist"), "port = {v}");
            let count = ASM.replace("count = 6", &format!("count = {v}"));
            assert!(errors(&count)[0].message.contains("outside 1..4096"), "count = {v}");
            for field in ["iodepth", "numjobs", "rwmixread", "active", "seed"] {
                let w = format!("{ASM}\n[workload.w]\n{field} = {v}\n");
                if let Err(e) = Topology::parse("t.toml", &w, &Catalog::builtin()) {
                    assert!(e.diagnostics[0].key.starts_with("workload.w."), "{e}");
                }
            }
        }
        // The last port of a count group overflows i64.
        let d = errors(&ASM.replace("port = 0", "port = 9223372036854775806"));
        assert_eq!(d.len(), 1, "{d:?}");
    }

    #[test]
    fn an_empty_file_says_so_and_shows_a_minimal_topology() {
        for text in ["", "# nothing\n"] {
            let d = errors(text);
            assert_eq!(d.len(), 1);
            assert!(d[0].message.contains("the file is empty"));
            // The example in the help loads.
            let help = d[0].help.clone().unwrap();
            let example: String = help
                .lines()
                .skip(1)
                .map(|l| l.trim())
                .take_while(|l| !l.starts_with('`'))
                .map(|l| format!("{l}\n"))
                .collect();
            Topology::parse("example.toml", &example, &Catalog::builtin()).unwrap();
        }
    }

    #[test]
    fn reader_errors_name_the_key_path() {
        assert_eq!(key_at("[[drive]]\nid = 1\n[[drive]]\ncount = 2.5\n", 30), "drive[1].count");
        assert_eq!(key_at("name = 5\n", 7), "name");
        assert_eq!(key_at("[host]\n[[node]]\n", 7), "node[0]");
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
