#!/bin/sh
# Leave-one-source-out table (issue #13): each published source's points predicted with the
# figures fitted to the other four, next to the in-sample errors. Reads whatever
# model/catalog/fits.toml says, so it stays true after fits change; see tests/fidelity.rs.
# Usage: scripts/loso.sh            (debug build, as CI runs it)
#        scripts/loso.sh --release  (faster)
set -eu
cd "$(dirname "$0")/.."
cargo test "$@" --test fidelity leave_one_source_out -- --nocapture 2>&1 |
    sed -n '/^fits.toml figures/,/^test leave_one_source_out/p'
