//! OpenAI Responses (`POST /v1/responses`).
//!
//! - Definitions: flat `{"type": "function", "name", "description", "parameters", "strict"}`;
//!   `strict` defaults to true on this API, so it is always written. Choice: `tool_choice`
//!   (`"auto"`, `"none"`, `"required"`, `{"type": "function", "name"}`) and
//!   `parallel_tool_calls`.
//! - Responses: `output[]` items; a call is `{type: "function_call", id, call_id, name,
//!   arguments}`; the end is `status` (`completed`, `incomplete` with
//!   `incomplete_details.reason`, `failed` with `error`).
//! - Streams: SSE events named by their `type`: `response.output_item.added`,
//!   `response.function_call_arguments.delta` / `.done`, `response.output_item.done`,
//!   `response.output_text.delta`, `response.completed` / `.incomplete` / `.failed`, `error`.
//! - Results: `{"type": "function_call_output", "call_id", "output"}` input items; `output` is
//!   text, or an array of `input_text`, `input_image` and `input_file` parts when the result
//!   carries images or files.
//! - Calls from code ([`Callers`]): a tool code may call carries `allowed_callers`
//!   (`["programmatic"]` or `["direct", "programmatic"]`) and brings the
//!   `{"type": "programmatic_tool_calling"}` tool; its calls carry `caller: {type: "program",
//!   caller_id}`, which goes back on the call and its output, and the `program` and
//!   `program_output` items go back with the turn as received.
//! - Asynchronous tools ([`ToolSpec::is_asynchronous`]): `async: true` on the definition; the
//!   calls carry it too and keep it when they go back.
//! - The application's tool search ([`ClientSearch`]): `{"type": "tool_search", "execution":
//!   "client", "description", "parameters"}` first in `tools`; the model's `tool_search_call`
//!   items (`"execution": "client"`) decode as calls of [`SEARCH_TOOL`] and go back as they
//!   came, their results as `tool_search_output` items carrying the found tools.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::content::{Part, Resource, ResourceBody};
use crate::conversation::{
    ASYNC, CALLER, ChoiceMode, ClientSearch, Decoded, DeferLoading, Finish, FinishReason, Message,
    ModelRequest, Problem, ProviderError, RequestOptions, SEARCH_CALL, SEARCH_TOOL, StreamEvent,
    TOOL_REFERENCES, ToolCall, ToolChoice, ToolOutcome, ToolResult, ToolSearch, search_parameters,
};
use crate::spec::{Callers, ToolSpec};

use super::assemble::{Core, DecodeOptions};
use super::budget::OpenAiStrictBudget;
use super::error::{DecodeError, EncodeError};
use super::framing::Frame;
use super::parts::{self, object};
use super::request;
use super::session::{Protocol, Session, StreamSession, body, payload, str_at, usage_object};
use super::sse::SseParser;
use super::{Adapter, Provider, input_schema, lower, named};

/// The key under which reasoning items are kept in [`Decoded::extras`].
const REASONING: &str = "reasoning_items";

/// The key under which tool search items are kept in [`Decoded::extras`].
const SEARCH: &str = "tool_search_items";

/// The key under which programmatic tool calling's `program` and `program_output` items are
/// kept in [`Decoded::extras`], to be sent back with the turn (a program's `fingerprint` must
/// make the round trip).
const PROGRAMS: &str = "program_items";

/// The OpenAI Responses adapter.
///
/// ```
/// use tool_runtime::adapters::{Adapter, OpenAiResponses};
///
/// let decoded = OpenAiResponses::new()
///     .decode(br#"{"object": "response", "status": "completed", "output": [
///         {"type": "function_call", "id": "fc_1", "call_id": "call_1",
///          "name": "core__get_current_time", "arguments": "{}", "status": "completed"}]}"#)
///     .unwrap();
/// assert_eq!(decoded.calls[0].id, "call_1");
/// assert_eq!(decoded.calls[0].extras.get("id"), Some(&serde_json::json!("fc_1")));
/// ```
#[derive(Debug, Clone, Default)]
pub struct OpenAiResponses {
    strict: bool,
    decode: DecodeOptions,
    defer: Option<DeferLoading>,
    /// `(name, description)`, sorted by name.
    namespaces: Vec<(String, String)>,
}

