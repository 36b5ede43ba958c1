//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`) tests:
//! tools built with `#[tool]` that return text, an image, audio, an embedded resource, all of
//! them mixed, send log messages and progress while they run, ask the client's model
//! (sampling) or its user (elicitation), or fail; served over Streamable
//! HTTP at `http://127.0.0.1:<port>/mcp` (every path serves, `/mcp` is the one the suite uses).
//!
//! ```text
//! cargo run -p examples --bin mcp_conformance -- --port 3000
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3000/mcp --scenario tools-call-image
//! ```
//!
//! The suite calls the tools by bare names (`test_simple_text`); the catalog names them
//! `conformance__test_simple_text`, as the naming rule wants, and the server offers them under
//! the bare names ([`McpServerBuilder::serve_as`]). With `--port 0` the system picks the port;
//! the first line on stdout always says where the server listens.
//!
//! [`McpServerBuilder::serve_as`]: tool_runtime::mcp::McpServerBuilder::serve_as

use std::sync::Arc;
use std::time::Duration;

use tool_runtime::agent::StateKey;

use tool_runtime::catalog::{ToolCatalog, ToolSource};
use tool_runtime::content::{Content, Resource, ResourceBody};
use tool_runtime::mcp::rmcp::model::{PromptMessage, Role};
use tool_runtime::mcp::{McpPrompt, McpServer, TaskSupport};
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{
    DynamicTool, DynamicToolError, ElicitAnswer, Interact, InteractKind, LogLevel, SampleRequest,
};
use tool_runtime::store::InMemoryStore;

/// A 1x1 red PNG.
const RED_PIXEL_PNG: [u8; 69] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A WAV file of `samples` silent 8-bit mono samples at 8 kHz.
fn silent_wav(samples: u32) -> Vec<u8> {
    let mut wav = Vec::with_capacity(44 + samples as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // size of the fmt chunk
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes()); // samples per second
    wav.extend_from_slice(&8000u32.to_le_bytes()); // bytes per second
    wav.extend_from_slice(&1u16.to_le_bytes()); // bytes per sample frame
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&samples.to_le_bytes());
    wav.resize(44 + samples as usize, 0x80); // 8-bit silence is the midpoint
    wav
}

/// Returns a simple text response.
#[tool(name = "conformance__test_simple_text", effect = read_only, redact = [])]
struct TestSimpleText {}

impl Tool for TestSimpleText {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Ok(Content::new().text("This is a simple text response for testing."))
    }
}

/// Returns a 1x1 red PNG.
#[tool(name = "conformance__test_image_content", effect = read_only, redact = [])]
struct TestImageContent {}

impl Tool for TestImageContent {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Ok(Content::new().image("image/png", &RED_PIXEL_PNG[..]))
    }
}

/// Returns a short silent WAV.
#[tool(name = "conformance__test_audio_content", effect = read_only, redact = [])]
struct TestAudioContent {}

impl Tool for TestAudioContent {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Ok(Content::new().audio("audio/wav", silent_wav(8)))
    }
}

/// Returns an embedded text resource.
#[tool(name = "conformance__test_embedded_resource", effect = read_only, redact = [])]
struct TestEmbeddedResource {}

impl Tool for TestEmbeddedResource {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Ok(Content::new().resource(Resource {
            uri: "test://embedded-resource".into(),
            mime_type: Some("text/plain".into()),
            body: ResourceBody::Text("This is an embedded resource content.".into()),
        }))
    }
}

/// Returns text, an image and an embedded JSON resource.
#[tool(name = "conformance__test_multiple_content_types", effect = read_only, redact = [])]
struct TestMultipleContentTypes {}

impl Tool for TestMultipleContentTypes {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Ok(Content::new()
            .text("Multiple content types test:")
            .image("image/png", &RED_PIXEL_PNG[..])
            .resource(Resource {
                uri: "test://mixed-content-resource".into(),
                mime_type: Some("application/json".into()),
                body: ResourceBody::Text(r#"{"test":"data","value":123}"#.into()),
            }))
    }
}

/// Sends three log messages while it runs.
#[tool(name = "conformance__test_tool_with_logging", effect = read_only, redact = [])]
struct TestToolWithLogging {}

