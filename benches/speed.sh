#!/usr/bin/env bash
# Prints the simulator's speed for the record (issue #7): engine events/s, simulated I/Os per
# wall-second for a 6-drive and a 1,024-drive topology, peak RSS against simulated time, a
# sweep on one thread and on all cores, and a SimPy model of the 6-drive case side by side.
#
#   benches/speed.sh                 everything (a few minutes on 2 cores)
#   RUNS=9 benches/speed.sh          more repetitions per median (default 5)
#   SKIP_CRITERION=1 ...             skip the engine micro-benchmark (cargo bench)
#   SKIP_SIMPY=1 ...                 skip the SimPy peer (needs PyPI for `pip install simpy`)
#   IOPATH_BIN=path/to/iopath ...    measure this binary instead of building target/release
#   PIN_CPU=1 ...                    the CPU the single-threaded comparisons run on (default 0)
#
# Every figure is a median of RUNS runs; wall times come from the report's cost.wall_s (the
# simulation alone) or, for the sweep, from the process' wall time. Nothing here is a test:
# the targets are printed next to the numbers, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
PIN_CPU=${PIN_CPU:-0}
PY=${PYTHON:-python3}
SIX=configs/asm1166-6ssd.toml
BIG=configs/1024-hdd-expanders.toml
BAYS=configs/9300-8i-24bay-expander.toml
SIX_ARGS=(--rw read --bs 128k --iodepth 32 --active 6)
# The issue's "the same for the 1,024-drive topology": the 6-SSD command, --runtime 20s.
BIG_ARGS=(--rw read --bs 128k --iodepth 32 --runtime 20s)
# And a 1 s run, where the start-up (building 1,024 drives, their first 32 commands each,
# the warm-up solves, 1,024 latency histograms) is a large share of the wall time.
BIG_SHORT_ARGS=(--rw read --bs 128k --iodepth 32 --runtime 1s)
# Issue #17: the 1,024-drive case at QD 1, 4 and 32, 1 s simulated each. At QD 1 every I/O
# starts and stops a transfer that shares a saturated chain link with ~128 others.
BIG_QDS=(1 4 32)
# Issue #17: a RAIDZ2 vdev of 8 HDDs, one logical 128 KiB write against one drive I/O.
RAIDZ=benches/raidz2-8hdd.toml
# No ramp: the window is the whole run, so the pool's logical I/Os and the run's member
# I/Os (cost.ios) are counted over the same simulated time as the wall clock.
RAIDZ_ARGS=(--rw write --bs 128k --iodepth 4 --ramp 0s)
SWEEP_ARGS=(--active 1..24 --rw read --bs 1m --iodepth 8 --runtime 2s)
# The same sweep simulating ten times as long: its 24 points take ~2 ms to ~130 ms each, so
# the process' serial start-up (~4 ms: the catalog and the topology) no longer hides the
# parallel part.
LONG_SWEEP_ARGS=(--active 1..24 --rw read --bs 1m --iodepth 8 --runtime 20s)

if [[ -z "${IOPATH_BIN:-}" ]]; then
    cargo build --release --bin iopath >&2
    IOPATH_BIN=target/release/iopath
fi
PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c "$PIN_CPU"); fi

# median: reads numbers, one a line.
median() { "$PY" -c 'import sys,statistics as s; print(s.median(float(x) for x in sys.stdin.read().split()))'; }
# cost FIELD...: prints the report's cost fields from stdin, space-separated.
cost() { "$PY" -c 'import sys,json; c=json.load(sys.stdin)["cost"]; print(*(c[k] for k in sys.argv[1:]))' "$@"; }
# wall CMD...: runs CMD (output discarded) and prints its wall time [s] and the CPUs it used
# on average ((user + sys) / wall): with 2 threads on 2 idle cores that is close to 2; less
# means other work (other sessions' builds) took the cores, and the speedup is understated.
# The CPU time is CMD's alone: RUSAGE_CHILDREN already holds what the interpreter's own
# start-up spent in children (a pyenv shim runs several), so it is read before and after.
wall() { "$PY" -c 'import sys,subprocess,time,resource as r; c=lambda u: u.ru_utime+u.ru_stime; u0=c(r.getrusage(r.RUSAGE_CHILDREN)); t=time.perf_counter(); subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL); w=time.perf_counter()-t; print(w, (c(r.getrusage(r.RUSAGE_CHILDREN))-u0)/w)' "$@"; }
# peak_rss_kb CMD...: peak resident set of CMD [KiB], from /usr/bin/time -v or getrusage.
peak_rss_kb() {
    if [[ -x /usr/bin/time ]]; then
        /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}'
    else
        "$PY" -c 'import sys,subprocess,resource; subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
    fi
}
calc() { "$PY" -c "print($1)"; }
fmt() { "$PY" -c "import sys; print(f'{float(sys.argv[1]):,.${2:-0}f}')" "$1"; }

