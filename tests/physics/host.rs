//! Host-level costs: IOMMU translation for devices passed through to a VM, and the host
//! CPU's per-I/O cost over its cores (`model/src/paths/host.rs`).
//!
//! Figures used below, as the catalog states them (model/catalog/hosts.toml, drives.toml):
//! - Samsung 990 PRO 2 TB: sequential read 7,450 MB/s, 4 KiB random read 1,400K IOPS
//!   (Samsung data sheet), PCIe 4.0 x4.
//! - generic-host: 8 cores, 1.64 us of CPU per I/O (J. Axboe: Linux libaio, 608K IOPS of
//!   4 KiB random reads per core, 2019).
//! - kvm-vfio-guest: as generic-host for the CPU; IOMMU walk 0.40 us (the walk time fitted
//!   on source 002's passthrough point), guest memory mapped in 2 MiB IOMMU pages (VFIO
//!   superpages over huge-page-backed guest memory).

use super::common::*;
use iopath_model::WorkloadSpec;

/// `n` Samsung 990 PRO drives, each on its own PCIe 4.0 x4 root port of `host`.
fn nvme_host(host: &str, n: usize) -> String {
    let mut s = format!("[host]\npart = \"{host}\"\n");
    for i in 0..n {
        s.push_str(&format!(
            "[[drive]]\nid = \"n{i}\"\npart = \"samsung-990pro-2tb\"\nparent = \"host\"\nlink = \"pcie4x4\"\n"
        ));
    }
    s
}

/// A passed-through NVMe drive reads within 5% of native.
///
/// Native: a 1 MiB sequential read is paced by the slower of the 990 PRO's media (7,450
/// MB/s) and its PCIe 4.0 x4 link: 16 GT/s x 4 lanes x 128/130 / 8 = 7,877 MB/s, less 1%
/// for SKP and DLLPs, times 256 B of payload per 256 + 16 (header) + 8 (framing) B TLP at
/// the host's MPS of 256: 7,877 x 0.99 x 256/280 = 7,130 MB/s, the link. The CPU spends
/// 6,800 I/Os/s x 1.64 us = 1.1% of one core.
/// Passthrough: one IOTLB miss per 2 MiB page, during whose 0.40 us walk the drive cannot
/// post its data: the drive's stream becomes 1 / (1/7,450 MB/s + 0.40 us / 2,097,152 B) =
/// 7,450 / (1 + 7.45e9 x 1.907e-13) = 7,439 MB/s, still above the link's 7,130. The IOMMU's
/// walker spends 0.14% of its time.
/// Expected: both 7,130 MB/s; passthrough / native within 5% of 1 (the tolerance).
#[test]
fn passed_through_nvme_reads_within_5_percent_of_native() {
    let spec = || WorkloadSpec { runtime: Some("200ms".into()), ..ws("read", "1m", 32) };
    let native = sim(&topology("native.toml", &nvme_host("generic-host", 1)), spec());
    let guest = sim(&topology("guest.toml", &nvme_host("kvm-vfio-guest", 1)), spec());
    let link: f64 = 16e9 * 4.0 * 128.0 / 130.0 / 8.0 * 0.99 * 256.0 / 280.0 / 1e6;
    assert_within("native 990 PRO, 1 MiB sequential read [MB/s]", native.total.mb_s, link.min(7450.0), 0.02);
    assert_within("passed-through 990 PRO, 1 MiB sequential read [MB/s]", guest.total.mb_s, link.min(7439.0), 0.02);
    assert_within("passed-through / native", guest.total.mb_s / native.total.mb_s, 1.0, 0.05);
}

