#!/usr/bin/env bash
# Regenerates the gallery: simulated sweeps of two published setups with the published
# points overlaid, and the HTML report of the ASM1166 build. Run from anywhere:
#   bash reports/gallery/regenerate.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q
bin=target/release/iopath
out=reports/gallery

# iopath replaces an --out directory as a whole and refuses one holding files it did not
# write, such as table.txt: so each directory is removed first and the table added after.
table=$(mktemp)
trap 'rm -f "$table"' EXIT
sweep() { # DIR SWEEP-ARGS...
  local dir=$1
  shift
  rm -rf "$dir"
  $bin sweep "$@" --out "$dir" -q > "$table"
  mv "$table" "$dir/table.txt"
}
sweep $out/asm1166-6ssd configs/asm1166-6ssd.toml --rw read --bs 1m --iodepth 8 --active 1..6 \
  --measured configs/published/asm1166-seqread.csv
sweep $out/marvell9172-pm-5hdd configs/marvell9172-pm-5hdd.toml --rw read --iodepth 1 --runtime 5s --active 1..5 \
  --bs 32k,128k --measured configs/published/marvell9172-fbs-seqread-32k.csv \
  --measured configs/published/marvell9172-fbs-seqread-128k.csv
$bin report configs/asm1166-6ssd.toml --measured configs/published/asm1166-seqread.csv --out $out/asm1166-6ssd-report -q
echo "gallery regenerated under $out/"