# sim_stats LABEL TOPOLOGY ARGS...: median of RUNS pinned runs -> prints a summary; sets
# LAST_US_PER_IO and LAST_IOS_PER_S.
sim_stats() {
    local label=$1 topo=$2; shift 2
    local rows=()
    for _ in $(seq "$RUNS"); do
        rows+=("$("${PIN[@]}" "$IOPATH_BIN" simulate "$topo" "$@" --json -q | cost events ios wall_s sim_s)")
    done
    local walls events ios sim
    walls=$(printf '%s\n' "${rows[@]}" | awk '{print $3}' | median)
    read -r events ios _ sim <<<"${rows[0]}"
    LAST_IOS_PER_S=$(calc "$ios / $walls")
    LAST_IOS_WALL="$ios $walls"
    LAST_US_PER_IO=$(calc "1e6 * $walls / $ios")
    echo "$label: $ios I/Os, $events events, ${sim} s simulated; median wall $(fmt "$walls" 4) s of $RUNS"
    echo "  simulated I/Os per wall-second  $(fmt "$LAST_IOS_PER_S")"
    echo "  events per wall-second          $(fmt "$(calc "$events / $walls")")"
    echo "  simulated time / wall time      $(fmt "$(calc "$sim / $walls")" 1)"
    echo "  wall cost per I/O               $(fmt "$LAST_US_PER_IO" 3) us"
}

echo "== iopath speed ($(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $RUNS runs per median)"
echo "   binary: $IOPATH_BIN; single-threaded runs pinned with: ${PIN[*]:-(no taskset)}"

echo
echo "== 1. engine: Scheduler hold model (criterion, benches/sim.rs)"
if [[ -z "${SKIP_CRITERION:-}" ]]; then
    cargo bench --bench sim -- engine/ 2>/dev/null |
        awk '/^engine\// {name=$1; seen=0} /thrpt:/ && !seen {seen=1; gsub(/[\[\]]/,""); print "  " name ": " $4 " " $5 " events/s (criterion estimate)"}'
else
    echo "  skipped (SKIP_CRITERION)"
fi

echo
echo "== 2. simulate $SIX ${SIX_ARGS[*]} --runtime 20s"
sim_stats "6 SSDs" "$SIX" "${SIX_ARGS[@]}" --runtime 20s
SIX_US=$LAST_US_PER_IO
SIX_IOPS=$LAST_IOS_PER_S

echo
echo "== 3. simulate $BIG ${BIG_ARGS[*]}"
sim_stats "1024 HDDs" "$BIG" "${BIG_ARGS[@]}"
BIG_US=$LAST_US_PER_IO
read -r BIG_IOS BIG_WALL <<<"$LAST_IOS_WALL"
echo "  per-I/O wall cost, 1024 HDDs / 6 SSDs: $(fmt "$(calc "$BIG_US / $SIX_US")" 2)x (target: at most 3x)"
echo
echo "== 3b. simulate $BIG ${BIG_SHORT_ARGS[*]} (start-up included)"
sim_stats "1024 HDDs" "$BIG" "${BIG_SHORT_ARGS[@]}"
read -r SHORT_IOS SHORT_WALL <<<"$LAST_IOS_WALL"
echo "  per-I/O wall cost, 1024 HDDs (1 s run) / 6 SSDs: $(fmt "$(calc "$LAST_US_PER_IO / $SIX_US")" 2)x"
MARGINAL_US=$(calc "1e6 * ($BIG_WALL - $SHORT_WALL) / ($BIG_IOS - $SHORT_IOS)")
echo "  marginal per-I/O cost (20 s minus 1 s run): $(fmt "$MARGINAL_US" 3) us, $(fmt "$(calc "$MARGINAL_US / $SIX_US")" 2)x the 6-SSD case;"
echo "  start-up and warm-up: $(fmt "$(calc "$SHORT_WALL - $SHORT_IOS * $MARGINAL_US / 1e6")" 4) s"

