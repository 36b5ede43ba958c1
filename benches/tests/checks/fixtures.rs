//! The benchmarks' fixtures do what they claim: every provider stream decodes to the one call
//! it carries, and the bench tools accept their sample arguments and refuse the invalid ones.

use serde_json::Value;
use tool_benches::streams::{arguments, stream};
use tool_benches::tools::{
    MEDIUM_ARGS, MEDIUM_INVALID_ARGS, Medium, SMALL_ARGS, Small, small_invalid_args,
};
use tool_runtime::adapters::Provider;
use tool_runtime::prelude::*;
use tool_runtime::schema::parse_arguments;

#[test]
fn every_stream_decodes_to_its_call() {
    let args = arguments(4096);
    assert!((4096..4300).contains(&args.len()), "{}", args.len());
    let expected: Value = serde_json::from_str(&args).unwrap();
    for provider in Provider::ALL {
        for delta in [1, 16, 256] {
            let stream = stream(provider, &args, delta);
            let mut session = provider.adapter(false).stream();
            for read in stream.reads() {
                session.feed(read);
            }
            let decoded = session.finish();
            assert!(decoded.problems.is_empty(), "{provider}/{delta}: {:?}", decoded.problems);
            assert_eq!(decoded.calls.len(), 1, "{provider}/{delta}");
            assert!(decoded.calls[0].complete);
            assert_eq!(decoded.calls[0].arguments.value(), Some(&expected), "{provider}/{delta}");
        }
    }
}

#[test]
fn sample_arguments_validate() {
    parse_arguments::<Small>(SMALL_ARGS.as_bytes()).unwrap();
    parse_arguments::<Medium>(MEDIUM_ARGS.as_bytes()).unwrap();
    let small: Value = serde_json::from_str(&small_invalid_args()).unwrap();
    assert_eq!(Small::SCHEMA.validate(&small).unwrap_err().len(), 3);
    let medium: Value = serde_json::from_str(MEDIUM_INVALID_ARGS).unwrap();
    assert_eq!(Medium::SCHEMA.validate(&medium).unwrap_err().len(), 6);
}

/// The compile-time `jsonschema` validators of the validation benchmark are generated from
/// `benches/schemas/*.json`: those files are the bench tools' rendered argument schemas.
/// `UPDATE_BENCH_SCHEMAS=1` writes them anew.
#[test]
fn the_generated_peers_schemas_are_the_tools() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    for (file, schema) in [("small.json", Small::SCHEMA), ("medium.json", Medium::SCHEMA)] {
        let path = folder.join(file);
        let rendered = serde_json::to_string_pretty(&schema.to_json()).unwrap() + "\n";
        if std::env::var_os("UPDATE_BENCH_SCHEMAS").is_some() {
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(&path, &rendered).unwrap();
        }
        let stored = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            stored == rendered,
            "{} is not the tool's rendered schema; run the test with UPDATE_BENCH_SCHEMAS=1",
            path.display()
        );
    }
}