impl OpenAiResponses {
    /// Non-strict definitions (`"strict": false`), default decoding.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Strict mode (every property required, optional ones nullable). Decoded arguments then
    /// need [`raise_arguments`](super::raise_arguments).
    #[must_use]
    pub fn strict(self, strict: bool) -> Self {
        Self { strict, ..self }
    }

    /// How ids are minted and which tools were declared.
    #[must_use]
    pub fn decode_options(self, decode: DecodeOptions) -> Self {
        Self { decode, ..self }
    }

    /// Defers function definitions behind the hosted `tool_search` tool
    /// ([`ToolSearch::Hosted`]); see [`DeferLoading`]. The search's `tool_search_call` and
    /// `tool_search_output` items are kept to be sent back with the turn, and the tools it
    /// loaded are in [`Decoded::tool_references`].
    #[must_use]
    pub fn defer_loading(self, defer: DeferLoading) -> Self {
        Self { defer: Some(defer), ..self }
    }

    /// Groups the tools named `<name>__<function>` into a namespace
    /// (`{"type": "namespace", "name", "description", "tools": [...]}`), whose functions are
    /// called `<function>`: the model sees the namespace's name and description, and, with
    /// [deferred loading](Self::defer_loading), loads its functions when it needs them
    /// (<https://developers.openai.com/api/docs/guides/function-calling#defining-namespaces>).
    /// A call of a namespaced function (its item carries `namespace`) decodes to the tool's
    /// full name, and goes back with the turn split again. A tool choice that names a
    /// namespaced tool is an [`EncodeError::Unsupported`].
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::adapters::{Adapter, OpenAiResponses};
    ///
    /// let adapter = OpenAiResponses::new().namespace("crm", "Customer lookup and orders.");
    /// let decoded = adapter.decode(br#"{"status": "completed", "output": [{"type": "function_call",
    ///     "call_id": "call_1", "namespace": "crm", "name": "list_orders", "arguments": "{}"}]}"#).unwrap();
    /// assert_eq!(decoded.calls[0].name, "crm__list_orders");
    /// let echoed = adapter.assistant_message(&decoded);
    /// assert_eq!((&echoed[0]["namespace"], &echoed[0]["name"]), (&json!("crm"), &json!("list_orders")));
    /// ```
    #[must_use]
    pub fn namespace(mut self, name: impl Into<String>, description: impl Into<String>) -> Self {
        let name = name.into();
        let description = description.into();
        match self.namespaces.binary_search_by(|(known, _)| known.cmp(&name)) {
            Ok(index) => self.namespaces[index].1 = description,
            Err(index) => self.namespaces.insert(index, (name, description)),
        }
        self
    }

    /// The namespace of the tool named `name` and its function name within it.
    fn split_namespace<'n>(&self, name: &'n str) -> Option<(&str, &'n str)> {
        if self.namespaces.is_empty() {
            return None;
        }
        let (prefix, function) = name.split_once("__")?;
        let index =
            self.namespaces.binary_search_by(|(known, _)| known.as_str().cmp(prefix)).ok()?;
        Some((self.namespaces[index].0.as_str(), function))
    }

    fn parameters(&self, spec: &ToolSpec) -> Result<Map<String, Value>, EncodeError> {
        let schema = input_schema(spec, Provider::OpenAiResponses)?;
        Ok(if self.strict { lower::openai_strict(&schema) } else { schema })
    }
}

impl Adapter for OpenAiResponses {
    fn provider(&self) -> Provider {
        Provider::OpenAiResponses
    }

    fn tool(&self, spec: &ToolSpec) -> Result<Value, EncodeError> {
        let mut tool = Map::new();
        tool.insert("type".to_owned(), json!("function"));
        tool.extend(named(spec, [("parameters", Value::Object(self.parameters(spec)?))]));
        tool.insert("strict".to_owned(), Value::Bool(self.strict));
        let callers = match spec.callers() {
            Callers::Direct => None,
            Callers::Programmatic => Some(json!(["programmatic"])),
            Callers::Both => Some(json!(["direct", "programmatic"])),
        };
        if let Some(callers) = callers {
            tool.insert("allowed_callers".to_owned(), callers);
        }
        if spec.is_asynchronous() {
            tool.insert(ASYNC.to_owned(), Value::Bool(true));
        }
        Ok(Value::Object(tool))
    }

