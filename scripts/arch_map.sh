#!/usr/bin/env bash
# Source files that ARCHITECTURE.md's code map does not name: prints each, exits 1 if any.
# tests/code_shape.rs runs it, so a new file cannot be left off the map.
#
#   scripts/arch_map.sh [ROOT]
#
# A file counts as named when the map has its path inside its crate (`load/parts.rs`,
# `tests/determinism.rs`, the package's `cmd/check.rs`), or has its file name in backticks
# (`parts.rs`) and also names its directory (`load/`), as the map's nested lists do.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
map=ARCHITECTURE.md
[ -f "$map" ] || { echo "arch_map: no $map under $PWD" >&2; exit 2; }
missing=0
for crate in model sim validate reports test-support src; do
  [ -d "$crate" ] || continue
  while read -r f; do
    case "$crate" in
      src) rel=${f#src/} ;;
      *) rel=${f#"$crate"/}; rel=${rel#src/} ;;
    esac
    base=$(basename "$rel")
    dir=$(dirname "$rel")
    if grep -qF -- "$rel" "$map"; then continue; fi
    if grep -qF -- "\`$base\`" "$map" && { [ "$dir" = . ] || grep -qF -- "$dir/" "$map"; }; then continue; fi
    echo "$f"
    missing=1
  done < <(find "$crate" -name '*.rs' -not -path '*/target/*' | LC_ALL=C sort)
done
exit $missing
