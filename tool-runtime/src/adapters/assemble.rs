//! Assembling calls from fragments, shared by every decoder, streamed or not.
//!
//! Each call the model starts gets a slot. Fragments append to it (argument text is only ever
//! appended, never re-parsed); the arguments are parsed once, when the turn's finish arrives.
//! Finishing finalises the slots opened since the last finish, so a stream holding two turns
//! (a second Anthropic `message_start`) keeps both.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::conversation::{
    ArgumentsProblem, CallArguments, Decoded, Extras, Finish, FinishReason, IdOrigin, Limit,
    Problem, StreamEvent, ToolCall, Usage, args,
};
use crate::spec::ToolSpec;

use super::limits::StreamLimits;

/// The name of the wrapper some OpenAI models invent to call several tools at once.
const PARALLEL_WRAPPER: &str = "multi_tool_use.parallel";

/// How decoders mint ids and which tools were declared.
///
/// ```
/// use tool_runtime::adapters::DecodeOptions;
///
/// let options = DecodeOptions::new().id_prefix("turn3_").declared_tools(["docs__search"]);
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    id_prefix: String,
    declared: Option<Arc<[String]>>,
    limits: StreamLimits,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self { id_prefix: "call_".to_owned(), declared: None, limits: StreamLimits::default() }
    }
}

impl DecodeOptions {
    /// Ids minted as `call_1`, `call_2`, ...; no declared tools known.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Mint ids as `<prefix>1`, `<prefix>2`, ... (use a per-turn prefix when ids must be unique
    /// across a conversation). Minted ids never collide with the provider's within a response.
    #[must_use]
    pub fn id_prefix(self, prefix: impl Into<String>) -> Self {
        Self { id_prefix: prefix.into(), ..self }
    }

    /// The tools the request declared. With this known, a call named `parallel` whose
    /// arguments hold `tool_uses` is unwrapped like `multi_tool_use.parallel` when no tool of
    /// that name was declared.
    #[must_use]
    pub fn declared_tools<I: IntoIterator<Item = S>, S: Into<String>>(self, names: I) -> Self {
        Self { declared: Some(names.into_iter().map(Into::into).collect()), ..self }
    }

    /// Caps on what one response may make the decoder hold (see [`StreamLimits`]).
    #[must_use]
    pub fn limits(self, limits: StreamLimits) -> Self {
        Self { limits, ..self }
    }

    /// The caps in force.
    #[must_use]
    pub fn stream_limits(&self) -> StreamLimits {
        self.limits
    }

    /// [`DecodeOptions::declared_tools`] from specs.
    #[must_use]
    pub fn declared_specs(self, specs: &[&ToolSpec]) -> Self {
        self.declared_tools(specs.iter().map(|spec| spec.name().to_owned()))
    }

    fn is_wrapper(&self, name: &str) -> bool {
        let declared = |name: &str| {
            self.declared.as_ref().is_some_and(|names| names.iter().any(|n| n == name))
        };
        match name {
            PARALLEL_WRAPPER => !declared(PARALLEL_WRAPPER),
            "parallel" => self.declared.is_some() && !declared("parallel"),
            _ => false,
        }
    }
}

/// One call being assembled.
#[derive(Debug, Default)]
struct Slot {
    id: Option<String>,
    origin: Option<IdOrigin>,
    provider_id: Option<String>,
    name: String,
    args: String,
    object: Option<Value>,
    extras: Extras,
    started: bool,
    emitted: usize,
    /// The call's arguments were never seen complete (its message was cut off).
    cut: bool,
}

/// The state of one decoding: calls being assembled, text, finish and problems.
#[derive(Debug)]
pub(crate) struct Core {
    options: DecodeOptions,
    slots: Vec<Slot>,
    ids: HashSet<String>,
    /// The latest slot each provider id was given to.
    by_provider_id: HashMap<String, usize>,
    /// The next suffix to try when re-minting each id.
    suffixes: HashMap<String, usize>,
    minted: usize,
    finalised: usize,
    calls: Vec<ToolCall>,
    text: String,
    finish: Option<Finish>,
    problems: Vec<Problem>,
    /// Response-level extras.
    pub(crate) extras: Extras,
    /// How many payloads the protocol recognised.
    pub(crate) recognised: usize,
    usage: Option<Usage>,
    /// A limit was exceeded: everything after it is ignored.
    halted: bool,
    /// Events raised where no event list was at hand (opening a call), for the session to
    /// pass on.
    deferred: Vec<StreamEvent>,
}