    fn tools(&self, specs: &[&ToolSpec]) -> Result<Value, EncodeError> {
        let mut budget = OpenAiStrictBudget::new(Provider::OpenAiResponses);
        let mut tools = Vec::with_capacity(specs.len() + 1);
        if let Some(defer) = &self.defer {
            if defer.search() != ToolSearch::Hosted {
                return Err(EncodeError::Unsupported {
                    provider: Provider::OpenAiResponses,
                    feature: "a tool search other than the hosted `tool_search` (`ToolSearch::Hosted`)",
                });
            }
            // https://developers.openai.com/api/docs/guides/tools-tool-search
            tools.push(json!({"type": "tool_search"}));
        }
        // Before the tools, so that the array only grows at its end as tools are added.
        if specs.iter().any(|spec| spec.callers().allows_programmatic()) {
            tools.push(json!({"type": "programmatic_tool_calling"}));
        }
        // Where each namespace's object stands in `tools`.
        let mut grouped: Vec<(usize, usize)> = Vec::new();
        for spec in specs {
            if self.strict {
                budget.add(spec.name(), &self.parameters(spec)?)?;
            }
            let mut tool = self.tool(spec)?;
            if let Some(defer) = &self.defer {
                request::mark_deferred(defer, spec.name(), &mut tool);
            }
            let Some((namespace, function)) = self.split_namespace(spec.name()) else {
                tools.push(tool);
                continue;
            };
            tool["name"] = json!(function);
            let index = self
                .namespaces
                .binary_search_by(|(known, _)| known.as_str().cmp(namespace))
                .unwrap_or_default();
            let at = match grouped.iter().find(|(known, _)| *known == index) {
                Some(&(_, at)) => at,
                None => {
                    let (name, description) = &self.namespaces[index];
                    tools.push(json!({
                        "type": "namespace",
                        "name": name,
                        "description": description,
                        "tools": [],
                    }));
                    grouped.push((index, tools.len() - 1));
                    tools.len() - 1
                }
            };
            if let Some(Value::Array(members)) = tools[at].get_mut("tools") {
                members.push(tool);
            }
        }
        Ok(Value::Array(tools))
    }

    fn tool_choice(&self, choice: &ToolChoice) -> Result<Map<String, Value>, EncodeError> {
        if choice.named_tools().iter().any(|name| self.split_namespace(name).is_some()) {
            return Err(EncodeError::Unsupported {
                provider: Provider::OpenAiResponses,
                feature: "a tool choice naming a tool inside a namespace",
            });
        }
        let mut fields = Map::new();
        let mode = match &choice.mode {
            ChoiceMode::Auto => json!("auto"),
            ChoiceMode::None => json!("none"),
            ChoiceMode::Required => json!("required"),
            ChoiceMode::Tool(name) => json!({"type": "function", "name": name}),
            // https://platform.openai.com/docs/api-reference/responses/create#responses-create-tool_choice
            ChoiceMode::Allowed { tools, required } => {
                let tools: Vec<Value> =
                    tools.iter().map(|name| json!({"type": "function", "name": name})).collect();
                let mode = if *required { "required" } else { "auto" };
                json!({"type": "allowed_tools", "mode": mode, "tools": tools})
            }
            ChoiceMode::Validated if self.strict => json!("auto"),
            ChoiceMode::Validated => {
                return Err(EncodeError::Unsupported {
                    provider: Provider::OpenAiResponses,
                    feature: "a validated tool choice without strict mode (turn `strict` on)",
                });
            }
        };
        fields.insert("tool_choice".to_owned(), mode);
        if let Some(parallel) = choice.parallel {
            fields.insert("parallel_tool_calls".to_owned(), Value::Bool(parallel));
        }
        Ok(fields)
    }