impl Tool for TestToolWithLogging {
    type Output = Content;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        ctx.log(LogLevel::Info, "Tool execution started");
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.log(LogLevel::Info, "Tool processing data");
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.log(LogLevel::Info, "Tool execution completed");
        Ok(Content::new().text("Tool with logging executed successfully"))
    }
}

/// Logs while it runs, as `test_tool_with_logging` does (the stateless scenario's name for it).
#[tool(name = "conformance__test_logging_tool", effect = read_only, redact = [])]
struct TestLoggingTool {}

impl Tool for TestLoggingTool {
    type Output = Content;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        TestToolWithLogging {}.run(ctx, caps).await
    }
}

/// Asks the client's model (so a client that did not declare sampling cannot have it run).
#[tool(name = "conformance__test_missing_capability", effect = read_only, redact = [], capabilities = [Interact])]
struct TestMissingCapability {}

impl Tool for TestMissingCapability {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let request = SampleRequest::new("Say yes.").max_tokens(5);
        let completion = caps.get::<Interact>()?.sample(request).await?;
        Ok(Content::new().text(completion.text))
    }
}

/// Asks the user while a client of 2026-07-28 reads the response stream: the question must
/// come as an input-required result, never as a request on the stream.
#[tool(name = "conformance__test_streaming_elicitation", effect = read_only, redact = [], capabilities = [Interact])]
struct TestStreamingElicitation {}

impl Tool for TestStreamingElicitation {
    type Output = Content;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        ctx.report_progress(0.0, Some(1.0), "asking");
        let answer = caps.get::<Interact>()?.elicit::<Name>("What is your name?").await?;
        Ok(Content::new().text(format!("Hello, {}!", accepted(answer)?.name)))
    }
}

/// Always fails.
#[tool(name = "conformance__test_error_handling", effect = read_only, redact = [])]
struct TestErrorHandling {}

impl Tool for TestErrorHandling {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Err(ToolError::new("This tool intentionally returns an error for testing"))
    }
}

/// Reports progress 0, 50 and 100 of 100 while it runs.
#[tool(name = "conformance__test_tool_with_progress", effect = read_only, redact = [])]
struct TestToolWithProgress {}

impl Tool for TestToolWithProgress {
    type Output = Content;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if step > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            ctx.report_progress(done, Some(100.0), "");
        }
        Ok(Content::new().text("Tool with progress executed successfully"))
    }
}

/// Asks the client's model to answer `prompt` (`sampling/createMessage`).
#[tool(name = "conformance__test_sampling", effect = read_only, redact = [], capabilities = [Interact])]
struct TestSampling {
    /// The prompt to send to the LLM.
    prompt: String,
}

impl Tool for TestSampling {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let request = SampleRequest::new(self.prompt).max_tokens(100);
        let completion = caps.get::<Interact>()?.sample(request).await?;
        Ok(Content::new().text(format!("LLM response: {}", completion.text)))
    }
}

/// What `test_elicitation` asks the user for.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct UserInfo {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Asks the user for a name and an email address (`elicitation/create`).
#[tool(name = "conformance__test_elicitation", effect = read_only, redact = [], capabilities = [Interact])]
struct TestElicitation {
    /// The message to show the user.
    message: String,
}

impl Tool for TestElicitation {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let answer = caps.get::<Interact>()?.elicit::<UserInfo>(self.message).await?;
        let text = match answer {
            ElicitAnswer::Accept(info) => format!(
                "User response: action=accept, content={}",
                serde_json::json!({"username": info.username, "email": info.email})
            ),
            ElicitAnswer::Decline => "User response: action=decline".to_owned(),
            ElicitAnswer::Cancel => "User response: action=cancel".to_owned(),
        };
        Ok(Content::new().text(text))
    }
}

/// A user's status.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// What `test_elicitation_sep1034_defaults` asks for, each field with a default.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Defaults {
    /// User name
    name: String,
    /// User age
    age: u8,
    /// User score
    score: f64,
    /// User status
    status: Status,
    /// Verification status
    verified: bool,
}

/// Asks for a form whose every field has a default (SEP-1034).
#[tool(name = "conformance__test_elicitation_sep1034_defaults", effect = read_only, redact = [], capabilities = [Interact])]
struct TestElicitationSep1034Defaults {}