impl Core {
    pub(crate) fn new(options: DecodeOptions) -> Self {
        Self {
            options,
            slots: Vec::new(),
            ids: HashSet::new(),
            by_provider_id: HashMap::new(),
            suffixes: HashMap::new(),
            minted: 0,
            finalised: 0,
            calls: Vec::new(),
            text: String::new(),
            finish: None,
            problems: Vec::new(),
            extras: Extras::new(),
            recognised: 0,
            usage: None,
            halted: false,
            deferred: Vec::new(),
        }
    }

    /// Token counts the provider reported; a count left out keeps its earlier value (Anthropic
    /// reports input at the start and output at the end). Reports the running total.
    pub(crate) fn usage(
        &mut self,
        input: Option<u64>,
        output: Option<u64>,
        out: &mut Vec<StreamEvent>,
    ) {
        if input.is_none() && output.is_none() {
            return;
        }
        let usage = self.usage.get_or_insert_with(Usage::default);
        if let Some(tokens) = input {
            usage.input_tokens = tokens;
        }
        if let Some(tokens) = output {
            usage.output_tokens = tokens;
        }
        out.push(StreamEvent::Usage(*usage));
    }

    /// Records a problem and reports it. A limit problem (or one problem too many) halts the
    /// decoding: the turn ends as an error and nothing after it is read.
    pub(crate) fn problem(&mut self, problem: Problem, out: &mut Vec<StreamEvent>) {
        if self.halted {
            return;
        }
        let limit = self.options.limits.get(Limit::Problems);
        let problem = if self.problems.len() >= limit {
            Problem::LimitExceeded { limit: Limit::Problems, value: limit }
        } else {
            problem
        };
        let halts = matches!(problem, Problem::LimitExceeded { .. });
        out.push(StreamEvent::Problem(problem.clone()));
        self.problems.push(problem);
        if halts {
            self.halt(out);
        }
    }

    /// The caps in force.
    pub(crate) fn limits(&self) -> StreamLimits {
        self.options.limits
    }

    /// Reports that `limit` was exceeded and halts.
    pub(crate) fn exceeded(&mut self, limit: Limit, out: &mut Vec<StreamEvent>) {
        let value = self.options.limits.get(limit);
        self.problem(Problem::LimitExceeded { limit, value }, out);
    }

    /// Passes on the events raised where no event list was at hand.
    pub(crate) fn take_deferred(&mut self, out: &mut Vec<StreamEvent>) {
        out.append(&mut self.deferred);
    }

    /// Whether a limit halted the decoding.
    pub(crate) fn halted(&self) -> bool {
        self.halted
    }

    fn halt(&mut self, out: &mut Vec<StreamEvent>) {
        for slot in self.finalised..self.slots.len() {
            self.slots[slot].cut = true;
        }
        self.halted = true;
        self.finish_turn(Finish::new(FinishReason::Error, Some("limit_exceeded")), out);
    }

    /// The call in `slot` lost the rest of its arguments (its message was cut off): it is
    /// reported and never becomes ready.
    pub(crate) fn cut(&mut self, slot: usize) {
        if let Some(slot) = self.slots.get_mut(slot).filter(|_| slot >= self.finalised) {
            slot.cut = true;
        }
    }

    /// The stream said it is over without saying why: calls of the open turn that received a
    /// name but no argument text at all were cut right after their name.
    pub(crate) fn cut_nameonly(&mut self) {
        for slot in &mut self.slots[self.finalised..] {
            if slot.args.is_empty() && slot.object.is_none() {
                slot.cut = true;
            }
        }
    }