echo
echo "== 3c. simulate $BIG --rw read --bs 128k --runtime 1s at QD ${BIG_QDS[*]} (issue #17)"
for qd in "${BIG_QDS[@]}"; do
    sim_stats "1024 HDDs, QD $qd" "$BIG" --rw read --bs 128k --iodepth "$qd" --runtime 1s
    echo "  per-I/O wall cost, 1024 HDDs at QD $qd / 6 SSDs: $(fmt "$(calc "$LAST_US_PER_IO / $SIX_US")" 2)x (target: at most 2x)"
done

echo
echo "== 4. peak RSS of the 6-SSD case against simulated time (median of $RUNS)"
for rt in 5s 50s; do
    kb=$(for _ in $(seq "$RUNS"); do peak_rss_kb "$IOPATH_BIN" simulate "$SIX" "${SIX_ARGS[@]}" --runtime "$rt" --json -q; done | median)
    echo "  --runtime $rt: $(fmt "$kb") KiB"
done
for args in "${BIG_SHORT_ARGS[*]}" "${BIG_ARGS[*]}" "--rw read --bs 128k --iodepth 1 --runtime 1s" \
    "--rw read --bs 128k --iodepth 1 --runtime 5s"; do
    read -r -a a <<<"$args"
    kb=$(for _ in $(seq "$RUNS"); do peak_rss_kb "$IOPATH_BIN" simulate "$BIG" "${a[@]}" --json -q; done | median)
    echo "  (1024 HDDs, $args: $(fmt "$kb") KiB)"
done

# sweep_speedup ARGS...: the sweep on 1 thread and on all cores, runs alternating so that a
# burst of other load hits both alike; medians of RUNS.
sweep_speedup() {
    local label=$1
    shift
    echo "== $label. sweep $BAYS $* (process wall time, median of $RUNS)"
    local rows1=() rowsn=() th
    for _ in $(seq "$RUNS"); do
        rows1+=("$(RAYON_NUM_THREADS=1 wall "$IOPATH_BIN" sweep "$BAYS" "$@" --json -q)")
        rowsn+=("$(RAYON_NUM_THREADS=$(nproc) wall "$IOPATH_BIN" sweep "$BAYS" "$@" --json -q)")
    done
    declare -A SW
    for th in 1 "$(nproc)"; do
        local rows
        if [[ $th == 1 ]]; then rows=$(printf '%s\n' "${rows1[@]}"); else rows=$(printf '%s\n' "${rowsn[@]}"); fi
        SW[$th]=$(awk '{print $1}' <<<"$rows" | median)
        echo "  RAYON_NUM_THREADS=$th: $(fmt "${SW[$th]}" 3) s, $(fmt "$(awk '{print $2}' <<<"$rows" | median)" 2) CPUs used"
    done
    echo "  speedup on $(nproc) cores: $(fmt "$(calc "${SW[1]} / ${SW[$(nproc)]}")" 2)x (target: at least 1.8x on 2 cores)"
}