impl Tool for TestElicitationSep1034Defaults {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let defaults = Defaults {
            name: "John Doe".into(),
            age: 30,
            score: 95.5,
            status: Status::Active,
            verified: true,
        };
        let answer = caps
            .get::<Interact>()?
            .elicitation::<Defaults>(
                "Test client default value handling - please accept with defaults",
            )
            .defaults(&defaults)
            .send()
            .await?;
        Ok(Content::new().text(completed(answer)?))
    }
}

/// Three options.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Choice {
    Option1,
    Option2,
    Option3,
}

/// Three values, shown with titles.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Titled {
    Value1,
    Value2,
    Value3,
}

/// Three options, shown with legacy titles (`enumNames`).
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Legacy {
    Opt1,
    Opt2,
    Opt3,
}

/// What `test_elicitation_sep1330_enums` asks for: every enum form of SEP-1330.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Enums {
    untitled_single: Choice,
    titled_single: Titled,
    legacy_enum: Legacy,
    untitled_multi: Vec<Choice>,
    titled_multi: Vec<Titled>,
}

/// Asks for a form with every enum form (SEP-1330).
#[tool(name = "conformance__test_elicitation_sep1330_enums", effect = read_only, redact = [], capabilities = [Interact])]
struct TestElicitationSep1330Enums {}

impl Tool for TestElicitationSep1330Enums {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let values =
            [("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")];
        let answer = caps
            .get::<Interact>()?
            .elicitation::<Enums>("Choose from every kind of list")
            .titles("titledSingle", values)
            .legacy_titles(
                "legacyEnum",
                [("opt1", "Option One"), ("opt2", "Option Two"), ("opt3", "Option Three")],
            )
            .titles("titledMulti", values)
            .send()
            .await?;
        Ok(Content::new().text(completed(answer)?))
    }
}

/// A name.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Name {
    name: String,
}

/// A confirmation.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Confirm {
    ok: bool,
}

/// A colour.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Color {
    color: String,
}

/// What the user answered, or the tool's error saying they did not.
fn accepted<T>(answer: ElicitAnswer<T>) -> Result<T, ToolError> {
    match answer {
        ElicitAnswer::Accept(value) => Ok(value),
        ElicitAnswer::Decline | ElicitAnswer::Cancel => {
            Err(ToolError::new("the user did not answer"))
        }
    }
}

/// Asks the user to confirm `message` (under the key `confirm`); whether they did.
async fn confirm(caps: &ToolCapabilities, message: impl Into<String>) -> Result<bool, ToolError> {
    let interact = caps.get::<Interact>()?;
    let answer = interact.elicitation::<Confirm>(message).key("confirm").send().await?;
    Ok(accepted(answer)?.ok)
}

/// Asks the user's name (an input-required round for 2026-07-28 clients), then greets them.
#[tool(name = "conformance__test_input_required_result_elicitation", effect = read_only, redact = [], capabilities = [Interact])]
struct TestInputRequiredElicitation {}

impl Tool for TestInputRequiredElicitation {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        let answer =
            interact.elicitation::<Name>("What is your name?").key("user_name").send().await?;
        Ok(Content::new().text(format!("Hello, {}!", accepted(answer)?.name)))
    }
}

/// Asks the user's name, the client's model for a greeting and the client's roots, all in one
/// round.
#[tool(name = "conformance__test_input_required_result_multiple_inputs", effect = read_only, redact = [], capabilities = [Interact])]
struct TestInputRequiredMultipleInputs {}

impl Tool for TestInputRequiredMultipleInputs {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        let (name, greeting, roots) = tokio::join!(
            interact.elicitation::<Name>("What is your name?").key("user_name").send(),
            interact.sample(SampleRequest::new("Greet the user.").max_tokens(50)),
            interact.roots(),
        );
        let (name, greeting, roots) = (accepted(name?)?.name, greeting?.text, roots?);
        Ok(Content::new().text(format!("{greeting} {name} ({} roots)", roots.len())))
    }
}

/// Asks only what the client declared it takes: the model's answer, the user's name.
#[tool(name = "conformance__test_input_required_result_capabilities", effect = read_only, redact = [], capabilities = [Interact])]
struct TestInputRequiredCapabilities {}