    /// `model`, `instructions` (the system messages joined by blank lines), `input` (user
    /// messages, the model's output items, the result items), `max_output_tokens` when set,
    /// `"stream": true` when streaming, then the tool fields.
    fn encode_request(
        &self,
        request: &ModelRequest<'_>,
        options: &RequestOptions,
    ) -> Result<Map<String, Value>, EncodeError> {
        let mut input = Vec::with_capacity(request.messages.len());
        for message in request.messages {
            match message {
                Message::System(_) => {}
                Message::User(text) => input.push(json!({"role": "user", "content": text})),
                // Instructions stand apart (`instructions`); a notice in the middle of the
                // conversation is a developer message where it stands.
                Message::Notice(text) => {
                    input.push(json!({"role": "developer", "content": text}));
                }
                Message::Assistant(decoded) => match self.assistant_message(decoded) {
                    Value::Array(items) => input.extend(items),
                    other => input.push(other),
                },
                Message::ToolResults(results) => {
                    input.extend(self.result_items(results, request.search)?);
                }
            }
        }
        let mut fields = Map::new();
        fields.insert("model".to_owned(), json!(options.model));
        if let Some(system) = request::system_text(request.messages) {
            fields.insert("instructions".to_owned(), Value::String(system));
        }
        fields.insert("input".to_owned(), Value::Array(input));
        if let Some(max_tokens) = options.max_tokens {
            fields.insert("max_output_tokens".to_owned(), json!(max_tokens));
        }
        if options.stream {
            fields.insert("stream".to_owned(), Value::Bool(true));
        }
        fields.extend(match request.search {
            None => self.request(request.tools, request.choice)?,
            Some(search) => self.search_request(request, search)?,
        });
        Ok(request::body(options, fields))
    }

    fn decode(&self, bytes: &[u8]) -> Result<Decoded, DecodeError> {
        let response = body(bytes)?;
        if let Some(error) = response.get("error").filter(|error| !error.is_null())
            && response.get("output").is_none()
        {
            return Err(DecodeError::Provider(ProviderError::from_value(error)));
        }
        let output = response
            .get("output")
            .and_then(Value::as_array)
            .ok_or(DecodeError::Shape { expected: "a response with `output`" })?;
        let mut core = Core::new(self.decode.clone());
        let out = &mut Vec::new();
        core.recognised = 1;
        for item in output {
            match str_at(item, "type") {
                Some("function_call") => open_item(&mut core, item, out),
                Some("message") => {
                    let parts = item.get("content").and_then(Value::as_array);
                    for part in parts.map(Vec::as_slice).unwrap_or_default() {
                        if str_at(part, "type") == Some("output_text") {
                            core.text(str_at(part, "text").unwrap_or_default(), out);
                        }
                    }
                }
                Some("reasoning") => keep_reasoning(&mut core, item),
                Some("tool_search_call") if is_client_search(item) => {
                    let slot = core.open();
                    apply_search_item(&mut core, slot, item, out);
                }
                Some("tool_search_call" | "tool_search_output") => keep_search(&mut core, item),
                Some("program" | "program_output") => core.extras.push(PROGRAMS, item.clone()),
                _ => {}
            }
        }
        read_usage(&mut core, &response, out);
        finish_response(&mut core, &response, out);
        Ok(core.end(out))
    }

    fn stream(&self) -> Box<dyn StreamSession> {
        let core = Core::new(self.decode.clone());
        Box::new(Session::new(SseParser::default(), core, ResponsesProtocol::default()))
    }

    /// The output items to put back into the next request's `input`, as an array: reasoning
    /// items, tool search items and programs (as received), the text as an assistant message,
    /// then the `function_call` items (with their `caller` when code made them).
    fn assistant_message(&self, decoded: &Decoded) -> Value {
        let mut items: Vec<Value> =
            decoded.extras.get(REASONING).and_then(Value::as_array).cloned().unwrap_or_default();
        for key in [SEARCH, PROGRAMS] {
            if let Some(Value::Array(kept)) = decoded.extras.get(key) {
                items.extend(kept.iter().cloned());
            }
        }
        if !decoded.text.is_empty() {
            items.push(json!({"role": "assistant", "content": decoded.text}));
        }
        for call in &decoded.calls {
            if call.extras.get(SEARCH_CALL).is_some() {
                items.push(search_call_item(call));
                continue;
            }
            let mut item = Map::new();
            item.insert("type".to_owned(), json!("function_call"));
            if let Some(id) = call.extras.get("id") {
                item.insert("id".to_owned(), id.clone());
            }
            item.insert("call_id".to_owned(), json!(call.id));
            match self.split_namespace(&call.name) {
                Some((namespace, function)) => {
                    item.insert("namespace".to_owned(), json!(namespace));
                    item.insert("name".to_owned(), json!(function));
                }
                None => {
                    item.insert("name".to_owned(), json!(call.name));
                }
            }
            item.insert("arguments".to_owned(), json!(call.arguments.to_json_text()));
            for key in [CALLER, ASYNC] {
                if let Some(value) = call.extras.get(key) {
                    item.insert(key.to_owned(), value.clone());
                }
            }
            items.push(Value::Object(item));
        }
        Value::Array(items)
    }

