//! No redirect carries the key, a header or the conversation to another origin: the model
//! clients follow no redirect at all, and say so.

use tool_runtime::agent::{AnthropicMessages, ModelErrorKind, OpenAiCompatible};

use crate::loopback::{CONVERSATION, Server, ask, no_retry, quick_retries, reply, stream};

const KEY: &str = "sk-redirect-test-key-0123456789";
const AZURE_KEY: &str = "azure-api-key-0123456789";

/// What the other origin answers, were it reached: a valid turn, so that following the
/// redirect would succeed.
fn elsewhere_answers() -> Vec<String> {
    let openai = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    vec![stream(openai); 4]
}

fn redirect_to(status: u16, target: &Server, path: &str) -> String {
    let location = format!("{}{path}", target.base);
    reply(status, &[("location", &location)], "text/plain", "moved")
}

fn assert_never_reached(elsewhere: &Server) {
    for request in elsewhere.requests() {
        assert!(!request.contains(KEY), "the key reached the other origin: {request}");
        assert!(!request.contains(AZURE_KEY), "a header reached the other origin: {request}");
        assert!(!request.contains(CONVERSATION), "the body reached the other origin");
    }
    assert!(elsewhere.requests().is_empty(), "the other origin was contacted");
}

#[tokio::test]
async fn a_cross_origin_redirect_of_an_openai_compatible_request_is_refused() {
    for status in [301, 302, 303, 307, 308] {
        let elsewhere = Server::start(elsewhere_answers()).await;
        let endpoint =
            Server::start(vec![redirect_to(status, &elsewhere, "/v1/chat/completions")]).await;
        let model = OpenAiCompatible::builder()
            .base_url(format!("{}/v1", endpoint.base))
            .api_key(KEY)
            .header("api-key", AZURE_KEY)
            .retry(no_retry())
            .build()
            .unwrap();
        let error = ask(&model).await.expect_err("a redirect is no answer");
        assert_eq!(error.kind(), ModelErrorKind::Status(status), "{error}");
        assert!(error.message().contains("redirect"), "{error}");
        assert!(error.message().contains(elsewhere.base.trim_start_matches("http://")));
        assert!(!error.message().contains(KEY) && !error.message().contains(AZURE_KEY));
        assert_eq!(endpoint.requests().len(), 1, "asked once, never retried");
        assert_never_reached(&elsewhere);
    }
}

#[tokio::test]
async fn a_cross_origin_redirect_of_an_anthropic_request_is_refused() {
    for status in [307, 308] {
        let elsewhere = Server::start(elsewhere_answers()).await;
        let endpoint = Server::start(vec![redirect_to(status, &elsewhere, "/v1/messages")]).await;
        let model = AnthropicMessages::builder()
            .base_url(&endpoint.base)
            .api_key(KEY)
            .retry(no_retry())
            .build()
            .unwrap();
        let error = ask(&model).await.expect_err("a redirect is no answer");
        assert_eq!(error.kind(), ModelErrorKind::Status(status), "{error}");
        assert!(endpoint.requests()[0].contains(KEY), "the endpoint itself gets the key");
        assert_never_reached(&elsewhere);
    }
}

#[tokio::test]
async fn a_same_host_redirect_is_not_followed_either() {
    let endpoint = Server::start(vec![reply(
        307,
        &[("location", "/v2/chat/completions?token=abc")],
        "text/plain",
        "",
    )])
    .await;
    let model = OpenAiCompatible::builder()
        .base_url(format!("{}/v1", endpoint.base))
        .api_key(KEY)
        .retry(no_retry())
        .build()
        .unwrap();
    let error = ask(&model).await.expect_err("a redirect is no answer");
    assert_eq!(error.kind(), ModelErrorKind::Status(307));
    assert!(error.message().contains("/v2/chat/completions"), "{error}");
    assert!(!error.message().contains("token=abc"), "the query is left out: {error}");
    assert_eq!(endpoint.requests().len(), 1);
}

/// With retries on, a refused redirect is still asked once: the endpoint would redirect
/// again, and the other origin is never reached. The same policy does retry a `503`, so the
/// count shows the retries were on.
#[tokio::test]
async fn a_refused_redirect_is_not_retried_when_retries_are_on() {
    let model_for = |endpoint: &Server| {
        OpenAiCompatible::builder()
            .base_url(format!("{}/v1", endpoint.base))
            .api_key(KEY)
            .retry(quick_retries())
            .build()
            .unwrap()
    };
    let elsewhere = Server::start(elsewhere_answers()).await;
    let redirect = redirect_to(307, &elsewhere, "/v1/chat/completions");
    let endpoint = Server::start(vec![redirect; 3]).await;
    let error = ask(&model_for(&endpoint)).await.expect_err("a redirect is no answer");
    assert_eq!(error.kind(), ModelErrorKind::Status(307), "{error}");
    assert_eq!(endpoint.requests().len(), 1, "asked once, never retried");
    assert_never_reached(&elsewhere);

    let unavailable = reply(503, &[], "application/json", r#"{"error": {"message": "busy"}}"#);
    let busy = Server::start(vec![unavailable; 3]).await;
    let error = ask(&model_for(&busy)).await.expect_err("three 503s are no answer");
    assert_eq!(error.kind(), ModelErrorKind::Status(503), "{error}");
    assert_eq!(busy.requests().len(), 3, "the policy retries what may be retried");
}
