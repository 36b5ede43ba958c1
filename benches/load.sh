#!/usr/bin/env bash
# The concurrent-serving load benchmark (issue 29 item 5; BENCHMARKS.md has the figures): the
# project's MCP server and a plain rmcp server with the same tools, each over Streamable HTTP on
# loopback, called by CLIENTS concurrent clients for SECONDS_PER_RUN, RUNS interleaved runs per
# server.
# The server runs on SERVER_CPUS, the client on CLIENT_CPUS (`taskset`); the server's resident
# memory is read from /proc at the end of each run (VmRSS) with its peak (VmHWM).
#
#   bash benches/load.sh [BINARY]     BINARY: a built `load` example; built here in release if
#                                     not given
#
# Environment: RUNS (5), SECONDS_PER_RUN (10), CLIENTS (64), SERVER_CPUS, CLIENT_CPUS (on a
# machine of 4 or more cores: the first half for the server, the second for the client; else
# unpinned).
# Prints one JSON line per run, then a summary (the range of each figure per server).
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-}
if [[ -z $binary ]]; then
    cargo build --release -q -p tool-benches --example load
    binary=target/release/examples/load
fi
runs=${RUNS:-5}
seconds=${SECONDS_PER_RUN:-10}
clients=${CLIENTS:-64}
cores=$(nproc)
if [[ -z ${SERVER_CPUS:-} && $cores -ge 4 ]]; then
    SERVER_CPUS="0-$((cores / 2 - 1))"
    CLIENT_CPUS="$((cores / 2))-$((cores - 1))"
fi
pin() { # pin CPUS COMMAND...: COMMAND on CPUS, or unpinned when CPUS is empty
    local cpus=$1
    shift
    if [[ -n $cpus ]]; then taskset -c "$cpus" "$@"; else "$@"; fi
}
serve() { # the server process itself (exec, then taskset's own exec), so its PID is the coproc's
    if [[ -n ${SERVER_CPUS:-} ]]; then exec taskset -c "$SERVER_CPUS" "$binary" serve "$1"; fi
    exec "$binary" serve "$1"
}

results=$(mktemp)
trap 'rm -f "$results"' EXIT
for run in $(seq 1 "$runs"); do
    for server in project rmcp; do
        coproc SERVER { serve "$server"; }
        pid=$SERVER_PID
        read -r url <&"${SERVER[0]}"
        figures=$(pin "${CLIENT_CPUS:-}" "$binary" client "$url" "$seconds" "$clients")
        rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
        hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
        exec {SERVER[1]}>&-
        wait "$pid" || true
        line=$(python3 -c 'import json, sys; f = json.loads(sys.argv[1]); f.update(server=sys.argv[2], run=int(sys.argv[3]), rss_kib=int(sys.argv[4]), peak_rss_kib=int(sys.argv[5])); print(json.dumps(f))' \
            "$figures" "$server" "$run" "$rss" "$hwm")
        echo "$line"
        echo "$line" >>"$results"
    done
done

python3 - "$results" "$seconds" "$clients" "${SERVER_CPUS:-any}" "${CLIENT_CPUS:-any}" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"\n{len(rows) // 2} runs per server, {sys.argv[2]} s each, {sys.argv[3]} clients; server on CPUs {sys.argv[4]}, client on {sys.argv[5]}")
print("| server | requests/s | p50 (µs) | p99 (µs) | RSS at end (MiB) | peak RSS (MiB) | errors |")
print("| --- | --- | --- | --- | --- | --- | --- |")
def span(values, fmt):
    return f"{fmt(min(values))} – {fmt(max(values))}"
for server in ("project", "rmcp"):
    mine = [row for row in rows if row["server"] == server]
    print(f"| {server} | {span([r['rps'] for r in mine], lambda v: f'{v:,.0f}')} "
          f"| {span([r['p50_us'] for r in mine], lambda v: f'{v:,.0f}')} "
          f"| {span([r['p99_us'] for r in mine], lambda v: f'{v:,.0f}')} "
          f"| {span([r['rss_kib'] / 1024 for r in mine], lambda v: f'{v:.1f}')} "
          f"| {span([r['peak_rss_kib'] / 1024 for r in mine], lambda v: f'{v:.1f}')} "
          f"| {sum(r['errors'] for r in mine)} |")
project = [r for r in rows if r["server"] == "project"]
rmcp = [r for r in rows if r["server"] == "rmcp"]
pairs = list(zip(project, rmcp))
print("\nper run, project / rmcp: requests/s "
      + ", ".join(f"{p['rps'] / r['rps']:.2f}" for p, r in pairs)
      + "; p99 " + ", ".join(f"{p['p99_us'] / r['p99_us']:.2f}" for p, r in pairs))
PY