    /// One `{"type": "function_call_output", "call_id", "output"}` item per result, with the
    /// call's `caller` when code made the call. `output`
    /// is the result's text ([`ToolResult::content_text`]) when it is all text, and otherwise
    /// an array of its parts in order: `{"type": "input_text", "text"}`,
    /// `{"type": "input_image", "image_url": "data:<mime>;base64,..."}` (PNG, JPEG, WebP, GIF)
    /// and `{"type": "input_file", "filename", "file_data": "data:<mime>;base64,..."}`. Audio
    /// and files of other types have no form here: an `input_text` item names what was left
    /// out (kind, MIME type, size) in its place.
    ///
    /// A [tool search](ClientSearch)'s result that answers a `tool_search_call` goes back as
    /// `{"type": "tool_search_output", "call_id", "execution": "client", "status":
    /// "completed", "tools": [...]}`, each tool found as a function with
    /// `"defer_loading": true`.
    fn result_messages(&self, results: &[ToolResult]) -> Result<Vec<Value>, EncodeError> {
        self.result_items(results, None)
    }

    /// The output items of the turn followed by the result items, flat.
    fn turn(&self, decoded: &Decoded, results: &[ToolResult]) -> Result<Vec<Value>, EncodeError> {
        let mut items = match self.assistant_message(decoded) {
            Value::Array(items) => items,
            other => vec![other],
        };
        items.extend(self.result_messages(results)?);
        Ok(items)
    }
}

impl OpenAiResponses {
    /// The tool fields of a request with the application's own tool search: the
    /// client-executed `tool_search` tool, then the request's tools that are not deferred.
    /// The tools a search finds go to the model in its `tool_search_output` items, so the
    /// array is the same on every turn
    /// (<https://developers.openai.com/api/docs/guides/tools-tool-search#client-executed-tool-search>).
    fn search_request(
        &self,
        request: &ModelRequest<'_>,
        search: ClientSearch<'_>,
    ) -> Result<Map<String, Value>, EncodeError> {
        if self.defer.is_some() {
            return Err(EncodeError::Unsupported {
                provider: Provider::OpenAiResponses,
                feature: "the application's tool search beside the hosted `tool_search` (`defer_loading`)",
            });
        }
        let mut fields = self.request(&search.not_deferred(request.tools), request.choice)?;
        if !fields.contains_key("tools") {
            fields.insert("tools".to_owned(), Value::Array(Vec::new()));
            fields.extend(self.tool_choice(request.choice)?);
        }
        let tool = object([
            ("type", json!("tool_search")),
            ("execution", json!("client")),
            ("description", json!(search.description)),
            ("parameters", Value::Object(search_parameters())),
        ]);
        if let Some(Value::Array(tools)) = fields.get_mut("tools") {
            tools.insert(0, tool);
        }
        Ok(fields)
    }

    /// The items that carry `results` back, a search's as its `tool_search_output`, its tools'
    /// definitions taken from `search` (or, for a tool it does not hold, from the result).
    fn result_items(
        &self,
        results: &[ToolResult],
        search: Option<ClientSearch<'_>>,
    ) -> Result<Vec<Value>, EncodeError> {
        results
            .iter()
            .map(|result| {
                if result.is_search() && result.extras.get(SEARCH_CALL).is_some() {
                    return self.search_output(result, search);
                }
                let output = match &result.outcome {
                    ToolOutcome::Done(output) if output.parts().iter().any(parts::is_binary) => {
                        let mut items = Vec::with_capacity(output.parts().len());
                        for (index, part) in output.parts().iter().enumerate() {
                            items.push(output_part(index, part));
                        }
                        Value::Array(items)
                    }
                    _ => Value::String(result.content_text()),
                };
                let mut item = object([
                    ("type", json!("function_call_output")),
                    ("call_id", json!(result.call_id)),
                    ("output", output),
                ]);
                if let Some(caller) = result.extras.get(CALLER) {
                    item[CALLER] = caller.clone();
                }
                Ok(item)
            })
            .collect()
    }

