//! The network between a client and the server: NICs on PCIe, Ethernet/IP/TCP framing at an
//! MTU, file-protocol messages (SMB3, NFS, iSCSI), and the server's protocol process.
//!
//! A client's request moves payload bytes; every element they cross costs seconds per payload
//! byte ([`Cost`]), so the network joins the fluid model as shared resources like any link:
//!
//! - **protocol bytes**: each request's data travels in messages with headers of their own
//!   (SMB2 READ response: 4 B NetBIOS session header + 64 B SMB2 header + 16 B READ response
//!   body, [MS-SMB2] 2.2.1, 2.2.20; an encrypted one adds the 52 B TRANSFORM_HEADER, 2.2.41),
//!   so the TCP stream carries `1 + header / request` bytes per payload byte;
//! - **framing**: TCP carries `MSS = MTU - 20 (IPv4) - 20 (TCP) - 12 (timestamps option,
//!   on by default in Linux: net.ipv4.tcp_timestamps = 1)` bytes per frame; on an Ethernet
//!   wire each frame takes `MTU + 14 (header) + 4 (FCS) + 8 (preamble and SFD) + 12
//!   (inter-frame gap)` bytes of line time (IEEE 802.3 clauses 3 and 4): 1 GbE carries
//!   1448/1538 x 125 MB/s = 117.7 MB/s of TCP payload. A veth shaped by `tc tbf` is
//!   charged by the qdisc per packet length, which is the frame with its 14-byte Ethernet
//!   header and no FCS, preamble or gap (for a GSO packet the kernel's
//!   `qdisc_pkt_len_init` adds every segment's headers), so it carries
//!   1448/1514 of its rate as payload: 119.6 MB/s at 1 Gbit/s;
//! - **acknowledgements**: the receiver acknowledges every second segment (delayed ACK,
//!   RFC 1122 4.2.3.2): a minimum-size frame (64 B + 20 B preamble and gap) per 2 x MSS on the
//!   reverse direction;
//! - **the NIC's PCIe link**: the NIC moves every frame (Ethernet header and all) over its own
//!   PCIe link and every link above it: data the server sends (a client's read) crosses them
//!   host to device, like a disk write; data it receives, device to host, like a disk read;
//!   so a NIC behind a chipset shares the chipset's uplink with its SATA controllers;
//! - **the server's protocol process**: Samba serves each client connection from one `smbd`
//!   process whose main thread receives every request and sends every response: a resource
//!   of its own, `host.smbd.CLIENT`, one core ([`smbd_s_per_byte`]). smbd reads a file with
//!   `pread()` on a thread pool and sends the response with `sendmsg()` from the main thread
//!   (S. Metzmacher, io-uring list, 2020: 'smbd uses pread() from within a pthread based
//!   threadpool for file io and sendmsg() to deliver the response to the socket ... The main
//!   smbd is cpu bound'), so per payload byte the main thread makes one copy (user buffer to
//!   the socket's buffers; for a write, the socket's into the buffer) at the host's
//!   `cpu_memcpy_mb_s`, runs AES for signing or encryption, and per request spends
//!   `smbd_request_us`. The pool threads' `pread` copies run on other cores and are not
//!   charged (4 to 16 cores each copy ~10 GB/s: far from binding a NAS);
//! - **knfsd**: NFS is served by `nfsd_threads` kernel threads on any core, shared by every
//!   NFS client (`host.nfsd`, [`nfsd_s_per_byte`]): a READ's pages are spliced from the page
//!   cache into the socket without a copy (Linux fs/nfsd/vfs.c `nfsd_splice_read`; the TCP
//!   transport sends the pages themselves), a WRITE copies the socket's data into the RPC's
//!   pages and those into the page cache (two copies); each RPC costs `nfsd_request_us`.
//!
//! - **requests**: each request waits once for the round trip and, for SMB3, for smbd's read
//!   of its data before any of it is sent (`smbd_read_mb_s`); a client keeps `outstanding`
//!   requests in flight, so its rate is at most `outstanding x request / (latency + request
//!   x slowest cost)` ([`window_cap`]): smbclient with one 8 MiB read in flight gets 112.7 of
//!   the 119.5 MB/s a 1 Gbit/s tbf carries (tests/net_rig.rs measured 112-116).
//!
//! [`client_costs`] gives all of these for one client and direction; [`request_latency_us`]
//! the time each request waits once. [`client_bound`] is the closed form of a client
//! reading or writing the server's drives.

use crate::bound::max_min;
use crate::link::LinkRates;
use crate::paths::{Cost, Dir, ResourceGraph, Side};
use crate::topology::{NodeIx, Topology};
use serde::Serialize;

/// IPv4 header without options [bytes] (RFC 791).
pub const IPV4_HEADER: u32 = 20;
/// TCP header without options [bytes] (RFC 9293).
pub const TCP_HEADER: u32 = 20;
/// TCP timestamps option as Linux sends it, padded (RFC 7323; on by default in Linux).
pub const TCP_TIMESTAMPS: u32 = 12;
/// Ethernet MAC header: destination, source, EtherType [bytes] (IEEE 802.3 clause 3).
pub const ETH_HEADER: u32 = 14;
/// Frame check sequence [bytes].
pub const ETH_FCS: u32 = 4;
/// Preamble and start frame delimiter [bytes].
pub const ETH_PREAMBLE: u32 = 8;
/// Minimum inter-packet gap [bytes of line time].
pub const ETH_IFG: u32 = 12;
/// Smallest Ethernet frame, FCS included [bytes]: what a bare ACK takes.
pub const ETH_MIN_FRAME: u32 = 64;