# pool_fanout LABEL RUNTIME: the RAIDZ2 pool against 8 plain drives, RAIDZ_ARGS at RUNTIME.
pool_fanout() {
    local label=$1 args=("${RAIDZ_ARGS[@]}" --runtime "$2")
    echo
    echo "== $label. pool fan-out: simulate $RAIDZ ${args[*]}, as a RAIDZ2 pool and as 8 plain drives"
    local rows=()
    for _ in $(seq "$RUNS"); do
        rows+=("$("${PIN[@]}" "$IOPATH_BIN" simulate "$RAIDZ" --pool tank "${args[@]}" --json -q |
            "$PY" -c 'import sys,json; d=json.load(sys.stdin); print(d["cost"]["wall_s"], d["pool"]["ios"], d["cost"]["ios"])')")
    done
    local p_wall p_logical p_member pool_us
    p_wall=$(printf '%s\n' "${rows[@]}" | awk '{print $1}' | median)
    read -r _ p_logical p_member <<<"${rows[0]}"
    pool_us=$(calc "1e6 * $p_wall / $p_logical")
    echo "RAIDZ2 of 8: $p_logical logical writes, $p_member member I/Os; median wall $(fmt "$p_wall" 4) s of $RUNS"
    echo "  wall cost per logical write     $(fmt "$pool_us" 3) us ($(fmt "$(calc "1e6 * $p_wall / $p_member")" 3) us per member I/O)"
    sim_stats "8 plain drives, drive writes" "$RAIDZ" "${args[@]}"
    echo "  wall cost per logical 128 KiB write / per drive I/O: $(fmt "$(calc "$pool_us / $LAST_US_PER_IO")" 2)x (target: at most 10x)"
}
# 1 s: the start, while the drives' write caches absorb the writes (the drive side is a run
# of a few milliseconds). 5 s: past the caches filling, the drives destaging.
pool_fanout 7 1s
pool_fanout 7b 5s

echo
sweep_speedup 5 "${SWEEP_ARGS[@]}"
echo
sweep_speedup 5b "${LONG_SWEEP_ARGS[@]}"

echo
echo "== 6. SimPy peer of the 6-SSD case (benches/simpy_peer.py), both pinned to one core"
if [[ -z "${SKIP_SIMPY:-}" ]]; then
    VENV=target/simpy-venv
    if [[ ! -x $VENV/bin/python ]]; then "$PY" -m venv "$VENV"; fi
    "$VENV/bin/python" -c 'import simpy' 2>/dev/null || "$VENV/bin/pip" install -q simpy >&2
    SIMPY_RT=${SIMPY_RUNTIME:-20}
    rows=()
    for _ in $(seq "$RUNS"); do rows+=("$("${PIN[@]}" "$VENV/bin/python" benches/simpy_peer.py --runtime "$SIMPY_RT")"); done
    read -r s_ios s_mbs s_lat s_ver < <(printf '%s\n' "${rows[0]}" | "$PY" -c 'import sys,json; d=json.load(sys.stdin); print(d["ios"], d["mb_s"], d["mean_lat_us"], d["simpy"])')
    s_wall=$(printf '%s\n' "${rows[@]}" | "$PY" -c 'import sys,json; [print(json.loads(l)["wall_s"]) for l in sys.stdin]' | median)
    read -r i_mbs i_lat < <("${PIN[@]}" "$IOPATH_BIN" simulate "$SIX" "${SIX_ARGS[@]}" --runtime "${SIMPY_RT}s" --json -q | "$PY" -c 'import sys,json; t=json.load(sys.stdin)["total"]; print(t["mb_s"], t["lat_us"]["mean"])')
    s_iops=$(calc "$s_ios / $s_wall")
    echo "  SimPy $s_ver: $s_ios I/Os in ${SIMPY_RT} s simulated, $(fmt "$s_mbs" 1) MB/s, mean latency $(fmt "$s_lat" 1) us"
    echo "  (iopath: $(fmt "$i_mbs" 1) MB/s, mean latency $(fmt "$i_lat" 1) us)"
    echo "  SimPy median wall $(fmt "$s_wall" 3) s -> $(fmt "$s_iops") simulated I/Os per wall-second"
    echo "  iopath / SimPy, simulated I/Os per wall-second: $(fmt "$(calc "$SIX_IOPS / $s_iops")" 0)x (target: at least 100x)"
else
    echo "  skipped (SKIP_SIMPY)"
fi