    /// A tool search's result as its `tool_search_output` item.
    fn search_output(
        &self,
        result: &ToolResult,
        search: Option<ClientSearch<'_>>,
    ) -> Result<Value, EncodeError> {
        // The definitions the result carries, for a tool the request does not hold.
        let carried = match &result.outcome {
            ToolOutcome::Done(output) => output.parts().iter().find_map(|part| match part {
                Part::Json(value) => value.get("tools").and_then(Value::as_array),
                _ => None,
            }),
            ToolOutcome::Failed(_) => None,
        };
        let mut tools = Vec::new();
        for name in result.found() {
            let mut tool = match search.and_then(|search| search.find(name)) {
                Some(spec) => self.tool(spec)?,
                None => {
                    let definition = carried
                        .and_then(|tools| {
                            tools.iter().find(|tool| str_at(tool, "name") == Some(name))
                        })
                        .ok_or_else(|| EncodeError::UnknownTool(name.to_owned()))?;
                    let mut tool = object([("type", json!("function"))]);
                    for key in ["name", "description", "parameters"] {
                        if let Some(value) = definition.get(key) {
                            tool[key] = value.clone();
                        }
                    }
                    tool
                }
            };
            tool["defer_loading"] = Value::Bool(true);
            tools.push(tool);
        }
        Ok(object([
            ("type", json!("tool_search_output")),
            ("call_id", json!(result.call_id)),
            ("execution", json!("client")),
            ("status", json!("completed")),
            ("tools", Value::Array(tools)),
        ]))
    }
}

/// A search call of the application's tool search as the `tool_search_call` item it came as.
fn search_call_item(call: &ToolCall) -> Value {
    let mut item = Map::new();
    item.insert("type".to_owned(), json!("tool_search_call"));
    if let Some(id) = call.extras.get("id") {
        item.insert("id".to_owned(), id.clone());
    }
    item.insert("call_id".to_owned(), json!(call.id));
    item.insert("execution".to_owned(), json!("client"));
    let arguments = call.arguments.value().cloned().unwrap_or_else(|| json!({}));
    item.insert("arguments".to_owned(), arguments);
    item.insert("status".to_owned(), json!("completed"));
    Value::Object(item)
}

/// Whether `item` is a `tool_search_call` the application answers (`"execution": "client"`):
/// a call of [`SEARCH_TOOL`].
fn is_client_search(item: &Value) -> bool {
    str_at(item, "type") == Some("tool_search_call") && str_at(item, "execution") == Some("client")
}