    /// Appends model text, up to [`Limit::TextBytes`].
    pub(crate) fn text(&mut self, delta: &str, out: &mut Vec<StreamEvent>) {
        if self.halted {
            return;
        }
        if self.text.len().saturating_add(delta.len()) > self.options.limits.get(Limit::TextBytes) {
            self.exceeded(Limit::TextBytes, out);
            return;
        }
        if !delta.is_empty() {
            self.text.push_str(delta);
            out.push(StreamEvent::TextDelta(delta.to_owned()));
        }
    }

    /// Whether a finish has been seen.
    pub(crate) fn finished(&self) -> bool {
        self.finish.is_some()
    }

    /// Starts a new call and returns its slot.
    pub(crate) fn open(&mut self) -> usize {
        if self.slots.len() >= self.options.limits.get(Limit::Calls) && !self.halted {
            // The slot is still handed out (callers index by it); the halt marks it cut.
            self.slots.push(Slot::default());
            let mut events = Vec::new();
            self.exceeded(Limit::Calls, &mut events);
            self.deferred.append(&mut events);
            return self.slots.len() - 1;
        }
        self.slots.push(Slot::default());
        self.slots.len() - 1
    }

    /// Whether `slot` may still change; reports a late fragment otherwise.
    fn live(&mut self, slot: usize, out: &mut Vec<StreamEvent>) -> bool {
        if self.halted {
            return false;
        }
        if slot < self.finalised {
            self.problem(Problem::LateFragment { index: slot }, out);
            return false;
        }
        slot < self.slots.len()
    }

    /// The id the provider gave `slot`, if any.
    pub(crate) fn provider_id(&self, slot: usize) -> Option<&str> {
        self.slots.get(slot).and_then(|slot| slot.provider_id.as_deref())
    }

    /// The latest slot the provider gave `id`.
    pub(crate) fn slot_with_id(&self, id: &str) -> Option<usize> {
        self.by_provider_id.get(id).copied()
    }

    /// Gives `slot` the provider's id, re-minting it when an earlier call already has it; an
    /// id over `call_id_bytes` ends the turn.
    pub(crate) fn set_id(&mut self, slot: usize, id: &str, out: &mut Vec<StreamEvent>) {
        if id.is_empty() || !self.live(slot, out) || self.slots[slot].provider_id.is_some() {
            return;
        }
        // Checked before the id is kept anywhere: it would reach events and records as it is.
        if id.len() > self.options.limits.get(Limit::CallIdBytes) {
            self.exceeded(Limit::CallIdBytes, out);
            return;
        }
        self.slots[slot].provider_id = Some(id.to_owned());
        self.by_provider_id.insert(id.to_owned(), slot);
        if self.slots[slot].started {
            return;
        }
        let (assigned, origin) = if self.ids.contains(id) {
            (self.unique(id), IdOrigin::Reminted(id.to_owned()))
        } else {
            (id.to_owned(), IdOrigin::Provider)
        };
        self.ids.insert(assigned.clone());
        self.slots[slot].id = Some(assigned);
        self.slots[slot].origin = Some(origin);
    }

    /// A fragment of the name: a repeat of the whole name is ignored, a longer name that
    /// starts with it replaces it, anything else is appended.
    pub(crate) fn push_name(&mut self, slot: usize, fragment: &str, out: &mut Vec<StreamEvent>) {
        if fragment.is_empty() || !self.live(slot, out) {
            return;
        }
        let name = &mut self.slots[slot].name;
        if name.as_str() == fragment {
            return;
        }
        let grows_to = if !name.is_empty() && fragment.starts_with(name.as_str()) {
            fragment.len()
        } else {
            name.len().saturating_add(fragment.len())
        };
        if grows_to > self.options.limits.get(Limit::NameBytes) {
            self.exceeded(Limit::NameBytes, out);
            return;
        }
        let name = &mut self.slots[slot].name;
        if !name.is_empty() && fragment.starts_with(name.as_str()) {
            fragment.clone_into(name);
        } else {
            name.push_str(fragment);
        }
    }