impl Tool for TestInputRequiredCapabilities {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        let sample = async {
            if !interact.offers(InteractKind::Sample) {
                return Ok(None);
            }
            interact.sample(SampleRequest::new("What is 2 + 2?").max_tokens(10)).await.map(Some)
        };
        let elicit = async {
            if !interact.offers(InteractKind::Elicit) {
                return Ok(None);
            }
            interact.elicitation::<Name>("What is your name?").send().await.map(Some)
        };
        let (completion, name) = tokio::join!(sample, elicit);
        let (completion, name) = (completion?, name?);
        let answer = completion.map_or_else(|| "no model".to_owned(), |c| c.text);
        let name = match name {
            Some(answer) => accepted(answer)?.name,
            None => "no user".to_owned(),
        };
        Ok(Content::new().text(format!("{answer}; {name}")))
    }
}

/// Asks the client's model a question in an input-required round.
#[tool(name = "conformance__test_input_required_result_sampling", effect = read_only, redact = [], capabilities = [Interact])]
struct TestInputRequiredSampling {}

impl Tool for TestInputRequiredSampling {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        let request = SampleRequest::new("What is the capital of France?").max_tokens(100);
        Ok(Content::new().text(interact.sample(request).await?.text))
    }
}

/// Asks the client's roots in an input-required round and names them.
#[tool(name = "conformance__test_input_required_result_list_roots", effect = read_only, redact = [], capabilities = [Interact])]
struct TestInputRequiredListRoots {}

impl Tool for TestInputRequiredListRoots {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let roots = caps.get::<Interact>()?.roots().await?;
        let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
        Ok(Content::new().text(format!("roots: {}", uris.join(", "))))
    }
}

/// Asks for a confirmation; the answer arrives with the server's sealed `requestState`.
#[tool(name = "conformance__test_input_required_result_request_state", effect = read_only, redact = [], capabilities = [Interact])]
struct TestInputRequiredRequestState {}

impl Tool for TestInputRequiredRequestState {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let confirmed = confirm(caps, "Please confirm").await?;
        // Only a requestState this server sealed brings the call this far.
        Ok(Content::new().text(format!("state-ok: confirmed={confirmed}")))
    }
}

/// Asks a confirmation whose `requestState` the suite tampers with.
#[tool(name = "conformance__test_input_required_result_tampered_state", effect = read_only, redact = [], capabilities = [Interact])]
struct TestInputRequiredTamperedState {}

impl Tool for TestInputRequiredTamperedState {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let confirmed = confirm(caps, "Please confirm").await?;
        Ok(Content::new().text(format!("confirmed={confirmed}")))
    }
}

/// Asks two questions, one round each.
#[tool(name = "conformance__test_input_required_result_multi_round", effect = read_only, redact = [], capabilities = [Interact])]
struct TestInputRequiredMultiRound {}

impl Tool for TestInputRequiredMultiRound {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        let name =
            interact.elicitation::<Name>("Step 1: What is your name?").key("step1").send().await?;
        let color = interact
            .elicitation::<Color>("Step 2: What is your favorite color?")
            .key("step2")
            .send()
            .await?;
        let (name, color) = (accepted(name)?.name, accepted(color)?.color);
        Ok(Content::new().text(format!("Hello, {name}! Your favorite color is {color}.")))
    }
}

/// Greets by name, at once (never a task).
#[tool(name = "conformance__greet", effect = read_only, redact = [])]
struct Greet {
    name: String,
}

impl Tool for Greet {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Ok(Content::new().text(format!("Hello, {}!", self.name)))
    }
}

/// Computes for `seconds` seconds (a task for clients that take tasks).
#[tool(name = "conformance__slow_compute", effect = read_only, redact = [])]
struct SlowCompute {
    #[schema(range(max = 600))]
    seconds: u32,
    /// A label to tell calls apart.
    label: Option<String>,
}

impl Tool for SlowCompute {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        tokio::time::sleep(Duration::from_secs(u64::from(self.seconds))).await;
        let label = self.label.unwrap_or_default();
        Ok(Content::new().text(format!("computed for {}s {label}", self.seconds)))
    }
}

/// Fails after about a second (always a task).
#[tool(name = "conformance__failing_job", effect = read_only, redact = [])]
struct FailingJob {}

impl Tool for FailingJob {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        tokio::time::sleep(Duration::from_secs(1)).await;
        Err(ToolError::new("the job failed"))
    }
}

/// Asks the user's name within `tools/call`, then works on as a task.
#[tool(name = "conformance__test_tool_with_task", effect = read_only, redact = [], capabilities = [Interact])]
struct TestToolWithTask {}

