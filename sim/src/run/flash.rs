//! Flash-drive service: the SLC write cache's rate switch and the media's service-time
//! spread (the state is [`crate::ssd`]'s; this file wires it into the run).

use super::*;
use crate::ssd::{SlcCache, Spread};
use iopath_model::units::Rate;

/// A flash drive's state beyond its fixed figures.
pub(super) struct FlashSt {
    /// The SLC write cache, when the drive has one.
    slc: Option<SlcCache>,
    /// The write class's costs with the cache and once it is full.
    cached_costs: Vec<Cost>,
    post_costs: Vec<Cost>,
    read_spread: Option<Spread>,
    rng: ChaCha8Rng,
}

impl FlashSt {
    /// The state of flash drive `d` (target `slot`) for a run with `seed`; `write_costs` are its
    /// write class's costs as the cache accepts them.
    pub(super) fn new(
        t: &Topology,
        g: &ResourceGraph,
        d: NodeIx,
        slot: u32,
        seed: u64,
        write_costs: &[Cost],
    ) -> FlashSt {
        let f = t.drive_figures(d);
        let slc = (f.write_cache_gb > 0.0).then(|| {
            let mb_s = Rate::from_mb_s;
            SlcCache::new(
                f.write_cache_gb * 1e9,
                mb_s(f.seq_write_mb_s),
                mb_s(f.post_cache_write_mb_s),
                mb_s(f.cache_fold_mb_s),
            )
        });
        let post_costs = if slc.is_some() { g.post_cache_costs(t, d, write_costs) } else { Vec::new() };
        FlashSt {
            slc,
            cached_costs: write_costs.to_vec(),
            post_costs,
            read_spread: Spread::from_mean_p999(f.read_latency_us * 1e3, f.read_latency_p999_us * 1e3),
            // Its own stream, so the spread does not shift any job's offsets.
            rng: ChaCha8Rng::seed_from_u64(
                seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ (0xF1A5_u64 << 32 | u64::from(slot)),
            ),
        }
    }

    /// Whether the drive has an SLC cache (its write class changes costs when it fills).
    pub(super) fn has_cache(&self) -> bool {
        self.slc.is_some()
    }
}

impl Sim {
    /// A read's media service time on a flash drive with a spread, `None` for the fixed one.
    pub(super) fn flash_read_time(&mut self, d: usize) -> Option<SimDuration> {
        let f = self.drives[d].flash.as_mut()?;
        let s = f.read_spread?;
        Some(s.sample(&mut f.rng).max(SimDuration::from_nanos(1)))
    }

    /// `len` bytes of a write reached flash drive `d`'s NAND: the SLC cache fills or folds, and
    /// when the write rate changes the write class takes its new costs and its component is
    /// reallocated (the next allocation solves with them).
    pub(super) fn flash_wrote(&mut self, d: usize, len: f64) {
        let now = self.sched.now();
        let Some(f) = self.drives[d].flash.as_mut() else { return };
        let Some(slc) = f.slc.as_mut() else { return };
        if !slc.wrote(len, now) {
            return;
        }
        let costs = if slc.is_full() { f.post_costs.clone() } else { f.cached_costs.clone() };
        let c = self.drives[d].class[1] as usize;
        if self.alloc.groups.is_member(c) {
            // A member's costs are its group's bookkeeping: back to the solver first.
            let k = self.alloc.comp_of[c] as usize;
            self.dissolve_groups(k, now);
            self.mark_dirty(k);
        }
        self.charge_group_bytes(c); // with the costs it moved them at
        self.alloc.groups.retarget(c, &self.classes[c].costs, &costs);
        self.classes[c].n_grp = costs.len() as u32;
        self.classes[c].costs = costs;
        self.alloc.load_epoch += 1; // its private headroom is over other resources now
        if self.alloc.active_pos[c] != u32::MAX {
            let k = self.alloc.comp_of[c] as usize;
            self.mark_dirty(k);
        }
    }
}
