//! Pass 9: the `[[client]]` tables. A client names the server NIC it talks to (a `[[node]]`
//! whose part is a NIC) and the port, its own link (`"2.5GbE"`, `"tbf:1gbit"`, or a NIC part
//! such as `"intel-i225-v"`), its protocol and MTU; the workloads' `client` must name one.
//! Every problem is reported at its value with what was expected and a suggestion.

use super::Draft;
use crate::catalog::{Catalog, Kind, did_you_mean, suggest};
use crate::net::{Client, ClientLink, DEFAULT_RTT_US, Protocol, parse_client_link};
use crate::topology::{RawTopology, Sink, found, known};
use crate::units::parse_size;
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// A `[[client]]` table as written.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "A network client of one of the server's network cards.")]
pub struct RawClient {
    /// Unique id, named by a workload's client.
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// Id of the server's network card: a node whose part is a NIC.
    #[schemars(with = "String")]
    pub nic: Spanned<String>,
    /// The NIC's port (default 0).
    #[schemars(with = "Option<u32>")]
    pub port: Option<Spanned<toml::Value>>,
    /// The client's own link: "1GbE", "2.5GbE", "10GbE", "25GbE", a NIC part id, or
    /// "tbf:RATE" for a veth shaped by tc tbf ("tbf:1gbit").
    #[schemars(with = "String")]
    pub link: Spanned<String>,
    /// The protocol: "smb3" (the default), "nfs" or "iscsi".
    #[schemars(with = "Option<String>", extend("enum" = ["smb3", "nfs", "iscsi"]))]
    pub protocol: Option<Spanned<toml::Value>>,
    /// IP MTU in bytes, default 1500 (9000: jumbo frames).
    #[schemars(with = "Option<u32>")]
    pub mtu: Option<Spanned<toml::Value>>,
    /// Network round trip in microseconds.
    #[schemars(with = "Option<f64>")]
    pub rtt_us: Option<Spanned<toml::Value>>,
    /// Largest request, a size such as "1m" (default: the protocol's).
    #[schemars(with = "Option<String>")]
    pub request: Option<Spanned<toml::Value>>,
    /// Requests kept outstanding (default: the protocol client's).
    #[schemars(with = "Option<u32>")]
    pub outstanding: Option<Spanned<toml::Value>>,
    /// SMB3 encryption of every message (smb encrypt = required): AES on both ends.
    #[schemars(with = "Option<bool>")]
    pub smb_encryption: Option<Spanned<toml::Value>>,
    /// SMB3 signing of every message (server signing = mandatory).
    #[schemars(with = "Option<bool>")]
    pub smb_signing: Option<Spanned<toml::Value>>,
}

/// Validates every `[[client]]`, and every workload's `client` against them.
pub(crate) fn check(sink: &mut Sink, cat: &Catalog, d: &Draft, raw: &RawTopology) -> Vec<Client> {
    let mut out: Vec<Client> = Vec::new();
    for (i, c) in raw.client.iter().enumerate() {
        if let Some(client) = one(sink, cat, d, i, c, &out) {
            out.push(client);
        }
    }
    let ids: Vec<&str> = raw.client.iter().map(|c| c.id.get_ref().as_str()).collect();
    for (name, w) in &raw.workload {
        let Some(v) = &w.client else { continue };
        let toml::Value::String(s) = v.get_ref() else { continue };
        if !ids.contains(&s.as_str()) {
            let hint = did_you_mean(&suggest(s, ids.iter().copied()));
            let help = if ids.is_empty() {
                "add a [[client]] table (id, nic, link) or remove client from the workload".to_string()
            } else {
                format!("name one of the [[client]] ids: {}", ids.join(", "))
            };
            sink.at(known(v), format!("workload.{name}.client"), format!("no client has id {s:?}{hint}"), Some(help));
        }
    }
    out
}

