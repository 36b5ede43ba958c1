//! Streaming decoders: one call with 1 KB or 1 MB of arguments, cut into 1-, 16- and 256-byte
//! deltas, fed through each provider's `StreamSession` and finished. Baseline: parsing the same
//! arguments once with `serde_json::from_slice::<Value>`, the least any decoder must do.
//! Throughput is in bytes of arguments; `BENCHMARKS.md` also gives the wire bytes.

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use serde_json::Value;
use tool_benches::streams::{Stream, arguments, stream};
use tool_runtime::adapters::Provider;

fn decode(stream: &Stream) -> usize {
    let adapter = stream.provider.adapter(false);
    let mut session = adapter.stream();
    let mut events = 0;
    for read in stream.reads() {
        events += session.feed(read).len();
    }
    let decoded = session.finish();
    debug_assert_eq!(decoded.calls.len(), 1);
    debug_assert!(decoded.calls[0].arguments.value().is_some());
    events + decoded.calls.len()
}

/// The stream decodes to exactly one complete call carrying `args`.
fn check(stream: &Stream, args: &str) {
    let mut session = stream.provider.adapter(false).stream();
    for read in stream.reads() {
        session.feed(read);
    }
    let decoded = session.finish();
    let expected: Value = serde_json::from_str(args).expect("JSON");
    assert!(decoded.problems.is_empty(), "{:?}: {:?}", stream.provider, decoded.problems);
    assert_eq!(decoded.calls.len(), 1);
    assert!(decoded.calls[0].complete);
    assert_eq!(decoded.calls[0].arguments.value(), Some(&expected));
}

fn streaming(c: &mut Criterion) {
    for (label, size) in [("1KB", 1024), ("1MB", 1 << 20)] {
        let args = arguments(size);
        let mut group = c.benchmark_group(format!("streaming/{label}"));
        group.throughput(Throughput::Bytes(args.len() as u64));
        if size > 4096 {
            group.sampling_mode(SamplingMode::Flat).sample_size(10);
        }
        group.bench_function("baseline", |b| {
            b.iter(|| serde_json::from_slice::<Value>(black_box(args.as_bytes())).is_ok())
        });
        for provider in Provider::ALL {
            for delta in [1, 16, 256] {
                let stream = stream(provider, &args, delta);
                check(&stream, &args);
                let id = BenchmarkId::new(provider.as_str(), delta);
                group.bench_with_input(id, &stream, |b, stream| b.iter(|| decode(stream)));
            }
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = streaming
}
criterion_main!(benches);
