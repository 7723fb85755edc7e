//! The network through the command line: `check` prints each client's chain and bound, and
//! bad client tables or a `--client` that names nothing exit 2 with the position or option.

mod common;
use common::iopath;

const CONFIG: &str = "tests/data/net-client.toml";

#[test]
fn check_prints_the_client_chain_and_its_bound() {
    let o = iopath(&["check", CONFIG]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
    // 2.5GBASE-T at MTU 1500: 312.5 MB/s x 1448/1538, less 84 SMB3 header bytes per 1 MiB
    // read: 294.2 MB/s, below the ASM1166's x1 uplink and the four SSDs, so the I226-V's
    // port binds.
    assert!(
        out.contains(
            "laptop [smb3] over 2.5GbE (MTU 1500: 1448 B of TCP payload per frame) to nic0 [intel-i226-v] port 0"
        ),
        "{out}"
    );
    assert!(out.contains("read      294.2 (binds nic0.p0.tx) | with the drives     294.2 (binds nic0.p0.tx)"), "{out}");
    // The NIC's own PCIe link is in the tree: PCIe 2.1 x1 at 5 GT/s.
    assert!(out.contains("nic0 [nic intel-i226-v]  pcie2x1"), "{out}");
}

#[test]
fn check_json_lists_clients_only_where_there_are_some() {
    let o = iopath(&["check", CONFIG, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let c = &v["clients"][0];
    assert_eq!(c["id"], "laptop");
    assert_eq!(c["mss"], 1448);
    let o = iopath(&["check", "configs/asm1166-6ssd.toml", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert!(v.get("clients").is_none(), "no clients, no key: existing outputs keep their shape");
}

#[test]
fn a_bad_client_table_exits_2_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = std::fs::read_to_string(CONFIG).unwrap().replace("link = \"2.5GbE\"", "link = \"2.5G\"");
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, bad).unwrap();
    let o = iopath(&["check", p.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("bad.toml:22:8: client[0].link: \"2.5G\" is not a client link"), "{e}");
    assert!(e.contains("help: write an Ethernet rate such as \"1GbE\""), "{e}");
}

#[test]
fn an_unknown_client_option_exits_2_naming_it() {
    let o = iopath(&["simulate", CONFIG, "--client", "desktop", "--runtime", "10ms"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("--client desktop") && e.contains("its clients are laptop"), "{e}");
}

/// A client over plain drives has a closed-form bound (`check`) but no simulated run: the
/// network's costs ride on a pool's member classes. `simulate` says so instead of running
/// the drives without the network.
#[test]
fn simulating_a_client_without_a_pool_is_refused_naming_both_options() {
    let o = iopath(&["simulate", CONFIG, "--client", "laptop", "--runtime", "10ms"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("--client laptop without --pool"), "{e}");
    assert!(e.contains("iopath check"), "{e}");
}

#[test]
fn check_names_knfsd_when_its_copies_bind_an_nfs_write() {
    // One core copying 2,000 MB/s serves a 25 GbE NFS client: a WRITE's two copies and 16 us
    // per 1 MiB RPC on knfsd's threads, over min(8 threads, 1 core) = 1 core:
    // 1 / (2/2,000 + 16/1,048,576) = 985.0 MB/s, below the 2,942 MB/s of TCP payload 25 GbE
    // carries; a READ is spliced, so the wire binds it: 3,125 x 1448/1538 less NFS's 132
    // reply header bytes per 1 MiB, 2,942.2 / (1 + 132/1,048,576) = 2,941.8 MB/s.
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
[host]
part = "amd-am5"
params = { cpu_cores = 1, cpu_memcpy_mb_s = 2000 }
[[node]]
id = "nic0"
part = "mellanox-connectx-4-lx"
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
id = "vm"
nic = "nic0"
link = "25GbE"
protocol = "nfs"
"#;
    let path = dir.path().join("nfs.toml");
    std::fs::write(&path, text).unwrap();
    let o = iopath(&["check", path.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("write     985.0 (binds host.nfsd)"), "{out}");
    assert!(out.contains("read     2941.8 (binds nic0.p0.tx)"), "{out}");
    assert!(out.contains("knfsd: 8 threads over 1 cores"), "{out}");
    assert!(!out.contains("smbd:"), "{out}");
}