fn one(sink: &mut Sink, cat: &Catalog, d: &Draft, i: usize, c: &RawClient, seen: &[Client]) -> Option<Client> {
    let key = |f: &str| format!("client[{i}].{f}");
    let first = sink.out.len();
    let id = c.id.get_ref().trim().to_string();
    if id.is_empty() {
        sink.at(
            known(&c.id),
            key("id"),
            "a client id is empty",
            Some("give the client a name, e.g. id = \"laptop\"".into()),
        );
    } else if seen.iter().any(|s| s.id == id) {
        sink.at(
            known(&c.id),
            key("id"),
            format!("client id {id:?} is used twice"),
            Some("give each [[client]] its own id".into()),
        );
    }
    // The server NIC.
    let nics: Vec<&str> = d.nodes.iter().filter(|n| n.kind == Kind::Nic).map(|n| n.id.as_str()).collect();
    let nic_id = c.nic.get_ref();
    let nic = d.nodes.iter().position(|n| &n.id == nic_id);
    let nic = match nic {
        Some(ix) if d.nodes[ix].kind == Kind::Nic => Some(ix),
        found_node => {
            let what = match found_node {
                Some(ix) => format!("{nic_id:?} is a {}, not a NIC", d.nodes[ix].kind),
                None => format!("no node has id {nic_id:?}{}", did_you_mean(&suggest(nic_id, nics.iter().copied()))),
            };
            let help = if nics.is_empty() {
                "add the server's NIC as a [[node]] with a nic part (e.g. part = \"intel-i226-v\", parent = \"host\") and name its id".to_string()
            } else {
                format!("name one of the NIC nodes: {}", nics.join(", "))
            };
            sink.at(known(&c.nic), key("nic"), what, Some(help));
            None
        }
    };
    let ports = nic.and_then(|ix| d.nodes[ix].spec.nic()).map_or(1, |n| n.ports);
    let port = whole(sink, &c.port, &key("port"), 0, i64::from(ports) - 1, "a port of the NIC", 0);
    // The client's link.
    let link_text = c.link.get_ref();
    let link = parse_client_link(link_text).or_else(|| {
        let part = cat.get_kind(link_text, Kind::Nic)?;
        let gbps = crate::parts::resolve(Kind::Nic, &part.figures).ok()?.spec.nic()?.port_gbps;
        (gbps > 0.0).then_some(ClientLink::Ethernet { gbps })
    });
    if link.is_none() {
        let parts = cat.suggest(link_text, Some(Kind::Nic));
        sink.at(
            known(&c.link),
            key("link"),
            format!("{link_text:?} is not a client link{}", did_you_mean(&parts)),
            Some("write an Ethernet rate such as \"1GbE\", \"2.5GbE\", \"10GbE\", a NIC part such as \"intel-i225-v\", or \"tbf:1gbit\" for a veth shaped by tc tbf".into()),
        );
    }
    let protocol = match &c.protocol {
        None => Some(Protocol::Smb3),
        Some(v) => match v.get_ref() {
            toml::Value::String(s) if s == "smb3" => Some(Protocol::Smb3),
            toml::Value::String(s) if s == "nfs" => Some(Protocol::Nfs),
            toml::Value::String(s) if s == "iscsi" => Some(Protocol::Iscsi),
            other => {
                let hint = match other {
                    toml::Value::String(s) => did_you_mean(&suggest(s, ["smb3", "nfs", "iscsi"].into_iter())),
                    _ => String::new(),
                };
                sink.at(
                    known(v),
                    key("protocol"),
                    format!("expected one of \"smb3\", \"nfs\", \"iscsi\", found {}{hint}", found(other)),
                    Some("write protocol = \"smb3\" (Samba), \"nfs\" or \"iscsi\"".into()),
                );
                None
            }
        },
    };
    let proto = protocol.unwrap_or(Protocol::Smb3);
    // 576: the smallest IPv4 datagram every host must accept (RFC 791); 9216: the largest
    // jumbo frame switches commonly carry.
    let mtu = whole(sink, &c.mtu, &key("mtu"), 576, 9216, "an IP MTU in bytes", 1500);
    let rtt_us = number(sink, &c.rtt_us, &key("rtt_us"), DEFAULT_RTT_US.0);
    let (max_req, _) = proto.default_request();
    let request_bytes = match &c.request {
        None => Some(max_req),
        Some(v) => {
            let parsed = match v.get_ref() {
                toml::Value::String(s) => parse_size(s).ok().map(|b| b.get()).filter(|b| (512..=64 << 20).contains(b)),
                _ => None,
            };
            if parsed.is_none() {
                sink.at(
                    known(v),
                    key("request"),
                    format!("expected a request size from 512 to 64m in quotes, found {}", found(v.get_ref())),
                    Some("write request = \"1m\" (k = 1024, as fio)".into()),
                );
            }
            parsed
        }
    };
    let (def_out, _) = proto.default_outstanding();
    let outstanding =
        whole(sink, &c.outstanding, &key("outstanding"), 1, 65536, "requests in flight", i64::from(def_out));
    let smb_encryption = flag(sink, &c.smb_encryption, &key("smb_encryption"), proto);
    let smb_signing = flag(sink, &c.smb_signing, &key("smb_signing"), proto);
    if sink.out.len() > first {
        return None;
    }
    Some(Client {
        id,
        nic: nic?,
        port: port? as u32,
        link: link?,
        link_name: link_text.clone(),
        protocol: protocol?,
        mtu: mtu? as u32,
        rtt_us: rtt_us?,
        smb_encryption: smb_encryption?,
        smb_signing: smb_signing?,
        request_bytes: request_bytes?,
        outstanding: outstanding? as u32,
    })
}

