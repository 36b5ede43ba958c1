#!/usr/bin/env bash
# Compile-time cost of `#[tool]`: generates two crates under target/compile-time/ (never
# committed) and builds each from clean.
#
#   tool:     N `#[tool]` structs, each with a `#[derive(Serialize, ToolSchema)]` output type and
#             its `impl Tool`; `tool-runtime` with its default features (`schemars`, `dynamic`,
#             `pattern-dfa`, `runner`, `adapters`, `agent`).
#   lean:     the same crate with `tool-runtime`'s default features off (no `schemars` interop,
#             no run-time `DynamicTool`s, so no `jsonschema`; no runner, adapters or agent loop):
#             all that `#[tool]` types need.
#   schemars: the same N structs with `#[derive(Deserialize, Serialize, schemars::JsonSchema)]`,
#             the same output types with `#[derive(Serialize, schemars::JsonSchema)]` and the
#             same `run` as an inherent `async fn`.
#
# Three measurements per crate, each the median of RUNS builds (dev profile):
#   crate:  the generated crate alone, its dependencies already built (`cargo clean -p`, build;
#           CARGO_INCREMENTAL=0): what the macros and their expansions cost.
#   full:   everything from an empty target directory, dependencies included
#           (CARGO_INCREMENTAL=0).
#   edit:   the rebuild after editing one struct's doc comment (its tool's description), with
#           incremental compilation on as in a developer's `cargo build`: what a change costs.
#
# Usage: benches/compile_time.sh [N=100] [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
N=${1:-100}
RUNS=${2:-3}
WORK="$ROOT/target/compile-time"
export CARGO_INCREMENTAL=0

rm -rf "$WORK"
mkdir -p "$WORK/tool/src" "$WORK/lean/src" "$WORK/schemars/src"

fields() {
    cat <<EOF
    /// Words to look for.
    pub query: String,
    /// How many results at most.
    pub limit: Option<u32>,
    /// Whether to match exactly.
    pub exact: bool,
    /// Labels to filter on.
    pub tags: Vec<String>,
    /// Where to look.
    pub scope: Scope,
EOF
}

scope() {
    cat <<EOF
/// Where to look.
#[derive(Debug, Clone, Copy, $1)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Titles only.
    Titles,
    /// Everything.
    Everything,
}

EOF
}

# The `#[tool]` crate.
manifest() { # manifest NAME TOOL_RUNTIME_OPTIONS
    cat <<EOF
[package]
name = "$1"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
tool-runtime = { path = "$ROOT/tool-runtime"$2 }
serde = { version = "1", features = ["derive"] }

[workspace]
EOF
}
manifest gen-tool "" > "$WORK/tool/Cargo.toml"
manifest gen-lean ", default-features = false" > "$WORK/lean/Cargo.toml"
{
    echo "//! $N generated \`#[tool]\` structs."
    echo "#![allow(missing_docs)]"
    echo "use tool_runtime::prelude::*;"
    echo
    scope "Deserialize, ToolSchema"
    for i in $(seq 1 "$N"); do
        cat <<EOF
/// Search collection $i.
#[tool(name = "gen__search_$i", effect = read_only, redact = ["id", "title", "score"])]
pub struct Search$i {
$(fields)
}

/// What collection $i returns.
#[derive(Serialize, ToolSchema)]
pub struct Found$i {
    /// The best match.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// Match quality.
    pub score: f64,
}

impl Tool for Search$i {
    type Output = Found$i;

    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Found$i, ToolError> {
        Ok(Found$i { id: $i, title: self.query, score: f64::from(self.limit.unwrap_or(1)) })
    }
}

EOF
    done
} > "$WORK/tool/src/lib.rs"
cp "$WORK/tool/src/lib.rs" "$WORK/lean/src/lib.rs"

# The schemars crate.
cat > "$WORK/schemars/Cargo.toml" <<EOF
[package]
name = "gen-schemars"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
serde = { version = "1", features = ["derive"] }
schemars = "1"

