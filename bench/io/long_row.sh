# Sourced by bench/io/threads.sh and bench/io/syncs.sh: `long_row BIN CLIENTS OUT` starts
# cairn-bench's update scenario (SQLite, 1,000 pages) with a 20,000-update row of CLIENTS
# clients, writing OUT/run.json and OUT/run.err, sets BENCH to its pid, and returns once
# that row has been running for two seconds; `wait $BENCH` then waits for its end.
long_row() {
    local bin=$1 clients=$2 out=$3
    "${R:-$HOME/.cache/cairn-release}/release/cairn-bench" --server-bin "$bin" --backends sqlite --sizes 1000 \
        --scenarios update --warmup 500 --seq-ops 16 --ops 20000 --concurrency "$clients" \
        --history-pages 1 --history-revisions 2 --out "$out/run.json" >/dev/null 2>"$out/run.err" &
    BENCH=$!
    until grep -q "update    1 clients" "$out/run.err" 2>/dev/null; do sleep 0.2; done
    sleep 2
}
