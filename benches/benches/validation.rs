//! Validation: the project's validator (`Schema::validate`, over the compile-time schema tree)
//! against the `jsonschema` crate's compiled validator on the same rendered schema and the same
//! parsed inputs, valid and invalid.
//!
//! Like for like: on valid input both report "no error" (`jsonschema`'s `validate`; its
//! `is_valid` is measured too); on invalid input both collect every error with its location
//! (`jsonschema`'s `iter_errors`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use tool_benches::tools::{
    MEDIUM_ARGS, MEDIUM_INVALID_ARGS, Medium, SMALL_ARGS, Small, small_invalid_args,
};
use tool_runtime::schema::{Schema, ToolSchema};

fn compare(c: &mut Criterion, name: &str, schema: &'static Schema, valid: &str, invalid: &str) {
    let compiled =
        jsonschema::draft202012::new(&schema.to_json()).expect("the rendered schema compiles");
    let valid: Value = serde_json::from_str(valid).expect("JSON");
    let invalid: Value = serde_json::from_str(invalid).expect("JSON");
    // Both validators must agree before their speed is compared.
    assert!(schema.validate(&valid).is_ok() && compiled.is_valid(&valid));
    let ours = schema.validate(&invalid).expect_err("invalid").len();
    let theirs = compiled.iter_errors(&invalid).count();
    assert_eq!(ours, theirs, "{name}: both validators find every error");

    let mut group = c.benchmark_group(format!("validation/{name}/valid"));
    group.bench_function("project", |b| b.iter(|| schema.validate(black_box(&valid)).is_ok()));
    group.bench_function("jsonschema", |b| b.iter(|| compiled.validate(black_box(&valid)).is_ok()));
    group
        .bench_function("jsonschema_is_valid", |b| b.iter(|| compiled.is_valid(black_box(&valid))));
    group.finish();

    let mut group = c.benchmark_group(format!("validation/{name}/invalid"));
    group.bench_function("project", |b| {
        b.iter(|| schema.validate(black_box(&invalid)).map_err(|errors| errors.len()))
    });
    group.bench_function("jsonschema", |b| {
        b.iter(|| {
            compiled
                .iter_errors(black_box(&invalid))
                .map(|error| (error.instance_path().to_string(), error.to_string()))
                .collect::<Vec<_>>()
        });
    });
    group.finish();
}

fn validation(c: &mut Criterion) {
    compare(c, "small", Small::SCHEMA, SMALL_ARGS, &small_invalid_args());
    compare(c, "medium", Medium::SCHEMA, MEDIUM_ARGS, MEDIUM_INVALID_ARGS);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50);
    targets = validation
}
criterion_main!(benches);