/// A whole number in `lo..=hi`, `default` when absent; `None` after reporting a problem.
fn whole(
    sink: &mut Sink,
    v: &Option<Spanned<toml::Value>>,
    key: &str,
    lo: i64,
    hi: i64,
    what: &str,
    default: i64,
) -> Option<i64> {
    let Some(v) = v else { return Some(default) };
    match v.get_ref() {
        toml::Value::Integer(n) if (lo..=hi).contains(n) => Some(*n),
        other => {
            sink.at(
                known(v),
                key,
                format!("expected {what}, a whole number from {lo} to {hi}; found {}", found(other)),
                Some(format!("write a whole number from {lo} to {hi}, e.g. {}", default.clamp(lo, hi))),
            );
            None
        }
    }
}

fn number(sink: &mut Sink, v: &Option<Spanned<toml::Value>>, key: &str, default: f64) -> Option<f64> {
    let Some(v) = v else { return Some(default) };
    let n = match v.get_ref() {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    };
    match n {
        Some(n) if n.is_finite() && n > 0.0 && n <= 1e7 => Some(n),
        _ => {
            sink.at(
                known(v),
                key,
                format!("expected a round trip in microseconds above 0 and up to 10 s; found {}", found(v.get_ref())),
                Some("write rtt_us = 100 (a LAN) or the round trip ping reports, in us".into()),
            );
            None
        }
    }
}

fn flag(sink: &mut Sink, v: &Option<Spanned<toml::Value>>, key: &str, proto: Protocol) -> Option<bool> {
    let Some(v) = v else { return Some(false) };
    match v.get_ref() {
        toml::Value::Boolean(b) if proto == Protocol::Smb3 || !b => Some(*b),
        toml::Value::Boolean(_) => {
            sink.at(
                known(v),
                key,
                format!(
                    "{} is an SMB3 setting, but this client speaks {}",
                    key.rsplit('.').next().unwrap_or(key),
                    proto.as_str()
                ),
                Some("remove it, or write protocol = \"smb3\"".into()),
            );
            None
        }
        other => {
            sink.at(
                known(v),
                key,
                format!("expected true or false, found {}", found(other)),
                Some("write true or false".into()),
            );
            None
        }
    }
}
