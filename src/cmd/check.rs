//! `iopath check TOPOLOGY`: validate, print the tree with every link's rates, and the
//! closed-form bound for 1..N active drives.
use super::{CliResult, load_topology, print_json, print_text};
use iopath_model::Catalog;
use iopath_model::bound::BoundRow;
use iopath_model::paths::ResourceGraph;
use iopath_reports::tree::{TreeNode, bound_table, tree};
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Topology file (see configs/ for examples).
    pub topology: PathBuf,
    /// Override a part figure of one node: NODE.PARAM=VALUE (repeatable).
    #[arg(long = "set", value_name = "NODE.PARAM=VALUE")]
    pub set: Vec<String>,
    /// Block size the bound assumes for per-command overheads.
    #[arg(long, default_value = "1m")]
    pub bs: String,
    /// Print the tree and bound as one JSON document.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct CheckJson<'a> {
    topology: &'a str,
    file: &'a str,
    description: &'a str,
    nodes: Vec<TreeNode>,
    bound_bs: u64,
    bound: Vec<BoundRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pools: Vec<iopath_reports::pools::PoolJson>,
    /// Network clients and their bounds (`model/src/net.rs`); absent without clients.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    clients: Vec<iopath_model::net::ClientSummary>,
    /// The board's id and where each card and drive sits on it; absent without a board.
    #[serde(skip_serializing_if = "Option::is_none")]
    board: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    placement: Vec<PlacementJson>,
}

#[derive(Serialize)]
struct PlacementJson {
    id: String,
    place: iopath_model::board::Place,
    /// The place in words, at its effective width.
    what: String,
}

fn fmt_rate(v: f64) -> String {
    if v.is_finite() { format!("{v:.1}") } else { "-".to_string() }
}

