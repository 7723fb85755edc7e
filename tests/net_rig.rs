//! The network model against a real network: two namespaces joined by a veth pair shaped
//! by `tc tbf` at 1 and 2.5 Gbit/s, raw TCP with `iperf3` and Samba's `smbd` serving a file
//! to `smbclient`, each rate within 10% of the model's prediction for the same link
//! (`link = "tbf:RATE"`: the qdisc charges each packet its IP length plus the 14-byte
//! Ethernet header, [`iopath_model::net`]). Root only; skips with a note where a tool is
//! missing (a failure under CI, where `.ci/run` installs them). Every transfer is bounded in
//! size (files of 200 MiB at most) and time (`timeout`), and the rig is torn down on every path.

use iopath_model::net::{ClientLink, client_bound};
use iopath_model::paths::{Dir, ResourceGraph};
use iopath_model::{Catalog, Topology};
use iopath_test_support::net::{NetRig, available};
use iopath_test_support::retry::{around, best_within_one};
use iopath_test_support::{Cgroup, Rig, skip, which};
use std::path::Path;
use std::process::Command;
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
    // smbclient keeps two 8 MiB reads in flight (its default window, the library's default
    // `outstanding`): the next request is on the wire while smbd reads one, so the link
    // binds. (On a loaded 2-core host smbd's read of each request showed through as if one
    // request were in flight; on an idle one the gets run at the line: 119.0 and 296.2 MB/s.)
    let t = rig_topology(rate, "");
    let g = ResourceGraph::new(&t);
    let b = client_bound(&t, &g, "rig", &[], Dir::Read, 8 << 20, false).unwrap();
    (b.total_mb_s, b.binding)
}

/// One rig at a time: two transfers at once would share the CPU and each other's rate.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
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

/// The tolerance of a link-bound rate's window ([`around`] the prediction). The shaper caps
/// the rate from above and other work on the machine (the 2.5 Gbit cases need most of a
/// core for the packets alone) only ever lowers it, so a short rate is measured again
/// ([`best_within_one`]); a rate above the window fails on its first measurement.
const LINK_TOL: f64 = 0.10;

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
    let _serial = one_at_a_time();
    let predicted = predicted_tcp_mb_s(rate);
    let measured = best_within_one(&format!("iperf3 at {rate}"), around(predicted, LINK_TOL), || {
        let mut rig = NetRig::new(net, Some(rate)).expect("network rig");
        let ip = rig.server_ip.clone();
        let mut server = Command::new(which("iperf3").unwrap());
        server.args(["-s", "-1", "-B", &ip]);
        rig.spawn_server(server).expect("iperf3 -s");
        rig.wait_listening(5201, Duration::from_secs(10)).expect("iperf3 listening");
        // -R: the server sends, as a client's read; 3 s, killed after 20.
        let out =
            rig.run_client("iperf3", &["-c", &ip, "-R", "-t", "3", "-J"], Duration::from_secs(20)).expect("iperf3 -c");
        iperf3_mb_s(&out)
    });
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

