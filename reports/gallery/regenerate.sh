#!/usr/bin/env bash
# Regenerates the gallery: simulated sweeps of two published setups with the published
# points overlaid, and the HTML report of the ASM1166 build. Run from anywhere:
#   bash reports/gallery/regenerate.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q
bin=target/release/iopath
out=reports/gallery

$bin sweep configs/asm1166-6ssd.toml --rw read --bs 1m --iodepth 8 --active 1..6 \
  --measured configs/published/asm1166-seqread.csv --out $out/asm1166-6ssd -q > $out/asm1166-6ssd/table.txt
$bin sweep configs/marvell9172-pm-5hdd.toml --rw read --iodepth 1 --runtime 5s --active 1..5 --bs 32k,128k \
  --measured configs/published/marvell9172-fbs-seqread-32k.csv \
  --measured configs/published/marvell9172-fbs-seqread-128k.csv --out $out/marvell9172-pm-5hdd -q > $out/marvell9172-pm-5hdd/table.txt
$bin report configs/asm1166-6ssd.toml --measured configs/published/asm1166-seqread.csv --out $out/asm1166-6ssd-report -q
echo "gallery regenerated under $out/"