/// A file or block protocol a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Smb3,
    Nfs,
    Iscsi,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Smb3 => "smb3",
            Protocol::Nfs => "nfs",
            Protocol::Iscsi => "iscsi",
        }
    }

    /// The largest request a client sends by default [bytes], with its source.
    pub fn default_request(self) -> (u64, &'static str) {
        match self {
            Protocol::Smb3 => (
                8 << 20,
                "8 MiB: Samba's smb2 max read / max write default 8388608 (smb.conf(5)), which smbclient reads in whole (source3/libsmb/clireadwrite.c cli_pull_send: chunk = smb2cli_conn_max_read_size)",
            ),
            Protocol::Nfs => (
                1 << 20,
                "1 MiB: the Linux NFS client's largest and default negotiated rsize/wsize with a Linux server (nfs(5): 'the largest value ... is 1,048,576')",
            ),
            Protocol::Iscsi => (
                256 << 10,
                "256 KiB: MaxBurstLength default 262144 (RFC 7143 13.13), the most a read's Data-In sequence carries",
            ),
        }
    }

    /// Requests a client keeps outstanding by default, with its source.
    pub fn default_outstanding(self) -> (u32, &'static str) {
        match self {
            Protocol::Smb3 => (
                2,
                "2: smbclient's get keeps window / chunk = 16 MiB / 8 MiB = 2 reads in flight (source3/libsmb/clireadwrite.c cli_pull_send); a client granted fewer credits (an 8 MiB read is charged 128, one per 64 KiB, [MS-SMB2] 3.1.5.2) keeps fewer: write outstanding = 1 for it (tests/net_rig.rs measures one in flight)",
            ),
            Protocol::Nfs => {
                (16, "16: the Linux RPC client's historical TCP slot table (sunrpc.tcp_slot_table_entries = 16)")
            }
            Protocol::Iscsi => (32, "32: open-iscsi's node.session.queue_depth default (iscsid.conf)"),
        }
    }

    /// Protocol bytes per request on the direction that carries the data: the headers of the
    /// message the payload travels in, and for iSCSI one 48-byte header per Data PDU.
    pub fn header_bytes(self, dir: Dir, request: u64, encrypted: bool) -> f64 {
        let r = request as f64;
        match self {
            // NetBIOS 4 + SMB2 header 64 + READ response body 16 ([MS-SMB2] 2.2.20) or
            // WRITE request body 48 (2.2.21); TRANSFORM_HEADER 52 when encrypted (2.2.41).
            Protocol::Smb3 => {
                let body = if dir == Dir::Read { 16.0 } else { 48.0 };
                4.0 + 64.0 + body + if encrypted { 52.0 } else { 0.0 }
            }
            // Record mark 4 + RPC reply header 24 + READ3resok (status 4, post-op attributes
            // 88, count 4, eof 4, data length 4) = 132 (RFC 1813 3.3.6, RFC 5531); a WRITE call
            // carries its RPC call header with AUTH_SYS credentials and the file handle: ~200.
            Protocol::Nfs => {
                if dir == Dir::Read {
                    132.0
                } else {
                    200.0
                }
            }
            // A 48-byte Basic Header Segment per Data-In/Data-Out PDU of at most 256 KiB
            // (open-iscsi's MaxRecvDataSegmentLength default 262144, iscsid.conf) and one
            // SCSI Response PDU per command (RFC 7143 11.1).
            Protocol::Iscsi => 48.0 * (r / 262_144.0).ceil().max(1.0) + 48.0,
        }
    }
}

/// A client's own link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum ClientLink {
    /// A physical Ethernet port at this data rate [Gb/s].
    Ethernet { gbps: f64 },
    /// A veth shaped by `tc tbf` at this rate [bit/s], counting frames with their
    /// Ethernet header only.
    Tbf { bits_per_s: f64 },
}

impl ClientLink {
    /// Line bytes per frame of an `mtu`-byte IP packet.
    pub fn frame_bytes(self, mtu: u32) -> f64 {
        match self {
            ClientLink::Ethernet { .. } => f64::from(mtu + ETH_HEADER + ETH_FCS + ETH_PREAMBLE + ETH_IFG),
            ClientLink::Tbf { .. } => f64::from(mtu + ETH_HEADER),
        }
    }

    /// Line bytes of a bare ACK.
    pub fn ack_bytes(self) -> f64 {
        match self {
            ClientLink::Ethernet { .. } => f64::from(ETH_MIN_FRAME + ETH_PREAMBLE + ETH_IFG),
            ClientLink::Tbf { .. } => f64::from(ETH_HEADER + IPV4_HEADER + TCP_HEADER + TCP_TIMESTAMPS),
        }
    }

    /// Line rate [bytes/s].
    pub fn bytes_per_s(self) -> f64 {
        match self {
            ClientLink::Ethernet { gbps } => gbps * 1e9 / 8.0,
            ClientLink::Tbf { bits_per_s } => bits_per_s / 8.0,
        }
    }
}

