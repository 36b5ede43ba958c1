//! Anthropic Messages (`POST /v1/messages`).
//!
//! - Definitions: `{"name", "description", "input_schema", "strict"}`; optional properties
//!   stay out of `required`. Choice: `tool_choice` = `{"type": "auto" | "any" | "none" |
//!   "tool", "name", "disable_parallel_tool_use"}`.
//! - Responses: `content[]` blocks; a call is `{type: "tool_use", id, name, input}` with
//!   `input` an object; `stop_reason` ends the turn.
//! - Streams: SSE events `message_start`, `content_block_start` / `_delta` / `_stop` (tool
//!   input arrives as `input_json_delta.partial_json`), `message_delta` (with `stop_reason`),
//!   `message_stop`, `ping`, `error`. Block indices are scoped to one message.
//! - Results: one `user` message with a `tool_result` block (`tool_use_id`, `content`,
//!   `is_error`) per result.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::spec::ToolSpec;

use super::assemble::{Core, DecodeOptions};
use super::budget::AnthropicStrictBudget;
use super::problem::{DecodeError, EncodeError, Problem, ProviderError};
use super::session::{Protocol, Session, StreamSession, body, payload, str_at};
use super::sse::{Frame, Framing, SseParser};
use super::types::{
    ChoiceMode, Decoded, Finish, FinishReason, StreamEvent, ToolChoice, ToolResult,
};
use super::{Adapter, Provider, input_schema, lower, named};

/// The key under which thinking blocks are kept in [`Decoded::extras`].
const THINKING: &str = "thinking_blocks";

/// The Anthropic Messages adapter.
///
/// ```
/// use tool_runtime::adapters::{Adapter, Anthropic, FinishReason};
///
/// let decoded = Anthropic::new()
///     .decode(br#"{"type": "message", "role": "assistant", "content": [
///         {"type": "tool_use", "id": "toolu_1", "name": "core__get_current_time", "input": {}}],
///         "stop_reason": "tool_use"}"#)
///     .unwrap();
/// assert_eq!(decoded.finish.reason, FinishReason::ToolCalls);
/// assert!(decoded.calls[0].is_executable());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Anthropic {
    strict: bool,
    decode: DecodeOptions,
}

impl Anthropic {
    /// Non-strict definitions, default decoding.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Strict tool use (`"strict": true`, constraints the grammar cannot carry moved into
    /// descriptions, request limits checked).
    #[must_use]
    pub fn strict(self, strict: bool) -> Self {
        Self { strict, ..self }
    }

    /// How ids are minted and which tools were declared.
    #[must_use]
    pub fn decode_options(self, decode: DecodeOptions) -> Self {
        Self { decode, ..self }
    }

    fn input_schema(&self, spec: &ToolSpec) -> Result<Map<String, Value>, EncodeError> {
        let schema = input_schema(spec)?;
        Ok(if self.strict { lower::anthropic_strict(&schema) } else { schema })
    }
}

impl Adapter for Anthropic {
    fn provider(&self) -> Provider {
        Provider::Anthropic
    }

    fn tool(&self, spec: &ToolSpec) -> Result<Value, EncodeError> {
        let mut tool = named(spec, [("input_schema", Value::Object(self.input_schema(spec)?))]);
        if self.strict {
            tool.insert("strict".to_owned(), Value::Bool(true));
        }
        Ok(Value::Object(tool))
    }

    fn tools(&self, specs: &[&ToolSpec]) -> Result<Value, EncodeError> {
        let mut budget = AnthropicStrictBudget::default();
        let mut tools = Vec::with_capacity(specs.len());
        for spec in specs {
            if self.strict {
                budget.add(spec.name(), &self.input_schema(spec)?)?;
            }
            tools.push(self.tool(spec)?);
        }
        Ok(Value::Array(tools))
    }

    fn tool_choice(&self, choice: &ToolChoice) -> Result<Map<String, Value>, EncodeError> {
        let mut inner = Map::new();
        let kind = match &choice.mode {
            ChoiceMode::Auto => "auto",
            ChoiceMode::None => "none",
            ChoiceMode::Required => "any",
            ChoiceMode::Tool(_) => "tool",
        };
        inner.insert("type".to_owned(), json!(kind));
        if let ChoiceMode::Tool(name) = &choice.mode {
            inner.insert("name".to_owned(), json!(name));
        }
        if let Some(parallel) = choice.parallel.filter(|_| choice.mode != ChoiceMode::None) {
            inner.insert("disable_parallel_tool_use".to_owned(), Value::Bool(!parallel));
        }
        let mut fields = Map::new();
        fields.insert("tool_choice".to_owned(), Value::Object(inner));
        Ok(fields)
    }

    fn decode(&self, bytes: &[u8]) -> Result<Decoded, DecodeError> {
        let message = body(bytes)?;
        if str_at(&message, "type") == Some("error") {
            let error = message.get("error").unwrap_or(&Value::Null);
            return Err(DecodeError::Provider(ProviderError::from_value(error)));
        }
        let content = message
            .get("content")
            .and_then(Value::as_array)
            .ok_or(DecodeError::Shape { expected: "a message with `content`" })?;
        let mut core = Core::new(self.decode.clone());
        let out = &mut Vec::new();
        core.recognised = 1;
        for block in content {
            match str_at(block, "type") {
                Some("text") => core.text(str_at(block, "text").unwrap_or_default(), out),
                Some("tool_use") => {
                    let slot = core.open();
                    start_tool(&mut core, slot, block, out);
                }
                Some("thinking" | "redacted_thinking") => keep_thinking(&mut core, block.clone()),
                _ => {}
            }
        }
        if let Some(reason) = str_at(&message, "stop_reason") {
            core.finish(finish(reason), out);
        }
        Ok(core.end(out))
    }