/// The passthrough mechanism is per page of DMA data: under source 002's ESXi 5.5 guest
/// (4 KiB IOMMU mappings, same 0.40 us walk) a drive stalls 512 times as often. That host is a
/// Haswell, whose root ports are PCIe 3.0, so the drive is a PCIe 3.0 one (a 990 PRO would
/// train down to Gen3 x4, 3,565 MB/s, below its stall rate): a Samsung 970 EVO Plus (3,500
/// MB/s read, PCIe 3.0 x4). Expected: 1 / (1/3,500 MB/s + 0.40 us / 4,096 B) = 3,500 /
/// (1 + 3.5e9 x 9.766e-11) = 3,500 / 1.3418 = 2,608 MB/s, below its link's 3,938.5 x 0.99 x
/// 256/280 = 3,565 MB/s, so only the stall slows it.
#[test]
fn passthrough_with_4k_mappings_stalls_per_page() {
    let spec = WorkloadSpec { runtime: Some("200ms".into()), ..ws("read", "1m", 32) };
    let text = "[host]\npart = \"intel-lga1150-esxi55-vm\"\n[[drive]]\nid = \"n0\"\npart = \"samsung-970evoplus-1tb\"\nparent = \"host\"\n";
    let r = sim(&topology("esxi.toml", text), spec);
    let expected = 3500.0 / (1.0 + 3.5e9 * 0.40e-6 / 4096.0);
    assert_within("970 EVO Plus under ESXi 5.5 passthrough (4 KiB pages) [MB/s]", r.total.mb_s, expected, 0.03);
}

/// 4 KiB random reads of six NVMe drives at QD128, two jobs each, are bound by the host CPU.
///
/// Drives: 6 x 1,400K IOPS = 8.4M IOPS; each drive's two jobs (one core each): 2 / 1.64 us
/// = 1.22M IOPS, 7.3M for six; links: 6 x 1.22M x 4 KiB = 5.0 GB/s each, below a PCIe 4.0
/// x4's ~7.1 GB/s of read payload. The host: 8 cores / 1.64 us per I/O = 4.878M IOPS, the
/// smallest. Expected: 4.878M IOPS in total, bottleneck `host.cpu`.
#[test]
fn many_nvme_small_random_reads_are_bound_by_the_host_cpu() {
    let t = topology("six-nvme.toml", &nvme_host("generic-host", 6));
    let spec = WorkloadSpec {
        numjobs: Some(2),
        runtime: Some("20ms".into()),
        ramp: Some("2ms".into()),
        ..ws("randread", "4k", 128)
    };
    let r = sim(&t, spec);
    assert_within("6 x 990 PRO, 4 KiB randread QD128, 2 jobs each [IOPS]", r.total.iops, 8.0 / 1.64e-6, 0.03);
    assert_eq!(r.bottleneck.id, "host.cpu", "the cores run out before the drives: {:?}", r.bottleneck);
}

/// One fio job runs on one core, and its completions come back to it: one job on one NVMe
/// drive at 4 KiB QD128 is bound by that core at 1 / 1.64 us = 609,756 IOPS (the figure's
/// own source: Linux libaio, 608K IOPS on one core), named `host.cpu.n0`; four jobs
/// (2.44M IOPS of cores) leave the drive's datasheet 1,400K IOPS to bind.
#[test]
fn one_job_is_bound_by_its_core_and_more_jobs_reach_the_drive() {
    let t = topology("one-nvme.toml", &nvme_host("generic-host", 1));
    let run = |jobs: u32| {
        let spec = WorkloadSpec {
            numjobs: Some(jobs),
            runtime: Some("20ms".into()),
            ramp: Some("2ms".into()),
            ..ws("randread", "4k", 128)
        };
        sim(&t, spec)
    };
    let one = run(1);
    assert_within("1 x 990 PRO, 4 KiB randread QD128, 1 job [IOPS]", one.total.iops, 1.0 / 1.64e-6, 0.03);
    assert_eq!(one.bottleneck.id, "host.cpu.n0");
    let four = run(4);
    assert_within("1 x 990 PRO, 4 KiB randread QD128, 4 jobs [IOPS]", four.total.iops, 1.4e6, 0.03);
    assert!(!four.bottleneck.id.starts_with("host.cpu"), "{:?}", four.bottleneck);
}
