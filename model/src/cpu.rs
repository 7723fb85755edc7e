//! The CPU work of a storage stack: checksums, parity, encryption and compression, as
//! per-byte costs on the host's cores.
//!
//! Each [`Kernel`] is one loop the storage stack runs over the data it moves: ZFS's fletcher4
//! (its default checksum), SHA-256 and BLAKE3 (its cryptographic checksums, and dedup),
//! CRC32C (btrfs's default checksum), XOR (RAID 5, RAIDZ1 and unRAID's single parity),
//! P+Q and P+Q+R syndromes over GF(2^8) (RAID 6 / RAIDZ2 / unRAID dual parity, RAIDZ3),
//! AES-GCM (ZFS native encryption, SMB3 encryption, dm-crypt's sibling modes) and lz4 and
//! zstd compression.
//!
//! A host part states each kernel's rate per core, `cpu_<kernel>_mb_s` (MB/s = 10^6 B/s of
//! the bytes the kernel reads: for parity, the data columns, as Linux's `raid6: ... gen()`
//! boot benchmark and ZFS's `vdev_raidz_bench` count them; for compression, the
//! uncompressed input). The host has `cpu_cores` cores, all of which the kernel threads of
//! a pool can use (md's raid6 and ZFS's `z_wr_iss`/`z_rd_int` taskqs spread over every
//! core), so a byte of kernel `k` costs `1 / (rate_k x cores)` seconds of the whole host's
//! CPU ([`kernel_s_per_byte`]). That cost is charged on the same `host.cpu` resource that
//! per-I/O submission and completion costs (`paths/host.rs`,
//! [`crate::paths::ResourceGraph::cpu_work_cost`]): one budget of core-seconds, whichever
//! work spends it.
//!
//! The rates are in-cache throughputs (128 KiB records, 4 KiB pages), the way the kernels'
//! own benchmarks and `iopath measure --cpu` time them; streaming data from DRAM through
//! them adds memory traffic the model leaves out (it binds only far above today's pools).

use crate::parts::HostFigures;
use crate::topology::Topology;
use serde::{Deserialize, Serialize};

/// One kind of CPU work per byte of data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Kernel {
    /// ZFS's default checksum: four 64-bit running sums over 32-bit words.
    Fletcher4,
    Sha256,
    Blake3,
    /// CRC-32C (Castagnoli), btrfs's default checksum.
    Crc32c,
    /// Single parity (RAID 5, RAIDZ1, unRAID parity 1).
    Xor,
    /// P and Q syndromes (RAID 6, RAIDZ2, unRAID dual parity).
    RaidPq,
    /// P, Q and R syndromes (RAIDZ3).
    RaidPqr,
    /// AES-256-GCM authenticated encryption.
    AesGcm,
    /// lz4 compression (decompression is several times faster).
    Lz4,
    /// zstd compression at level 3 (ZFS `compression=zstd`).
    Zstd,
    /// One copy of data out of cache into memory out of cache: what a file server's
    /// `pread` from the page cache or `sendmsg` into a socket's buffers does per byte
    /// ([`crate::net`]: smbd's and knfsd's copies).
    Memcpy,
}

impl Kernel {
    /// Every kernel, in declaration order.
    pub const ALL: [Kernel; 11] = [
        Kernel::Fletcher4,
        Kernel::Sha256,
        Kernel::Blake3,
        Kernel::Crc32c,
        Kernel::Xor,
        Kernel::RaidPq,
        Kernel::RaidPqr,
        Kernel::AesGcm,
        Kernel::Lz4,
        Kernel::Zstd,
        Kernel::Memcpy,
    ];

