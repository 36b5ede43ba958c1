//! Result parts on every provider's wire: golden JSON (insta) of a turn's results with text,
//! an image, files, a string output and a failure, each backed by behaviour (exact key sets,
//! base64 that is the bytes, details never sent, a typed error for a part a provider cannot
//! carry), and an agent run whose next request body carries the image for each provider.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tool_runtime::adapters::{
    Message, ModelRequest, Provider, RequestOptions, StreamEvent, ToolCall, ToolChoice, ToolResult,
};
use tool_runtime::agent::{
    Agent, AgentEvent, ChatModel, ModelError, ModelErrorKind, ModelTurn, ScriptedModel,
    ScriptedTurn, StopReason,
};
use tool_runtime::content::{
    Content, IntoToolOutput, Part, Resource, ResourceBody, ResourceLink, ToolOutput,
};
use tool_runtime::prelude::*;
use tool_runtime::runtime::EventOutcome;
use tool_tests::fixtures::context;

/// A PNG's signature and header (1 x 1 pixels; the runner reads no further).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x01\0\0\0\x01";
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB";
/// A PDF's first bytes: base64 `JVBERi0xLjc=`.
const PDF: &[u8] = b"%PDF-1.7";
const PDF_BASE64: &str = "JVBERi0xLjc=";
/// Marks the details, which must never reach a provider.
const SECRET_DETAILS: &str = "details-only-for-the-ui";

