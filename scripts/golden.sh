#!/usr/bin/env bash
# Golden outputs: every JSON output of `check`, `simulate` and `sweep` for every config in
# configs/, written to one directory, so a refactor can be shown to change no number.
#
#   scripts/golden.sh OUTDIR [IOPATH_BINARY]      write the outputs
#   diff -r BEFORE AFTER                          compare two runs
#   scripts/golden.sh --compare REV               build REV in a temporary worktree, write both,
#                                                 diff them (exit 1 on any difference)
#
# Runtimes are short (the numbers are deterministic for a seed, so a short run pins them as well
# as a long one) and the 1,024-drive config runs at one small point, to keep this under a minute.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--compare" ]; then
  rev=${2:?usage: scripts/golden.sh --compare REV}
  tmp=$(mktemp -d)
  trap 'git worktree remove --force "$tmp/wt" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
  git worktree add --detach "$tmp/wt" "$rev" >/dev/null
  (cd "$tmp/wt" && CARGO_TARGET_DIR="${GOLDEN_BASE_TARGET:-$PWD/target}" cargo build --release -q --bin iopath)
  base_bin="${GOLDEN_BASE_TARGET:-$tmp/wt/target}/release/iopath"
  cargo build --release -q --bin iopath
  "$0" "$tmp/before" "$base_bin"
  "$0" "$tmp/after" target/release/iopath
  if diff -r "$tmp/before" "$tmp/after"; then
    echo "golden: no differences against $rev ($(find "$tmp/after" -type f | wc -l) outputs)"
  else
    echo "golden: outputs differ from $rev" >&2
    exit 1
  fi
  exit 0
fi

out=${1:?usage: scripts/golden.sh OUTDIR [IOPATH_BINARY]}
bin=${2:-target/release/iopath}
mkdir -p "$out"
run() { # name, args...
  local name=$1; shift
  # The wall-clock time of a run is the one figure that may differ between two runs.
  if "$bin" "$@" 2>"$out/$name.stderr" | grep -v '"wall_s":' >"$out/$name.json"; then :; else
    echo "exit=${PIPESTATUS[0]}" >>"$out/$name.stderr"
  fi
}
for cfg in configs/*.toml; do
  c=$(basename "$cfg" .toml)
  run "$c.check" check "$cfg" --json
  if [ "$c" = 1024-hdd-expanders ]; then
    run "$c.sim.seqread" simulate "$cfg" --workload seqread --runtime 50ms --active 64 --json
    run "$c.sweep.active" sweep "$cfg" --workload seqread --runtime 20ms --active 1,16,64 --json -q
    continue
  fi
  for w in $(grep -o '^\[workload\.[A-Za-z0-9_-]*\]' "$cfg" | sed 's/^\[workload\.//; s/\]$//'); do
    run "$c.sim.$w" simulate "$cfg" --workload "$w" --runtime 300ms --json
  done
  run "$c.sim.read128k" simulate "$cfg" --rw read --bs 128k --iodepth 4 --runtime 300ms --json
  run "$c.sim.randread4k" simulate "$cfg" --rw randread --bs 4k --iodepth 32 --runtime 300ms --json
  run "$c.sim.randrw" simulate "$cfg" --rw randrw --rwmixread 70 --bs 16k --iodepth 8 --runtime 300ms --json
  run "$c.sim.write1m" simulate "$cfg" --rw write --bs 1m --iodepth 2 --runtime 300ms --replications 2 --json
  run "$c.sweep.bs" sweep "$cfg" --rw read --bs 4k,128k,1m --runtime 200ms --json -q
  run "$c.sweep.active" sweep "$cfg" --rw read --bs 128k --active 1..3 --runtime 200ms --json -q
done