/// Serves the file `big` of `source` (a directory) to smbclient over the rig: returns the
/// measured rate. `cgroup`: start smbd inside it (its reads throttled there).
fn smb_get(rig: &mut NetRig, work: &Path, source: &Path, cgroup: Option<&Cgroup>) -> f64 {
    let conf = smb_conf(work, source, &rig.server_ip.clone());
    let c = conf.display().to_string();
    let smbd = which("smbd").unwrap();
    let args = ["--foreground", "--no-process-group", "-s", &c];
    match cgroup {
        // Into the cgroup first: inside the namespace /sys is the namespace's own.
        Some(g) => {
            let mut cmd = g.command(&which("ip").unwrap());
            cmd.args(["netns", "exec", &rig.server_ns]).arg(&smbd).args(args);
            rig.spawn(cmd).expect("smbd in the cgroup")
        }
        None => {
            let mut cmd = Command::new(&smbd);
            cmd.args(args);
            rig.spawn_server(cmd).expect("smbd")
        }
    };
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
    let _serial = one_at_a_time();
    let mut files = Rig::new("netsmb").expect("scratch");
    let share = files.dir.join("share");
    std::fs::create_dir_all(&share).unwrap();
    // A fast source: a fully written file, in the page cache once written.
    let written = files.file(&share, "big", 200 << 20).expect("200 MiB file");
    assert!(written.exists());
    let (predicted, binding) = predicted_smb(rate);
    let measured = best_within_one(&format!("smbclient at {rate}"), around(predicted, LINK_TOL), || {
        let mut rig = NetRig::new(net, Some(rate)).expect("network rig");
        smb_get(&mut rig, &files.dir.join("samba"), &share, None)
    });
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

/// The drive binds: the same get from an ext4 on a loop device whose reads are throttled
/// to 50 MB/s (cgroup v1 blkio, smbd inside the cgroup), the file out of the page cache.
/// The model: the client's window over a drive read at 50 MB/s; one 8 MiB request in
/// flight waits for the drive's 8 MiB (168 ms), its send and the round trip.
#[test]
fn smbclient_from_a_throttled_drive_matches_the_model() {
    if !tools(&["smbd", "smbclient", "ss", "dd"]) {
        return;
    }
    if let Err(why) = iopath_test_support::available() {
        skip(&why);
        return;
    }
    let _serial = one_at_a_time();
    const RATE: u64 = 50_000_000;
    let mut files = Rig::new("netdrive").expect("scratch");
    let outer = files.file(&files.dir.clone(), "disk.img", 192 << 20).expect("disk image");
    let dev = files.loop_dev(&outer).expect("loop device");
    let mnt = files.ext4(&dev).expect("ext4");
    let share = mnt.join("share");
    std::fs::create_dir_all(&share).unwrap();
    let big = files.file(&share, "big", 100 << 20).expect("100 MiB file");
    // Out of the page cache, so smbd's reads reach the throttled device.
    let out = Command::new("dd").arg(format!("if={}", big.display())).args(["iflag=nocache", "count=0"]).output();
    assert!(out.is_ok_and(|o| o.status.success()), "dd iflag=nocache");
    let cg = files.cgroup().expect("blkio cgroup");
    cg.read_bps(&dev, RATE).expect("read_bps");
    let mut rig = NetRig::new(5, Some("1gbit")).expect("network rig");
    let measured = smb_get(&mut rig, &files.dir.join("samba"), &share, Some(&cg));
    drop(rig);
    // The rig's drive as a part: its read rate is the throttle this test sets.
    let text = format!(
        r#"
[host]
part = "amd-am5"
[[part]]
id = "throttled-loop"
kind = "drive"
name = "loop device throttled by blkio"
figures.class = {{ value = "nvme", source = "a loop device: no SATA link, modelled as a PCIe device", basis = "spec" }}
figures.interface = {{ value = "nvme", source = "as class", basis = "spec" }}
figures.interface_gen = {{ value = 3, source = "a link that never binds", basis = "spec" }}
figures.capacity_gb = {{ value = 0.2, source = "the 192 MiB image", basis = "spec" }}
figures.seq_read_mb_s = {{ value = {mb}, source = "blkio.throttle.read_bps_device this test sets", basis = "spec" }}
figures.read_latency_us = {{ value = 0, source = "none modelled", basis = "spec" }}
[[node]]
id = "veth"
part = "linux-veth"
parent = "host"
[[drive]]
id = "loop"
part = "throttled-loop"
parent = "host"
[[client]]
id = "rig"
nic = "veth"
link = "tbf:1gbit"
"#,
        mb = RATE / 1_000_000
    );
    let t = Topology::parse("net-rig-drive.toml", &text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
    let g = ResourceGraph::new(&t);
    let b = client_bound(&t, &g, "rig", &[t.drives[0]], Dir::Read, 8 << 20, false).unwrap();
    eprintln!(
        "smbclient get from a 50 MB/s drive: measured {measured:.1} MB/s, predicted {:.1} MB/s ({})",
        b.total_mb_s, b.binding
    );
    assert!((measured / b.total_mb_s - 1.0).abs() < 0.10, "measured {measured:.1}, predicted {:.1}", b.total_mb_s);
}

#[test]
fn the_tbf_link_parses_as_the_rig_shapes_it() {
    // Not root-only: the model's reading of the rig's link, 1 Gbit/s = 125 MB/s of line.
    let t = rig_topology("1gbit", "");
    assert_eq!(t.client("rig").unwrap().link, ClientLink::Tbf { bits_per_s: 1e9 });
    // 1448 / 1514 of 125 MB/s.
    assert!((predicted_tcp_mb_s("1gbit") - 125.0 * 1448.0 / 1514.0).abs() < 1e-9);
}

/// `utime + stime` of every thread of every process in namespace `ns` [clock ticks], keyed
/// by (process, thread), each the largest seen so far.
fn sample_threads(ns: &str, into: &mut std::collections::BTreeMap<(u32, u32), u64>) {
    let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() else { return };
    for pid in String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|p| p.parse::<u32>().ok()) {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            if let Some(ticks) = std::fs::read_to_string(t.path().join("stat")).ok().and_then(|s| stat_ticks(&s, 11)) {
                let e = into.entry((pid, tid)).or_insert(0);
                *e = (*e).max(ticks);
            }
        }
    }
}