/// Parses a client's `link`: `1GbE`, `2.5GbE`, `10GbE`, `25GbE` (any rate in Gb/s before
/// `GbE`), or `tbf:RATE` with RATE as tc writes it (`1gbit`, `2500mbit`). A NIC part name is
/// resolved by the loader, not here.
pub fn parse_client_link(s: &str) -> Option<ClientLink> {
    let t = s.trim();
    if let Some(rate) = t.strip_prefix("tbf:") {
        let r = rate.trim().to_ascii_lowercase();
        let (num, mult) = if let Some(n) = r.strip_suffix("gbit") {
            (n, 1e9)
        } else if let Some(n) = r.strip_suffix("mbit") {
            (n, 1e6)
        } else if let Some(n) = r.strip_suffix("kbit") {
            (n, 1e3)
        } else {
            return None;
        };
        let v: f64 = num.trim().parse().ok()?;
        return (v.is_finite() && v > 0.0 && v * mult <= 1e12).then_some(ClientLink::Tbf { bits_per_s: v * mult });
    }
    let lower = t.to_ascii_lowercase();
    let num = lower.strip_suffix("gbe")?;
    let gbps: f64 = num.trim().parse().ok()?;
    (gbps.is_finite() && gbps > 0.0 && gbps <= 1000.0).then_some(ClientLink::Ethernet { gbps })
}

/// A validated `[[client]]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Client {
    pub id: String,
    /// The server NIC node it talks to, and the port.
    pub nic: NodeIx,
    pub port: u32,
    /// Its own link, and how it was written.
    pub link: ClientLink,
    pub link_name: String,
    pub protocol: Protocol,
    pub mtu: u32,
    /// Network round trip between client and server [us].
    pub rtt_us: f64,
    pub smb_encryption: bool,
    pub smb_signing: bool,
    /// The largest request it sends [bytes].
    pub request_bytes: u64,
    /// Requests it keeps outstanding.
    pub outstanding: u32,
}

/// A LAN round trip when the client states none [us], with its reason.
pub const DEFAULT_RTT_US: (f64, &str) = (
    100.0,
    "100 us: the order of a ping round trip between two Linux hosts through one gigabit switch (store-and-forward of a full frame is 12.3 us per hop, the rest is both hosts' network stacks); inferred, not measured here",
);

impl Client {
    /// TCP payload bytes per frame.
    pub fn mss(&self) -> f64 {
        f64::from(self.mtu - IPV4_HEADER - TCP_HEADER - TCP_TIMESTAMPS)
    }

    /// The request size for a workload of `bs`-byte I/Os: the client's largest request at most.
    pub fn request_for(&self, bs: u64) -> u64 {
        bs.clamp(1, self.request_bytes)
    }

    /// TCP stream bytes per payload byte on the direction that carries the data.
    fn stream_per_payload(&self, dir: Dir, request: u64) -> f64 {
        1.0 + self.protocol.header_bytes(dir, request, self.smb_encryption) / request.max(1) as f64
    }

    /// Line bytes per payload byte on a link of this kind: (data direction, reverse (ACKs)).
    pub fn line_per_payload(&self, link: ClientLink, dir: Dir, request: u64) -> (f64, f64) {
        let segments = self.stream_per_payload(dir, request) / self.mss();
        (segments * link.frame_bytes(self.mtu), segments / 2.0 * link.ack_bytes())
    }
}

/// The network resources of a graph ([`ResourceGraph::new`] calls [`push_resources`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct NetResources {
    /// Per client (in [`Topology::clients`] order): the server NIC port's line (towards the
    /// client, from it), the client's own link (into the client, out of it), smbd's core.
    clients: Vec<ClientResources>,
    /// knfsd's threads, shared by every NFS client (none without one).
    nfsd: Option<usize>,
}

#[derive(Debug, Clone, Default, Serialize)]
struct ClientResources {
    wire: Option<(usize, usize)>,
    link: (usize, usize),
    smbd: Option<usize>,
}

/// Adds the NIC ports' lines, every client's link and the protocol processes' cores. A NIC
/// port shared by several clients is one pair of resources.
pub(crate) fn push_resources(g: &mut ResourceGraph, t: &Topology) -> NetResources {
    let mut ports: Vec<((NodeIx, u32), (usize, usize))> = Vec::new();
    let mut clients = Vec::new();
    for c in &t.clients {
        let nic = &t.nodes[c.nic];
        let gbps = nic.spec.nic().map_or(0.0, |n| n.port_gbps);
        let wire = (gbps > 0.0).then(|| {
            if let Some((_, w)) = ports.iter().find(|(k, _)| *k == (c.nic, c.port)) {
                return *w;
            }
            // For display: TCP payload of full frames at this MTU.
            let line = ClientLink::Ethernet { gbps };
            let mb_s = line.bytes_per_s() * c.mss() / line.frame_bytes(c.mtu) / 1e6;
            let tx = g.push(format!("{}.p{}.tx", nic.id, c.port), c.nic, Side::Down, "ethernet", mb_s);
            let rx = g.push(format!("{}.p{}.rx", nic.id, c.port), c.nic, Side::Up, "ethernet", mb_s);
            ports.push(((c.nic, c.port), (tx, rx)));
            (tx, rx)
        });
        let mb_s = c.link.bytes_per_s() * c.mss() / c.link.frame_bytes(c.mtu) / 1e6;
        let kind = if matches!(c.link, ClientLink::Tbf { .. }) { "tbf" } else { "ethernet" };
        let rx = g.push(format!("client.{}.link.rx", c.id), c.nic, Side::Down, kind, mb_s);
        let tx = g.push(format!("client.{}.link.tx", c.id), c.nic, Side::Up, kind, mb_s);
        // For display: the core's rate for the client's own largest reads.
        let smbd = (c.protocol == Protocol::Smb3).then(|| {
            let mb_s = 1.0 / smbd_s_per_byte(t, c, c.request_bytes) / 1e6;
            g.push(format!("host.smbd.{}", c.id), 0, Side::Internal, "cpu", mb_s)
        });
        clients.push(ClientResources { wire, link: (rx, tx), smbd });
    }
    let nfsd = t.clients.iter().find(|c| c.protocol == Protocol::Nfs).map(|c| {
        let mb_s = 1.0 / nfsd_s_per_byte(t, Dir::Write, c.request_bytes) / 1e6;
        g.push("host.nfsd".to_string(), 0, Side::Internal, "cpu", mb_s)
    });
    NetResources { clients, nfsd }
}