fn keys(value: &Value) -> BTreeSet<&str> {
    value.as_object().map(|map| map.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall::new(id, name, json!({}))
}

/// A screenshot: text, an image, the structured value, and details for the UI.
fn screenshot() -> ToolOutput {
    ToolOutput::new()
        .with(Part::Text("The page as it looks now:".into()))
        .with(Part::image("image/png", PNG))
        .with(Part::Json(json!({"width": 2, "height": 1})))
        .with_details(json!({"path": SECRET_DETAILS}))
}

/// A fetched report: a PDF, a text file and a link.
fn report() -> ToolOutput {
    ToolOutput::new()
        .with(Part::from(Resource {
            uri: "file:///reports/q3.pdf".into(),
            mime_type: Some("application/pdf".into()),
            body: ResourceBody::Bytes(PDF.into()),
        }))
        .with(Part::from(Resource {
            uri: "file:///reports/q3.csv".into(),
            mime_type: Some("text/csv".into()),
            body: ResourceBody::Text("quarter,sales\nq3,7".into()),
        }))
        .with(Part::from(ResourceLink {
            uri: "https://example.com/q4".into(),
            name: "q4".into(),
            mime_type: None,
            description: Some("Next quarter".into()),
        }))
}

/// The turn's results: the screenshot, a string output, a failure, and (for the providers
/// that take files) the report.
fn results(provider: Provider) -> Vec<ToolResult> {
    let mut results = vec![
        ToolResult::ok(&call("call_shot", "media__screenshot"), screenshot()),
        ToolResult::ok(&call("call_echo", "text__echo"), json!("plain words")),
        ToolResult::error(
            &call("call_fail", "media__screenshot"),
            ToolErrorCode::Timeout,
            "too slow",
        ),
    ];
    if provider != Provider::Ollama {
        results.push(ToolResult::ok(&call("call_report", "files__fetch"), report()));
    }
    results
}

fn encode(provider: Provider) -> Vec<Value> {
    provider.adapter(false).result_messages(&results(provider)).unwrap()
}

#[test]
fn golden_result_messages() {
    for provider in Provider::ALL {
        insta::assert_json_snapshot!(format!("results_{provider}"), encode(provider));
    }
}

#[test]
fn details_never_reach_a_provider_and_bytes_are_base64_of_the_bytes() {
    for provider in Provider::ALL {
        let wire = Value::Array(encode(provider)).to_string();
        assert!(!wire.contains(SECRET_DETAILS), "{provider}: details were sent");
        assert!(wire.contains(PNG_BASE64), "{provider}: no image");
        if provider != Provider::Ollama {
            assert!(wire.contains(PDF_BASE64), "{provider}: no PDF");
        }
    }
}

#[test]
fn openai_chat_sends_text_in_tool_messages_and_media_in_one_user_message_naming_the_calls() {
    let messages = encode(Provider::OpenAiChat);
    assert_eq!(messages.len(), 5, "four tool messages, then one user message");
    for message in &messages[..4] {
        assert_eq!(keys(message), set(&["role", "tool_call_id", "content"]));
        assert_eq!(message["role"], "tool");
    }
    let shot = messages[0]["content"].as_str().unwrap();
    assert!(shot.starts_with("The page as it looks now:\n{\"width\":2,\"height\":1}\n"), "{shot}");
    assert!(shot.contains("follow in the next user message"), "{shot}");
    assert_eq!(messages[1]["content"], "plain words");
    assert_eq!(messages[2]["content"], r#"{"error":{"code":"timeout","message":"too slow"}}"#);
    let report = messages[3]["content"].as_str().unwrap();
    assert!(report.starts_with("quarter,sales\nq3,7\n{\"type\":\"resource_link\""), "{report}");

    let user = &messages[4];
    assert_eq!(user["role"], "user");
    let parts = user["content"].as_array().unwrap();
    let kinds: Vec<&str> = parts.iter().map(|part| part["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "image_url", "text", "file"]);
    assert!(parts[0]["text"].as_str().unwrap().contains("`call_shot`"));
    assert_eq!(keys(&parts[1]), set(&["type", "image_url"]));
    assert_eq!(keys(&parts[1]["image_url"]), set(&["url"]));
    assert_eq!(parts[1]["image_url"]["url"], format!("data:image/png;base64,{PNG_BASE64}"));
    assert!(parts[2]["text"].as_str().unwrap().contains("`call_report`"));
    assert_eq!(keys(&parts[3]["file"]), set(&["filename", "file_data"]));
    assert_eq!(parts[3]["file"]["filename"], "q3.pdf");
    assert_eq!(parts[3]["file"]["file_data"], format!("data:application/pdf;base64,{PDF_BASE64}"));
}

#[test]
fn openai_chat_sends_wav_and_mp3_as_input_audio_and_names_other_audio_left_out() {
    let adapter = Provider::OpenAiChat.adapter(false);
    let sound = |mime: &str| {
        let output = Content::new().audio(mime, &b"RIFF"[..]).into_output().unwrap();
        adapter.result_messages(&[ToolResult::ok(&call("call_1", "audio__say"), output)])
    };
    let messages = sound("audio/wav").unwrap();
    let audio = &messages[1]["content"][1];
    assert_eq!(keys(audio), set(&["type", "input_audio"]));
    assert_eq!(audio["input_audio"], json!({"data": "UklGRg==", "format": "wav"}));
    assert_eq!(sound("audio/mpeg").unwrap()[1]["content"][1]["input_audio"]["format"], "mp3");
    let ogg = sound("audio/ogg").unwrap();
    assert_eq!(
        ogg[1]["content"][1],
        json!({"type": "text", "text": "[part 0 of this result left out: audio, audio/ogg, 4 bytes; OpenAI Chat Completions cannot carry it]"})
    );
}

#[test]
fn openai_responses_output_is_text_or_input_parts() {
    let items = encode(Provider::OpenAiResponses);
    for item in &items {
        assert_eq!(keys(item), set(&["type", "call_id", "output"]));
        assert_eq!(item["type"], "function_call_output");
    }
    let shot = items[0]["output"].as_array().unwrap();
    let kinds: Vec<&str> = shot.iter().map(|part| part["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["input_text", "input_image", "input_text"]);
    assert_eq!(keys(&shot[1]), set(&["type", "image_url"]));
    assert_eq!(shot[1]["image_url"], format!("data:image/png;base64,{PNG_BASE64}"));
    assert_eq!(shot[2]["text"], r#"{"width":2,"height":1}"#);
    assert_eq!(items[1]["output"], "plain words");
    assert!(items[2]["output"].as_str().unwrap().contains("timeout"));
    let report = items[3]["output"].as_array().unwrap();
    assert_eq!(keys(&report[0]), set(&["type", "filename", "file_data"]));
    assert_eq!(report[0]["type"], "input_file");
    assert_eq!(report[0]["filename"], "q3.pdf");
    assert_eq!(report[1], json!({"type": "input_text", "text": "quarter,sales\nq3,7"}));
}

#[test]
fn anthropic_tool_results_carry_text_image_and_document_blocks() {
    let messages = encode(Provider::Anthropic);
    assert_eq!(messages.len(), 1);
    let blocks = messages[0]["content"].as_array().unwrap();
    for block in blocks {
        assert_eq!(keys(block), set(&["type", "tool_use_id", "content", "is_error"]));
    }
    let shot = blocks[0]["content"].as_array().unwrap();
    assert_eq!(shot[0], json!({"type": "text", "text": "The page as it looks now:"}));
    assert_eq!(keys(&shot[1]), set(&["type", "source"]));
    assert_eq!(
        shot[1]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": PNG_BASE64})
    );
    assert_eq!(blocks[1]["content"], "plain words");
    assert_eq!(blocks[2]["is_error"], true);
    assert_eq!(blocks[0]["is_error"], false);
    let report = blocks[3]["content"].as_array().unwrap();
    assert_eq!(keys(&report[0]), set(&["type", "source", "title"]));
    assert_eq!(
        report[0]["source"],
        json!({"type": "base64", "media_type": "application/pdf", "data": PDF_BASE64})
    );
    assert_eq!(
        report[1]["source"],
        json!({"type": "text", "media_type": "text/plain", "data": "quarter,sales\nq3,7"})
    );
    assert_eq!(report[1]["title"], "file:///reports/q3.csv");
    assert_eq!(report[2]["type"], "text");
}

#[test]
fn gemini_function_responses_carry_inline_data_parts() {
    let messages = encode(Provider::Gemini);
    let parts = messages[0]["parts"].as_array().unwrap();
    let shot = &parts[0]["functionResponse"];
    assert_eq!(keys(shot), set(&["name", "response", "parts"]));
    assert_eq!(
        shot["parts"],
        json!([{"inlineData": {"mimeType": "image/png", "data": PNG_BASE64}}])
    );
    assert_eq!(
        shot["response"],
        json!({"output": "The page as it looks now:\n{\"width\":2,\"height\":1}"})
    );
    assert_eq!(keys(&parts[1]["functionResponse"]), set(&["name", "response"]));
    assert_eq!(parts[1]["functionResponse"]["response"], json!({"output": "plain words"}));
    assert!(parts[2]["functionResponse"]["response"]["error"].is_object());
    let report = &parts[3]["functionResponse"];
    assert_eq!(report["parts"][0]["inlineData"]["mimeType"], "application/pdf");

    // A structured value with an image keeps its structure; an image alone has no output.
    let adapter = Provider::Gemini.adapter(false);
    let structured = Content::new().json(7u8).image("image/jpeg", PNG).into_output().unwrap();
    let alone = Content::new().image("image/webp", PNG).into_output().unwrap();
    let messages = adapter
        .result_messages(&[
            ToolResult::ok(&call("a", "x"), structured),
            ToolResult::ok(&call("b", "x"), alone),
        ])
        .unwrap();
    assert_eq!(messages[0]["parts"][0]["functionResponse"]["response"], json!({"output": 7}));
    assert_eq!(messages[0]["parts"][1]["functionResponse"]["response"], json!({}));
}

#[test]
fn ollama_tool_messages_carry_images_in_base64() {
    let messages = encode(Provider::Ollama);
    assert_eq!(keys(&messages[0]), set(&["role", "tool_name", "content", "images"]));
    assert_eq!(messages[0]["images"], json!([PNG_BASE64]));
    assert_eq!(keys(&messages[1]), set(&["role", "tool_name", "content"]));
    assert_eq!(messages[1]["content"], "plain words");
}

#[test]
fn a_part_a_provider_cannot_carry_is_named_to_the_model_and_the_request_still_goes() {
    let sound = Content::new().text("Listen:").audio("audio/wav", &b"SECRETBYTES"[..]);
    let sound = sound.into_output().unwrap();
    let tiff = Content::new().image("image/tiff", &b"SECRETBYTES"[..]).into_output().unwrap();
    let zip = ToolOutput::new().with(Part::from(Resource {
        uri: "file:///a.zip".into(),
        mime_type: Some("application/zip".into()),
        body: ResourceBody::Bytes((&b"SECRETBYTES"[..]).into()),
    }));
    let bad_mime = ToolOutput::new().with(Part::from(Resource {
        uri: "file:///a.pdf".into(),
        mime_type: Some("application/pdf;base64,AAAA".into()),
        body: ResourceBody::Bytes((&b"SECRETBYTES"[..]).into()),
    }));
    let cases = [
        (Provider::OpenAiChat, bad_mime.clone(), 0, "resource"),
        (Provider::OpenAiResponses, bad_mime, 0, "resource"),
        (Provider::OpenAiResponses, sound.clone(), 1, "audio"),
        (Provider::Anthropic, sound.clone(), 1, "audio"),
        (Provider::Gemini, sound.clone(), 1, "audio"),
        (Provider::Ollama, sound, 1, "audio"),
        (Provider::OpenAiChat, tiff.clone(), 0, "image"),
        (Provider::Anthropic, tiff.clone(), 0, "image"),
        (Provider::Gemini, tiff, 0, "image"),
        (Provider::Anthropic, zip.clone(), 0, "resource"),
        (Provider::Gemini, zip.clone(), 0, "resource"),
        (Provider::Ollama, zip, 0, "resource"),
    ];
    for (provider, output, index, kind) in cases {
        let results = [
            ToolResult::ok(&call("call_ok", "text__echo"), json!("fine")),
            ToolResult::ok(&call("call_bad", "media__thing"), output),
        ];
        let adapter = provider.adapter(false);
        let encoded = adapter.result_messages(&results).unwrap();
        let text = serde_json::to_string(&encoded).unwrap();
        // The model reads what was left out, where, and why; never the bytes.
        let note = format!("[part {index} of this result left out: {kind}");
        assert!(text.contains(&note), "{provider}: {text}");
        assert!(text.contains(&format!("{} cannot carry it]", provider.label())), "{text}");
        assert!(!text.contains("SECRETBYTES") && !text.contains("U0VDUkVU"), "{text}");
        // The other result goes as it would alone.
        assert!(text.contains("fine"), "{provider}: {text}");

        // The whole request encodes: one result never makes the conversation unusable.
        let messages = [Message::user("go"), Message::ToolResults(results.to_vec())];
        let request = ModelRequest {
            messages: &messages,
            tools: &[],
            choice: &ToolChoice::auto(),
            search: None,
        };
        let body = adapter.encode_request(&request, &RequestOptions::new("m")).unwrap();
        let body = serde_json::to_string(&body).unwrap();
        assert!(body.contains(&note), "{provider}: {body}");
    }
}

#[test]
fn a_mime_type_that_is_no_token_is_not_repeated_to_the_model() {
    let noisy = format!("audio/x-{}\u{1b}[2J", "a".repeat(200));
    let output = Content::new().audio(noisy.as_str(), &b"RIFF"[..]).into_output().unwrap();
    let results = [ToolResult::ok(&call("call_1", "audio__say"), output)];
    let encoded = Provider::Anthropic.adapter(false).result_messages(&results).unwrap();
    let text = encoded[0]["content"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(
        text,
        "[part 0 of this result left out: audio, an unreadable MIME type, 4 bytes; Anthropic \
         Messages cannot carry it]"
    );
}

#[test]
fn content_text_is_the_text_parts_without_notes_for_bytes() {
    let result = ToolResult::ok(&call("c", "x"), screenshot());
    assert_eq!(result.content_text(), "The page as it looks now:\n{\"width\":2,\"height\":1}");
    let result = ToolResult::ok(&call("c", "x"), report());
    assert_eq!(
        result.content_text(),
        "quarter,sales\nq3,7\n\
         {\"type\":\"resource_link\",\"uri\":\"https://example.com/q4\",\"name\":\"q4\",\"description\":\"Next quarter\"}"
    );
}

// ---------------------------------------------------------------------------------------
// The agent loop: an image tool's result goes back through the adapter of the model in use.

/// Take a screenshot of the page.
#[tool(name = "media__screenshot", effect = read_only, redact = ["width", "height"])]
struct Screenshot {}

#[derive(Serialize, ToolSchema)]
struct Shot {
    width: u32,
    height: u32,
}

impl Tool for Screenshot {
    type Output = Content<Shot>;

    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content<Shot>, ToolError> {
        Ok(Content::new()
            .text("The page:")
            .image("image/png", PNG)
            .json(Shot { width: 2, height: 1 }))
    }
}

/// A model that does what the HTTP clients do (encode the whole body with its provider's
/// adapter) and keeps each body, then answers from a script.
#[derive(Debug)]
struct Recording {
    provider: Provider,
    bodies: Mutex<Vec<Value>>,
    script: ScriptedModel,
}

#[async_trait]
impl ChatModel for Recording {
    async fn respond(
        &self,
        request: ModelRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        let body = self
            .provider
            .adapter(false)
            .encode_body(&request, &RequestOptions::new("model"))
            .map_err(|error| ModelError::new(ModelErrorKind::Request, error.to_string()))?;
        self.bodies.lock().unwrap().push(serde_json::from_slice(&body).unwrap());
        self.script.respond(request, on_event).await
    }
}

/// The provider's whole response calling `media__screenshot` as `call_1`, then its answer.
fn script(provider: Provider) -> [ScriptedTurn; 2] {
    let (calls, answer) = match provider {
        Provider::OpenAiChat => (
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "media__screenshot", "arguments": "{}"}}]},
                "finish_reason": "tool_calls"}]}),
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Seen."},
                "finish_reason": "stop"}]}),
        ),
        Provider::OpenAiResponses => (
            json!({"status": "completed", "output": [{"type": "function_call", "id": "fc_1",
                "call_id": "call_1", "name": "media__screenshot", "arguments": "{}"}]}),
            json!({"status": "completed", "output": [{"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Seen."}]}]}),
        ),
        Provider::Anthropic => (
            json!({"content": [{"type": "tool_use", "id": "call_1", "name": "media__screenshot",
                "input": {}}], "stop_reason": "tool_use"}),
            json!({"content": [{"type": "text", "text": "Seen."}], "stop_reason": "end_turn"}),
        ),
        Provider::Gemini => (
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "media__screenshot", "args": {}}}]},
                "finishReason": "STOP"}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Seen."}]},
                "finishReason": "STOP"}]}),
        ),
        Provider::Ollama => (
            json!({"message": {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "media__screenshot", "arguments": {}}}]},
                "done": true, "done_reason": "stop"}),
            json!({"message": {"role": "assistant", "content": "Seen."}, "done": true,
                "done_reason": "stop"}),
        ),
    };
    [
        ScriptedTurn::body(provider, calls.to_string()),
        ScriptedTurn::body(provider, answer.to_string()),
    ]
}

