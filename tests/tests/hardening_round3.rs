//! Issue 24 (hardening, round 3): findings 2, 10, 11, 12 and 7, one module each. Every test
//! here failed before its fix.

/// A small HTTP/1.1 server on loopback: one scripted reply per connection, every request
/// recorded as the raw bytes of its head and body.
mod server {
    use std::sync::{Arc, Mutex};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    pub struct Server {
        /// `http://127.0.0.1:port`.
        pub base: String,
        seen: Arc<Mutex<Vec<String>>>,
    }

    impl Server {
        /// Answers each connection with the next of `replies` (whole HTTP responses), then
        /// closes it; connections past the last reply are recorded and closed.
        pub async fn start(replies: Vec<String>) -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let seen = Arc::new(Mutex::new(Vec::new()));
            let record = seen.clone();
            tokio::spawn(async move {
                let mut replies = replies.into_iter();
                loop {
                    let Ok((mut socket, _)) = listener.accept().await else { return };
                    let request = read_request(&mut socket).await;
                    record.lock().unwrap().push(request);
                    if let Some(reply) = replies.next() {
                        let _ = socket.write_all(reply.as_bytes()).await;
                    }
                    let _ = socket.shutdown().await;
                }
            });
            Self { base, seen }
        }

        /// Every request received so far, head and body, as text.
        pub fn requests(&self) -> Vec<String> {
            self.seen.lock().unwrap().clone()
        }
    }

    async fn read_request(socket: &mut TcpStream) -> String {
        let mut buffer = Vec::new();
        let mut piece = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&buffer).to_lowercase();
            if let Some(head_end) = text.find("\r\n\r\n") {
                let length = text
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length:"))
                    .and_then(|value| value.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if buffer.len() >= head_end + 4 + length {
                    break;
                }
            }
            match socket.read(&mut piece).await {
                Ok(0) | Err(_) => break,
                Ok(read) => buffer.extend_from_slice(&piece[..read]),
            }
        }
        String::from_utf8_lossy(&buffer).into_owned()
    }

    /// A whole response.
    pub fn reply(status: u16, headers: &[(&str, &str)], content_type: &str, body: &str) -> String {
        let mut out = format!(
            "HTTP/1.1 {status} Whatever\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
            body.len()
        );
        for (name, value) in headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(body);
        out
    }

    /// `200 text/event-stream` with `body`.
    pub fn stream(body: &str) -> String {
        reply(200, &[], "text/event-stream", body)
    }
}

/// The one-message request every model test sends; its text is what must not leak.
const CONVERSATION: &str = "the confidential conversation 7c1f";

async fn ask(
    model: &dyn tool_runtime::agent::ChatModel,
) -> Result<tool_runtime::agent::ModelTurn, tool_runtime::agent::ModelError> {
    use tool_runtime::adapters::{Message, ModelRequest, ToolChoice};
    let messages = [Message::user(CONVERSATION)];
    let request = ModelRequest { messages: &messages, tools: &[], choice: &ToolChoice::auto() };
    model.respond(request, &|_| {}).await
}

fn no_retry() -> tool_runtime::agent::RetryPolicy {
    let mut retry = tool_runtime::agent::RetryPolicy::default();
    retry.max_attempts = 1;
    retry
}

/// Finding 2: no redirect carries the key, a header or the conversation to another origin.
mod redirects {
    use tool_runtime::agent::{AnthropicMessages, ModelErrorKind, OpenAiCompatible};

    use super::server::{Server, reply, stream};
    use super::{CONVERSATION, ask, no_retry};

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
            let endpoint =
                Server::start(vec![redirect_to(status, &elsewhere, "/v1/messages")]).await;
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
}

/// Finding 10: an error the provider sends inside its stream keeps its type and message, under
/// a kind of its own; a dropped connection stays `transport`.
mod stream_errors {
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

    use super::server::{Server, stream};
    use super::{ask, no_retry};

    const KEY: &str = "sk-ant-stream-error-key-0123456789";