impl Tool for TestToolWithTask {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        let answer =
            interact.elicitation::<Name>("What is your name?").key("user_name").send().await?;
        let name = accepted(answer)?.name;
        tokio::time::sleep(Duration::from_millis(500)).await;
        Ok(Content::new().text(format!("Done for {name}")))
    }
}

/// Asks two questions at once (a task whose client may answer them one at a time).
#[tool(name = "conformance__multi_input", effect = read_only, redact = [], capabilities = [Interact])]
struct MultiInput {}

impl Tool for MultiInput {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        let (first, second) = tokio::join!(
            interact.elicitation::<Name>("Who goes first?").key("first").send(),
            interact.elicitation::<Name>("Who goes second?").key("second").send(),
        );
        let answered = |answer: Result<ElicitAnswer<Name>, _>| match answer {
            Ok(ElicitAnswer::Accept(name)) => Ok(name.name),
            Ok(_) => Ok("nobody".to_owned()),
            // An answer with more than the name is still an answer to this question.
            Err(tool_runtime::runtime::InteractError::InvalidAnswer(_)) => Ok("someone".to_owned()),
            Err(error) => Err(error),
        };
        let (first, second) = (answered(first)?, answered(second)?);
        Ok(Content::new().text(format!("{first}, then {second}")))
    }
}

/// Panics (always a task): the server's failure, which its task reports as `failed`.
#[tool(name = "conformance__protocol_error_job", effect = read_only, redact = [])]
struct ProtocolErrorJob {}

impl Tool for ProtocolErrorJob {
    type Output = Content;
    #[allow(clippy::panic)] // the point of the fixture
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        panic!("protocol_error_job fails as the server would")
    }
}

/// Asks for a confirmation before it deletes (a task that waits for its user).
#[tool(name = "conformance__confirm_delete", effect = read_only, redact = [], capabilities = [Interact])]
struct ConfirmDelete {
    /// The file to delete.
    filename: String,
}

impl Tool for ConfirmDelete {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let item = self.filename;
        let confirmed = confirm(caps, format!("Delete {item}?")).await?;
        Ok(Content::new().text(if confirmed { format!("deleted {item}") } else { "kept".into() }))
    }
}

/// Says which region it was routed to: `region` rides in the `Mcp-Param-Region` header too, for
/// a gateway to route on.
#[tool(name = "conformance__routed_echo", effect = read_only, redact = [])]
struct RoutedEcho {
    /// The region the call is for.
    region: String,
}

impl Tool for RoutedEcho {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Ok(Content::new().text(format!("routed to {}", self.region)))
    }
}

/// A contact form whose input schema uses what JSON Schema 2020-12 has beyond the subset
/// providers accept (a `$defs` entry with an `$anchor` and a `$ref` to it, `allOf`/`anyOf`,
/// `if`/`then`/`else`): a tool for MCP clients only, listed as written, never offered to a model.
fn contact_form() -> Result<DynamicTool, DynamicToolError> {
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "postal",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    DynamicTool::builder(
        "conformance__json_schema_2020_12_tool",
        "Record how to reach a contact.",
        schema,
    )
    .effect(ToolEffect::ReadOnly)
    .mcp_only()
    .redact_all()
    .build(|args, _, _| async move {
        let name = args.get("name").and_then(serde_json::Value::as_str).unwrap_or("someone");
        Ok(serde_json::Value::String(format!("recorded {name}")))
    })
}

/// The context a prompt asks for.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct PromptContext {
    context: String,
}

/// The prompts the suite gets: a plain one, one with arguments, one that asks first.
fn prompts() -> [McpPrompt; 3] {
    let simple = McpPrompt::new("test_simple_prompt", "A prompt without arguments.", |_| async {
        Ok(vec![PromptMessage::new_text(Role::User, "This is a simple prompt for testing.")])
    });
    let with_arguments =
        McpPrompt::new("test_prompt_with_arguments", "A prompt with two arguments.", |request| {
            let arg = |name: &str| request.arguments.get(name).cloned().unwrap_or_default();
            let text =
                format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"));
            async move { Ok(vec![PromptMessage::new_text(Role::User, text)]) }
        })
        .argument("arg1", "First test argument", true)
        .argument("arg2", "Second test argument", true);
    let asking = McpPrompt::new(
        "test_input_required_result_prompt",
        "A prompt that asks its user for context first.",
        |request| async move {
            let answer = request
                .interact
                .elicitation::<PromptContext>("What context should the prompt use?")
                .key("user_context")
                .send()
                .await?;
            let context = accepted(answer)?.context;
            Ok(vec![PromptMessage::new_text(
                Role::User,
                format!("Answer within this context: {context}"),
            )])
        },
    );
    [simple, with_arguments, asking]
}