/// Where each provider's second request carries the image.
fn image_in(provider: Provider, body: &Value) -> Value {
    let last = |key: &str| body[key].as_array().unwrap().last().unwrap().clone();
    match provider {
        Provider::OpenAiChat => last("messages")["content"][1].clone(),
        Provider::OpenAiResponses => last("input")["output"][1].clone(),
        Provider::Anthropic => last("messages")["content"][0]["content"][1].clone(),
        Provider::Gemini => last("contents")["parts"][0]["functionResponse"]["parts"][0].clone(),
        Provider::Ollama => last("messages")["images"][0].clone(),
    }
}

#[tokio::test]
async fn an_agent_sends_an_image_result_back_through_the_adapter_of_its_model() {
    let expected = [
        (
            Provider::OpenAiChat,
            json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_BASE64}")}}),
        ),
        (
            Provider::OpenAiResponses,
            json!({"type": "input_image", "image_url": format!("data:image/png;base64,{PNG_BASE64}")}),
        ),
        (
            Provider::Anthropic,
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_BASE64}}),
        ),
        (Provider::Gemini, json!({"inlineData": {"mimeType": "image/png", "data": PNG_BASE64}})),
        (Provider::Ollama, json!(PNG_BASE64)),
    ];
    for (provider, image) in expected {
        let catalog = ToolCatalog::builder().register::<Screenshot>().build().unwrap();
        let runner = ToolRunner::builder(catalog)
            .policy(ToolPolicy::allowing(["media__screenshot"]))
            .build();
        let model = Arc::new(Recording {
            provider,
            bodies: Mutex::new(Vec::new()),
            script: ScriptedModel::new(script(provider)),
        });
        let agent = Agent::new(model.clone(), runner);
        let ctx = context("run-1", "user-1", "tenant-1");
        let events = Mutex::new(Vec::new());
        let output = agent
            .run(vec![Message::user("Look at the page.")], &ctx, &|event| {
                events.lock().unwrap().push(event);
            })
            .await;
        assert_eq!(output.done.stop, StopReason::Answered, "{provider}");
        assert_eq!(output.done.answer, "Seen.", "{provider}");

        let bodies = model.bodies.lock().unwrap();
        assert_eq!(bodies.len(), 2, "{provider}");
        assert_eq!(image_in(provider, &bodies[1]), image, "{provider}");

        // The result event and the record carry the parts as summaries: digests, no bytes.
        let events = events.lock().unwrap();
        let result = events
            .iter()
            .find_map(|event| match event {
                AgentEvent::ToolCallResult { outcome, .. } => Some(outcome.clone()),
                _ => None,
            })
            .unwrap();
        let EventOutcome::Ok { value, parts, .. } = result else {
            panic!("{provider}: {result:?}")
        };
        assert_eq!(value, json!({"width": 2, "height": 1}));
        let kinds: Vec<&str> = parts.iter().map(|part| part.kind).collect();
        assert_eq!(kinds, ["text", "image", "json"], "{provider}");
        assert_eq!(parts[1].mime_type.as_deref(), Some("image/png"));
        assert_eq!(parts[1].size, Some(PNG.len()));
        assert_eq!(parts[1].sha256.as_deref().map(str::len), Some(64));
        let event_json = serde_json::to_string(&*events).unwrap();
        assert!(!event_json.contains(PNG_BASE64), "{provider}: bytes in the events");
        assert_eq!(output.done.records[0].parts.len(), 3, "{provider}");
    }
}