/// The index of a client in [`Topology::clients`].
pub fn client_index(t: &Topology, client: &str) -> Option<usize> {
    t.clients.iter().position(|c| c.id == client)
}

/// What one payload byte of a client's `request_bytes`-byte requests costs the network, the
/// NIC's PCIe links and the server's protocol process. `dir` is the client's: `Read` moves
/// data from the server to the client (the drives read). Empty for an unknown client.
pub fn client_costs(t: &Topology, graph: &ResourceGraph, client: &str, dir: Dir, request_bytes: u64) -> Vec<Cost> {
    let Some(i) = client_index(t, client) else {
        return Vec::new();
    };
    let c = &t.clients[i];
    let r = &graph.net.clients[i];
    let request = c.request_for(request_bytes);
    let mut out = Vec::new();
    // The server NIC's line: data out of it for a read, into it for a write; ACKs the other way.
    if let (Some((tx, rx)), Some(nic)) = (r.wire, t.nodes[c.nic].spec.nic()) {
        let line = ClientLink::Ethernet { gbps: nic.port_gbps };
        let (data, ack) = c.line_per_payload(line, dir, request);
        let (fwd, back) = if dir == Dir::Read { (tx, rx) } else { (rx, tx) };
        out.push(Cost { resource: fwd, s_per_byte: data / line.bytes_per_s() });
        out.push(Cost { resource: back, s_per_byte: ack / line.bytes_per_s() });
    }
    // The client's own link: into the client for a read.
    let (data, ack) = c.line_per_payload(c.link, dir, request);
    let (fwd, back) = if dir == Dir::Read { (r.link.0, r.link.1) } else { (r.link.1, r.link.0) };
    out.push(Cost { resource: fwd, s_per_byte: data / c.link.bytes_per_s() });
    out.push(Cost { resource: back, s_per_byte: ack / c.link.bytes_per_s() });
    // The NIC's PCIe link and every link above it: each frame with its Ethernet header.
    let pcie_bytes = c.stream_per_payload(dir, request) / c.mss() * f64::from(c.mtu + ETH_HEADER);
    for ix in t.path_to_host(c.nic) {
        let (Some(rates), [up, down]) = (graph.link_rates(ix), graph.link_resources(ix)) else {
            continue;
        };
        out.extend(pcie_costs(rates, *up, *down, dir, pcie_bytes));
    }
    if let Some(s) = r.smbd {
        out.push(Cost { resource: s, s_per_byte: smbd_s_per_byte(t, c, request) });
    }
    if let (Protocol::Nfs, Some(n)) = (c.protocol, graph.net.nfsd) {
        out.push(Cost { resource: n, s_per_byte: nfsd_s_per_byte(t, dir, request) });
    }
    out
}

/// Copies smbd's main thread makes of each payload byte: `sendmsg()` of a read's buffer into
/// the socket, or the receive of a write's data into its buffer (the file I/O's own copy runs
/// on the thread pool; see the module documentation).
pub const SMBD_MAIN_COPIES: f64 = 1.0;

/// Copies a knfsd thread makes of each payload byte: none for a READ (spliced pages), two
/// for a WRITE (socket to the RPC's pages, pages to the page cache).
pub fn nfsd_copies(dir: Dir) -> f64 {
    match dir {
        Dir::Read => 0.0,
        Dir::Write => 2.0,
    }
}

/// Seconds of smbd's one core per payload byte of `request`-byte requests: its copy at the
/// host's `cpu_memcpy_mb_s`, its share of the per-request cost `smbd_request_us` and, with
/// encryption or signing, AES on the same core (SMB 3.1.1 encrypts with AES-GCM and signs
/// with AES-GMAC, GCM's authentication without the cipher; both at the host's per-core
/// AES-GCM rate, [`crate::cpu::Kernel::AesGcm`]; SMB 3.0's AES-CMAC signing is slower).
pub fn smbd_s_per_byte(t: &Topology, c: &Client, request: u64) -> f64 {
    let h = t.host_figures();
    let aes = if c.smb_encryption || c.smb_signing {
        1.0 / (crate::cpu::kernel_mb_s(h, crate::cpu::Kernel::AesGcm) * 1e6)
    } else {
        0.0
    };
    SMBD_MAIN_COPIES / (h.cpu_memcpy_mb_s * 1e6) + h.smbd_request_us * 1e-6 / request.max(1) as f64 + aes
}

/// Seconds of knfsd's threads per payload byte of `request`-byte RPCs in direction `dir`:
/// each thread's copies and per-RPC cost, spread over `min(nfsd_threads, cpu_cores)` cores.
pub fn nfsd_s_per_byte(t: &Topology, dir: Dir, request: u64) -> f64 {
    let h = t.host_figures();
    let one = nfsd_copies(dir) / (h.cpu_memcpy_mb_s * 1e6) + h.nfsd_request_us * 1e-6 / request.max(1) as f64;
    one / h.nfsd_threads.min(h.cpu_cores).max(1.0)
}

