//! An error a provider sends in the middle of a stream keeps its type and (scrubbed, cut)
//! message, for every provider; a stream cut without one stays a transport error.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::adapters::Provider;
use tool_runtime::agent::{
    Agent, AnthropicMessages, Message, ModelErrorKind, OpenAiCompatible, ScriptedModel,
    ScriptedTurn, StopReason,
};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;

use crate::loopback::{Server, stream};
use crate::loopback::{ask, no_retry, quick_retries};

const KEY: &str = "sk-ant-stream-error-key-0123456789";

fn kind(kind: ModelErrorKind) -> Value {
    serde_json::to_value(kind).unwrap()
}

fn anthropic_error(message: &str) -> String {
    let error = json!({"type": "error", "error": {"type": "overloaded_error", "message": message}});
    format!(
        "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"usage\":{{\"input_tokens\":5,\"output_tokens\":1}}}}}}\n\n\
         event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n\
         event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"Hel\"}}}}\n\n\
         event: error\ndata: {error}\n\n"
    )
}

async fn anthropic(body: String) -> AnthropicMessages {
    let server = Server::start(vec![stream(&body)]).await;
    AnthropicMessages::builder()
        .base_url(&server.base)
        .api_key(KEY)
        .retry(no_retry())
        .build()
        .unwrap()
}

#[tokio::test]
async fn an_anthropic_error_event_keeps_the_providers_type_and_message() {
    let model = anthropic(anthropic_error("Overloaded")).await;
    let error = ask(&model).await.expect_err("an error event is no answer");
    assert_eq!(kind(error.kind()), json!("provider"), "{error:?}");
    assert!(error.message().contains("overloaded_error: Overloaded"), "{error}");
    assert!(error.message().contains("Anthropic"), "{error}");
}

#[tokio::test]
async fn a_mid_stream_error_message_is_scrubbed_and_cut() {
    let long = format!("bad key {KEY} {}", "x".repeat(5_000));
    let model = anthropic(anthropic_error(&long)).await;
    let error = ask(&model).await.expect_err("an error event is no answer");
    assert_eq!(kind(error.kind()), json!("provider"), "{error:?}");
    assert!(!error.message().contains(KEY), "{error}");
    assert!(error.message().contains("bad key [redacted]"), "{error}");
    assert!(error.message().chars().count() < 700, "cut: {}", error.message().len());
}

#[tokio::test]
async fn an_openai_chat_error_object_in_the_stream_keeps_its_message() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n\
                data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n";
    let server = Server::start(vec![stream(body)]).await;
    let model = OpenAiCompatible::builder()
        .base_url(format!("{}/v1", server.base))
        .retry(no_retry())
        .build()
        .unwrap();
    let error = ask(&model).await.expect_err("an error object is no answer");
    assert_eq!(kind(error.kind()), json!("provider"), "{error:?}");
    assert!(error.message().contains("server_error: The server had an error"), "{error}");
}

#[tokio::test]
async fn a_stream_cut_without_an_error_event_stays_a_transport_error() {
    let body = anthropic_error("unused");
    let cut = body[..body.find("event: error").unwrap()].to_owned();
    let model = anthropic(cut).await;
    let error = ask(&model).await.expect_err("a cut stream is no answer");
    assert_eq!(error.kind(), ModelErrorKind::Transport, "{error}");
}

async fn stop_after(provider: Provider, body: &str) -> StopReason {
    let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap()).build();
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::stream(provider, body)]));
    let ctx = ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
    Agent::new(model, runner).run(vec![Message::user("go")], &ctx, &|_| {}).await.done.stop
}

#[tokio::test]
async fn every_providers_mid_stream_error_ends_the_run_with_its_message() {
    let cases = [
        (
            Provider::Anthropic,
            anthropic_error("Overloaded"),
            "overloaded_error: Overloaded",
        ),
        (
            Provider::OpenAiChat,
            "data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"rate_limit_error\"}}\n\n".to_owned(),
            "rate_limit_error: Rate limit reached",
        ),
        (
            Provider::OpenAiResponses,
            "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"Something broke\",\"param\":null}\n\n".to_owned(),
            "server_error: Something broke",
        ),
        (
            Provider::OpenAiResponses,
            "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model failed\"},\"output\":[]}}\n\n".to_owned(),
            "server_error: The model failed",
        ),
        (
            Provider::Gemini,
            "data: {\"error\": {\"code\": 503, \"message\": \"The model is overloaded.\", \"status\": \"UNAVAILABLE\"}}\n\n".to_owned(),
            "UNAVAILABLE: The model is overloaded.",
        ),
        (
            Provider::Ollama,
            "{\"error\":\"model runner has unexpectedly stopped\"}\n".to_owned(),
            "model runner has unexpectedly stopped",
        ),
    ];
    for (provider, body, said) in cases {
        let stop = stop_after(provider, &body).await;
        let json = serde_json::to_value(&stop).unwrap();
        assert_eq!(json["kind"], "model_failed", "{provider:?}: {json}");
        assert_eq!(json["error"], "provider", "{provider:?}: {json}");
        let message = json["message"].as_str().unwrap();
        assert!(message.contains(said), "{provider:?}: {message}");
    }
}

/// With retries on, an error inside a stream that had begun is final: the provider's error
/// event, and a stream cut without one, are each asked once of a server that would answer
/// the same again.
#[tokio::test]
async fn a_mid_stream_error_is_not_retried_when_retries_are_on() {
    let body = anthropic_error("Overloaded");
    let cut = body[..body.find("event: error").unwrap()].to_owned();
    for (body, expected) in [(body, json!("provider")), (cut, json!("transport"))] {
        let server = Server::start(vec![stream(&body); 3]).await;
        let model = AnthropicMessages::builder()
            .base_url(&server.base)
            .api_key(KEY)
            .retry(quick_retries())
            .build()
            .unwrap();
        let error = ask(&model).await.expect_err("no answer");
        assert_eq!(kind(error.kind()), expected, "{error:?}");
        assert_eq!(server.requests().len(), 1, "asked once, never retried: {error}");
    }
}