pub fn run(a: CheckArgs, cat: &Catalog) -> CliResult {
    let t = load_topology(&a.topology, cat, &a.set)?;
    let bs =
        iopath_model::units::parse_size(&a.bs).map_err(|e| super::CliError::usage(anyhow::anyhow!("--bs: {e}")))?.get();
    let g = ResourceGraph::new(&t);
    let nodes = tree(&t, &g);
    let rows = bound_table(&t, &g, bs);
    let pools = iopath_reports::pools::pools_json(&t, &g, bs);
    let clients = iopath_model::net::client_summaries(&t, &g, bs);
    if a.json {
        print_json(&CheckJson {
            topology: &t.name,
            file: &t.file,
            description: &t.description,
            nodes,
            bound_bs: bs,
            bound: rows,
            pools,
            clients,
            board: t.board.as_ref().map(|b| b.id.as_str()),
            placement: t
                .board
                .iter()
                .flat_map(|b| {
                    t.placement.iter().map(|(ix, p)| PlacementJson {
                        id: t.nodes[*ix].id.clone(),
                        place: p.clone(),
                        what: b.describe(p),
                    })
                })
                .collect(),
        })?;
        return Ok(0);
    }
    let mut s = String::new();
    let _ = writeln!(s, "{}: {} ({} drives)", t.name, t.description, t.drives.len());
    if let Some(b) = &t.board {
        let _ = writeln!(s, "board: {} ({}; `iopath catalog {}` shows its map and rules)", b.name, b.id, b.id);
    }
    let _ = writeln!(
        s,
        "\ntree (link to parent: raw and payload MB/s per direction, after encoding and protocol overhead)"
    );
    for n in &nodes {
        let indent = "  ".repeat(n.depth);
        let port = n.port.map(|p| format!(" port {p}")).unwrap_or_default();
        let _ = write!(s, "{indent}{} [{} {}]{port}", n.id, n.kind, n.part);
        if let (Some(b), Some((_, place))) = (&t.board, t.placement.iter().find(|(ix, _)| t.nodes[*ix].id == n.id)) {
            let _ = write!(s, " @ {}", b.describe(place));
        }
        if let Some(l) = &n.link {
            if l.generation == "internal" {
                let _ = write!(s, "  internal link");
            } else {
                let mps = l.mps.map(|m| format!("; MPS {m}")).unwrap_or_default();
                let why = l.why.as_ref().map(|w| format!(" ({w}{mps})")).unwrap_or_default();
                let _ = write!(
                    s,
                    "  {}{why}: raw {} | read {} | write {} ({} duplex)",
                    l.trained,
                    fmt_rate(l.raw_mb_s),
                    fmt_rate(l.read_payload_mb_s),
                    fmt_rate(l.write_payload_mb_s),
                    l.duplex
                );
            }
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "\nbound: highest aggregate MB/s with the first N drives each asking for all it can do ({} transfers)",
        iopath_model::units::Bytes::new(bs)
    );
    if t.drives.len() > iopath_model::bound::FULL_TABLE_DRIVES {
        let _ = writeln!(
            s,
            "({} drives: rows for 1..32 active and then counts spaced evenly on a log scale, not every count)",
            t.drives.len()
        );
    }
    let _ = writeln!(
        s,
        "{:>6}  {:>10}  {:<22} {:>10}  {:<22} {:>10}  {:<22}",
        "active", "read", "binds", "write", "binds", "mixed", "binds"
    );
    for chunk in rows.chunks(3) {
        let _ = writeln!(
            s,
            "{:>6}  {:>10.1}  {:<22} {:>10.1}  {:<22} {:>10.1}  {:<22}",
            chunk[0].active,
            chunk[0].total_mb_s,
            chunk[0].binding,
            chunk[1].total_mb_s,
            chunk[1].binding,
            chunk[2].total_mb_s,
            chunk[2].binding
        );
    }
    s.push_str(&iopath_reports::pools::pools_section(&pools, bs));
    s.push_str(&clients_section(&t, &clients));
    s.push_str(&drive_notes_section(&t));
    s.push_str(&defaulted_figures_section(&t));
    print_text(&s)?;
    Ok(0)
}

/// What the bound's steady rates leave out about the drives (an SLC cache's cliff, SMR): one
/// line per part, naming its drives (text output only).
fn drive_notes_section(t: &iopath_model::Topology) -> String {
    let mut groups: Vec<(String, String, Vec<&str>)> = Vec::new();
    for &d in &t.drives {
        let Some(note) = ResourceGraph::write_cache_note(t, d) else { continue };
        let n = &t.nodes[d];
        match groups.iter_mut().find(|(part, _, _)| *part == n.part) {
            Some(g) => g.2.push(&n.id),
            None => groups.push((n.part.clone(), note, vec![&n.id])),
        }
    }
    let mut s = String::new();
    if !groups.is_empty() {
        s.push_str("\ndrive notes\n");
    }
    for (part, note, ids) in groups {
        let who = match ids.as_slice() {
            [first, .., last] if ids.len() > 3 => format!("{first} .. {last} ({} drives)", ids.len()),
            many => many.join(", "),
        };
        let _ = writeln!(s, "  {who} [{part}]: {note}");
    }
    s
}

/// The clients: each one's chain from its link to the server's NIC, and the closed form of
/// its reads and writes over the network alone and with every drive.
fn clients_section(t: &iopath_model::Topology, clients: &[iopath_model::net::ClientSummary]) -> String {
    let mut s = String::new();
    if clients.is_empty() {
        return s;
    }
    let h = t.host_figures();
    let _ = writeln!(
        s,
        "\nclients (MB/s of the client's payload; the network alone, then with all {} drives)",
        t.drives.len()
    );
    for c in clients {
        let _ = writeln!(
            s,
            "  {} [{}] over {} (MTU {}: {} B of TCP payload per frame) to {} [{}] port {}; {} requests, {} in flight, {:.0} us each",
            c.id,
            c.protocol.as_str(),
            c.link,
            c.mtu,
            c.mss,
            c.nic,
            c.nic_part,
            c.port,
            iopath_model::units::Bytes::new(c.request_bytes),
            c.outstanding,
            c.request_latency_us
        );
        for (what, net, all) in [("read", &c.read, &c.read_all_drives), ("write", &c.write, &c.write_all_drives)] {
            let _ = writeln!(
                s,
                "    {what:<5} {:>9.1} (binds {}) | with the drives {:>9.1} (binds {})",
                net.total_mb_s, net.binding, all.total_mb_s, all.binding
            );
        }
    }
    if clients.iter().any(|c| c.protocol == iopath_model::net::Protocol::Smb3) {
        let _ = writeln!(
            s,
            "  smbd: one process per client, its main thread on one core: one copy per byte at {} MB/s and {} us per request; reading each request at {} MB/s before sending it",
            h.cpu_memcpy_mb_s, h.smbd_request_us, h.smbd_read_mb_s
        );
    }
    if clients.iter().any(|c| c.protocol == iopath_model::net::Protocol::Nfs) {
        let _ = writeln!(
            s,
            "  knfsd: {} threads over {} cores, shared by the NFS clients: a READ spliced (no copy), a WRITE copied twice at {} MB/s; {} us per RPC",
            h.nfsd_threads, h.cpu_cores, h.cpu_memcpy_mb_s, h.nfsd_request_us
        );
    }
    s
}

/// The figures each node took from the catalog's defaults because its part does not state
/// them (text output only). Nodes with the same part and the same defaults share a line.
fn defaulted_figures_section(t: &iopath_model::Topology) -> String {
    // (part, defaults as shown) -> ids, in the order the nodes come.
    let mut groups: Vec<(String, String, Vec<&str>)> = Vec::new();
    for n in t.nodes.iter().filter(|n| !n.defaults.is_empty()) {
        let shown: Vec<String> = n.defaults.iter().map(|(k, f)| format!("{k} = {}", f.value)).collect();
        let shown = shown.join(", ");
        match groups.iter_mut().find(|(part, s, _)| *part == n.part && *s == shown) {
            Some(g) => g.2.push(&n.id),
            None => groups.push((n.part.clone(), shown, vec![&n.id])),
        }
    }
    if groups.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nfigures taken from defaults (the part does not state them; `iopath catalog PART` gives each default's reason)\n",
    );
    for (part, shown, ids) in groups {
        let who = match ids.as_slice() {
            [one] => one.to_string(),
            [first, .., last] if ids.len() > 3 => format!("{first} .. {last} ({} nodes)", ids.len()),
            many => many.join(", "),
        };
        let _ = writeln!(s, "  {who} [{part}]: {shown}");
    }
    s
}