/// The sum of two adjacent clock-tick fields of a `/proc/.../stat` line, counted from the
/// field after the command name: 11 = utime + stime, 13 = cutime + cstime (proc(5)).
fn stat_ticks(stat: &str, at: usize) -> Option<u64> {
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(at)?.parse::<u64>().ok()? + f.get(at + 1)?.parse::<u64>().ok()?)
}

/// /proc's clock tick: USER_HZ, 100 on x86 Linux whatever the kernel's HZ (proc(5), times(2)).
const TICK_S: f64 = 0.01;

/// One get's CPU account: the client's rate [MB/s] and the CPU seconds of
/// smbd's main thread, its pool threads and smbclient.
#[derive(Debug, Clone, Copy)]
struct CpuRun {
    mb_s: f64,
    main_s: f64,
    pool_s: f64,
    client_s: f64,
}

/// Gets `file` over an unshaped rig while sampling every thread in the server namespace.
fn smb_get_with_cpu(rig: &NetRig, conf: &Path, file: &str) -> CpuRun {
    let before = {
        let mut m = std::collections::BTreeMap::new();
        sample_threads(&rig.server_ns, &mut m);
        m.keys().map(|k| k.0).collect::<std::collections::BTreeSet<u32>>()
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ns = rig.server_ns.clone();
    let flag = stop.clone();
    let poller = std::thread::spawn(move || {
        let mut m = std::collections::BTreeMap::new();
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            sample_threads(&ns, &mut m);
            std::thread::sleep(Duration::from_millis(20));
        }
        m
    });
    let share = format!("//{}/share", rig.server_ip);
    // The shell's own stat after smbclient exits holds smbclient's CPU time (cutime, cstime).
    let script = format!("smbclient {share} -N -s {} -c 'get {file} /dev/null' && cat /proc/$$/stat", conf.display());
    let out = rig.run_client("sh", &["-c", &script], Duration::from_secs(60)).expect("smbclient get");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let threads = poller.join().expect("poller");
    let client = out
        .lines()
        .find(|l| l.contains(" (sh) "))
        .and_then(|l| stat_ticks(l, 13))
        .unwrap_or_else(|| panic!("no stat in {out}"));
    // The connection's process is the one that was not there before the get; its main
    // thread has the process's id.
    let (mut main, mut pool) = (0, 0);
    for (&(pid, tid), &ticks) in threads.iter().filter(|((pid, _), _)| !before.contains(pid)) {
        if pid == tid {
            main += ticks;
        } else {
            pool += ticks;
        }
    }
    CpuRun {
        mb_s: smbclient_mb_s(&out),
        main_s: main as f64 * TICK_S,
        pool_s: pool as f64 * TICK_S,
        client_s: client as f64 * TICK_S,
    }
}

/// This host's copy rate as `iopath measure --cpu --kernel memcpy` times it [MB/s].
fn measured_memcpy_mb_s() -> f64 {
    let out = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .args(["measure", "--cpu", "--kernel", "memcpy", "--seconds", "0.5", "--json"])
        .output()
        .expect("iopath measure --cpu");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["kernels"][0]["mb_s_per_core"].as_f64().expect("mb_s_per_core")
}