    /// More argument text.
    pub(crate) fn push_args(&mut self, slot: usize, fragment: &str, out: &mut Vec<StreamEvent>) {
        if !self.live(slot, out) {
            return;
        }
        if self.slots[slot].args.len().saturating_add(fragment.len())
            > self.options.limits.get(Limit::ArgumentBytes)
        {
            self.exceeded(Limit::ArgumentBytes, out);
            return;
        }
        self.slots[slot].args.push_str(fragment);
        if self.slots[slot].started {
            self.flush(slot, out);
        } else if !fragment.is_empty() && !self.slots[slot].name.is_empty() {
            self.start(slot, out);
        }
    }

    /// The full argument text, as a provider restates it at the end (OpenAI Responses
    /// `arguments.done`): authoritative over the deltas.
    pub(crate) fn replace_args(&mut self, slot: usize, full: &str, out: &mut Vec<StreamEvent>) {
        if !self.live(slot, out) || self.slots[slot].args == full {
            return;
        }
        match full.strip_prefix(self.slots[slot].args.as_str()) {
            Some(rest) => {
                let rest = rest.to_owned();
                self.push_args(slot, &rest, out);
            }
            None if full.len() > self.options.limits.get(Limit::ArgumentBytes) => {
                self.exceeded(Limit::ArgumentBytes, out);
            }
            None => {
                full.clone_into(&mut self.slots[slot].args);
                self.slots[slot].emitted = self.slots[slot].emitted.min(full.len());
            }
        }
    }

    /// Arguments given as a JSON value. `announce` reports them as one argument delta.
    pub(crate) fn set_object(
        &mut self,
        slot: usize,
        value: Value,
        announce: bool,
        out: &mut Vec<StreamEvent>,
    ) {
        if !self.live(slot, out) {
            return;
        }
        if announce && !self.slots[slot].name.is_empty() {
            self.start(slot, out);
            if self.slots[slot].started {
                out.push(StreamEvent::ArgumentsDelta { index: slot, delta: value.to_string() });
            }
        }
        self.slots[slot].object = Some(value);
    }

    /// The name `slot` has so far.
    pub(crate) fn name_of(&self, slot: usize) -> Option<&str> {
        self.slots.get(slot).map(|slot| slot.name.as_str())
    }

    /// The provider extras of `slot`.
    pub(crate) fn extras_mut(&mut self, slot: usize) -> Option<&mut Extras> {
        if slot < self.finalised {
            return None;
        }
        self.slots.get_mut(slot).map(|slot| &mut slot.extras)
    }

    /// `<base>_2`, `<base>_3`, ...: the first that is free. Each base remembers where it got
    /// to, so many duplicates of one id cost linear time.
    fn unique(&mut self, base: &str) -> String {
        let mut next = self.suffixes.get(base).copied().unwrap_or(2);
        let id = loop {
            let id = format!("{base}_{next}");
            next += 1;
            if !self.ids.contains(&id) {
                break id;
            }
        };
        self.suffixes.insert(base.to_owned(), next);
        id
    }

    /// `candidate`, or a variant of it when taken; reserved either way.
    fn claim(&mut self, candidate: String) -> String {
        let id = if self.ids.contains(&candidate) { self.unique(&candidate) } else { candidate };
        self.ids.insert(id.clone());
        id
    }

    fn mint(&mut self) -> String {
        loop {
            self.minted += 1;
            let id = format!("{}{}", self.options.id_prefix, self.minted);
            if !self.ids.contains(&id) {
                self.ids.insert(id.clone());
                return id;
            }
        }
    }

    fn start(&mut self, slot: usize, out: &mut Vec<StreamEvent>) {
        // A `multi_tool_use.parallel` call is announced as the calls it stands for, when it
        // is finalised: its own id would get no result.
        if self.slots[slot].started || self.options.is_wrapper(&self.slots[slot].name) {
            return;
        }
        if self.slots[slot].id.is_none() {
            let id = self.mint();
            self.slots[slot].id = Some(id);
            self.slots[slot].origin = Some(IdOrigin::Minted);
        }
        let slot_ref = &mut self.slots[slot];
        slot_ref.started = true;
        out.push(StreamEvent::CallStarted {
            index: slot,
            id: slot_ref.id.clone().unwrap_or_default(),
            name: slot_ref.name.clone(),
        });
        self.flush(slot, out);
    }