/// A full-duplex PCIe link's costs for `bytes` per payload byte: a client's read is the NIC
/// reading host memory (host to device, with its read requests upstream, as a disk write);
/// a client's write is the NIC writing memory (device to host, as a disk read).
fn pcie_costs(r: &LinkRates, up: usize, down: usize, dir: Dir, bytes: f64) -> Vec<Cost> {
    match dir {
        Dir::Read => {
            let mut v = vec![Cost { resource: down, s_per_byte: bytes / r.write_payload_bytes_per_s }];
            if r.write_reverse_bytes_per_byte > 0.0 {
                v.push(Cost { resource: up, s_per_byte: bytes * r.write_reverse_bytes_per_byte / r.raw_bytes_per_s });
            }
            v
        }
        Dir::Write => vec![Cost { resource: up, s_per_byte: bytes / r.read_payload_bytes_per_s }],
    }
}

/// The time each request of a client waits once, outside every shared resource [us]: the
/// network round trip of request and response, and for SMB3 smbd's read of the request's
/// data before it sends any of it (Samba answers a READ with the whole buffer it read:
/// `smbd_smb2_read` reads, then the response is queued), at the host's `smbd_read_mb_s`.
/// 0 for an unknown client.
pub fn request_latency_us(t: &Topology, client: &str, request_bytes: u64) -> f64 {
    let Some(c) = t.client(client) else { return 0.0 };
    let read = match c.protocol {
        Protocol::Smb3 => c.request_for(request_bytes) as f64 / t.host_figures().smbd_read_mb_s,
        Protocol::Nfs | Protocol::Iscsi => 0.0,
    };
    c.rtt_us + read
}

/// The most a client's outstanding requests can move [bytes/s]: `outstanding` requests of
/// `request` bytes per request latency ([`request_latency_us`]) plus the time one request's
/// bytes take on the slowest element of `costs` (a pipeline of that depth).
pub fn window_cap(t: &Topology, c: &Client, request: u64, costs: &[Cost]) -> f64 {
    let slowest = costs.iter().map(|x| x.s_per_byte).fold(0.0, f64::max);
    let b = request as f64;
    f64::from(c.outstanding) * b / (request_latency_us(t, &c.id, request) * 1e-6 + b * slowest)
}

/// The closed form of a client reading (`Dir::Read`) or writing `drives` of the server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientBound {
    /// Payload the client moves [MB/s].
    pub total_mb_s: f64,
    /// The element that binds ("window": the client's outstanding requests).
    pub binding: String,
    pub binding_kind: String,
}

/// The bound of a client reading or writing `drives` (none: the network alone) with `bs`-byte
/// I/Os: each drive's class costs plus the client's costs per byte, water-filled, each flow
/// capped at its share of the client's window ([`window_cap`]; exact for one drive).
pub fn client_bound(
    t: &Topology,
    g: &ResourceGraph,
    client: &str,
    drives: &[NodeIx],
    dir: Dir,
    bs: u64,
    random: bool,
) -> Option<ClientBound> {
    let c = &t.clients[client_index(t, client)?];
    let request = c.request_for(bs);
    let net = client_costs(t, g, client, dir, request);
    let mut flows: Vec<Vec<Cost>> =
        drives.iter().map(|&d| merged(g.class_costs(t, d, dir, bs, random, true), &net)).collect();
    if flows.is_empty() {
        flows.push(net.clone());
    }
    let n = flows.len() as f64;
    let caps: Vec<f64> = flows.iter().map(|f| window_cap(t, c, request, f) / n).collect();
    let a = max_min(&flows, g.resources.len(), &caps);
    let total: f64 = a.rates.iter().sum();
    let (binding, binding_kind) = match a.binding.iter().flatten().next() {
        Some(&r) => (g.resources[r].id.clone(), g.resources[r].kind.to_string()),
        None => ("window".to_string(), "window".to_string()),
    };
    Some(ClientBound { total_mb_s: total / 1e6, binding, binding_kind })
}

/// What `check` says about one client: its chain and the closed form of reading and writing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientSummary {
    pub id: String,
    pub protocol: Protocol,
    pub link: String,
    pub mtu: u32,
    /// TCP payload per frame [bytes].
    pub mss: u32,
    pub nic: String,
    pub nic_part: String,
    pub port: u32,
    pub request_bytes: u64,
    pub outstanding: u32,
    /// Per request: round trip and (SMB3) smbd's read of the request [us].
    pub request_latency_us: f64,
    /// The network alone (a source that never binds), then with every drive of the server.
    pub read: ClientBound,
    pub write: ClientBound,
    pub read_all_drives: ClientBound,
    pub write_all_drives: ClientBound,
}

