//! The `wire` command through `examples::wire::run`, the library function its `main` calls.

use std::process::ExitCode;

use crate::support::{self, PROVIDERS, fixtures};
use serde_json::{Value, json};

/// Runs `wire` and returns (exit code, stdout, stderr).
fn wire(args: &[&str], stdin: &[u8]) -> (ExitCode, String, String) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let args = args.iter().map(|arg| (*arg).to_owned());
    let code = examples::wire::run(args, &mut &stdin[..], &mut stdout, &mut stderr);
    (code, String::from_utf8(stdout).unwrap(), String::from_utf8(stderr).unwrap())
}

fn printed(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|error| panic!("not JSON ({error}): {stdout}"))
}

#[test]
fn encode_prints_the_catalog_for_every_provider() {
    let names: Vec<&str> = examples::specs().iter().map(|spec| spec.name()).collect();
    for provider in PROVIDERS {
        for strict in [false, true] {
            let mut args = vec!["encode", "--provider", provider];
            if strict {
                args.push("--strict");
            }
            let (code, stdout, stderr) = wire(&args, b"");
            assert_eq!(code, ExitCode::SUCCESS, "{provider}: {stderr}");
            let tools = printed(&stdout);
            let printed_names: Vec<&str> = match provider {
                "gemini" => tools[0]["functionDeclarations"].as_array().unwrap().iter(),
                _ => tools.as_array().unwrap().iter(),
            }
            .map(|tool| tool["name"].as_str().or(tool["function"]["name"].as_str()).unwrap())
            .collect();
            assert_eq!(printed_names, names, "{provider}");
            let strict_mode =
                provider.parse::<tool_runtime::adapters::Provider>().unwrap().has_strict_mode();
            assert_eq!(stderr.contains("has no strict mode"), strict && !strict_mode, "{provider}");
        }
    }
    let (code, stdout, _) = wire(&["encode", "--provider", "openai-chat", "--strict"], b"");
    assert_eq!(code, ExitCode::SUCCESS);
    assert!(
        printed(&stdout)
            .as_array()
            .unwrap()
            .iter()
            .all(|tool| tool["function"]["strict"] == json!(true))
    );
    let (code, stdout, _) = wire(&["encode", "--provider=gemini", "--json-schema"], b"");
    assert_eq!(code, ExitCode::SUCCESS);
    assert!(printed(&stdout)[0]["functionDeclarations"][0].get("parametersJsonSchema").is_some());
}

#[test]
fn decode_reads_every_fixture_streamed_or_not() {
    for provider in PROVIDERS {
        for (name, bytes) in fixtures(provider) {
            let (code, stdout, stderr) = wire(&["decode", "--provider", provider], &bytes);
            assert_eq!(code, ExitCode::SUCCESS, "{provider}/{name}: {stderr}");
            let out = printed(&stdout);
            assert!(out["finish"].is_string(), "{provider}/{name}");
            for call in out["tool_calls"].as_array().unwrap() {
                assert!(call["id"].is_string() && call["name"].is_string(), "{provider}/{name}");
                match &call["arguments"] {
                    Value::Null => assert!(
                        call["error"].is_string(),
                        "{provider}/{name}: null arguments say why"
                    ),
                    arguments => assert!(arguments.is_object() && call.get("error").is_none()),
                }
            }
        }
    }
}

#[test]
fn decode_output_lists_calls_in_model_order_with_the_finish() {
    let stream = support::fixture("openai-chat", "stream_parallel.sse");
    let (code, stdout, _) = wire(&["decode", "--provider", "openai-chat"], &stream);
    assert_eq!(code, ExitCode::SUCCESS);
    let out = printed(&stdout);
    assert_eq!(out["finish"], json!("tool_calls"));
    let calls: Vec<(&str, &str, &Value)> = out["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| {
            (call["id"].as_str().unwrap(), call["name"].as_str().unwrap(), &call["arguments"])
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("call_Ab12", "core__get_current_time", &json!({"timezone": "Europe/Berlin"})),
            ("call_Cd34", "docs__search", &json!({"query": "streaming", "limit": 3})),
        ]
    );
    let invalid = support::fixture("openai-chat", "stream_invalid_json.sse");
    let (_, stdout, _) = wire(&["decode", "--provider", "openai-chat"], &invalid);
    let call = &printed(&stdout)["tool_calls"][0];
    assert_eq!(call["arguments"], Value::Null);
    assert!(call["error"].as_str().unwrap().contains("not valid JSON"));
}

#[test]
fn bad_command_lines_fail_with_usage() {
    let cases: [(&[&str], &str); 7] = [
        (&[], "missing command"),
        (&["fetch"], "unknown command `fetch`"),
        (&["encode"], "missing `--provider <P>`"),
        (&["encode", "--provider"], "missing `--provider <P>`"),
        (&["encode", "--provider", "openai"], "unknown provider `openai`"),
        (&["decode", "--provider", "anthropic", "--strict"], "unexpected argument `--strict`"),
        (
            &["encode", "--provider", "anthropic", "--json-schema"],
            "`--json-schema` applies to `gemini` only",
        ),
    ];
    for (args, message) in cases {
        let (code, stdout, stderr) = wire(args, b"");
        assert_eq!(code, ExitCode::from(2), "{args:?}");
        assert!(stdout.is_empty(), "{args:?}");
        assert!(stderr.starts_with(&format!("error: {message}")), "{args:?}: {stderr}");
        assert!(stderr.contains("usage:"), "{args:?}");
    }
}

#[test]
fn bad_input_fails_with_a_clear_error() {
    let cases: [(&str, &[u8], &str); 5] = [
        ("anthropic", b"", "stdin is empty"),
        ("openai-chat", b"hello there\n", "stdin is neither a response body nor a stream from OpenAI Chat Completions"),
        ("gemini", br#"{"error": {"code": 400, "message": "API key not valid", "status": "INVALID_ARGUMENT"}}"#, "stdin is not a response from Google Gemini: the provider reported an error (INVALID_ARGUMENT): API key not valid"),
        ("ollama", b"[1, 2, 3]", "stdin is not a response from Ollama: the response body is not a chat response with `message`"),
        ("openai-responses", b"\xff\xfe\x00garbage", "stdin is neither"),
    ];
    for (provider, stdin, message) in cases {
        let (code, stdout, stderr) = wire(&["decode", "--provider", provider], stdin);
        assert_eq!(code, ExitCode::FAILURE, "{provider}");
        assert!(stdout.is_empty(), "{provider}");
        assert!(stderr.starts_with(&format!("error: {message}")), "{provider}: {stderr}");
    }
}

#[test]
fn problems_are_noted_on_stderr_and_kept_in_the_output() {
    let stream = support::fixture("anthropic", "stream_error.sse");
    let (code, stdout, stderr) = wire(&["decode", "--provider", "anthropic"], &stream);
    assert_eq!(code, ExitCode::SUCCESS);
    assert!(stderr.contains("note: the provider reported an error (overloaded_error): Overloaded"));
    let out = printed(&stdout);
    assert_eq!(out["finish"], json!("error"));
    assert_eq!(
        out["problems"],
        json!(["the provider reported an error (overloaded_error): Overloaded"])
    );
}
