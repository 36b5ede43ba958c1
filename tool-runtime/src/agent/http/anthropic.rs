//! The Anthropic Messages API over HTTP.

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::retry::RetryPolicy;
use super::sse_body::count;
use super::transport::{Timeouts, Transport};
use super::{HttpConfigError, Settings, exchange, tool_fields};
use crate::adapters::{Adapter, Anthropic, StreamEvent};
use crate::agent::{ChatModel, Message, ModelError, ModelRequest, ModelTurn, Usage};

const BASE_URL: &str = "https://api.anthropic.com";
const MODEL: &str = "claude-sonnet-4-5";
const VERSION: &str = "2023-06-01";
const MAX_TOKENS: u32 = 4096;

/// A [`ChatModel`] speaking the Anthropic Messages API.
///
/// Each turn is one `POST {base}/v1/messages` with `"stream": true`, the key as `x-api-key`
/// and `anthropic-version: 2023-06-01`. System messages go to the top-level `system` field
/// (joined by blank lines); the model's turns and the results are encoded by [`Anthropic`];
/// consecutive messages of one role are merged into one, with tool results first, as the API
/// wants. `max_tokens`, which the API requires, defaults to 4096. Usage is read from
/// `message_start` and `message_delta`; input tokens include cache reads and writes. See the
/// [module docs](super) for retries, timeouts and what a cut stream does.
///
/// ```
/// use tool_runtime::agent::{AnthropicMessages, HttpConfigError};
///
/// let model = AnthropicMessages::builder().api_key("sk-ant-test").max_tokens(1024).build()?;
/// assert_eq!(model.endpoint(), "https://api.anthropic.com/v1/messages");
/// assert!(!format!("{model:?}").contains("sk-ant-test"));
///
/// let missing = AnthropicMessages::builder_from_vars(|_| None).build().unwrap_err();
/// assert_eq!(missing, HttpConfigError::MissingApiKey { variable: "ANTHROPIC_API_KEY" });
/// # Ok::<(), HttpConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicMessages {
    transport: Transport,
    settings: Settings,
    adapter: Anthropic,
    max_tokens: u32,
}

/// Settings of an [`AnthropicMessages`] client; [`build`](AnthropicMessagesBuilder::build)
/// makes the client.
#[derive(Debug, Clone)]
#[must_use]
pub struct AnthropicMessagesBuilder {
    settings: Settings,
    adapter: Anthropic,
    max_tokens: u32,
}

impl AnthropicMessages {
    /// A builder with the defaults: `https://api.anthropic.com`, `claude-sonnet-4-5`,
    /// `max_tokens` 4096, non-strict tools, and no key yet.
    pub fn builder() -> AnthropicMessagesBuilder {
        AnthropicMessagesBuilder {
            settings: Settings::new(BASE_URL, MODEL),
            adapter: Anthropic::new(),
            max_tokens: MAX_TOKENS,
        }
    }

    /// A builder with `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` and `ANTHROPIC_MODEL` read
    /// through `var` (empty values count as unset), the defaults otherwise.
    pub fn builder_from_vars(var: impl Fn(&str) -> Option<String>) -> AnthropicMessagesBuilder {
        let mut builder = Self::builder();
        builder.settings = builder.settings.read_vars("ANTHROPIC", &var);
        builder
    }

    /// A builder with `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` and `ANTHROPIC_MODEL` read from
    /// the environment, to adjust before [`build`](AnthropicMessagesBuilder::build).
    pub fn builder_from_env() -> AnthropicMessagesBuilder {
        Self::builder_from_vars(|name| std::env::var(name).ok())
    }

    /// A client set up from `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`),
    /// `ANTHROPIC_API_KEY` (required) and `ANTHROPIC_MODEL` (default `claude-sonnet-4-5`).
    ///
    /// # Errors
    ///
    /// [`HttpConfigError::MissingApiKey`] without a key, and the other [`HttpConfigError`]s
    /// for settings that cannot be used.
    pub fn from_env() -> Result<Self, HttpConfigError> {
        Self::builder_from_env().build()
    }

    /// The model's name, as sent.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// The URL requests go to.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        self.transport.url.as_str()
    }

    /// The `system` field and the `messages`.
    fn messages<'m>(&self, messages: &'m [Message]) -> (Vec<&'m str>, Vec<Value>) {
        let mut system = Vec::new();
        let mut out: Vec<Value> = Vec::with_capacity(messages.len());
        for message in messages {
            match message {
                Message::System(text) => system.push(text.as_str()),
                Message::User(text) if text.is_empty() => {}
                Message::User(text) => {
                    push_merged(&mut out, "user", vec![json!({"type": "text", "text": text})]);
                }
                Message::Assistant(decoded) => {
                    append(&mut out, self.adapter.assistant_message(decoded));
                }
                Message::ToolResults(results) => {
                    for message in self.adapter.result_messages(results) {
                        append(&mut out, message);
                    }
                }
            }
        }
        (system, out)
    }
}

/// Appends an encoded `{"role", "content": [...]}` message, merged into the last one when the
/// role is the same; a message with no content is left out (the API refuses it).
fn append(out: &mut Vec<Value>, mut message: Value) {
    let role = message.get("role").and_then(Value::as_str).unwrap_or("user").to_owned();
    let blocks = match message.get_mut("content").map(Value::take) {
        Some(Value::Array(blocks)) => blocks,
        Some(Value::String(text)) if !text.is_empty() => {
            vec![json!({"type": "text", "text": text})]
        }
        _ => Vec::new(),
    };
    push_merged(out, &role, blocks);
}