/// Applies a client `tool_search_call` item to its slot: a call of [`SEARCH_TOOL`] with the
/// item's `arguments` object.
fn apply_search_item(core: &mut Core, slot: usize, item: &Value, out: &mut Vec<StreamEvent>) {
    if let Some(call_id) = str_at(item, "call_id") {
        core.set_id(slot, call_id, out);
    }
    if core.name_of(slot).is_none_or(str::is_empty) {
        core.push_name(slot, SEARCH_TOOL, out);
    }
    if let Some(extras) = core.extras_mut(slot) {
        if let Some(id) = item.get("id") {
            extras.insert("id", id.clone());
        }
        extras.insert(SEARCH_CALL, Value::Bool(true));
    }
    if let Some(arguments) = item.get("arguments").filter(|arguments| !arguments.is_null()) {
        let text = match arguments {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        core.replace_args(slot, &text, out);
    }
}

/// Part `index` of a result as a `function_call_output` content item.
fn output_part(index: usize, part: &Part) -> Value {
    let left_out = || json!({"type": "input_text", "text": parts::left_out(Provider::OpenAiResponses, index, part)});
    if let Some(text) = parts::text_of(part) {
        return json!({"type": "input_text", "text": text});
    }
    match (part, parts::resource(part)) {
        (Part::Image(media), _) if parts::is_common_image(&media.mime_type) => object([
            ("type", json!("input_image")),
            ("image_url", parts::data_url(&media.mime_type, &media.data).into()),
        ]),
        (_, Some(Resource { uri, mime_type, body: ResourceBody::Bytes(bytes) })) => {
            let Some(mime) = parts::file_mime(mime_type.as_deref()) else {
                return left_out();
            };
            object([
                ("type", json!("input_file")),
                ("filename", json!(parts::file_name(uri))),
                ("file_data", parts::data_url(mime, bytes).into()),
            ])
        }
        _ => left_out(),
    }
}

/// A response's `usage.input_tokens` and `usage.output_tokens`.
fn read_usage(core: &mut Core, response: &Value, out: &mut Vec<StreamEvent>) {
    usage_object(core, response, ["input_tokens", "output_tokens"], out);
}

/// Gives a complete `function_call` item a slot of its own.
fn open_item(core: &mut Core, item: &Value, out: &mut Vec<StreamEvent>) {
    let slot = core.open();
    apply_item(core, slot, item, out);
}

/// Applies a `function_call` item's fields to its slot.
fn apply_item(core: &mut Core, slot: usize, item: &Value, out: &mut Vec<StreamEvent>) {
    if let Some(call_id) = str_at(item, "call_id") {
        core.set_id(slot, call_id, out);
    }
    match (str_at(item, "namespace"), str_at(item, "name")) {
        (Some(namespace), Some(name)) => core.push_name(slot, &format!("{namespace}__{name}"), out),
        (None, Some(name)) => core.push_name(slot, name, out),
        _ => {}
    }
    if let Some(extras) = core.extras_mut(slot) {
        if let Some(id) = item.get("id") {
            extras.insert("id", id.clone());
        }
        if let Some(caller) = item.get(CALLER) {
            extras.insert(CALLER, caller.clone());
        }
        if let Some(Value::Bool(true)) = item.get(ASYNC) {
            extras.insert(ASYNC, Value::Bool(true));
        }
    }
    if let Some(arguments) = str_at(item, "arguments").filter(|text| !text.is_empty()) {
        core.replace_args(slot, arguments, out);
    }
}

fn keep_reasoning(core: &mut Core, item: &Value) {
    core.extras.push(REASONING, item.clone());
}

/// Keeps a tool search item to send back with the turn; the tools a `tool_search_output`
/// loaded (functions, or namespaces of them) are its references.
fn keep_search(core: &mut Core, item: &Value) {
    if str_at(item, "type") == Some("tool_search_output") {
        let tools = item.get("tools").and_then(Value::as_array).map(Vec::as_slice);
        for tool in tools.unwrap_or_default() {
            if let Some(name) = str_at(tool, "name") {
                core.extras.push(TOOL_REFERENCES, json!(name));
            }
        }
    }
    core.extras.push(SEARCH, item.clone());
}

/// Finishes from a response object's `status`.
fn finish_response(core: &mut Core, response: &Value, out: &mut Vec<StreamEvent>) {
    let finish = match str_at(response, "status") {
        Some(status @ "completed") => Finish::new(FinishReason::Stop, Some(status)),
        Some(status @ "incomplete") => {
            let reason = response.pointer("/incomplete_details/reason").and_then(Value::as_str);
            let canonical = match reason {
                Some("max_output_tokens") => FinishReason::Length,
                Some("content_filter") => FinishReason::ContentFilter,
                _ => FinishReason::Other,
            };
            Finish::new(canonical, Some(reason.unwrap_or(status)))
        }
        Some(status @ "failed") => {
            let error = response.get("error").unwrap_or(&Value::Null);
            core.problem(Problem::Provider(ProviderError::from_value(error)), out);
            Finish::new(FinishReason::Error, Some(status))
        }
        Some(status @ ("in_progress" | "queued")) => {
            Finish::new(FinishReason::Unfinished, Some(status))
        }
        Some(status) => Finish::new(FinishReason::Other, Some(status)),
        None => return,
    };
    core.finish(finish, out);
}

/// Stream state: which slot each output index and item id stands for.
#[derive(Debug, Default)]
struct ResponsesProtocol {
    by_output: HashMap<u64, usize>,
    by_item: HashMap<String, usize>,
}

impl ResponsesProtocol {
    fn lookup(&self, event: &Value) -> Option<usize> {
        str_at(event, "item_id").and_then(|id| self.by_item.get(id).copied()).or_else(|| {
            let index = event.get("output_index").and_then(Value::as_u64)?;
            self.by_output.get(&index).copied()
        })
    }

    fn lookup_or_open(&mut self, core: &mut Core, event: &Value, item: Option<&Value>) -> usize {
        let known = self.lookup(event).or_else(|| {
            let id = item.and_then(|item| str_at(item, "id"))?;
            self.by_item.get(id).copied()
        });
        if let Some(slot) = known {
            return slot;
        }
        let slot = core.open();
        if let Some(index) = event.get("output_index").and_then(Value::as_u64) {
            self.by_output.insert(index, slot);
        }
        let id = item.and_then(|item| str_at(item, "id")).or_else(|| str_at(event, "item_id"));
        if let Some(id) = id {
            self.by_item.insert(id.to_owned(), slot);
        }
        slot
    }

    /// A stream that announced no call item but ends in a response whose `output` holds calls
    /// (some proxies send only the final event): the calls are taken from there.
    fn reconcile(&mut self, core: &mut Core, response: &Value, out: &mut Vec<StreamEvent>) {
        if !self.by_output.is_empty() || !self.by_item.is_empty() {
            return;
        }
        let items = response.get("output").and_then(Value::as_array).map(Vec::as_slice);
        for item in items.unwrap_or_default() {
            if str_at(item, "type") == Some("function_call") {
                open_item(core, item, out);
            } else if is_client_search(item) {
                let slot = core.open();
                apply_search_item(core, slot, item, out);
            }
        }
    }
}

impl Protocol for ResponsesProtocol {
    fn on_frame(&mut self, core: &mut Core, frame: Frame, out: &mut Vec<StreamEvent>) {
        let Some(event) = payload(core, &frame.data, out) else { return };
        let Some(kind) = str_at(&event, "type").or(frame.event.as_deref()) else {
            core.problem(
                Problem::UnexpectedPayload { expected: "a Responses event with a `type`" },
                out,
            );
            return;
        };
        core.recognised += 1;
        let item = event.get("item");
        let is_call = item.and_then(|item| str_at(item, "type")) == Some("function_call");
        let is_search = item.is_some_and(is_client_search);
        match kind {
            "response.output_item.added" | "response.output_item.done" if is_call => {
                let slot = self.lookup_or_open(core, &event, item);
                apply_item(core, slot, item.unwrap_or(&Value::Null), out);
            }
            "response.output_item.added" | "response.output_item.done" if is_search => {
                let slot = self.lookup_or_open(core, &event, item);
                apply_search_item(core, slot, item.unwrap_or(&Value::Null), out);
            }
            "response.output_item.done" => match item.and_then(|item| str_at(item, "type")) {
                Some("reasoning") => keep_reasoning(core, item.unwrap_or(&Value::Null)),
                Some("tool_search_call" | "tool_search_output") => {
                    keep_search(core, item.unwrap_or(&Value::Null));
                }
                Some("program" | "program_output") => {
                    core.extras.push(PROGRAMS, item.cloned().unwrap_or_default());
                }
                _ => {}
            },
            "response.function_call_arguments.delta" => {
                let slot = self.lookup_or_open(core, &event, None);
                core.push_args(slot, str_at(&event, "delta").unwrap_or_default(), out);
            }
            "response.function_call_arguments.done" => {
                let slot = self.lookup_or_open(core, &event, None);
                // A namespaced function's bare name: its item gave the full one.
                if let Some(name) = str_at(&event, "name")
                    && !core
                        .name_of(slot)
                        .is_some_and(|known| known.ends_with(&format!("__{name}")))
                {
                    core.push_name(slot, name, out);
                }
                if let Some(arguments) = str_at(&event, "arguments") {
                    core.replace_args(slot, arguments, out);
                }
            }
            "response.output_text.delta" => {
                core.text(str_at(&event, "delta").unwrap_or_default(), out)
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                if let Some(response) = event.get("response") {
                    self.reconcile(core, response, out);
                    read_usage(core, response, out);
                    finish_response(core, response, out);
                }
            }
            "error" => {
                let error = event.get("error").unwrap_or(&event);
                core.problem(Problem::Provider(ProviderError::from_value(error)), out);
                core.finish(Finish::new(FinishReason::Error, Some("error")), out);
            }
            _ => {}
        }
    }
}