    fn flush(&mut self, slot: usize, out: &mut Vec<StreamEvent>) {
        let slot_ref = &mut self.slots[slot];
        if let Some(delta) = slot_ref.args.get(slot_ref.emitted..).filter(|rest| !rest.is_empty()) {
            out.push(StreamEvent::ArgumentsDelta { index: slot, delta: delta.to_owned() });
        }
        slot_ref.emitted = slot_ref.args.len();
    }

    /// The provider said the turn is over: finalises the calls opened since the last finish.
    /// `Stop` with calls becomes `ToolCalls`.
    pub(crate) fn finish(&mut self, finish: Finish, out: &mut Vec<StreamEvent>) {
        if !self.halted {
            self.finish_turn(finish, out);
        }
    }

    fn finish_turn(&mut self, finish: Finish, out: &mut Vec<StreamEvent>) {
        let mut finish = finish;
        if !self.halted
            && let Some(limit) = self.split_over_limit()
        {
            // As if the calls a `multi_tool_use.parallel` call stands for had come one by one.
            let value = self.options.limits.get(limit);
            let problem = Problem::LimitExceeded { limit, value };
            out.push(StreamEvent::Problem(problem.clone()));
            self.problems.push(problem);
            for slot in self.finalised..self.slots.len() {
                self.slots[slot].cut = true;
            }
            self.halted = true;
            finish = Finish::new(FinishReason::Error, Some("limit_exceeded"));
        }
        if finish.reason == FinishReason::Stop && !self.slots.is_empty() {
            finish.reason = FinishReason::ToolCalls;
        }
        // Marked finalised first: a problem too many while finalising halts the decoding, and
        // the halt must not finalise these slots a second time.
        let open = self.finalised..self.slots.len();
        self.finalised = self.slots.len();
        let halted = self.halted;
        for slot in open {
            self.finalise(slot, &finish, out);
        }
        if self.halted && !halted {
            // That halt ended the turn as an error; its finish stands.
            return;
        }
        out.push(StreamEvent::Finish(finish.clone()));
        self.finish = Some(finish);
    }

