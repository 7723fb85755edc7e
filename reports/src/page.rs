//! What the report page shows: its standard sweeps and its full-load run, defined once so
//! every front end builds the same page. Running them is the simulator's job; this module
//! only says which workloads over which values.

use iopath_model::{Topology, WorkloadSpec};

/// One chart of the page: a workload swept over one workload option.
#[derive(Debug, Clone, PartialEq)]
pub struct StandardSweep {
    /// The chart's title.
    pub title: &'static str,
    /// The workload every point starts from.
    pub workload: WorkloadSpec,
    /// The swept workload option (`active`, `iodepth`).
    pub param: &'static str,
    /// Its values, as written.
    pub values: Vec<String>,
    /// Whether measured or published points are drawn over this chart.
    pub overlay_measured: bool,
}

fn spec(rw: &str, bs: &str, qd: u32, runtime: &str) -> WorkloadSpec {
    WorkloadSpec {
        rw: Some(rw.into()),
        bs: Some(bs.into()),
        iodepth: Some(qd),
        runtime: Some(runtime.into()),
        ..Default::default()
    }
}

/// The page's sweeps, each point run for `runtime` (as written, e.g. `1s`): sequential
/// reads, sequential writes and a 70/30 mix against 1..N active drives, and 4 KiB random
/// reads on all drives against queue depth 1..32. Measured points overlay the first.
pub fn standard_sweeps(t: &Topology, runtime: &str) -> Vec<StandardSweep> {
    let active: Vec<String> = (1..=t.drives.len()).map(|k| k.to_string()).collect();
    let mut mix = spec("rw", "128k", 16, runtime);
    mix.rwmixread = Some(70);
    let mut rand = spec("randread", "4k", 1, runtime);
    rand.active = Some(t.drives.len());
    let sweep = |title, workload, param, values: &Vec<String>, overlay_measured| StandardSweep {
        title,
        workload,
        param,
        values: values.clone(),
        overlay_measured,
    };
    let depths: Vec<String> = ["1", "2", "4", "8", "16", "32"].iter().map(|s| s.to_string()).collect();
    vec![
        sweep(
            "Sequential read against active drives (1 MiB, QD 8)",
            spec("read", "1m", 8, runtime),
            "active",
            &active,
            true,
        ),
        sweep(
            "Sequential write against active drives (1 MiB, QD 8)",
            spec("write", "1m", 8, runtime),
            "active",
            &active,
            false,
        ),
        sweep("70/30 read/write mix against active drives (128 KiB, QD 16)", mix, "active", &active, false),
        sweep("4 KiB random read against queue depth, all drives", rand, "iodepth", &depths, false),
    ]
}

/// The page's full-load run (per-link utilization): 1 MiB sequential reads at QD 8 on every
/// drive, for `runtime`.
pub fn full_load(runtime: &str) -> WorkloadSpec {
    spec("read", "1m", 8, runtime)
}

/// How many full-load runs the page costs, roughly, for `drives` drives: three sweeps over
/// 1..N drives (N/2 full-load runs each, on average) and six all-drive queue depths.
pub fn full_load_runs(drives: usize) -> f64 {
    3.0 * (drives as f64 + 1.0) / 2.0 + 6.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_model::Catalog;

    fn topo(drives: usize) -> Topology {
        let text = format!(
            "[host]\npart = \"amd-am5\"\n[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n\
             [[drive]]\nid = \"ssd\"\ncount = {drives}\npart = \"micron-5300pro-3840\"\nparent = \"hba\"\n"
        );
        Topology::parse("t.toml", &text, &Catalog::builtin()).unwrap()
    }

    #[test]
    fn three_active_sweeps_over_every_drive_count_and_one_over_queue_depth() {
        let s = standard_sweeps(&topo(3), "1s");
        assert_eq!(s.len(), 4);
        for x in &s[..3] {
            assert_eq!((x.param, x.values.clone()), ("active", vec!["1".into(), "2".into(), "3".into()]));
        }
        assert_eq!(s[3].param, "iodepth");
        assert_eq!(s[3].values, ["1", "2", "4", "8", "16", "32"]);
        // The queue-depth sweep runs on every drive; only the first chart takes measured points.
        assert_eq!(s[3].workload.active, Some(3));
        assert_eq!(s.iter().map(|x| x.overlay_measured).collect::<Vec<_>>(), [true, false, false, false]);
        assert_eq!(s[2].workload.rwmixread, Some(70));
        assert!(s.iter().all(|x| x.workload.runtime.as_deref() == Some("1s")));
        // Every workload is valid as written.
        for x in &s {
            x.workload.resolve().unwrap();
        }
    }

    #[test]
    fn full_load_and_its_cost() {
        let w = full_load("2s").resolve().unwrap();
        assert_eq!((w.bs.get(), w.iodepth), (1 << 20, 8));
        assert_eq!(full_load_runs(6), 16.5);
    }
}