    /// The kebab-case name (as serde writes it): `fletcher4`, `raid-pq`, `aes-gcm`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Fletcher4 => "fletcher4",
            Kernel::Sha256 => "sha256",
            Kernel::Blake3 => "blake3",
            Kernel::Crc32c => "crc32c",
            Kernel::Xor => "xor",
            Kernel::RaidPq => "raid-pq",
            Kernel::RaidPqr => "raid-pqr",
            Kernel::AesGcm => "aes-gcm",
            Kernel::Lz4 => "lz4",
            Kernel::Zstd => "zstd",
            Kernel::Memcpy => "memcpy",
        }
    }

    /// The host figure that states the kernel's rate per core (`cpu_raid_pq_mb_s`).
    pub fn figure(self) -> &'static str {
        match self {
            Kernel::Fletcher4 => "cpu_fletcher4_mb_s",
            Kernel::Sha256 => "cpu_sha256_mb_s",
            Kernel::Blake3 => "cpu_blake3_mb_s",
            Kernel::Crc32c => "cpu_crc32c_mb_s",
            Kernel::Xor => "cpu_xor_mb_s",
            Kernel::RaidPq => "cpu_raid_pq_mb_s",
            Kernel::RaidPqr => "cpu_raid_pqr_mb_s",
            Kernel::AesGcm => "cpu_aes_gcm_mb_s",
            Kernel::Lz4 => "cpu_lz4_mb_s",
            Kernel::Zstd => "cpu_zstd_mb_s",
            Kernel::Memcpy => "cpu_memcpy_mb_s",
        }
    }

    /// What the kernel is, in a few words, for tables.
    pub fn describe(self) -> &'static str {
        match self {
            Kernel::Fletcher4 => "ZFS fletcher4 checksum",
            Kernel::Sha256 => "SHA-256 checksum",
            Kernel::Blake3 => "BLAKE3 checksum",
            Kernel::Crc32c => "CRC32C checksum (btrfs)",
            Kernel::Xor => "XOR parity (RAID 5, RAIDZ1)",
            Kernel::RaidPq => "P+Q syndromes (RAID 6, RAIDZ2)",
            Kernel::RaidPqr => "P+Q+R syndromes (RAIDZ3)",
            Kernel::AesGcm => "AES-256-GCM encryption",
            Kernel::Lz4 => "lz4 compression",
            Kernel::Zstd => "zstd level 3 compression",
            Kernel::Memcpy => "memory copy (file server)",
        }
    }

    /// The kernel named `s` (its kebab-case name).
    pub fn parse(s: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A host's rate of kernel `k` on one core [MB/s].
pub fn kernel_mb_s(h: &HostFigures, k: Kernel) -> f64 {
    match k {
        Kernel::Fletcher4 => h.cpu_fletcher4_mb_s,
        Kernel::Sha256 => h.cpu_sha256_mb_s,
        Kernel::Blake3 => h.cpu_blake3_mb_s,
        Kernel::Crc32c => h.cpu_crc32c_mb_s,
        Kernel::Xor => h.cpu_xor_mb_s,
        Kernel::RaidPq => h.cpu_raid_pq_mb_s,
        Kernel::RaidPqr => h.cpu_raid_pqr_mb_s,
        Kernel::AesGcm => h.cpu_aes_gcm_mb_s,
        Kernel::Lz4 => h.cpu_lz4_mb_s,
        Kernel::Zstd => h.cpu_zstd_mb_s,
        Kernel::Memcpy => h.cpu_memcpy_mb_s,
    }
}

/// Seconds of all the host's cores per byte of kernel `k`: `1 / (rate per core x cores)`.
pub fn host_kernel_s_per_byte(h: &HostFigures, k: Kernel) -> f64 {
    1.0 / (kernel_mb_s(h, k) * 1e6 * h.cpu_cores.max(1.0))
}

/// Seconds of all the topology's host cores per byte of kernel `k` (see the module
/// documentation).
pub fn kernel_s_per_byte(t: &Topology, k: Kernel) -> f64 {
    host_kernel_s_per_byte(t.host_figures(), k)
}

/// The most bytes per second of kernel `k` the whole host can run (all cores on it).
pub fn kernel_host_mb_s(h: &HostFigures, k: Kernel) -> f64 {
    kernel_mb_s(h, k) * h.cpu_cores.max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;

    fn topo(host: &str, params: &str) -> Topology {
        let src = format!(
            "[host]\npart = \"{host}\"\n{params}\n[[drive]]\nid = \"n0\"\npart = \"samsung-990pro-2tb\"\nparent = \"host\"\nlink = \"pcie4x4\"\n"
        );
        Topology::parse("t.toml", &src, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn names_round_trip_and_match_serde() {
        for k in Kernel::ALL {
            assert_eq!(Kernel::parse(k.name()), Some(k));
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{}\"", k.name()));
            assert!(k.figure().starts_with("cpu_") && k.figure().ends_with("_mb_s"));
        }
        assert_eq!(Kernel::parse("raid6"), None);
    }

    #[test]
    fn s_per_byte_is_one_over_rate_times_cores() {
        // 4 cores at 2,000 MB/s each: the host hashes 8,000 MB/s, so a byte costs
        // 1 / 8e9 = 0.125 ns of the whole host.
        let t = topo("generic-host", "params = { cpu_cores = 4, cpu_sha256_mb_s = 2000 }");
        let s = kernel_s_per_byte(&t, Kernel::Sha256);
        assert!((s - 1.25e-10).abs() < 1e-20, "{s}");
        // Doubling the cores halves it.
        let t8 = topo("generic-host", "params = { cpu_cores = 8, cpu_sha256_mb_s = 2000 }");
        assert!((kernel_s_per_byte(&t8, Kernel::Sha256) - s / 2.0).abs() < 1e-20);
        assert!((kernel_host_mb_s(t8.host_figures(), Kernel::Sha256) - 16_000.0).abs() < 1e-9);
    }

    #[test]
    fn a_catalog_parts_figures_give_its_cost() {
        // intel-n100: 4 cores (Intel ARK), P+Q at 15,822 MB/s per core (snapraid's 128-bit
        // gen2, hosts.toml): the host computes 63,288 MB/s of syndromes, a data byte costs
        // 1 / 63.288e9 s = 15.8 ps of the whole host.
        let t = topo("intel-n100", "");
        let s = kernel_s_per_byte(&t, Kernel::RaidPq);
        assert!((s * 63.288e9 - 1.0).abs() < 1e-9, "{s}");
        // zstd-3 on the same cores: 0.064 bytes/cycle x 3.4 GHz = 218 MB/s per core.
        assert!((kernel_mb_s(t.host_figures(), Kernel::Zstd) - 218.0).abs() < 1e-9);
    }

    #[test]
    fn every_catalog_host_states_a_positive_rate_for_every_kernel() {
        let cat = Catalog::builtin();
        for p in cat.parts().filter(|p| p.kind == crate::catalog::Kind::Host) {
            let t = topo(&p.id, "");
            for k in Kernel::ALL {
                let r = kernel_mb_s(t.host_figures(), k);
                assert!(r.is_finite() && r > 0.0, "{} {k}: {r}", p.id);
            }
        }
    }
}
