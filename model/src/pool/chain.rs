//! The chain from a client's file to a pool's platters, as stages of shared resources: what a
//! report shows so a reader sees which stage binds (the client's link, the NIC's port and its
//! PCIe link, the uplinks above it, Samba's core, the host's CPU, the uplinks above the
//! controllers, the controllers, the members' links and their media).
//!
//! A stage is a set of resources of the [`ResourceGraph`]; its utilization in a run is its
//! busiest resource's. Stages a topology does not have (no client, no switch) are left out.

use super::Pool;
use crate::catalog::Kind;
use crate::net::Client;
use crate::paths::ResourceGraph;
use crate::topology::{NodeIx, Topology};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One stage of the chain and the resources it holds (indices into the graph's resources).
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// What the stage is, for a reader: `client link`, `NIC PCIe link`, `member media`, ...
    pub name: &'static str,
    pub resources: Vec<usize>,
}

/// A stage's use in one run: its busiest resource and that resource's utilization.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StageUse {
    pub stage: String,
    /// The busiest resource of the stage (`nic.p0.tx`, `d3.media`).
    pub id: String,
    /// Its utilization over the measured window, 0..1.
    pub util: f64,
}

/// The stages from the client (if any) to the pool's members, in that order.
pub fn stages(t: &Topology, g: &ResourceGraph, pool: &Pool, client: Option<&Client>) -> Vec<Stage> {
    let members: Vec<NodeIx> = pool.members().collect();
    // Nodes above the members, below the host: controllers, expanders, port multipliers and
    // the switches (chipsets) whose uplinks they share.
    let mut above_members: BTreeSet<NodeIx> = BTreeSet::new();
    for &m in &members {
        above_members.extend(t.path_to_host(m).into_iter().skip(1).filter(|&ix| ix != 0));
    }
    let nic_path: BTreeSet<NodeIx> =
        client.map(|c| t.path_to_host(c.nic).into_iter().skip(1).filter(|&ix| ix != 0).collect()).unwrap_or_default();
    let kind = |ix: NodeIx| t.nodes[ix].kind;
    let of = |pred: &dyn Fn(usize, &crate::paths::Resource) -> bool| -> Vec<usize> {
        g.resources.iter().enumerate().filter(|(i, r)| pred(*i, r)).map(|(i, _)| i).collect()
    };
    let link = |r: &crate::paths::Resource| matches!(r.kind, "pcie" | "sata" | "sas" | "pcie-reads");
    let mut out = Vec::new();
    let mut push = |name: &'static str, resources: Vec<usize>| {
        if !resources.is_empty() {
            out.push(Stage { name, resources });
        }
    };
    if let Some(c) = client {
        let own = format!("client.{}.link.", c.id);
        push("client link", of(&|_, r| r.id.starts_with(&own)));
        let port = format!("{}.p{}.", t.nodes[c.nic].id, c.port);
        push("NIC port", of(&|_, r| r.kind == "ethernet" && r.id.starts_with(&port)));
        push("NIC PCIe link", of(&|_, r| r.node == c.nic && link(r)));
        push(
            "uplinks above the NIC",
            of(&|_, r| nic_path.contains(&r.node) && kind(r.node) == Kind::Switch && link(r)),
        );
        push("Samba (smbd core)", of(&|_, r| r.id == format!("host.smbd.{}", c.id)));
    }
    push("host CPU", of(&|_, r| r.node == 0 && r.kind == "cpu" && !r.id.starts_with("host.smbd.")));
    push(
        "uplinks above the controllers",
        of(&|_, r| above_members.contains(&r.node) && kind(r.node) == Kind::Switch && link(r)),
    );
    push(
        "controllers",
        of(&|_, r| {
            above_members.contains(&r.node)
                && matches!(kind(r.node), Kind::Controller | Kind::Expander | Kind::PortMultiplier)
        }),
    );
    push("member links", of(&|_, r| members.contains(&r.node) && link(r)));
    push("member media", of(&|_, r| members.contains(&r.node) && matches!(r.kind, "media" | "stp")));
    out
}

/// Each stage's busiest resource in a run whose utilization of every resource of `g` is
/// `utils` (the simulator's, indexed as `g.resources`).
pub fn uses(g: &ResourceGraph, stages: &[Stage], utils: &[f64]) -> Vec<StageUse> {
    stages
        .iter()
        .map(|s| {
            let best = s
                .resources
                .iter()
                .copied()
                .max_by(|&a, &b| {
                    let (ua, ub) = (utils.get(a).copied().unwrap_or(0.0), utils.get(b).copied().unwrap_or(0.0));
                    ua.total_cmp(&ub).then(b.cmp(&a))
                })
                .unwrap_or(s.resources[0]);
            StageUse {
                stage: s.name.to_string(),
                id: g.resources[best].id.clone(),
                util: utils.get(best).copied().unwrap_or(0.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_n100_build_runs_from_the_laptop_to_the_members_media() {
        let text = include_str!("../../../configs/nas-n100-jmb585-raidz2.toml");
        let t = Topology::parse("nas.toml", text, &crate::Catalog::builtin()).unwrap();
        let g = ResourceGraph::new(&t);
        let s = stages(&t, &g, t.pool("tank").unwrap(), t.client("laptop"));
        let names: Vec<&str> = s.iter().map(|x| x.name).collect();
        // The N100 has its NIC and the JMB585 on CPU lanes: no switch stage.
        assert_eq!(
            names,
            [
                "client link",
                "NIC port",
                "NIC PCIe link",
                "Samba (smbd core)",
                "host CPU",
                "controllers",
                "member links",
                "member media"
            ]
        );
        let ids = |i: usize| s[i].resources.iter().map(|&r| g.resources[r].id.as_str()).collect::<Vec<_>>();
        assert_eq!(ids(0), ["client.laptop.link.rx", "client.laptop.link.tx"]);
        assert_eq!(ids(1), ["nic.p0.tx", "nic.p0.rx"]);
        // Six members, each a SATA link and its media.
        assert_eq!(s[7].resources.len(), 6);
        assert!(ids(5).iter().any(|id| id.starts_with("hba.uplink")), "{:?}", ids(5));
        // The busiest resource of a stage names it.
        let mut utils = vec![0.0; g.resources.len()];
        utils[s[7].resources[3]] = 0.9;
        assert_eq!(
            uses(&g, &s, &utils)[7],
            StageUse { stage: "member media".into(), id: "d3.media".into(), util: 0.9 }
        );
    }
}
