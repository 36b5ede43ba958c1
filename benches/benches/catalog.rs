//! Catalogs: building one of 10 000 dynamic tools, listing it through policy for one caller,
//! and encoding 100 tools for each provider, each against the bare data-structure work.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use tool_benches::tools::Medium;
use tool_benches::{dynamic_schema, dynamic_tools, half_policy};
use tool_runtime::adapters::Provider;
use tool_runtime::catalog::{ToolCatalog, shows, visible_tools};
use tool_runtime::prelude::*;
use tool_runtime::runtime::BoundToolRuntime;

const TOOLS: usize = 10_000;

fn build(c: &mut Criterion) {
    let schema = dynamic_schema();
    let tools = dynamic_tools(TOOLS, &schema);
    let mut group = c.benchmark_group("catalog/build_10k");
    group.sample_size(20);
    // Baseline: the map a catalog is, filled with the same tools.
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let mut map: BTreeMap<String, Arc<dyn BoundToolRuntime>> = BTreeMap::new();
            for tool in &tools {
                map.insert(tool.name().to_owned(), Arc::clone(tool));
            }
            map.len()
        });
    });
    // What `register_dynamic` does with a built tool, then `build`'s checks.
    group.bench_function("catalog", |b| {
        b.iter(|| {
            let builder = tools.iter().fold(ToolCatalog::builder(), |builder, tool| {
                let origin = format!("a dynamic tool (`{}`)", tool.name());
                builder.register_bound(Arc::clone(tool), origin)
            });
            builder.build().expect("distinct ids")
        });
    });
    group.finish();

    // Making the tools: name and subset checks, then `jsonschema` compiles the schema.
    let mut group = c.benchmark_group("catalog/dynamic_tools_10k");
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    group.bench_function("baseline", |b| {
        b.iter(|| {
            (0..TOOLS)
                .map(|_| jsonschema::draft202012::new(black_box(&schema)).expect("valid"))
                .collect::<Vec<_>>()
        });
    });
    group.bench_function("dynamic_tool", |b| b.iter(|| dynamic_tools(TOOLS, &schema).len()));
    group.finish();
}

fn list(c: &mut Criterion) {
    let tools = dynamic_tools(TOOLS, &dynamic_schema());
    let catalog = tools
        .iter()
        .fold(ToolCatalog::builder(), |builder, tool| {
            builder.register_bound(Arc::clone(tool), tool.name().to_owned())
        })
        .build()
        .expect("distinct ids");
    let policy = half_policy();
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    });
    assert_eq!(visible_tools(&catalog, &policy, &ctx).len(), TOOLS / 2);
    let mut sorted = tools.clone();
    sorted.sort_by(|a, b| a.name().cmp(b.name()));

    let mut group = c.benchmark_group("catalog/list_10k");
    group.sample_size(30);
    // Baseline: the policy check over an already sorted list.
    group.bench_function("baseline", |b| {
        b.iter(|| {
            sorted
                .iter()
                .filter(|tool| shows(&policy, &ctx, tool.spec()))
                .cloned()
                .collect::<Vec<_>>()
                .len()
        });
    });
    group.bench_function("catalog", |b| {
        b.iter(|| visible_tools(black_box(&catalog), &policy, &ctx).len());
    });
    group.finish();
}

fn encode(c: &mut Criterion) {
    let schema = Medium::spec().input_schema().to_json();
    let tools = dynamic_tools(100, &schema);
    let specs: Vec<&ToolSpec> = tools.iter().map(|tool| tool.spec()).collect();
    let mut group = c.benchmark_group("catalog/encode_100");
    group.sample_size(30);
    // Baseline: a copy of every input schema, the least an encoder builds.
    group.bench_function("baseline", |b| {
        b.iter(|| specs.iter().map(|spec| spec.input_schema().to_json()).collect::<Vec<Value>>())
    });
    // Default (non-strict) definitions: in Anthropic's strict mode 100 tools with nullable
    // properties cross its request-wide limit of 16 union-typed parameters. OpenAI's strict
    // lowering, the heaviest, is measured separately.
    for provider in Provider::ALL {
        let adapter = provider.adapter(false);
        adapter.tools(&specs).expect("100 medium tools fit every provider's limits");
        group.bench_function(provider.as_str(), |b| {
            b.iter(|| adapter.tools(black_box(&specs)).expect("encodes"))
        });
    }
    let strict = Provider::OpenAiChat.adapter(true);
    group.bench_function("openai-chat-strict", |b| {
        b.iter(|| strict.tools(black_box(&specs)).expect("fits OpenAI's strict limits"))
    });
    // The same through a static spec: rendering the compile-time tree.
    group.bench_function("render_static_100", |b| {
        b.iter(|| (0..100).map(|_| Medium::SCHEMA.to_json()).collect::<Vec<Value>>())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = build, list, encode
}
criterion_main!(benches);