/// `Elicitation completed: action=<action>, content=<answer>`.
fn completed<T: Serialize>(answer: ElicitAnswer<T>) -> Result<String, ToolError> {
    Ok(match answer {
        ElicitAnswer::Accept(content) => {
            let content = serde_json::to_string(&content)
                .map_err(|error| ToolError::new(error.to_string()))?;
            format!("Elicitation completed: action=accept, content={content}")
        }
        ElicitAnswer::Decline => "Elicitation completed: action=decline, content={}".to_owned(),
        ElicitAnswer::Cancel => "Elicitation completed: action=cancel, content={}".to_owned(),
    })
}

/// The conformance tools, served under the names the suite calls.
fn server() -> Result<McpServer, Box<dyn std::error::Error>> {
    let catalog = ToolCatalog::builder()
        .register::<TestSimpleText>()
        .register::<TestImageContent>()
        .register::<TestAudioContent>()
        .register::<TestEmbeddedResource>()
        .register::<TestMultipleContentTypes>()
        .register::<TestToolWithLogging>()
        .register::<TestErrorHandling>()
        .register::<TestToolWithProgress>()
        .register::<TestSampling>()
        .register::<TestElicitation>()
        .register::<TestElicitationSep1034Defaults>()
        .register::<TestElicitationSep1330Enums>()
        .register::<TestInputRequiredElicitation>()
        .register::<TestInputRequiredRequestState>()
        .register::<TestInputRequiredTamperedState>()
        .register::<TestInputRequiredMultiRound>()
        .register::<TestInputRequiredMultipleInputs>()
        .register::<TestInputRequiredCapabilities>()
        .register::<TestInputRequiredSampling>()
        .register::<TestInputRequiredListRoots>()
        .register::<MultiInput>()
        .register::<TestToolWithTask>()
        .register::<TestLoggingTool>()
        .register::<TestMissingCapability>()
        .register::<TestStreamingElicitation>()
        .register::<Greet>()
        .register::<SlowCompute>()
        .register::<FailingJob>()
        .register::<ConfirmDelete>()
        .register::<RoutedEcho>()
        .register::<ProtocolErrorJob>()
        .register_dynamic(contact_form()?)
        // Served over MCP, the calling client answers; nothing else here can.
        .capability(Interact::unavailable())
        .build()?;
    let ids: Vec<String> =
        catalog.tools().iter().map(|tool| tool.spec().name().to_owned()).collect();
    let runner =
        ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["conformance__*"])).build();
    // Calls that wait become input-required rounds for clients of 2026-07-28, sealed with a
    // key of this process (a deployment shares one among its replicas).
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|error| format!("no random key: {error}"))?;
    let mut builder = McpServer::builder(runner)
        .server_info("mcp-conformance", "1.0.0")
        .store(Arc::new(InMemoryStore::new()), StateKey::new(key))
        .task("conformance__slow_compute", TaskSupport::Optional)
        .task("conformance__failing_job", TaskSupport::Required)
        .task("conformance__protocol_error_job", TaskSupport::Required)
        .task("conformance__confirm_delete", TaskSupport::Optional)
        .task("conformance__multi_input", TaskSupport::Optional)
        .task("conformance__test_tool_with_task", TaskSupport::Required)
        .ask_before_task("conformance__test_tool_with_task")
        .param_header("conformance__routed_echo", "region", "Region")?;
    for id in ids {
        let bare = id.trim_start_matches("conformance__").to_owned();
        builder = builder.serve_as(id, bare)?;
    }
    for prompt in prompts() {
        builder = builder.prompt(prompt)?;
    }
    Ok(builder.build())
}

/// The port given as `--port <port>`.
fn port() -> Result<u16, String> {
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next(), args.next()) {
        (Some("--port"), Some(port), None) => {
            port.parse().map_err(|_| format!("`{port}` is not a port number"))
        }
        _ => Err("usage: mcp_conformance --port <port>".to_owned()),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port = port()?;
    let server = server()?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    server.serve_http(listener, tokio_util::sync::CancellationToken::new()).await?;
    Ok(())
}
