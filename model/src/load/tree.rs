//! Pass 3: every node's parent exists and every chain of parents reaches the host.

use super::Draft;
use crate::catalog::{did_you_mean, suggest};
use crate::topology::Sink;

/// Links each node to its parent, reporting parents that do not exist or are the node itself.
pub(crate) fn parents(sink: &mut Sink, d: &mut Draft) {
    let Draft { nodes, pending, ids, rejected, .. } = d;
    for ix in 1..nodes.len() {
        let p = &pending[ix];
        let pid = p.parent.get_ref();
        match ids.get(pid) {
            Some((pix, _)) if *pix == ix => {
                sink.at(
                    Some(p.parent.span()),
                    format!("{}.parent", p.key),
                    format!("{:?} is its own parent", nodes[ix].id),
                    Some("attach it to a controller, switch or \"host\"".into()),
                );
            }
            Some((pix, _)) => nodes[ix].parent = Some(*pix),
            // Its id was rejected and reported already.
            None if rejected.contains(pid) => {}
            None => {
                let s = suggest(pid, ids.keys().map(|k| k.as_str()));
                sink.at(
                    Some(p.parent.span()),
                    format!("{}.parent", p.key),
                    format!("no node has id {pid:?}{}", did_you_mean(&s)),
                    Some("parent must be \"host\" or the id of a [[node]]".into()),
                );
            }
        }
    }
}

/// Where a node's parent chain walk stands, for finding cycles.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Walk {
    New,
    OnPath,
    Done,
}

/// Reports parent chains that never reach the host. Each cycle is reported once, at its
/// member that comes first in the file; nodes that merely hang below a cycle are not.
pub(crate) fn cycles(sink: &mut Sink, d: &Draft) {
    let Draft { nodes, pending, .. } = d;
    let mut state = vec![Walk::New; nodes.len()];
    for start in 1..nodes.len() {
        let mut walk = Vec::new();
        let mut cur = Some(start);
        while let Some(c) = cur {
            match state[c] {
                Walk::New => {
                    state[c] = Walk::OnPath;
                    walk.push(c);
                    cur = nodes[c].parent;
                }
                Walk::OnPath => {
                    let from = walk.iter().position(|&w| w == c).unwrap_or(0);
                    let first = walk[from..].iter().copied().min().unwrap_or(c);
                    let mut names = vec![format!("{:?}", nodes[first].id)];
                    let mut m = nodes[first].parent;
                    while let Some(x) = m {
                        names.push(format!("{:?}", nodes[x].id));
                        if x == first || names.len() > walk.len() + 1 {
                            break;
                        }
                        m = nodes[x].parent;
                    }
                    let pend = &pending[first];
                    sink.at(
                        Some(pend.parent.span()),
                        format!("{}.parent", pend.key),
                        format!(
                            "{:?} is in a cycle of parents and cannot reach the host: {}",
                            nodes[first].id,
                            names.join(" -> ")
                        ),
                        Some(format!(
                            "every chain of parents must end at \"host\"; attach one of the cycle to \"host\" or a controller outside it, e.g. parent = \"host\" in {}",
                            pend.key
                        )),
                    );
                    break;
                }
                Walk::Done => break,
            }
        }
        for w in walk {
            state[w] = Walk::Done;
        }
    }
}

/// Fills in every node's children, in file order (once the tree is known to be sound).
pub(crate) fn link_children(d: &mut Draft) {
    let nodes = &mut d.nodes;
    for ix in 1..nodes.len() {
        if let Some(p) = nodes[ix].parent {
            nodes[p].children.push(ix);
        }
    }
}
