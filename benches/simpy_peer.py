#!/usr/bin/env python3
"""A SimPy peer of iopath's 6-SSD case, for benches/speed.sh (issue #7).

    host --PCIe 3.0 x2 (1780 MB/s payload)-- ASM1166 --SATA 6G-- 6 SSDs (2x 560, 4x 540 MB/s)

The same workload as `iopath simulate configs/asm1166-6ssd.toml --rw read --bs 128k
--iodepth 32 --active 6`, at the same granularity as iopath's storage model:

* each drive runs a closed loop of `iodepth` I/Os of 128 KiB (one SimPy process per slot);
* an I/O waits the command latency (host + controller, half of each: 4 + 2 us), takes one of
  the drive's 8 media units for its media read time, then moves its data. The media time is
  drawn per read from the log-normal iopath draws it from (`sim/src/ssd.rs` `Spread`): mean
  80 us (the catalog's read latency) and 99.9th percentile 2.73 x that (the catalog's default
  spread for a flash drive with no stated p99.9);
* data transfers are fluid: each drive is a class served first-in first-out at its rate, and
  the rates are the max-min fair share of the shared uplink, capped by each drive's own
  ceiling, recomputed only when a class starts or stops moving data (as iopath does);
* the I/O then waits the completion latency (6 us) and the slot issues its next I/O.

The figures are iopath's catalog values for these parts (the ASM1166 uplink after its fitted
DMA efficiency: 1862.2 MB/s x 0.9558). Only the uplink is shared, so the water-filling here
is the single-resource case of iopath's max-min; it is written plainly, not slowed down.

Prints one JSON object: ios, mb_s, mean_lat_us (mean I/O latency, issue to completion, as
iopath's `total.lat_us.mean`), sim_s, wall_s (wall time of env.run only).
"""

import argparse
import json
import math
import random
import time
from collections import deque

import simpy

KIB = 1024
UPLINK_BPS = 1862.2449671641791e6 * 0.9558  # ASM1166 PCIe 3.0 x2 read payload x DMA efficiency
DRIVE_CAPS_BPS = [560e6, 560e6, 540e6, 540e6, 540e6, 540e6]  # 2x DC600M, 4x 5300 PRO
MEDIA_UNITS = 8  # parallelism of a SATA SSD controller (catalog)
READ_LATENCY_S = 80e-6  # media access latency, the mean (catalog)
READ_P999_S = 2.73 * READ_LATENCY_S  # its 99.9th percentile (catalog default for flash)
Z_999 = 3.090232  # the standard normal's 99.9th percentile


def lognormal_params(mean, p999):
    """mu, sigma of the log-normal with this mean and 99.9th percentile (as iopath's Spread)."""
    k = math.log(p999 / mean)
    disc = Z_999 * Z_999 - 2.0 * k
    sigma = Z_999 - math.sqrt(disc) if disc > 0.0 else Z_999
    return math.log(mean) - sigma * sigma / 2.0, sigma


READ_MU, READ_SIGMA = lognormal_params(READ_LATENCY_S, READ_P999_S)
CMD_LATENCY_S = 6e-6  # host io_overhead 8 us / 2 + controller cmd_overhead 4 us / 2
DONE_LATENCY_S = 6e-6  # the other halves, on the way back
EPS_BYTES = 1e-3  # a head transfer with less left than this is done (float rounding)


def max_min(caps, capacity):
    """Max-min fair rates of classes with individual caps sharing one resource."""
    rates = {}
    left = capacity
    order = sorted(caps, key=caps.get)
    for i, c in enumerate(order):
        share = left / (len(order) - i)
        r = min(caps[c], share)
        rates[c] = r
        left -= r
    return rates


class Fabric:
    """Fluid transfers: per-drive FIFO classes sharing the uplink at max-min rates."""

    def __init__(self, env, caps, capacity):
        self.env = env
        self.caps = caps
        self.capacity = capacity
        self.fifo = [deque() for _ in caps]  # entries: [bytes left, completion event]
        self.rate = {}  # active class -> rate [B/s]
        self.last = 0.0
        self.wake = env.event()
        env.process(self.run())

    def transfer(self, d, nbytes):
        done = self.env.event()
        q = self.fifo[d]
        q.append([float(nbytes), done])
        if len(q) == 1:  # the class starts moving data: new shares
            self.advance()
            self.recompute()
            if not self.wake.triggered:
                self.wake.succeed()
        return done

    def advance(self):
        """Moves every active head forward to now at its current rate."""
        dt = self.env.now - self.last
        if dt > 0:
            for d, r in self.rate.items():
                self.fifo[d][0][0] -= r * dt
        self.last = self.env.now

    def recompute(self):
        active = {d: self.caps[d] for d, q in enumerate(self.fifo) if q}
        self.rate = max_min(active, self.capacity)

    def run(self):
        while True:
            if not self.rate:
                yield self.wake
                self.wake = self.env.event()
                continue
            dt = min(self.fifo[d][0][0] / r for d, r in self.rate.items())
            yield self.env.timeout(max(dt, 0.0)) | self.wake
            if self.wake.triggered:
                self.wake = self.env.event()
            self.advance()
            changed = False
            for d in list(self.rate):
                q = self.fifo[d]
                while q and q[0][0] <= EPS_BYTES:
                    # The next transfer of the class starts with what the head overshot.
                    over = -q[0][0]
                    q.popleft()[1].succeed()
                    if q:
                        q[0][0] -= over
                if not q:
                    changed = True
            if changed:  # a class stopped moving data: new shares
                self.recompute()


class Stats:
    def __init__(self, runtime):
        self.runtime = runtime
        self.ios = 0
        self.bytes = 0
        self.lat_sum = 0.0


def slot(env, d, media, fabric, bs, stats, rng):
    """One of a job's `iodepth` outstanding I/Os, reissued as soon as it completes."""
    while True:
        start = env.now
        yield env.timeout(CMD_LATENCY_S)
        with media.request() as unit:
            yield unit
            yield env.timeout(rng.lognormvariate(READ_MU, READ_SIGMA))
        yield fabric.transfer(d, bs)
        yield env.timeout(DONE_LATENCY_S)
        if env.now <= stats.runtime:
            stats.ios += 1
            stats.bytes += bs
            stats.lat_sum += env.now - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runtime", type=float, default=20.0, help="simulated seconds")
    ap.add_argument("--iodepth", type=int, default=32)
    ap.add_argument("--bs-kib", type=int, default=128)
    ap.add_argument("--drives", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    env = simpy.Environment()
    caps = DRIVE_CAPS_BPS[: a.drives]
    fabric = Fabric(env, caps, UPLINK_BPS)
    stats = Stats(a.runtime)
    bs = a.bs_kib * KIB
    rng = random.Random(a.seed)
    for d in range(len(caps)):
        media = simpy.Resource(env, capacity=MEDIA_UNITS)
        for _ in range(a.iodepth):
            env.process(slot(env, d, media, fabric, bs, stats, rng))
    t0 = time.perf_counter()
    env.run(until=a.runtime)
    wall = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "ios": stats.ios,
                "mb_s": stats.bytes / a.runtime / 1e6,
                "mean_lat_us": stats.lat_sum / max(stats.ios, 1) * 1e6,
                "sim_s": a.runtime,
                "wall_s": wall,
                "simpy": simpy.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
