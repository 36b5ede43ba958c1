//! Validation: the project's validator (`validate_as`, generated per type by `#[tool]`, the one
//! the runner calls; `project_walk` is `Schema::validate`, the walk over the schema tree that
//! dynamic and imported schemas take) against the `jsonschema` crate's two validators on the
//! same rendered schema and the same parsed inputs, valid and invalid: its run-time one
//! (`jsonschema::draft202012::new`, the schema compiled when the benchmark starts) and its
//! compile-time one (`#[jsonschema::validator]`, code generated from `benches/schemas/*.json`,
//! which a check in `benches/tests/checks` keeps equal to the tools' rendered schemas).
//!
//! Like for like: on valid input each reports "no error" (`jsonschema`'s `validate`; its
//! `is_valid` is measured too); on invalid input each collects every error with its location
//! (`jsonschema`'s `iter_errors`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use tool_benches::tools::{
    MEDIUM_ARGS, MEDIUM_INVALID_ARGS, Medium, SMALL_ARGS, Small, small_invalid_args,
};
use tool_runtime::schema::{Schema, ToolSchema, ValidationErrors, validate_as};

/// The compile-time validator of `bench__small`'s arguments.
#[jsonschema::validator(path = "schemas/small.json")]
struct SmallCompiled;

/// The compile-time validator of `bench__medium`'s arguments.
#[jsonschema::validator(path = "schemas/medium.json")]
struct MediumCompiled;

/// A compile-time validator's three entry points.
struct Generated {
    validate: for<'a> fn(&'a Value) -> Result<(), jsonschema::ValidationError<'a>>,
    is_valid: fn(&Value) -> bool,
    iter_errors: for<'a> fn(&'a Value) -> jsonschema::ErrorIterator<'a>,
}

fn compare(
    c: &mut Criterion,
    name: &str,
    schema: &'static Schema,
    validate: fn(&Value) -> Result<(), ValidationErrors>,
    generated: &Generated,
    valid: &str,
    invalid: &str,
) {
    let compiled =
        jsonschema::draft202012::new(&schema.to_json()).expect("the rendered schema compiles");
    let valid: Value = serde_json::from_str(valid).expect("JSON");
    let invalid: Value = serde_json::from_str(invalid).expect("JSON");
    // Both validators must agree before their speed is compared.
    assert!(schema.validate(&valid).is_ok() && compiled.is_valid(&valid));
    assert!(validate(&valid).is_ok());
    assert_eq!(validate(&invalid), schema.validate(&invalid), "{name}: generated and walk agree");
    let ours = schema.validate(&invalid).expect_err("invalid").len();
    let theirs = compiled.iter_errors(&invalid).count();
    assert_eq!(ours, theirs, "{name}: both validators find every error");
    assert!((generated.is_valid)(&valid) && (generated.validate)(&valid).is_ok());
    assert_eq!((generated.iter_errors)(&invalid).count(), ours, "{name}: the generated one too");

    let mut group = c.benchmark_group(format!("validation/{name}/valid"));
    group.bench_function("project", |b| b.iter(|| validate(black_box(&valid)).is_ok()));
    group.bench_function("project_walk", |b| {
        b.iter(|| schema.validate(black_box(&valid)).is_ok());
    });
    group.bench_function("jsonschema", |b| b.iter(|| compiled.validate(black_box(&valid)).is_ok()));
    group
        .bench_function("jsonschema_is_valid", |b| b.iter(|| compiled.is_valid(black_box(&valid))));
    group.bench_function("jsonschema_generated", |b| {
        b.iter(|| (generated.validate)(black_box(&valid)).is_ok());
    });
    group.bench_function("jsonschema_generated_is_valid", |b| {
        b.iter(|| (generated.is_valid)(black_box(&valid)));
    });
    group.finish();

    let mut group = c.benchmark_group(format!("validation/{name}/invalid"));
    group.bench_function("project", |b| {
        b.iter(|| validate(black_box(&invalid)).map_err(|errors| errors.len()));
    });
    group.bench_function("project_walk", |b| {
        b.iter(|| schema.validate(black_box(&invalid)).map_err(|errors| errors.len()));
    });
    group.bench_function("jsonschema", |b| {
        b.iter(|| {
            compiled
                .iter_errors(black_box(&invalid))
                .map(|error| (error.instance_path().to_string(), error.to_string()))
                .collect::<Vec<_>>()
        });
    });
    group.bench_function("jsonschema_generated", |b| {
        b.iter(|| {
            (generated.iter_errors)(black_box(&invalid))
                .map(|error| (error.instance_path().to_string(), error.to_string()))
                .collect::<Vec<_>>()
        });
    });
    group.finish();
}

fn validation(c: &mut Criterion) {
    let small = Generated {
        validate: SmallCompiled::validate,
        is_valid: SmallCompiled::is_valid,
        iter_errors: SmallCompiled::iter_errors,
    };
    let medium = Generated {
        validate: MediumCompiled::validate,
        is_valid: MediumCompiled::is_valid,
        iter_errors: MediumCompiled::iter_errors,
    };
    compare(
        c,
        "small",
        Small::SCHEMA,
        validate_as::<Small>,
        &small,
        SMALL_ARGS,
        &small_invalid_args(),
    );
    compare(
        c,
        "medium",
        Medium::SCHEMA,
        validate_as::<Medium>,
        &medium,
        MEDIUM_ARGS,
        MEDIUM_INVALID_ARGS,
    );
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
