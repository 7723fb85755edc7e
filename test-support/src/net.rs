//! A network rig: two network namespaces joined by a veth pair, each end shaped by `tc tbf`,
//! with processes started inside them. Everything is undone on drop, also when a test
//! panics: every process it started is killed by its PID (and any other process left in its
//! namespaces, found with `ip netns pids`), then both namespaces are deleted, which removes
//! the veth pair. Addresses are 10.250.N.1 (server) and 10.250.N.2 (client) inside the
//! namespaces only; names carry the process id and a counter.
//!
//! ```text
//!   netns SRV: vA 10.250.N.1/30  [tbf RATE]  <== veth ==>  [tbf RATE]  vB 10.250.N.2/30: netns CLI
//! ```

use std::io;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// `Ok` when the rig can be built here; else why not (for skip messages).
pub fn available(tools: &[&str]) -> Result<(), String> {
    if !crate::is_root() {
        return Err("not root: network namespaces need root".into());
    }
    for t in ["ip", "tc", "timeout"].iter().chain(tools) {
        if crate::which(t).is_none() {
            return Err(format!("{t} is not installed (apt-get install iproute2 samba smbclient iperf3)"));
        }
    }
    Ok(())
}

/// Two namespaces and a shaped veth pair; see the module documentation.
#[derive(Debug)]
pub struct NetRig {
    pub server_ns: String,
    pub client_ns: String,
    pub server_ip: String,
    pub client_ip: String,
    children: Vec<Child>,
    made: Vec<String>,
}

fn run(cmd: &mut Command) -> io::Result<String> {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!("{:?} failed: {}", cmd, String::from_utf8_lossy(&out.stderr).trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl NetRig {
    /// Builds the rig on subnet 10.250.`net`.0/30 with both veth ends shaped at `rate` as tc
    /// writes it ("1gbit", "2500mbit"), or unshaped (`None`).
    pub fn new(net: u8, rate: Option<&str>) -> io::Result<NetRig> {
        let id = format!("{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let mut rig = NetRig {
            server_ns: format!("iopath-srv-{id}"),
            client_ns: format!("iopath-cli-{id}"),
            server_ip: format!("10.250.{net}.1"),
            client_ip: format!("10.250.{net}.2"),
            children: Vec::new(),
            made: Vec::new(),
        };
        for ns in [rig.server_ns.clone(), rig.client_ns.clone()] {
            run(Command::new("ip").args(["netns", "add", &ns]))?;
            rig.made.push(ns);
        }
        // Interface names are at most 15 bytes: created in the server namespace directly.
        let (a, b) = (format!("iva{}", std::process::id() % 100_000), format!("ivb{}", std::process::id() % 100_000));
        let (a, b) = (format!("{a}{}", rig.made.len()), format!("{b}{}", rig.made.len()));
        let (s, c) = (rig.server_ns.clone(), rig.client_ns.clone());
        run(Command::new("ip").args(["-n", &s, "link", "add", &a, "type", "veth", "peer", "name", &b, "netns", &c]))?;
        run(Command::new("ip").args(["-n", &s, "addr", "add", &format!("{}/30", rig.server_ip), "dev", &a]))?;
        run(Command::new("ip").args(["-n", &c, "addr", "add", &format!("{}/30", rig.client_ip), "dev", &b]))?;
        for (ns, dev) in [(&s, &a), (&c, &b)] {
            run(Command::new("ip").args(["-n", ns, "link", "set", dev, "up"]))?;
            run(Command::new("ip").args(["-n", ns, "link", "set", "lo", "up"]))?;
            if let Some(rate) = rate {
                run(Command::new("ip")
                    .args(["netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf"])
                    .args(["rate", rate, "burst", "512kb", "latency", "50ms"]))?;
            }
        }
        Ok(rig)
    }

    /// Starts `cmd` (its program, arguments and environment) in the server namespace, killed
    /// when the rig is dropped; its PID.
    pub fn spawn_server(&mut self, cmd: Command) -> io::Result<u32> {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.server_ns]).arg(cmd.get_program()).args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                c.env(k, v);
            }
        }
        self.spawn(c)
    }

    /// Starts `cmd` as it is, killed when the rig is dropped; its PID. For a wrapper that
    /// must act before entering the namespace (`ip netns exec` mounts its own /sys, so a
    /// cgroup is joined outside: `cgroup.command("ip")` with `netns exec NS program ...`);
    /// wrappers that exec keep the PID.
    pub fn spawn(&mut self, mut cmd: Command) -> io::Result<u32> {
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let child = cmd.spawn()?;
        let pid = child.id();
        self.children.push(child);
        Ok(pid)
    }

    /// Runs `program args` in the client namespace, killed after `limit`; its stdout and
    /// stderr together.
    pub fn run_client(&self, program: &str, args: &[&str], limit: Duration) -> io::Result<String> {
        let secs = format!("{}", limit.as_secs().max(1));
        let out = Command::new("timeout")
            .args(["-s", "KILL", &secs, "ip", "netns", "exec", &self.client_ns, program])
            .args(args)
            .output()?;
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            return Err(io::Error::other(format!("{program} {args:?} failed ({}): {}", out.status, text.trim())));
        }
        Ok(text)
    }

    /// Waits until something in the server namespace listens on TCP `port` (at most `limit`).
    pub fn wait_listening(&self, port: u16, limit: Duration) -> io::Result<()> {
        let start = Instant::now();
        let want = format!(":{port} ");
        while start.elapsed() < limit {
            let out = run(Command::new("ip").args(["netns", "exec", &self.server_ns, "ss", "-Hltn"]))?;
            if out.lines().any(|l| l.contains(&want)) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(io::Error::other(format!("nothing listens on port {port} in {} after {limit:?}", self.server_ns)))
    }
}

impl Drop for NetRig {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Processes the started ones forked (smbd serves each connection from a child).
        for ns in &self.made {
            if let Ok(pids) = run(Command::new("ip").args(["netns", "pids", ns])) {
                for pid in pids.split_whitespace() {
                    let _ = Command::new("kill").args(["-KILL", pid]).status();
                }
            }
        }
        for ns in self.made.drain(..).rev() {
            for _ in 0..20 {
                if run(Command::new("ip").args(["netns", "del", &ns])).is_ok() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}