#[tokio::test]
async fn a_result_part_the_model_cannot_take_is_named_to_it_and_the_run_goes_on() {
    /// Say something.
    #[tool(name = "audio__say", effect = read_only, redact = [])]
    struct Say {}

    impl Tool for Say {
        type Output = Content;

        async fn run(
            self,
            _: &ToolInvocationContext,
            _: &ToolCapabilities,
        ) -> Result<Content, ToolError> {
            Ok(Content::new().audio("audio/wav", &b"RIFF"[..]))
        }
    }

    let catalog = ToolCatalog::builder().register::<Say>().build().unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["audio__say"])).build();
    let turns = [
        ScriptedTurn::body(
            Provider::Anthropic,
            json!({"content": [{"type": "tool_use", "id": "call_1", "name": "audio__say",
                "input": {}}], "stop_reason": "tool_use"})
            .to_string(),
        ),
        ScriptedTurn::body(
            Provider::Anthropic,
            json!({"content": [{"type": "text", "text": "Heard."}], "stop_reason": "end_turn"})
                .to_string(),
        ),
    ];
    let model = Arc::new(Recording {
        provider: Provider::Anthropic,
        bodies: Mutex::new(Vec::new()),
        script: ScriptedModel::new(turns),
    });
    let agent = Agent::new(model.clone(), runner);
    let ctx = context("run-1", "user-1", "tenant-1");
    let output = agent.run(vec![Message::user("Speak.")], &ctx, &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Answered, "{:?}", output.done.stop);
    assert_eq!(output.done.answer, "Heard.");
    assert_eq!(output.done.records.len(), 1, "the call ran and was recorded");
    // The second request carried the result with the audio named, not sent.
    let bodies = model.bodies.lock().unwrap();
    assert_eq!(bodies.len(), 2);
    let result = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"][0]["text"],
        "[part 0 of this result left out: audio, audio/wav, 4 bytes; Anthropic Messages cannot carry it]"
    );
}
