//! The network model against a real network: two namespaces joined by a veth pair shaped
//! by `tc tbf` at 1 and 2.5 Gbit/s, raw TCP with `iperf3` and Samba's `smbd` serving a file
//! to `smbclient`, each rate within 10% of the model's prediction for the same link
//! (`link = "tbf:RATE"`: the qdisc charges each packet its IP length plus the 14-byte
//! Ethernet header, [`iopath_model::net`]). Root only; skips with a note where a tool is
//! missing (a failure under CI, where `.ci/run` installs them). Every transfer is bounded in
//! size (200 MiB files) and time (`timeout`), and the rig is torn down on every path.

use iopath_model::net::{ClientLink, client_bound};
use iopath_model::paths::{Dir, ResourceGraph};
use iopath_model::{Catalog, Topology};
use iopath_test_support::net::{NetRig, available};
use iopath_test_support::{Rig, skip, which};
use std::path::Path;
use std::time::Duration;

/// The rig as a topology: the server's end of the veth as its NIC (no PCIe link, no line of
/// its own), the client behind a tbf-shaped link. The drive is there because a topology
/// needs one; the network-only bound does not use it.
fn rig_topology(rate: &str, extra: &str) -> Topology {
    let text = format!(
        r#"
[host]
part = "amd-am5"
[[node]]
id = "veth"
part = "linux-veth"
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
id = "rig"
nic = "veth"
link = "tbf:{rate}"
{extra}
"#
    );
    Topology::parse("net-rig.toml", &text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
}

/// Raw TCP payload the model predicts for the shaped link [MB/s]: the link's rate times
/// MSS over the bytes the qdisc charges per segment (no file protocol).
fn predicted_tcp_mb_s(rate: &str) -> f64 {
    let t = rig_topology(rate, "");
    let c = t.client("rig").unwrap();
    c.link.bytes_per_s() * c.mss() / c.link.frame_bytes(c.mtu) / 1e6
}

/// An smbclient get of large files as the model predicts it [MB/s], and what binds.
fn predicted_smb(rate: &str) -> (f64, String) {
    // smbclient here keeps one 8 MiB read in flight (each request takes its transfer plus
    // smbd's read of it: 1 and 2.5 Gbit/s both fit that, and two concurrent gets reach the
    // line), so the client is written with outstanding = 1.
    let t = rig_topology(rate, "outstanding = 1");
    let g = ResourceGraph::new(&t);
    let b = client_bound(&t, &g, "rig", &[], Dir::Read, 8 << 20, false).unwrap();
    (b.total_mb_s, b.binding)
}

fn tools(list: &[&str]) -> bool {
    match available(list) {
        Ok(()) => true,
        Err(why) => {
            skip(&why);
            false
        }
    }
}

/// iperf3's steady-state rate [MB/s]: the mean of its 1-second intervals after the first,
/// which holds TCP's slow start (the model is a steady rate).
fn iperf3_mb_s(json: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("iperf3 JSON: {e}: {json}"));
    let rates: Vec<f64> = v["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .map(|i| i["sum"]["bits_per_second"].as_f64().expect("bits_per_second") / 8e6)
        .collect();
    assert!(rates.len() >= 2, "{json}");
    rates[1..].iter().sum::<f64>() / (rates.len() - 1) as f64
}

fn iperf3_case(net: u8, rate: &str) {
    if !tools(&["iperf3", "ss"]) {
        return;
    }
    let mut rig = NetRig::new(net, Some(rate)).expect("network rig");
    let ip = rig.server_ip.clone();
    rig.spawn_server(&which("iperf3").unwrap(), &["-s", "-1", "-B", &ip], None).expect("iperf3 -s");
    rig.wait_listening(5201, Duration::from_secs(10)).expect("iperf3 listening");
    // -R: the server sends, as a client's read; 3 s, killed after 20.
    let out =
        rig.run_client("iperf3", &["-c", &ip, "-R", "-t", "3", "-J"], Duration::from_secs(20)).expect("iperf3 -c");
    let measured = iperf3_mb_s(&out);
    let predicted = predicted_tcp_mb_s(rate);
    eprintln!("iperf3 tbf {rate}: measured {measured:.1} MB/s, predicted {predicted:.1} MB/s");
    assert!(
        (measured / predicted - 1.0).abs() < 0.10,
        "iperf3 at {rate}: measured {measured:.1}, predicted {predicted:.1}"
    );
}

#[test]
fn iperf3_through_a_1gbit_tbf_matches_the_framing() {
    iperf3_case(1, "1gbit");
}

#[test]
fn iperf3_through_a_2500mbit_tbf_matches_the_framing() {
    iperf3_case(2, "2500mbit");
}

/// A private Samba configuration: a guest share of `share`, every state, lock, pid, cache
/// and log directory under `dir`, listening only on the rig's server address.
fn smb_conf(dir: &Path, share: &Path, ip: &str) -> std::path::PathBuf {
    for d in ["state", "lock", "pid", "cache", "private", "log"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let d = dir.display();
    let conf = format!(
        "[global]\n  server role = standalone server\n  map to guest = Bad User\n  guest account = root\n  interfaces = {ip}/30\n  bind interfaces only = yes\n  smb ports = 445\n  disable netbios = yes\n  state directory = {d}/state\n  lock directory = {d}/lock\n  pid directory = {d}/pid\n  cache directory = {d}/cache\n  private dir = {d}/private\n  log file = {d}/log/log.%m\n  load printers = no\n  printing = bsd\n  printcap name = /dev/null\n  disable spoolss = yes\n[share]\n  path = {}\n  guest ok = yes\n  read only = yes\n",
        share.display()
    );
    let p = dir.join("smb.conf");
    std::fs::write(&p, conf).unwrap();
    p
}

/// smbclient's rate for a get [MB/s]: it prints KiloBytes/sec of 1,024 bytes
/// (source3/client/client.c: bytes / (1.024 x ms)).
fn smbclient_mb_s(out: &str) -> f64 {
    let at = out.find("KiloBytes/sec").unwrap_or_else(|| panic!("no rate in smbclient's output: {out}"));
    let num = out[..at].trim_end().rsplit('(').next().unwrap_or_default();
    num.trim().parse::<f64>().unwrap_or_else(|_| panic!("rate {num:?} in {out}")) * 1024.0 / 1e6
}

/// Serves a 200 MiB file from `source` (a directory) to smbclient over the rig: returns the
/// measured rate. `prefix`: how to start smbd (e.g. inside a throttled cgroup).
fn smb_get(rig: &mut NetRig, work: &Path, source: &Path, prefix: Option<std::process::Command>) -> f64 {
    let conf = smb_conf(work, source, &rig.server_ip.clone());
    let c = conf.display().to_string();
    let smbd = which("smbd").unwrap();
    rig.spawn_server(&smbd, &["--foreground", "--no-process-group", "-s", &c], prefix).expect("smbd");
    rig.wait_listening(445, Duration::from_secs(20)).expect("smbd listening");
    let share = format!("//{}/share", rig.server_ip);
    let out = rig
        .run_client("smbclient", &[&share, "-N", "-s", &c, "-c", "get big /dev/null"], Duration::from_secs(60))
        .expect("smbclient get");
    smbclient_mb_s(&out)
}

fn smb_case(net: u8, rate: &str) {
    if !tools(&["smbd", "smbclient", "ss"]) {
        return;
    }
    let mut files = Rig::new("netsmb").expect("scratch");
    let share = files.dir.join("share");
    std::fs::create_dir_all(&share).unwrap();
    // A fast source: a fully written file, in the page cache once written.
    let written = files.file(&share, "big", 200 << 20).expect("200 MiB file");
    assert!(written.exists());
    let mut rig = NetRig::new(net, Some(rate)).expect("network rig");
    let measured = smb_get(&mut rig, &files.dir.join("samba"), &share, None);
    let (predicted, binding) = predicted_smb(rate);
    eprintln!("smbclient get tbf {rate}: measured {measured:.1} MB/s, predicted {predicted:.1} MB/s ({binding})");
    assert!(
        (measured / predicted - 1.0).abs() < 0.10,
        "smbclient at {rate}: measured {measured:.1}, predicted {predicted:.1} ({binding})"
    );
}

#[test]
fn smbclient_through_a_1gbit_tbf_matches_the_model() {
    smb_case(3, "1gbit");
}

#[test]
fn smbclient_through_a_2500mbit_tbf_matches_the_model() {
    smb_case(4, "2500mbit");
}

#[test]
fn the_tbf_link_parses_as_the_rig_shapes_it() {
    // Not root-only: the model's reading of the rig's link, 1 Gbit/s = 125 MB/s of line.
    let t = rig_topology("1gbit", "");
    assert_eq!(t.client("rig").unwrap().link, ClientLink::Tbf { bits_per_s: 1e9 });
    // 1448 / 1514 of 125 MB/s.
    assert!((predicted_tcp_mb_s("1gbit") - 125.0 * 1448.0 / 1514.0).abs() < 1e-9);
}
