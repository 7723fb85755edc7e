#!/usr/bin/env bash
# Issue #17's figures by instruction count: callgrind counts the instructions of the simulation
# and its report (`--toggle-collect` on `simulate_with_utils`, so neither process start-up nor
# parsing the topology counts), divided by the simulated I/Os. Unlike a wall time, a count is the
# same on every run of the same binary and does not move with what else the machine is doing,
# so a change of a few tenths of a percent shows; what it misses is the cost of memory
# (`speed.sh` measures that, by wall).
#
#   benches/count.sh                     every case (about 30 s under valgrind on 2 cores)
#   CASES="ssd qd1" benches/count.sh     some of them: ssd qd1 qd4 qd32 floor raidz2 raidz2-5s
#                                        uneven (not in the default set: 1,028 HDDs on uneven
#                                        expander chains, where bottlenecks nest)
#   IOPATH_BIN=path/to/iopath ...        count this binary instead of building target/release
#   KEEP=dir ...                         keep each callgrind profile in dir, for callgrind_annotate
#
# Nothing here is a test: the targets are printed next to the numbers, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null; then
    echo "count.sh: valgrind is not installed (Debian: apt-get install valgrind)" >&2
    exit 2
fi
PY=${PYTHON:-python3}
CASES=${CASES:-"ssd qd1 qd4 qd32 floor raidz2 raidz2-5s"}
if [[ -z "${IOPATH_BIN:-}" ]]; then
    cargo build --release --bin iopath >&2
    IOPATH_BIN=target/release/iopath
fi
OUT=${KEEP:-$(mktemp -d)}
mkdir -p "$OUT"
[[ -n "${KEEP:-}" ]] || trap 'rm -rf "$OUT"' EXIT

SIX=configs/asm1166-6ssd.toml
BIG=configs/1024-hdd-expanders.toml
RAIDZ=benches/raidz2-8hdd.toml
UNEVEN=benches/1028-hdd-uneven.toml
# The RAIDZ2 pair: the pool's logical writes against the same topology's 8 drives written
# directly, with the same arguments (no ramp: the window is the whole run).
RAIDZ_ARGS=(--rw write --bs 128k --iodepth 4 --ramp 0s)

# count NAME ARGS...: runs `iopath simulate ARGS --json -q` under callgrind; sets INSTR (the
# instructions counted), IOS (cost.ios: drive I/Os) and LOGICAL (pool.ios, or 0).
count() {
    local name=$1; shift
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.callgrind" \
        --toggle-collect='iopath_sim::run::simulate_with_utils*' \
        "$IOPATH_BIN" simulate "$@" --json -q >"$OUT/$name.json" 2>"$OUT/$name.log"
    INSTR=$(awk '/^(summary|totals):/ {print $2; exit}' "$OUT/$name.callgrind")
    read -r IOS LOGICAL < <("$PY" -c 'import sys,json; d=json.load(open(sys.argv[1])); print(d["cost"]["ios"], (d.get("pool") or {}).get("ios", 0))' "$OUT/$name.json")
}
per() { "$PY" -c "print(f'{$1 / $2:,.0f}')"; }
ratio() { "$PY" -c "print(f'{$1:.2f}x')"; }
num() { "$PY" -c "print(f'{$1:,}')"; }
# vs_ssd: the last count's cost per I/O against the 6 SSDs' ('-' when the ssd case has not run).
vs_ssd() { if [[ -n $SSD_PER ]]; then ratio "$INSTR / $IOS / $SSD_PER"; else echo -; fi; }

echo "binary: $IOPATH_BIN (checkout at $(git rev-parse --short HEAD 2>/dev/null || echo "?"); valgrind $(valgrind --version | sed 's/valgrind-//'))"
printf '%-46s %15s %10s %8s %10s  %s\n' case instructions I/Os per-I/O vs-6-SSDs target
SSD_PER=""
row() { printf '%-46s %15s %10s %8s %10s  %s\n' "$@"; }

for c in $CASES; do
    case $c in
    ssd)
        count ssd "$SIX" --rw read --bs 128k --iodepth 32 --active 6 --runtime 20s
        SSD_PER=$("$PY" -c "print($INSTR / $IOS)")
        row "6 SSDs, QD 32, 20 s" "$(num "$INSTR")" "$(num "$IOS")" "$(per "$INSTR" "$IOS")" 1.00x "no slower than before"
        ;;
    qd1 | qd4 | qd32)
        q=${c#qd}
        count "$c" "$BIG" --rw read --bs 128k --iodepth "$q" --runtime 1s
        row "1,024 HDDs, QD $q, 1 s" "$(num "$INSTR")" "$(num "$IOS")" "$(per "$INSTR" "$IOS")" "$(vs_ssd)" "at most 2x"
        ;;
    uneven)
        count uneven "$UNEVEN" --rw read --bs 128k --iodepth 1 --runtime 1s
        row "1,028 HDDs, uneven chains, QD 1, 1 s" "$(num "$INSTR")" "$(num "$IOS")" "$(per "$INSTR" "$IOS")" "$(vs_ssd)" "(no target)"
        ;;
    floor)
        # 8 HDDs with no shared bottleneck: what the drive model costs by itself.
        count floor "$RAIDZ" --rw read --bs 128k --iodepth 1 --runtime 1s
        row "8 HDDs, QD 1 read, 1 s (the HDD floor)" "$(num "$INSTR")" "$(num "$IOS")" "$(per "$INSTR" "$IOS")" "$(vs_ssd)" "(no target)"
        ;;
    raidz2 | raidz2-5s)
        rt=1s
        [[ $c == raidz2-5s ]] && rt=5s
        count "$c" "$RAIDZ" --pool tank "${RAIDZ_ARGS[@]}" --runtime "$rt"
        p_instr=$INSTR p_logical=$LOGICAL
        count "$c-drives" "$RAIDZ" "${RAIDZ_ARGS[@]}" --runtime "$rt"
        d_per=$("$PY" -c "print($INSTR / $IOS)")
        row "RAIDZ2 of 8, logical writes, ${rt%s} s" "$(num "$p_instr")" "$(num "$p_logical")" "$(per "$p_instr" "$p_logical")" - ""
        row "  8 plain drives, drive writes, ${rt%s} s" "$(num "$INSTR")" "$(num "$IOS")" "$(per "$INSTR" "$IOS")" - ""
        echo "  per logical write / per drive write: $(ratio "$p_instr / $p_logical / $d_per") (target: at most 10x)"
        ;;
    *)
        echo "count.sh: unknown case '$c' (cases: ssd qd1 qd4 qd32 floor raidz2 raidz2-5s uneven)" >&2
        exit 2
        ;;
    esac
done
[[ -n "${KEEP:-}" ]] && echo "profiles kept in $OUT (callgrind_annotate $OUT/NAME.callgrind)"
exit 0