/// smbd's main thread, unshaped: the mechanism of `net::smbd_s_per_byte` against the CPU
/// time smbd's threads spend (`/proc/PID/task/TID/stat`) while smbclient gets a file out of
/// the page cache over a veth with no qdisc, in requests of 8 MiB, 16, 8 and 4 KiB
/// (`smb2 max read`). The model: smbd's main thread copies each byte once (`sendmsg`) at
/// this host's `measure --cpu` memcpy rate and spends `smbd_request_us` per request; its
/// pool threads do the `pread`s. Checked: the main thread's CPU per byte at 8 MiB is at least
/// the one copy (the veth adds the receiver's TCP input on top, see below), the pool threads'
/// is at least one copy (the `pread` is theirs), the get is no faster than smbd's core allows,
/// the per-request cost re-measures within 4x as the slope of CPU per byte over 1/request
/// between 4 and 16 KiB, and the 8 KiB point lies on that line (a cost per request, not per
/// byte). What binds on this shared 2-core host is printed: each process's share of a core.
#[test]
fn smbd_main_thread_costs_one_copy_per_byte_unshaped() {
    if !tools(&["smbd", "smbclient", "ss", "sh"]) {
        return;
    }
    let _serial = one_at_a_time();
    let memcpy = measured_memcpy_mb_s();
    let mut files = Rig::new("netcpu").expect("scratch");
    let share = files.dir.join("share");
    std::fs::create_dir_all(&share).unwrap();
    // 512 MiB at 8 MiB (64 requests a get); 128 MiB for the small requests, which run at
    // 130-500 MB/s here (32,768 requests a get at 4 KiB, about 1 s).
    const BIG: u64 = 512 << 20;
    const SMALL: u64 = 128 << 20;
    files.file(&share, "big", BIG).expect("512 MiB file");
    files.file(&share, "small", SMALL).expect("128 MiB file");
    const GETS: usize = 3;
    let mut results = Vec::new();
    for (net, max_read, file, size) in [
        (6u8, 8u64 << 20, "big", BIG),
        (7, 16 << 10, "small", SMALL),
        (8, 8 << 10, "small", SMALL),
        (9, 4 << 10, "small", SMALL),
    ] {
        let mut rig = NetRig::new(net, None).expect("network rig");
        let work = files.dir.join(format!("samba{net}"));
        let conf = smb_conf(&work, &share, &rig.server_ip.clone());
        let text = std::fs::read_to_string(&conf).unwrap();
        std::fs::write(&conf, text.replace("[share]", &format!("  smb2 max read = {max_read}\n[share]"))).unwrap();
        let c = conf.display().to_string();
        let mut cmd = Command::new(which("smbd").unwrap());
        cmd.args(["--foreground", "--no-process-group", "-s", &c]);
        rig.spawn_server(cmd).expect("smbd");
        rig.wait_listening(445, Duration::from_secs(20)).expect("smbd listening");
        // Several gets, their CPU summed (10 ms ticks over ~0.1-1 s per get are coarse).
        let runs: Vec<CpuRun> = (0..GETS).map(|_| smb_get_with_cpu(&rig, &conf, file)).collect();
        let sum = |f: fn(&CpuRun) -> f64| runs.iter().map(f).sum::<f64>();
        let bytes = GETS as f64 * size as f64;
        results.push((max_read, size, sum(|r| r.main_s) / bytes, sum(|r| r.pool_s) / bytes, runs));
    }
    // The catalog's per-request cost; the copy at this host's measured rate.
    let t = rig_topology("1gbit", "");
    let h = t.host_figures();
    let copy = 1.0 / (memcpy * 1e6);
    for (max_read, size, main, pool, runs) in &results {
        let predicted = copy + h.smbd_request_us * 1e-6 / *max_read as f64;
        let r = runs.iter().map(|r| r.mb_s).sum::<f64>() / runs.len() as f64;
        // The transfers' own time (smbclient's rate is over its transfer, not its start-up).
        let wall = runs.iter().map(|r| *size as f64 / (r.mb_s * 1e6)).sum::<f64>();
        let cpu: f64 = runs.iter().map(|r| r.main_s + r.pool_s + r.client_s).sum();
        let client = runs.iter().map(|r| r.client_s).sum::<f64>();
        eprintln!(
            "unshaped get, {} KiB requests: {r:.0} MB/s; smbd main {:.3} ns/B (model {:.3}: one copy at {memcpy:.0} MB/s + {} us/request), pool {:.3} ns/B, smbclient {:.3} ns/B; main thread {:.0}% of a core, smbclient {:.0}%, the three together {:.0}% of the 2 cores",
            max_read >> 10,
            main * 1e9,
            predicted * 1e9,
            h.smbd_request_us,
            pool * 1e9,
            client / (GETS as f64 * *size as f64) * 1e9,
            100.0 * runs.iter().map(|r| r.main_s).sum::<f64>() / wall,
            100.0 * client / wall,
            100.0 * cpu / (2.0 * wall),
        );
        if *max_read == 8 << 20 {
            assert!(*main >= 0.9 * predicted, "main thread {main:e} s/B below one copy ({predicted:e})");
            // Above the one copy, and not bounded by a multiple of it: on a veth the
            // sender's `sendmsg` also runs the receiver's TCP input in its softirq
            // (veth_xmit hands the packet to the peer's backlog on the same CPU), which a
            // real NIC leaves to the client machine. That path's cost does not scale with
            // the host's copy rate: the main thread measured 0.354 ns/B against a copy of
            // 0.122 (8.2 GB/s) on one CI machine and 0.459 against 0.058 (17.3 GB/s) on
            // another, so a ceiling of k copies passes on one host and fails on the next.
            // It is printed above; the checks are the floor (one copy), the pool's pread
            // and, below, the per-request cost re-measured.
            assert!(*pool >= 0.9 * copy, "the pool threads' pread: {pool:e} s/B below one copy ({copy:e})");
            assert!(r <= 1.1 / predicted / 1e6, "{r} MB/s above smbd's core ({} MB/s)", 1.0 / predicted / 1e6);
        }
    }
    // The per-request cost: the slope of the main thread's CPU per byte over 1/request
    // between 4 and 16 KiB, where the request's share (16 us over 4 KiB: 3.9 ns/B) is
    // many times the per-byte part and its noise. Not the difference against 8 MiB: the
    // per-byte part itself depends on the request size (0.48 ns/B at 8 MiB, whose buffers
    // leave the cache, against 0.09-0.12 at 4-16 KiB on this rig's veth, about the one
    // copy), so a 64 KiB against 8 MiB difference (0.24 ns/B of request share) measured
    // from 0.4 to 10 us run to run here and 0.8 us on a CI machine.
    // smbd_request_us is instruction-bound work, so another host's core does it faster or
    // slower: 2x of re-measurement times 2x of host speed, within 4x either way, which
    // still fails if the per-request part vanishes or is off by an order of magnitude.
    const HOST_SPREAD: f64 = 2.0;
    let band = 2.0 * HOST_SPREAD;
    let at = |req: u64| results.iter().find(|r| r.0 == req).map(|r| r.2).expect("request size run");
    let (y16, y8, y4) = (at(16 << 10), at(8 << 10), at(4 << 10));
    let slope = (y4 - y16) / (1.0 / 4096.0 - 1.0 / 16384.0); // s per request
    let per_byte = y16 - slope / 16384.0;
    let per_request_us = slope * 1e6;
    let on_line = per_byte + slope / 8192.0;
    eprintln!(
        "smbd per request: {per_request_us:.1} us (smbd_request_us = {}), per byte at 4-16 KiB {:.3} ns/B; at 8 KiB {:.3} ns/B against {:.3} on the line",
        h.smbd_request_us,
        per_byte * 1e9,
        y8 * 1e9,
        on_line * 1e9
    );
    assert!(
        per_request_us > h.smbd_request_us / band && per_request_us < h.smbd_request_us * band,
        "{per_request_us:.1} us per request against {} (within {band}x: the fit's 2x and host speed)",
        h.smbd_request_us
    );
    assert!(
        (y8 - on_line).abs() < 0.25 * on_line,
        "8 KiB requests: {:.3} ns/B off the 4-16 KiB line ({:.3}) by more than 25%: not a cost per request",
        y8 * 1e9,
        on_line * 1e9
    );
}