/// One [`ClientSummary`] per client, for `bs`-byte I/O.
pub fn client_summaries(t: &Topology, g: &ResourceGraph, bs: u64) -> Vec<ClientSummary> {
    let b = |id: &str, drives: &[NodeIx], dir: Dir| {
        client_bound(t, g, id, drives, dir, bs, false).unwrap_or(ClientBound {
            total_mb_s: 0.0,
            binding: "none".into(),
            binding_kind: String::new(),
        })
    };
    t.clients
        .iter()
        .map(|c| ClientSummary {
            id: c.id.clone(),
            protocol: c.protocol,
            link: c.link_name.clone(),
            mtu: c.mtu,
            mss: c.mss() as u32,
            nic: t.nodes[c.nic].id.clone(),
            nic_part: t.nodes[c.nic].part.clone(),
            port: c.port,
            request_bytes: c.request_for(bs),
            outstanding: c.outstanding,
            request_latency_us: request_latency_us(t, &c.id, bs),
            read: b(&c.id, &[], Dir::Read),
            write: b(&c.id, &[], Dir::Write),
            read_all_drives: b(&c.id, &t.drives, Dir::Read),
            write_all_drives: b(&c.id, &t.drives, Dir::Write),
        })
        .collect()
}

fn merged(mut a: Vec<Cost>, b: &[Cost]) -> Vec<Cost> {
    for c in b {
        match a.iter_mut().find(|x| x.resource == c.resource) {
            Some(x) => x.s_per_byte += c.s_per_byte,
            None => a.push(*c),
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;

    /// An N100-like host with a NIC `nic` on `parent` (host or the chipset) and one client.
    fn topo(nic: &str, client: &str) -> Topology {
        let text = format!(
            r#"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "asm1166"
parent = "host"
[[node]]
id = "nic0"
part = "{nic}"
parent = "host"
[[drive]]
id = "d"
count = 2
part = "kingston-dc600m-1920"
parent = "hba"
[[client]]
id = "laptop"
nic = "nic0"
{client}
"#
        );
        Topology::parse("t.toml", &text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn net_only(t: &Topology, dir: Dir, bs: u64) -> ClientBound {
        let g = ResourceGraph::new(t);
        client_bound(t, &g, "laptop", &[], dir, bs, false).unwrap()
    }

    #[test]
    fn one_gbe_carries_1448_of_1538_bytes_as_tcp_payload() {
        // 1 GbE, MTU 1500: MSS 1500 - 20 - 20 - 12 = 1448 per 1538 bytes of line time
        // (1500 + 14 + 4 + 8 + 12); 8 MiB SMB3 reads add 84 header bytes per request.
        let t = topo("intel-i210", "link = \"1GbE\"");
        let b = net_only(&t, Dir::Read, 8 << 20);
        let expected = 125e6 * 1448.0 / 1538.0 / (1.0 + 84.0 / 8388608.0) / 1e6;
        assert!((b.total_mb_s - expected).abs() < 1e-6, "{} vs {expected}", b.total_mb_s);
        assert!(b.binding.ends_with(".tx") || b.binding.ends_with(".rx"), "{}", b.binding);
    }

    #[test]
    fn jumbo_frames_raise_the_payload_share() {
        // MTU 9000: 8948 payload per 9038 bytes of line time on the client's 10 GbE.
        let t = topo("aquantia-aqc107", "link = \"10GbE\"\nmtu = 9000\nprotocol = \"nfs\"\nrequest = \"1m\"");
        let b = net_only(&t, Dir::Read, 1 << 20);
        let expected = 1.25e9 * 8948.0 / 9038.0 / (1.0 + 132.0 / 1048576.0) / 1e6;
        assert!((b.total_mb_s - expected).abs() < 1e-6, "{} vs {expected}", b.total_mb_s);
    }

    #[test]
    fn a_tbf_link_counts_the_ethernet_header_only() {
        // tc tbf on a veth: 1448 payload per 1514-byte packet: 125 MB/s x 1448/1514 = 119.55.
        let t = topo("linux-veth", "link = \"tbf:1gbit\"");
        let b = net_only(&t, Dir::Read, 8 << 20);
        let expected = 125e6 * 1448.0 / 1514.0 / (1.0 + 84.0 / 8388608.0) / 1e6;
        assert!((b.total_mb_s - expected).abs() < 1e-6, "{} vs {expected}", b.total_mb_s);
        assert_eq!(b.binding, "client.laptop.link.rx");
        // No line of the veth's own, and no PCIe link.
        let g = ResourceGraph::new(&t);
        assert!(g.resources.iter().all(|r| !r.id.starts_with("nic0.")), "{:?}", g.resources);
    }

    #[test]
    fn the_i210s_gen1_x1_link_is_no_bottleneck_for_its_port_but_an_x1_slot_is_for_10gbe() {
        // I210: PCIe 2.5 GT/s x1 = 250 MB/s of 8b/10b payload before TLP overhead: over the
        // 117.7 MB/s its 1 GbE port carries, so the port binds.
        let t = topo("intel-i210", "link = \"1GbE\"");
        assert!(net_only(&t, Dir::Read, 1 << 20).binding.starts_with("nic0.p0."));
        // An AQC107 trained at pcie2 x1 (500 MB/s raw) cannot carry 10 GbE (1.18 GB/s of TCP
        // payload): its PCIe link binds, host to device for a client's read.
        let text = r#"
[host]
part = "amd-am5"
[[node]]
id = "nic0"
part = "aquantia-aqc107"
parent = "host"
link = "pcie2x1"
[[node]]
id = "hba"
part = "asm1166"
parent = "host"
[[drive]]
id = "d"
part = "kingston-dc600m-1920"
parent = "hba"
[[client]]
id = "laptop"
nic = "nic0"
link = "10GbE"
"#;
        let t = Topology::parse("t.toml", text, &Catalog::builtin()).unwrap();
        let b = net_only(&t, Dir::Read, 1 << 20);
        assert_eq!(b.binding, "nic0.uplink.down", "{b:?}");
        // The link's own host-to-device payload rate over the frame bytes per payload byte.
        let g = ResourceGraph::new(&t);
        let r = g.link_rates(t.node("nic0").unwrap()).unwrap();
        let per = (1.0 + 84.0 / 1048576.0) / 1448.0 * 1514.0;
        assert!((b.total_mb_s - r.write_payload_bytes_per_s / per / 1e6).abs() < 1e-6);
        assert!(b.total_mb_s < 500.0 * 1448.0 / 1514.0, "below the raw 500 MB/s of 5 GT/s x1 with 8b/10b");
    }

    /// As [`topo`] with host figures overridden (`params = { ... }` on the host).
    fn topo_host(params: &str, nic: &str, client: &str) -> Topology {
        let text = format!(
            r#"
[host]
part = "amd-am5"
params = {{ {params} }}
[[node]]
id = "nic0"
part = "{nic}"
parent = "host"
[[node]]
id = "hba"
part = "asm1166"
parent = "host"
[[drive]]
id = "d"
part = "kingston-dc600m-1920"
parent = "hba"
[[client]]
id = "laptop"
nic = "nic0"
{client}
"#
        );
        Topology::parse("t.toml", &text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// 25 GbE, MTU 1500: 3,125 MB/s of line x 1448/1538 of TCP payload per frame, less the
    /// 84 header bytes per request [MB/s].
    fn payload_25gbe(request: f64) -> f64 {
        3125.0 * 1448.0 / 1538.0 / (1.0 + 84.0 / request)
    }

    #[test]
    fn a_desktop_cores_smbd_does_not_bind_25gbe() {
        // Ryzen 7000 (amd-am5): one copy per byte at 11,364 MB/s and 16 us per 8 MiB read:
        // 1 / (1/11,364 + 16/8,388,608) MB/s = 11,121 MB/s on smbd's core, above the 2,942
        // MB/s of TCP payload 25 GbE carries: the client's link binds, not Samba.
        // 16 requests in flight, as a Windows client granted credits keeps them: the window
        // (smbclient's 2 reads of 8 MiB, each waiting for smbd's read of it) out of the way.
        let t = topo("mellanox-connectx-4-lx", "link = \"25GbE\"\noutstanding = 16");
        let c = t.client("laptop").unwrap();
        let smbd = 1.0 / smbd_s_per_byte(&t, c, 8 << 20) / 1e6;
        assert!((smbd - 1.0 / (1.0 / 11_364.0 + 16.0 / 8_388_608.0)).abs() < 1e-6, "{smbd}");
        let b = net_only(&t, Dir::Read, 8 << 20);
        assert!((b.total_mb_s - payload_25gbe(8_388_608.0)).abs() < 1e-6, "{b:?}");
        assert!(!b.binding.starts_with("host.smbd"), "{b:?}");
    }

    #[test]
    fn a_slow_copy_makes_one_smbd_core_bind_a_25gbe_client() {
        // A core that copies 2,000 MB/s: 1 / (1/2,000 + 16/8,388,608) = 1,992.4 MB/s < 2,942.
        let t = topo_host("cpu_memcpy_mb_s = 2000", "mellanox-connectx-4-lx", "link = \"25GbE\"\noutstanding = 16");
        let b = net_only(&t, Dir::Read, 8 << 20);
        assert_eq!(b.binding, "host.smbd.laptop");
        let expected = 1.0 / (1.0 / 2000.0 + 16.0 / 8_388_608.0);
        assert!((b.total_mb_s - expected).abs() < 1e-6, "{b:?} vs {expected}");
        // A write copies once on the same core too (the socket's data into smbd's buffer).
        let w = net_only(&t, Dir::Write, 8 << 20);
        assert_eq!(w.binding, "host.smbd.laptop");
        assert!((w.total_mb_s - expected).abs() < 1e-6, "{w:?}");
    }

    #[test]
    fn small_requests_make_smbds_per_request_cost_bind() {
        // 50 us per request over 64 KiB requests is 0.763 ns per byte, on top of 0.088 ns of
        // copy: 1 / (1/11,364 + 50/65,536) = 1,175 MB/s, below 25 GbE's 2,939 at 64 KiB.
        let t = topo_host(
            "smbd_request_us = 50",
            "mellanox-connectx-4-lx",
            "link = \"25GbE\"\nrequest = \"64k\"\noutstanding = 64",
        );
        let b = net_only(&t, Dir::Read, 64 << 10);
        assert_eq!(b.binding, "host.smbd.laptop", "{b:?}");
        let expected = 1.0 / (1.0 / 11_364.0 + 50.0 / 65_536.0);
        assert!((b.total_mb_s - expected).abs() < 1e-6, "{b:?} vs {expected}");
        // The same client with 8 MiB requests: the per-request cost is 128x smaller per byte.
        let t = topo_host("smbd_request_us = 50", "mellanox-connectx-4-lx", "link = \"25GbE\"\noutstanding = 16");
        assert!(!net_only(&t, Dir::Read, 8 << 20).binding.starts_with("host.smbd"));
    }

    #[test]
    fn smb_encryption_adds_aes_on_smbds_core() {
        // 25 GbE, encrypted, AES-GCM at 1,500 MB/s per core: one core copies (11,364 MB/s),
        // encrypts and handles each 8 MiB request: 1 / (1/11,364 + 1/1,500 + 16/8,388,608)
        // = 1,321 MB/s; every frame also carries the 52-byte TRANSFORM_HEADER, which does
        // not change what one core can do.
        let t = topo_host(
            "cpu_aes_gcm_mb_s = 1500",
            "mellanox-connectx-4-lx",
            "link = \"25GbE\"\nsmb_encryption = true\noutstanding = 16",
        );
        let b = net_only(&t, Dir::Read, 8 << 20);
        assert_eq!(b.binding, "host.smbd.laptop");
        let expected = 1.0 / (1.0 / 11_364.0 + 1.0 / 1500.0 + 16.0 / 8_388_608.0);
        assert!((b.total_mb_s - expected).abs() < 1e-6, "{b:?} vs {expected}");
    }

    #[test]
    fn knfsd_splices_reads_and_copies_writes_twice_over_its_threads() {
        // NFS has no smbd; knfsd's threads are one shared resource.
        let t = topo("mellanox-connectx-4-lx", "link = \"25GbE\"\nprotocol = \"nfs\"");
        let g = ResourceGraph::new(&t);
        assert!(g.resources.iter().all(|r| !r.id.starts_with("host.smbd")));
        assert_eq!(g.resources.iter().filter(|r| r.id == "host.nfsd").count(), 1);
        // One core, copies at 2,000 MB/s: a WRITE's two copies and 16 us per 1 MiB RPC,
        // 1 / (2/2,000 + 16/1,048,576) = 985.0 MB/s, below the link: knfsd binds.
        let t = topo_host(
            "cpu_cores = 1, cpu_memcpy_mb_s = 2000",
            "mellanox-connectx-4-lx",
            "link = \"25GbE\"\nprotocol = \"nfs\"",
        );
        let w = net_only(&t, Dir::Write, 1 << 20);
        assert_eq!(w.binding, "host.nfsd", "{w:?}");
        let expected = 1.0 / (2.0 / 2000.0 + 16.0 / 1_048_576.0);
        assert!((w.total_mb_s - expected).abs() < 1e-6, "{w:?} vs {expected}");
        // A READ is spliced: only the RPC cost, 65,536 MB/s on one core: the link binds.
        let r = net_only(&t, Dir::Read, 1 << 20);
        assert!(r.binding.starts_with("client.") || r.binding.starts_with("nic0."), "{r:?}");
        // Four cores under eight threads: four times the write rate, 3,940 MB/s, above the
        // link's 2,942.
        let t = topo_host(
            "cpu_cores = 4, cpu_memcpy_mb_s = 2000",
            "mellanox-connectx-4-lx",
            "link = \"25GbE\"\nprotocol = \"nfs\"",
        );
        assert_ne!(net_only(&t, Dir::Write, 1 << 20).binding, "host.nfsd");
    }

    #[test]
    fn few_small_requests_over_a_long_round_trip_are_bound_by_the_window() {
        // One 64 KiB request per 10 ms round trip: 65536 / (0.01 + 65536 x cost) < 6.6 MB/s.
        let t = topo("intel-i210", "link = \"1GbE\"\nrtt_us = 10000\noutstanding = 1");
        let b = net_only(&t, Dir::Read, 64 << 10);
        assert_eq!(b.binding, "window");
        assert!(b.total_mb_s < 6.6 && b.total_mb_s > 6.0, "{b:?}");
    }

    #[test]
    fn a_client_reading_a_drive_takes_the_slower_of_drive_and_network() {
        // A DC600M reads ~500 MB/s, a 1 GbE client gets ~117.7: the network binds; on 10 GbE
        // the drive's own media or link does.
        let t = topo("intel-i210", "link = \"1GbE\"");
        let g = ResourceGraph::new(&t);
        let d = t.drives[0];
        let b = client_bound(&t, &g, "laptop", &[d], Dir::Read, 1 << 20, false).unwrap();
        assert!(b.binding.starts_with("nic0.p0") || b.binding.starts_with("client."), "{b:?}");
        let t = topo("aquantia-aqc107", "link = \"10GbE\"");
        let g = ResourceGraph::new(&t);
        let b = client_bound(&t, &g, "laptop", &[t.drives[0]], Dir::Read, 1 << 20, false).unwrap();
        assert!(b.binding.starts_with("d0."), "{b:?}");
    }

    #[test]
    fn writes_cross_the_nic_link_device_to_host() {
        let t = topo("intel-i210", "link = \"1GbE\"");
        let g = ResourceGraph::new(&t);
        let up = g.link_resources(t.node("nic0").unwrap())[0];
        let w = client_costs(&t, &g, "laptop", Dir::Write, 1 << 20);
        assert!(w.iter().any(|c| c.resource == up));
        let rx = g.resources.iter().position(|r| r.id == "nic0.p0.rx").unwrap();
        let on_rx = w.iter().find(|c| c.resource == rx).unwrap().s_per_byte;
        // A WRITE request carries 116 header bytes (4 + 64 + 48).
        let expected = (1.0 + 116.0 / 1048576.0) / 1448.0 * 1538.0 / 125e6;
        assert!((on_rx - expected).abs() < 1e-18);
    }

    #[test]
    fn client_links_parse_as_written() {
        assert_eq!(parse_client_link("2.5GbE"), Some(ClientLink::Ethernet { gbps: 2.5 }));
        assert_eq!(parse_client_link("tbf:2500mbit"), Some(ClientLink::Tbf { bits_per_s: 2.5e9 }));
        assert_eq!(parse_client_link("tbf:fast"), None);
        assert_eq!(parse_client_link("10G"), None);
        assert_eq!(parse_client_link("-1GbE"), None);
    }
}
