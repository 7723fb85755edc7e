#!/usr/bin/env bash
# iopath measure vs fio on the same loop device and job: 1 MiB sequential reads QD32 and
# 4 KiB random reads QD32, both io_uring, O_DIRECT. Prints each tool's rate and the ratio
# iopath/fio (target >= 0.95). Needs root (losetup), fio (apt-get install -y fio), python3.
#
#   bash benches/measure_vs_fio.sh            # 10 s per run, 2 s ramp
#   RUNTIME=5 bash benches/measure_vs_fio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNTIME=${RUNTIME:-10}
RAMP=${RAMP:-2}
SIZE_MB=${SIZE_MB:-1024}
command -v fio >/dev/null || { echo "fio is not installed: apt-get install -y fio" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root for losetup" >&2; exit 2; }

cargo build --release --bin iopath -q
IOPATH=$PWD/target/release/iopath

# A scratch dir on a disk-backed filesystem (not tmpfs).
for d in "${IOPATH_SCRATCH:-}" /var/tmp /tmp; do
  [ -n "$d" ] && [ -d "$d" ] && [ "$(stat -f -c %T "$d")" != tmpfs ] && { SCRATCH=$d; break; }
done
WORK=$(mktemp -d "$SCRATCH/iopath-bench.XXXXXX")
LOOP=""
cleanup() { [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# A fully written backing file (iopath lays it out with O_DIRECT), then a direct-I/O loop.
"$IOPATH" measure --target "$WORK/backing.img" --size "${SIZE_MB}m" --runtime 0.1s --ramp 0s --quiet >/dev/null
LOOP=$(losetup --find --show --direct-io=on "$WORK/backing.img")
echo "target: $LOOP over $WORK/backing.img (${SIZE_MB} MiB), ${RUNTIME}s + ${RAMP}s ramp per run"

run_pair() { # name rw bs
  local name=$1 rw=$2 bs=$3
  fio --name="$name" --filename="$LOOP" --direct=1 --ioengine=io_uring --rw="$rw" --bs="$bs" \
      --iodepth=32 --numjobs=1 --time_based --runtime="$RUNTIME" --ramp_time="$RAMP" \
      --randrepeat=1 --output-format=json > "$WORK/$name.fio.json"
  "$IOPATH" measure --target "$LOOP" --rw "$rw" --bs "$bs" --iodepth 32 \
      --runtime "${RUNTIME}s" --ramp "${RAMP}s" --json --quiet > "$WORK/$name.iopath.json"
  python3 - "$name" "$WORK/$name.fio.json" "$WORK/$name.iopath.json" <<'PY'
import json, sys
name, fj, ij = sys.argv[1:]
txt = open(fj).read()
f = json.loads(txt[txt.index('{'):])
job = f["jobs"][0]["read"]
i = json.load(open(ij))
d = i["drives"][0]
fio_mb, io_mb = job["bw_bytes"] / 1e6, d["read_mb_s"]
fio_iops, io_iops = job["iops"], d["iops"]
lat_f = job.get("clat_ns", {}).get("mean", 0) / 1e3
print(f"{name:>14}: fio {fio_mb:9.1f} MB/s {fio_iops:10.0f} IOPS (clat {lat_f:7.1f} us) | "
      f"iopath {io_mb:9.1f} MB/s {io_iops:10.0f} IOPS (lat {d['lat_us']['mean']:7.1f} us, "
      f"engine {i['workload']['engine']}, cpu {i['cost']['cpu_s']:.2f} s) | ratio {io_mb / fio_mb:.3f}")
PY
}

run_pair seq-1m-qd32 read 1m
run_pair rand-4k-qd32 randread 4k