    fn stream(&self) -> Box<dyn StreamSession> {
        let core = Core::new(self.decode.clone());
        Box::new(Session::new(
            Framing::Sse(SseParser::default()),
            core,
            MessagesProtocol::default(),
        ))
    }

    fn assistant_message(&self, decoded: &Decoded) -> Value {
        let mut content: Vec<Value> =
            decoded.extras.get(THINKING).and_then(Value::as_array).cloned().unwrap_or_default();
        if !decoded.text.is_empty() {
            content.push(json!({"type": "text", "text": decoded.text}));
        }
        for call in &decoded.calls {
            let input = call.arguments.value().cloned().unwrap_or_else(|| json!({}));
            content.push(
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
            );
        }
        json!({"role": "assistant", "content": content})
    }

    fn result_messages(&self, results: &[ToolResult]) -> Vec<Value> {
        if results.is_empty() {
            return Vec::new();
        }
        let blocks: Vec<Value> = results
            .iter()
            .map(|result| {
                json!({
                    "type": "tool_result",
                    "tool_use_id": result.call_id,
                    "content": result.content_text(),
                    "is_error": result.is_error(),
                })
            })
            .collect();
        vec![json!({"role": "user", "content": blocks})]
    }
}

/// A `tool_use` block's id, name and (when not empty) input.
fn start_tool(core: &mut Core, slot: usize, block: &Value, out: &mut Vec<StreamEvent>) {
    if let Some(id) = str_at(block, "id") {
        core.set_id(slot, id, out);
    }
    if let Some(name) = str_at(block, "name") {
        core.push_name(slot, name, out);
    }
    match block.get("input") {
        Some(Value::Object(input)) if input.is_empty() => {}
        Some(input) => core.set_object(slot, input.clone(), false, out),
        None => {}
    }
}

fn keep_thinking(core: &mut Core, block: Value) {
    core.extras.push(THINKING, block);
}

/// The canonical reason for a `stop_reason`.
fn finish(reason: &str) -> Finish {
    let canonical = match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    };
    Finish::new(canonical, Some(reason))
}

/// What a content block index stands for within the current message.
#[derive(Debug)]
enum Block {
    Tool(usize),
    Thinking(Map<String, Value>),
    Other,
}

/// Stream state: the blocks of the current message.
#[derive(Debug, Default)]
struct MessagesProtocol {
    blocks: HashMap<u64, Block>,
}

impl Protocol for MessagesProtocol {
    fn on_frame(&mut self, core: &mut Core, frame: Frame, out: &mut Vec<StreamEvent>) {
        let Some(event) = payload(core, &frame.data, out) else { return };
        let Some(kind) = str_at(&event, "type").or(frame.event.as_deref()) else {
            core.problem(
                Problem::UnexpectedPayload { expected: "a Messages event with a `type`" },
                out,
            );
            return;
        };
        core.recognised += 1;
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            // Block indices restart with every message.
            "message_start" => self.blocks.clear(),
            "content_block_start" => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                let entry = match str_at(block, "type") {
                    Some("tool_use") => {
                        let slot = core.open();
                        start_tool(core, slot, block, out);
                        Block::Tool(slot)
                    }
                    Some("thinking") => {
                        Block::Thinking(block.as_object().cloned().unwrap_or_default())
                    }
                    Some("redacted_thinking") => {
                        keep_thinking(core, block.clone());
                        Block::Other
                    }
                    Some("text") => {
                        core.text(str_at(block, "text").unwrap_or_default(), out);
                        Block::Other
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(index, entry);
            }
            "content_block_delta" => {
                self.delta(core, index, event.get("delta").unwrap_or(&Value::Null), out)
            }
            "content_block_stop" => {
                if let Some(Block::Thinking(block)) = self.blocks.remove(&index) {
                    keep_thinking(core, Value::Object(block));
                }
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    core.finish(finish(reason), out);
                }
            }
            "error" => {
                let error = event.get("error").unwrap_or(&Value::Null);
                core.problem(Problem::Provider(ProviderError::from_value(error)), out);
                core.finish(Finish::new(FinishReason::Error, Some("error")), out);
            }
            _ => {}
        }
    }
}

impl MessagesProtocol {
    fn delta(&mut self, core: &mut Core, index: u64, delta: &Value, out: &mut Vec<StreamEvent>) {
        let text = |key: &str| str_at(delta, key).unwrap_or_default();
        match str_at(delta, "type") {
            Some("text_delta") => core.text(text("text"), out),
            Some("input_json_delta") => {
                let slot = match self.blocks.get(&index) {
                    Some(Block::Tool(slot)) => *slot,
                    // Input for a block that never started: keep it; it is reported unnamed.
                    _ => {
                        let slot = core.open();
                        self.blocks.insert(index, Block::Tool(slot));
                        slot
                    }
                };
                core.push_args(slot, text("partial_json"), out);
            }
            Some(kind @ ("thinking_delta" | "signature_delta")) => {
                if let Some(Block::Thinking(block)) = self.blocks.get_mut(&index) {
                    let key = if kind == "thinking_delta" { "thinking" } else { "signature" };
                    match block.get_mut(key) {
                        Some(Value::String(value)) => value.push_str(text(key)),
                        _ => {
                            block.insert(key.to_owned(), Value::String(text(key).to_owned()));
                        }
                    }
                }
            }
            _ => {}
        }
    }
}