fn push_merged(out: &mut Vec<Value>, role: &str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut()
        && last.get("role").and_then(Value::as_str) == Some(role)
        && let Some(Value::Array(content)) = last.get_mut("content")
    {
        content.extend(blocks);
        return;
    }
    out.push(json!({"role": role, "content": blocks}));
}

impl AnthropicMessagesBuilder {
    /// The API's base URL, without `/v1` (`https://api.anthropic.com`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.settings.base_url = url.into();
        self
    }

    /// The key, sent as `x-api-key`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.settings.api_key = Some(super::ApiKey(key.into()));
        self
    }

    /// The model to ask.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.settings.model = model.into();
        self
    }

    /// The most tokens a turn may write (default 4096).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The adapter encoding tools and decoding the stream (strict mode, decode options).
    pub fn adapter(mut self, adapter: Anthropic) -> Self {
        self.adapter = adapter;
        self
    }

    /// A header sent with every request (`anthropic-beta`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.headers.push((name.into(), value.into()));
        self
    }

    /// A field added to every request body (`temperature`, `thinking`, `metadata`). `model`,
    /// `max_tokens`, `system`, `messages`, `stream` and the tool fields are the client's.
    pub fn body_field(mut self, name: impl Into<String>, value: Value) -> Self {
        self.settings.body.insert(name.into(), value);
        self
    }

    /// How failed requests are retried.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.settings.retry = retry;
        self
    }

    /// How long to wait.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.settings.timeouts = timeouts;
        self
    }

    /// The client.
    ///
    /// # Errors
    ///
    /// [`HttpConfigError::MissingApiKey`] without a key, and the other [`HttpConfigError`]s
    /// for a base URL, key or header that cannot be used.
    pub fn build(self) -> Result<AnthropicMessages, HttpConfigError> {
        if self.settings.api_key.is_none() {
            return Err(HttpConfigError::MissingApiKey { variable: "ANTHROPIC_API_KEY" });
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(VERSION),
        );
        let auth = |key: &str| (HeaderName::from_static("x-api-key"), key.to_owned());
        let transport = self.settings.transport("/v1/messages", "Anthropic", auth, headers)?;
        Ok(AnthropicMessages {
            transport,
            settings: self.settings,
            adapter: self.adapter,
            max_tokens: self.max_tokens,
        })
    }
}

#[async_trait]
impl ChatModel for AnthropicMessages {
    async fn respond(
        &self,
        request: ModelRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        let (system, messages) = self.messages(request.messages);
        let mut fields = Map::new();
        fields.insert("model".to_owned(), json!(self.settings.model));
        fields.insert("max_tokens".to_owned(), json!(self.max_tokens));
        if !system.is_empty() {
            fields.insert("system".to_owned(), json!(system.join("\n\n")));
        }
        fields.insert("messages".to_owned(), Value::Array(messages));
        fields.insert("stream".to_owned(), Value::Bool(true));
        fields.extend(tool_fields(&self.adapter, &request)?);
        let body = self.settings.body(fields)?;
        exchange(&self.transport, &self.adapter, read_usage, body, request.tools, on_event).await
    }
}

/// Usage from `message_start` (`message.usage`), `message_delta` (`usage`, cumulative) or a
/// whole response (`usage`). Input counts cache writes and reads too.
fn read_usage(value: &Value, usage: &mut Usage) -> bool {
    let Some(found) = value.pointer("/message/usage").or_else(|| value.get("usage")) else {
        return false;
    };
    let input = count(found, "/input_tokens");
    if let Some(tokens) = input {
        let cached = ["/cache_creation_input_tokens", "/cache_read_input_tokens"]
            .map(|pointer| count(found, pointer).unwrap_or(0));
        usage.input_tokens = tokens + cached[0] + cached[1];
    }
    let output = count(found, "/output_tokens");
    if let Some(tokens) = output {
        usage.output_tokens = tokens;
    }
    input.is_some() || output.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::{ToolCall, ToolResult};

    #[test]
    fn roles_are_merged_and_system_goes_apart() {
        let model = AnthropicMessages::builder().api_key("k").build().unwrap();
        let call = ToolCall::new("toolu_1", "math__add", json!({"a": 1}));
        let mut turn = crate::adapters::Anthropic::new()
            .decode(br#"{"content": [], "stop_reason": "tool_use"}"#)
            .unwrap();
        turn.calls.push(call.clone());
        let conversation = [
            Message::system("Be brief."),
            Message::user("Add."),
            Message::Assistant(turn),
            Message::ToolResults(vec![ToolResult::ok(&call, json!({"sum": 1}))]),
            Message::user("Answer now."),
            Message::system("Really brief."),
        ];
        let (system, messages) = model.messages(&conversation);
        assert_eq!(system, ["Be brief.", "Really brief."]);
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[2]["role"], "user");
        assert_eq!(messages[2]["content"][0]["type"], "tool_result");
        assert_eq!(messages[2]["content"][1], json!({"type": "text", "text": "Answer now."}));
    }

    #[test]
    fn usage_with_cache() {
        let mut usage = Usage::default();
        let start = json!({"type": "message_start", "message": {"usage": {"input_tokens": 10,
            "cache_read_input_tokens": 5, "output_tokens": 1}}});
        assert!(read_usage(&start, &mut usage));
        assert!(read_usage(
            &json!({"type": "message_delta", "usage": {"output_tokens": 7}}),
            &mut usage
        ));
        assert_eq!(usage, Usage { input_tokens: 15, output_tokens: 7 });
        assert!(!read_usage(&json!({"type": "ping"}), &mut usage));
    }
}