    fn finalise(&mut self, slot: usize, finish: &Finish, out: &mut Vec<StreamEvent>) {
        if self.slots[slot].cut && !self.halted {
            self.problem(Problem::CutCall { index: slot }, out);
        }
        if !self.slots[slot].name.is_empty() {
            self.start(slot, out);
        } else {
            self.problem(Problem::Unnamed { index: slot }, out);
        }
        let id = match self.slots[slot].id.clone() {
            Some(id) => id,
            None => {
                let id = self.mint();
                self.slots[slot].origin = Some(IdOrigin::Minted);
                id
            }
        };
        let taken = std::mem::take(&mut self.slots[slot]);
        let announced = taken.started;
        let raw_arguments: Arc<str> = match &taken.object {
            Some(object) if taken.args.trim().is_empty() => object.to_string().into(),
            _ => taken.args.as_str().into(),
        };
        let arguments = match taken.object {
            _ if taken.cut => {
                CallArguments::Invalid { raw: taken.args, problem: ArgumentsProblem::Cut }
            }
            Some(object) if taken.args.trim().is_empty() => args::from_value(object),
            _ => args::from_text(taken.args),
        };
        let call = ToolCall {
            id,
            complete: finish.allows_execution()
                && !self.halted
                && !taken.name.is_empty()
                && !taken.cut,
            name: taken.name,
            arguments,
            id_origin: taken.origin.unwrap_or(IdOrigin::Minted),
            extras: taken.extras,
            raw_arguments: Some(raw_arguments),
        };
        let calls = self.unwrap_parallel(call);
        for call in calls {
            if !announced && !call.name.is_empty() {
                // A wrapper's calls: each starts under the id its result will carry.
                out.push(StreamEvent::CallStarted {
                    index: slot,
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                let text = call.arguments.to_json_text();
                if !text.is_empty() {
                    out.push(StreamEvent::ArgumentsDelta { index: slot, delta: text });
                }
            }
            if call.complete {
                out.push(StreamEvent::CallReady { index: slot, call: call.clone() });
            }
            self.calls.push(call);
        }
    }

    /// The limit the calls of the open turn go over once each `multi_tool_use.parallel` call
    /// is counted as the calls it stands for (their number, or one of their names), if any.
    /// Only a wrapper's arguments are read (a second time): no other call changes the count.
    fn split_over_limit(&self) -> Option<Limit> {
        let open = &self.slots[self.finalised..];
        if !open.iter().any(|slot| self.options.is_wrapper(&slot.name)) {
            return None;
        }
        let name_bytes = self.options.limits.get(Limit::NameBytes);
        let mut count = 0_usize;
        for slot in open {
            let parsed;
            let arguments = match &slot.object {
                _ if !self.options.is_wrapper(&slot.name) || slot.cut => None,
                Some(object) if slot.args.trim().is_empty() => Some(object),
                _ => {
                    parsed = crate::schema::parse_json(slot.args.as_bytes()).ok();
                    parsed.as_ref()
                }
            };
            match arguments.and_then(|arguments| arguments.get("tool_uses")) {
                Some(Value::Array(uses)) if !uses.is_empty() => {
                    let name = |item: &Value| {
                        let name = item.get("recipient_name").and_then(Value::as_str);
                        name.map_or(0, |name| name.strip_prefix("functions.").unwrap_or(name).len())
                    };
                    if uses.iter().any(|item| name(item) > name_bytes) {
                        return Some(Limit::NameBytes);
                    }
                    count = count.saturating_add(uses.len());
                }
                _ => count = count.saturating_add(1),
            }
        }
        (self.calls.len().saturating_add(count) > self.options.limits.get(Limit::Calls))
            .then_some(Limit::Calls)
    }

    /// Splits a `multi_tool_use.parallel` call into the calls it stands for.
    fn unwrap_parallel(&mut self, call: ToolCall) -> Vec<ToolCall> {
        if !self.options.is_wrapper(&call.name) {
            return vec![call];
        }
        let uses = match call.arguments.value().and_then(|args| args.get("tool_uses")) {
            Some(Value::Array(uses)) if !uses.is_empty() => uses.clone(),
            _ => return vec![call],
        };
        let mut calls = Vec::with_capacity(uses.len());
        for (n, item) in uses.into_iter().enumerate() {
            let name = item.get("recipient_name").and_then(Value::as_str).unwrap_or_default();
            let name = name.strip_prefix("functions.").unwrap_or(name).to_owned();
            let raw_arguments: Arc<str> =
                item.get("parameters").map_or_else(String::new, Value::to_string).into();
            let arguments = item
                .get("parameters")
                .cloned()
                .map_or(CallArguments::Parsed(Value::Object(Map::new())), args::from_value);
            let id = self.claim(format!("{}_{}", call.id, n + 1));
            calls.push(ToolCall {
                id,
                complete: call.complete && !name.is_empty(),
                name,
                arguments,
                id_origin: IdOrigin::Minted,
                extras: call.extras.clone(),
                raw_arguments: Some(raw_arguments),
            });
        }
        calls
    }

    /// The input ended: calls still open are cut off, and a missing finish is reported.
    ///
    /// The assembled response is moved out (a large call's argument tree is not copied), so
    /// this is called once; the session keeps what it returns.
    pub(crate) fn end(&mut self, out: &mut Vec<StreamEvent>) -> Decoded {
        if !self.halted && (self.finish.is_none() || self.finalised < self.slots.len()) {
            self.problem(Problem::Unfinished, out);
            self.finish(Finish::new(FinishReason::Unfinished, None), out);
        }
        if self.recognised == 0 && !self.halted {
            self.problem(Problem::NothingRecognised, out);
        }
        Decoded {
            calls: std::mem::take(&mut self.calls),
            text: std::mem::take(&mut self.text),
            finish: self.finish.clone().unwrap_or(Finish::new(FinishReason::Unfinished, None)),
            problems: std::mem::take(&mut self.problems),
            extras: std::mem::take(&mut self.extras),
            usage: self.usage,
        }
    }
}