    fn kind(kind: ModelErrorKind) -> Value {
        serde_json::to_value(kind).unwrap()
    }

    fn anthropic_error(message: &str) -> String {
        let error =
            json!({"type": "error", "error": {"type": "overloaded_error", "message": message}});
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
        let ctx =
            ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
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
}

/// Finding 11: run-time schemas may use enums of integers, numbers and booleans; every
/// provider's encoder carries them or lowers them, and the runner validates against them.
mod scalar_enums {
    use serde_json::{Value, json};
    use tool_runtime::adapters::{
        Adapter, Anthropic, Gemini, GeminiParameters, Ollama, OpenAiChat, OpenAiResponses,
    };
    use tool_runtime::catalog::ToolCatalog;
    use tool_runtime::prelude::*;
    use tool_runtime::runner::ToolRunner;
    use tool_runtime::runtime::{BoundToolRuntime, DynamicTool, DynamicToolError};

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "size": {"type": "integer", "description": "Shirt size.", "enum": [2, 4]},
                "ratio": {"type": ["number", "null"], "enum": [0.5, 1.5, null]},
                "on": {"type": "boolean", "enum": [true]}
            },
            "required": ["size"],
            "additionalProperties": false
        })
    }

    fn tool(schema: Value) -> Result<DynamicTool, DynamicToolError> {
        DynamicTool::builder("shop__pick", "Pick a size.", schema)
            .effect(ToolEffect::ReadOnly)
            .redact_all()
            .build(|args, _, _| async move { Ok(args) })
    }

    #[tokio::test]
    async fn a_dynamic_tool_takes_integer_number_and_boolean_enums_and_validates_them() {
        let tool = tool(schema()).expect("an integer enum is in the subset");
        let catalog = ToolCatalog::builder().register_dynamic(tool).build().unwrap();
        let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["shop__*"])).build();
        let ctx =
            ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
        for good in [
            r#"{"size": 4}"#,
            r#"{"size": 2, "ratio": 1.5, "on": true}"#,
            r#"{"size": 2, "ratio": null}"#,
        ] {
            let result = runner.exec("shop__pick", good.as_bytes(), &ctx).await;
            assert!(result.error_code().is_none(), "{good}: {:?}", result.error_code());
        }
        for bad in [
            r#"{"size": 3}"#,
            r#"{"size": "2"}"#,
            r#"{"size": 2, "ratio": 1.0}"#,
            r#"{"size": 2, "on": false}"#,
        ] {
            let result = runner.exec("shop__pick", bad.as_bytes(), &ctx).await;
            assert_eq!(result.error_code(), Some(ToolErrorCode::Validation), "{bad}");
        }
    }

    #[test]
    fn an_enum_value_that_its_type_refuses_or_that_is_not_a_scalar_is_refused() {
        for (property, at) in [
            (json!({"type": "integer", "enum": [2, "four"]}), "/properties/x/enum/1"),
            (json!({"type": "integer", "enum": [2.5]}), "/properties/x/enum/0"),
            (json!({"type": "string", "enum": [true]}), "/properties/x/enum/0"),
            (json!({"type": "boolean", "enum": [1]}), "/properties/x/enum/0"),
            (json!({"enum": [[1]]}), "/properties/x/enum/0"),
            (json!({"enum": [{"a": 1}]}), "/properties/x/enum/0"),
        ] {
            let schema = json!({"type": "object", "properties": {"x": property}});
            match tool(schema) {
                Err(DynamicToolError::InputSchema(error)) => assert_eq!(error.pointer(), at),
                other => panic!("{property}: {other:?}"),
            }
        }
        // Without a type, any scalar goes; a whole number is an integer whatever its spelling.
        assert!(
            tool(json!({"type": "object", "properties": {"x": {"enum": ["a", 1, true, null]}}}))
                .is_ok()
        );
        assert!(
            tool(
                json!({"type": "object", "properties": {"x": {"type": "integer", "enum": [2.0]}}})
            )
            .is_ok()
        );
    }

    fn size(encoded: &Value) -> Value {
        let mut found = Value::Null;
        let mut stack = vec![encoded];
        while let Some(node) = stack.pop() {
            if let Some(size) = node.get("properties").and_then(|p| p.get("size")) {
                found = size.clone();
            }
            match node {
                Value::Object(map) => stack.extend(map.values()),
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        found
    }

    #[test]
    fn every_encoder_carries_a_scalar_enum_or_lowers_it_into_the_description() {
        let tool = tool(schema()).expect("an integer enum is in the subset");
        let spec = tool.spec();
        let carrying: [(&str, Box<dyn Adapter>); 8] = [
            ("openai chat", Box::new(OpenAiChat::new())),
            ("openai chat strict", Box::new(OpenAiChat::new().strict(true))),
            ("openai responses", Box::new(OpenAiResponses::new())),
            ("openai responses strict", Box::new(OpenAiResponses::new().strict(true))),
            ("anthropic", Box::new(Anthropic::new())),
            ("anthropic strict", Box::new(Anthropic::new().strict(true))),
            (
                "gemini json schema",
                Box::new(Gemini::new().parameters(GeminiParameters::JsonSchema)),
            ),
            ("ollama", Box::new(Ollama::new())),
        ];
        for (name, adapter) in carrying {
            let encoded = adapter.tool(spec).unwrap();
            assert_eq!(size(&encoded)["enum"], json!([2, 4]), "{name}: {encoded}");
        }
        // Gemini's OpenAPI subset takes string enums only: the values go into the description,
        // and the runner still validates against them.
        let encoded = Gemini::new().parameters(GeminiParameters::OpenApi).tool(spec).unwrap();
        let size = size(&encoded);
        assert_eq!(size["type"], "INTEGER", "{encoded}");
        assert!(size.get("enum").is_none() && size.get("format").is_none(), "{encoded}");
        assert_eq!(size["description"], "Shirt size. (one of: 2, 4)", "{encoded}");
        let ratio = &encoded[0]["parameters"]["properties"]["ratio"];
        let ratio =
            if ratio.is_null() { &encoded["parameters"]["properties"]["ratio"] } else { ratio };
        assert_eq!(ratio["description"], "one of: 0.5, 1.5", "{encoded}");
        assert_eq!(ratio["nullable"], true, "{encoded}");
    }
}

/// Finding 12: a policy pattern either means what it reads as or is refused when the policy is
/// built; none silently allows nothing.
mod policy_patterns {
    use std::panic::catch_unwind;

    use tool_runtime::prelude::*;

    /// Patterns that would allow no tool at all, or not the ones they name.
    const REFUSED: &[&str] = &[
        "*",
        "**",
        "core*",
        "core_*",
        "*__get_time",
        "core__get_*",
        "core__*__x",
        "__*",
        "mcp__*",
        "MCP__*",
        "mcp__github__*",
        "",
        "core",
        "core__",
        "core__get time",
        "core__ümlaut",
    ];

    #[test]
    fn a_pattern_that_would_allow_nothing_is_refused_by_from_json() {
        for pattern in REFUSED {
            let json = serde_json::json!({"allowed_tools": [pattern]}).to_string();
            let error = ToolPolicy::from_json(&json).expect_err(pattern);
            assert!(error.to_string().contains("allowed_tools"), "{pattern}: {error}");
        }
    }

    #[test]
    fn a_pattern_that_would_allow_nothing_is_refused_by_allowing() {
        for pattern in REFUSED {
            let built = catch_unwind(|| ToolPolicy::allowing([*pattern]));
            assert!(built.is_err(), "{pattern} was accepted");
        }
    }

    #[test]
    fn a_tool_exception_under_a_pattern_is_refused() {
        // `tools` is keyed by exact names: a pattern there would deny or budget nothing.
        for key in ["core__*", "*", "core"] {
            let json =
                serde_json::json!({"allowed_tools": ["core__*"], "tools": {key: {"deny": true}}});
            let error = ToolPolicy::from_json(&json.to_string()).expect_err(key);
            assert!(error.to_string().contains("tools"), "{key}: {error}");
        }
    }

    #[test]
    fn try_allowing_and_check_name_the_entry_and_the_problem() {
        use tool_runtime::policy::PatternProblem;
        let error = ToolPolicy::try_allowing(["core__*", "*"]).unwrap_err();
        assert_eq!((error.field(), error.entry()), ("allowed_tools", "*"));
        assert_eq!(error.problem(), &PatternProblem::Everything);
        let error = ToolPolicy::try_allowing(["mcp__github__*"]).unwrap_err();
        assert_eq!(error.problem(), &PatternProblem::ImportedWildcard);
        let by_hand =
            ToolPolicy { allowed_tools: vec!["core__get_*".into()], ..ToolPolicy::default() };
        assert_eq!(by_hand.check().unwrap_err().problem(), &PatternProblem::MisplacedWildcard);
    }

    #[test]
    fn the_accepted_forms_still_mean_what_they_say() {
        let policy = ToolPolicy::from_json(
            r#"{"allowed_tools": ["core__*", "a-b__c__*", "shop__get_order", "mcp__github__create_issue"]}"#,
        )
        .unwrap();
        assert!(policy.lists("core__get_time"));
        assert!(policy.lists("a-b__c__d"));
        assert!(!policy.lists("a-b__x"));
        assert!(policy.lists("shop__get_order"));
        assert!(!policy.lists("shop__delete_order"));
        assert!(policy.lists("mcp__github__create_issue"));
        assert!(!policy.lists("mcp__github__delete_repo"));
        assert_eq!(
            policy,
            ToolPolicy::allowing([
                "core__*",
                "a-b__c__*",
                "shop__get_order",
                "mcp__github__create_issue"
            ])
        );
    }
}

/// Finding 7: a tool whose description repeats every word thousands of times does not outrank
/// the tool a request is about, and imported descriptions are cut.
mod selection_stuffing {
    use std::sync::Arc;

    use serde_json::json;
    use tool_runtime::catalog::select::Bm25Selector;
    use tool_runtime::catalog::{ToolCatalog, ToolSource};
    use tool_runtime::mcp::{McpImportOptions, McpServer, McpToolSource, ServerName};
    use tool_runtime::prelude::*;
    use tool_runtime::runner::ToolRunner;
    use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};

    /// Name, description, and one property with its description.
    const TOOLS: [(&str, &str, (&str, &str)); 8] = [
        ("weather__forecast", "Show the weather forecast for a city.", ("city", "City name.")),
        ("mail__send", "Send an email message to a recipient.", ("recipient", "Email address.")),
        (
            "calendar__create_event",
            "Create an event in the calendar.",
            ("start_time", "When it starts."),
        ),
        ("files__search", "Search documents in cloud storage by keywords.", ("query", "Words.")),
        ("billing__refund", "Refund a payment to a customer.", ("amount", "How much.")),
        ("music__play", "Play a track or playlist.", ("track", "Track title.")),
        ("maps__route", "Find a driving route between two places.", ("destination", "Where to.")),
        ("home__thermostat", "Set the thermostat temperature at home.", ("degrees", "Celsius.")),
    ];

    /// Requests, and the tool each is about.
    const REQUESTS: [(&str, &str); 8] = [
        ("What is the weather forecast for Lisbon tomorrow?", "weather__forecast"),
        ("Send an email to Bob about the meeting", "mail__send"),
        ("Create a calendar event for Friday at noon", "calendar__create_event"),
        ("Search my documents for the quarterly report", "files__search"),
        ("Refund the last payment of this customer", "billing__refund"),
        ("Play my running playlist", "music__play"),
        ("Find the fastest route to the airport", "maps__route"),
        ("Set the thermostat to 21 degrees", "home__thermostat"),
    ];

    fn dynamic(name: &str, description: &str, property: (&str, &str)) -> DynamicTool {
        let schema = json!({
            "type": "object",
            "properties": {property.0: {"type": "string", "description": property.1}},
            "additionalProperties": false
        });
        DynamicTool::builder(name, description, schema)
            .build(|_, _, _| async { Ok(json!({})) })
            .unwrap()
    }

    /// Every word of every tool and request, and many more, each repeated `times` times.
    fn stuffing(times: usize) -> String {
        let mut words: Vec<String> = Vec::new();
        for (name, description, (property, about)) in TOOLS {
            for text in [name, description, property, about] {
                words.extend(text.split(|c: char| !c.is_alphanumeric()).map(str::to_owned));
            }
        }
        for (request, _) in REQUESTS {
            words.extend(request.split(|c: char| !c.is_alphanumeric()).map(str::to_owned));
        }
        words.extend((0..200).map(|n| format!("filler{n}word")));
        words.retain(|word| !word.is_empty());
        words.sort();
        words.dedup();
        vec![words.join(" "); times].join(" ")
    }

    fn tools(stuffed_description: &str) -> Vec<DynamicTool> {
        let mut tools: Vec<DynamicTool> = TOOLS
            .iter()
            .map(|(name, description, property)| dynamic(name, description, *property))
            .collect();
        let stuffed = stuffed_description.to_owned();
        tools.push(dynamic("junk__helper", &stuffed, ("input", &stuffed)));
        tools
    }

    #[test]
    fn a_description_that_repeats_every_word_never_outranks_the_requested_tool() {
        for times in [1, 20, 2_000] {
            let tools = tools(&stuffing(times));
            let selector = Bm25Selector::from_specs(tools.iter().map(|tool| tool.spec())).top_k(1);
            let catalog = tools
                .into_iter()
                .fold(ToolCatalog::builder(), |builder, tool| builder.register_dynamic(tool))
                .build()
                .unwrap();
            let policy =
                ToolPolicy::allowing(TOOLS.map(|tool| tool.0).into_iter().chain(["junk__helper"]));
            let ctx = ToolInvocationContext::new(ContextIds {
                run_id: "r",
                actor_id: "a",
                tenant_id: "t",
            });
            let visible = tool_runtime::catalog::visible_tools(&catalog, &policy, &ctx);
            for (request, wanted) in REQUESTS {
                use tool_runtime::catalog::select::ToolSelector;
                let selection = selector.select(request, &visible);
                let first = selection.ranked().first().map(|scored| scored.name.as_str());
                assert_eq!(
                    first,
                    Some(wanted),
                    "{times} repetitions, {request:?}: {:?}",
                    selection.ranked()
                );
            }
        }
    }

    async fn import(description: &str, options: McpImportOptions) -> String {
        let tool = DynamicTool::builder(
            "docs__search",
            description,
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
        .effect(ToolEffect::ReadOnly)
        .build(|_, _, _| async { Ok(json!({})) })
        .unwrap();
        let catalog = ToolCatalog::builder().register_dynamic(tool).build().unwrap();
        let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["docs__*"])).build();
        let server = McpServer::builder(runner).build();
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            use tool_runtime::mcp::rmcp::ServiceExt;
            if let Ok(running) = server.serve(theirs).await {
                let _ = running.waiting().await;
            }
        });
        let name = ServerName::new("docs").unwrap();
        let source = McpToolSource::connect(name, ours, options).await.unwrap();
        let imported: Arc<dyn BoundToolRuntime> =
            source.get("mcp__docs__docs__search").expect("imported");
        imported.spec().description().to_owned()
    }

    #[tokio::test]
    async fn an_imported_description_is_cut_to_2_kib_by_default() {
        let long = "Search the docs. ".to_owned() + &"é".repeat(10_000);
        let description = import(&long, McpImportOptions::new()).await;
        assert!(description.len() <= 2048, "{} bytes", description.len());
        assert!(description.starts_with("Search the docs. éé"), "{description}");
        assert!(description.len() > 2000, "cut near the limit: {} bytes", description.len());
        let short = import("Search the docs.", McpImportOptions::new()).await;
        assert_eq!(short, "Search the docs.");
        let set = import(&long, McpImportOptions::new().max_description_bytes(22)).await;
        assert_eq!(set, "Search the docs. é...");
    }
}