[workspace]
EOF
{
    echo "//! $N generated structs with serde and schemars derives."
    echo "#![allow(missing_docs)]"
    echo "use schemars::JsonSchema;"
    echo "use serde::{Deserialize, Serialize};"
    echo
    scope "Deserialize, Serialize, JsonSchema"
    for i in $(seq 1 "$N"); do
        cat <<EOF
/// Search collection $i.
#[derive(Deserialize, Serialize, JsonSchema)]
pub struct Search$i {
$(fields)
}

/// What collection $i returns.
#[derive(Serialize, JsonSchema)]
pub struct Found$i {
    /// The best match.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// Match quality.
    pub score: f64,
}

impl Search$i {
    pub async fn run(self) -> Result<Found$i, String> {
        Ok(Found$i { id: $i, title: self.query, score: f64::from(self.limit.unwrap_or(1)) })
    }
}

EOF
    done
} > "$WORK/schemars/src/lib.rs"

# Same dependency versions as the workspace, and no registry look-ups.
for kind in tool lean schemars; do cp "$ROOT/Cargo.lock" "$WORK/$kind/Cargo.lock"; done

seconds() { # seconds for "$@"
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>"$WORK/last.log" || { cat "$WORK/last.log"; exit 1; }
    end=$(date +%s.%N)
    printf '%.2f' "$(echo "$end - $start" | bc)"
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A FULL CRATE RUNS_OF FULL_RUNS_OF EDIT EDIT_RUNS_OF
for kind in tool lean schemars; do
    dir="$WORK/$kind"
    full=()
    for _ in $(seq 1 "$RUNS"); do
        cargo clean --offline --quiet --manifest-path "$dir/Cargo.toml"
        full+=("$(seconds cargo build --offline --quiet --manifest-path "$dir/Cargo.toml")")
    done
    FULL[$kind]=$(median "${full[@]}")
    FULL_RUNS_OF[$kind]="${full[*]}"
    times=()
    for _ in $(seq 1 "$RUNS"); do
        cargo clean --offline --quiet --manifest-path "$dir/Cargo.toml" -p "gen-$kind"
        times+=("$(seconds cargo build --offline --quiet --manifest-path "$dir/Cargo.toml")")
    done
    CRATE[$kind]=$(median "${times[@]}")
    RUNS_OF[$kind]="${times[*]}"
    # Incremental: one untimed build leaves the caches, then each run edits struct 1's doc.
    CARGO_INCREMENTAL=1 cargo build --offline --quiet --manifest-path "$dir/Cargo.toml"
    edits=()
    for run in $(seq 1 "$RUNS"); do
        sed -E -i "s|^/// Search collection 1( \(edit [0-9]+\))?\.\$|/// Search collection 1 (edit $run).|" \
            "$dir/src/lib.rs"
        edits+=("$(seconds env CARGO_INCREMENTAL=1 cargo build --offline --quiet \
            --manifest-path "$dir/Cargo.toml")")
    done
    EDIT[$kind]=$(median "${edits[@]}")
    EDIT_RUNS_OF[$kind]="${edits[*]}"
done

ratio() { echo "scale=2; $1 / $2" | bc; }
{
    echo "compile time, $N structs, dev profile, $(nproc) cores (crate, full: CARGO_INCREMENTAL=0; edit: 1)"
    printf '%-8s %9s %22s %9s %22s %9s %22s\n' "" "crate (s)" "runs (s)" "full (s)" "runs (s)" \
        "edit (s)" "runs (s)"
    for kind in tool lean schemars; do
        printf '%-8s %9.2f %22s %9.2f %22s %9.2f %22s\n' "$kind" "${CRATE[$kind]}" "${RUNS_OF[$kind]}" \
            "${FULL[$kind]}" "${FULL_RUNS_OF[$kind]}" "${EDIT[$kind]}" "${EDIT_RUNS_OF[$kind]}"
    done
    for kind in tool lean; do
        echo "ratio $kind/schemars: crate $(ratio "${CRATE[$kind]}" "${CRATE[schemars]}")x, full $(ratio "${FULL[$kind]}" "${FULL[schemars]}")x, edit $(ratio "${EDIT[$kind]}" "${EDIT[schemars]}")x"
    done
} | tee "$WORK/results.txt"
