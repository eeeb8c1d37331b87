#!/bin/sh
# A cairn server under jemalloc's sampling heap profiler, to stand in for the binary:
#
#   CAIRN_BIN=$R/cairn-<rev> $R/release/cairn-soak --server-bin bench/profile/heap.sh --backends sqlite --zipf-sizes 0
#   jeprof --text --base=$HEAP_DIR/j.PID.N.iN.heap $R/cairn-<rev> $HEAP_DIR/j.PID.M.iM.heap
#
# A dump of the live heap every 4 GiB allocated and at exit (one sample per 64 KiB), in
# HEAP_DIR (default /tmp/heap), named by process id and sequence; the server's own are
# the ones whose process lived through the whole run (a packing pass's child dumps too).
# Needs Debian's libjemalloc2 (built with profiling) and libjemalloc-dev (jeprof).
set -eu
: "${CAIRN_BIN:?the cairn binary to profile}"
dir=${HEAP_DIR:-/tmp/heap}
mkdir -p "$dir"
LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 \
MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:16,lg_prof_interval:32,prof_prefix:$dir/j \
    exec "$CAIRN_BIN" "$@"
