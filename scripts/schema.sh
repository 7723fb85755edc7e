#!/bin/sh
# Regenerates schema/iopath-topology.json, the topology JSON Schema that editors read
# (configs/*.toml name it on their first line; .taplo.toml maps files to it).
# tests/schema.rs fails when the shipped copy differs from what `iopath schema` prints.
set -eu
cd "$(dirname "$0")/.."
cargo run --quiet --bin iopath -- schema > schema/iopath-topology.json.tmp
mv schema/iopath-topology.json.tmp schema/iopath-topology.json
