#!/usr/bin/env bash
# `iopath plan` over hundreds of candidate builds (issue #17: "plan over at least 200
# candidate builds: under 10 s wall on 2 cores"). Each case prints the counts plan reports
# (builds enumerated, with a dominated card, refused by the loader, pruned by the bound,
# simulated) and the median over RUNS runs of the process' wall time, CPU time (user + sys)
# and peak RSS, from /usr/bin/time. Nothing here is a test: the target is printed, never
# asserted.
#
#   benches/plan.sh                  build target/release/iopath, 3 runs per median
#   RUNS=5 IOPATH_BIN=path/to/iopath benches/plan.sh
#
# The cases, all on the MSI MEG B550 UNIFY (four x16-long slots and four M.2 sockets of the
# catalog's board, six onboard SATA ports) with sixteen Toshiba N300 8 TB, 1 s simulated:
#   a. the default: every card set enumerated, dominated cards skipped, the rest loaded and
#      ranked by the bound, the best 24 simulated;
#   b. every build the bound ranks simulated (--max-simulated 1000);
#   c. a price list naming every catalog controller: no card is dominated (a cheaper one may
#      win), so plan loads and bounds its cap of 20,000 builds and simulates the best 200;
#   d. a 10GbE client and a RAIDZ2 pool of the sixteen (each simulation runs the pool).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
PY=${PYTHON:-python3}
if [[ -z "${IOPATH_BIN:-}" ]]; then
    cargo build --release --bin iopath >&2
    IOPATH_BIN=target/release/iopath
fi
BOARD=(plan --board msi-meg-b550-unify --drives 16xtoshiba-n300-8tb --runtime 1s)
PRICES=target/plan-prices.csv
mkdir -p target
# Every catalog controller at one price: the list only has to exist for domination to be off.
awk -F'"' '/^id = / {print $2 ",100"}' model/catalog/controllers.toml >"$PRICES"

median() { "$PY" -c 'import sys,statistics as s; print(s.median(float(x) for x in sys.stdin.read().split()))'; }

# case LABEL ARGS...: the counts of one run, then the medians of RUNS timed runs.
case_() {
    local label=$1
    shift
    echo "== $label: iopath $*"
    "$IOPATH_BIN" "$@" --json | "$PY" -c 'import sys,json; d=json.load(sys.stdin); print("  considered %(considered)d: dominated %(dominated)d, refused %(invalid)d, pruned %(pruned)d, simulated %(simulated)d" % d); print("  loaded and bounded: %d" % (d["considered"] - d["dominated"]))'
    local rows=()
    for _ in $(seq "$RUNS"); do
        rows+=("$(/usr/bin/time -f '%e %U %S %M' "$IOPATH_BIN" "$@" --json 2>&1 >/dev/null | tail -1)")
    done
    local wall cpu rss
    wall=$(printf '%s\n' "${rows[@]}" | awk '{print $1}' | median)
    cpu=$(printf '%s\n' "${rows[@]}" | awk '{print $2 + $3}' | median)
    rss=$(printf '%s\n' "${rows[@]}" | awk '{print $4}' | median)
    echo "  median of $RUNS: wall $wall s, CPU (user + sys) $cpu s, peak RSS $rss KiB (target: wall < 10 s on 2 cores)"
}

echo "== iopath plan speed ($(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $RUNS runs per median)"
case_ a "${BOARD[@]}"
case_ b "${BOARD[@]}" --max-simulated 1000
case_ c "${BOARD[@]}" --prices "$PRICES" --max-simulated 200
case_ d "${BOARD[@]}" --client 10GbE
echo "   load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
