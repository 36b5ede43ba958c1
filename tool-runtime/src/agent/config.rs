//! [`Agent`] and how it is configured ([`AgentConfig`]); the run it drives is in `run`, each
//! turn's steps in `turn`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ChatModel;
use super::deferred::StateKey;
use crate::adapters::ToolChoice;
use crate::catalog::select::{Bm25Selector, DEFAULT_TOP_K, ToolSelector};
use crate::runner::ToolRunner;
use crate::spec::ToolEffect;
use crate::store::RunStore;

/// How an [`Agent`] runs. Start from `AgentConfig::default()` and change what you need:
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::agent::AgentConfig;
/// use tool_runtime::prelude::*;
///
/// let config = AgentConfig {
///     max_iterations: 4,
///     run_alone: vec![ToolEffect::StateChange, ToolEffect::ExternalSideEffect],
///     budget: Some(Duration::from_secs(60)),
///     ..AgentConfig::default()
/// };
/// assert_eq!(config.max_concurrent, 4);
/// ```
///
/// Or read it from configuration, as a policy is: any serde format (JSON, TOML, YAML), every
/// key optional (a missing one keeps its default), durations in milliseconds (`budget_ms`,
/// `state_ttl_ms`), and a key it does not know refused with its name, so a typo is an error
/// rather than a setting silently lost:
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::adapters::ChoiceMode;
/// use tool_runtime::agent::AgentConfig;
///
/// let config = AgentConfig::from_json(r#"{
///     "max_iterations": 8,
///     "run_alone": ["state_change"],
///     "budget_ms": 90000,
///     "choice": {"mode": "required", "parallel": false},
///     "selection": {"top_k": 12, "always": ["core__time"]}
/// }"#).unwrap();
/// assert_eq!(config.budget, Some(Duration::from_secs(90)));
/// assert_eq!(config.choice.mode, ChoiceMode::Required);
/// assert_eq!(config.selection.unwrap().top_k, 12);
///
/// let typo = AgentConfig::from_json(r#"{"max_iteration": 8}"#).unwrap_err();
/// assert!(typo.to_string().contains("unknown field `max_iteration`"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Model turns that may call tools (default 6). When they are used up, the model is told
    /// so and asked once more with `tool_choice = none` for its answer.
    pub max_iterations: usize,
    /// Calls of one turn that run at the same time (default 4; 0 runs them one at a time).
    pub max_concurrent: usize,
    /// Calls of tools with these effects run alone, after the calls before them and before
    /// the calls after them (default: none).
    pub run_alone: Vec<ToolEffect>,
    /// Wall-clock budget of the whole run (default: none). In configuration: `budget_ms`.
    #[serde(rename = "budget_ms", with = "millis::optional")]
    pub budget: Option<Duration>,
    /// The tool choice of every turn but the last (default: auto).
    pub choice: ToolChoice,
    /// How long a run that waits stays resumable in the agent's store (default 7 days):
    /// from then on a resume is refused ([`StoreError::Expired`](crate::store::StoreError::Expired)),
    /// and [`RunStore::expire`] deletes it. In configuration: `state_ttl_ms`.
    #[serde(rename = "state_ttl_ms", with = "millis")]
    pub state_ttl: Duration,
    /// Whether the agent keeps an audit trail in its store (default `true`): with a store, it
    /// appends one [`AuditEntry`](crate::store::AuditEntry) per call it hands its runner (in
    /// one transaction when the run or resume ends, so one more write per run), refused calls
    /// included, holding the call's record and the call as the model sent it.
    pub audit: bool,
    /// How long each audit entry stays in the store after its call (default 30 days):
    /// [`RunStore::expire`] deletes it then. In configuration: `audit_ttl_ms`.
    #[serde(rename = "audit_ttl_ms", with = "millis")]
    pub audit_ttl: Duration,
    /// The largest sealed state the agent stores or reads back from its store (default
    /// 16 MiB): a larger one is not stored, and one read back is refused before it is parsed
    /// ([`StoreError::TooLarge`](crate::store::StoreError::TooLarge)).
    pub max_state_bytes: usize,
    /// Offer each turn only the tools a BM25 selector over the runner's catalog picks for the
    /// latest user message (default: none, every visible tool is offered). Applied by
    /// [`Agent::with_config`]; [`Agent::with_selector`] sets any selector instead.
    pub selection: Option<SelectionSettings>,
    /// Whether each request re-selects the tools it offers from scratch (default `false`).
    ///
    /// By default, with a selector, the tools offered in a conversation only grow: each
    /// request offers what the selector picked for every request of the conversation so far,
    /// in the order first picked (by name within one request's picks, later picks appended).
    /// The tool array a request sends then begins with the array of the request before it,
    /// so every provider's prompt cache (keyed on the tool definitions, which come first)
    /// keeps hitting, and a model that was offered a tool can call it again later. Each run
    /// repeats the selection once per earlier request of its conversation (BM25 over the
    /// catalog: microseconds per request for hundreds of tools).
    ///
    /// With `reselect`, each request offers only what the selector picks for the latest
    /// request: fewer tools, but the array changes whenever the picks do. Every provider's
    /// prompt cache then misses from the tools on (the whole conversation is re-read at full
    /// price), and Anthropic's newest models may refuse a changed tool array after a thinking
    /// block. Within one run the array never changes either way (the request does not).
    pub reselect: bool,
    /// The most tools a conversation's growing offer holds (default 64): when a request's
    /// picks would take it past this, the offer starts again from that request's picks alone,
    /// one prompt-cache miss in a long conversation rather than hundreds of tools sent with
    /// every request. Set it well above one request's picks (`top_k` plus the tools always
    /// offered): at or below them, every request starts the offer again. Not used with
    /// [`reselect`](Self::reselect).
    pub max_offered: usize,
    /// Whether each [`AgentEvent::ToolCallRunning`](super::AgentEvent::ToolCallRunning)
    /// carries the arguments the tool runs with (default `false`: arguments are not redacted
    /// and can be sensitive, so events carry them only when asked, as spans do).
    pub arguments_in_events: bool,
    /// Names a model may call a tool by, and the tool each stands for (default: none): a model
    /// or a prompt's example that calls `get_weather` for `weather__get_weather`. Only the
    /// names listed here are taken, never a guess; the call runs, is recorded and is counted
    /// under the tool's real name, and its result goes back under the name the model used. A
    /// name that is both an alias and a tool of the catalog is ambiguous: its calls are refused
    /// (`unavailable`), naming both.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub aliases: BTreeMap<String, String>,
    /// Let the model find its tools by searching (default: off; see [`ToolSearchSettings`]).
    /// Each request offers the search tool ([`SEARCH_TOOL`](crate::adapters::SEARCH_TOOL)),
    /// the tools named in [`always`](ToolSearchSettings::always) and those the model's searches
    /// found so far; the agent answers each search with its selector (the one
    /// [`selection`](Self::selection) or [`Agent::with_selector`] sets, otherwise a
    /// [`Bm25Selector`] over the runner's catalog) over the visible tools not offered yet. A
    /// call of a tool no search found is refused (`unavailable`) and not run. Per-request
    /// selection ([`selection`](Self::selection), [`reselect`](Self::reselect)) does not apply
    /// then: the model chooses what to load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_search: Option<ToolSearchSettings>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_iterations: 6,
            max_concurrent: 4,
            run_alone: Vec::new(),
            budget: None,
            choice: ToolChoice::auto(),
            state_ttl: Duration::from_secs(7 * 24 * 60 * 60),
            audit: true,
            audit_ttl: Duration::from_secs(30 * 24 * 60 * 60),
            max_state_bytes: 16 << 20,
            selection: None,
            reselect: false,
            max_offered: 64,
            arguments_in_events: false,
            aliases: BTreeMap::new(),
            tool_search: None,
        }
    }
}

impl AgentConfig {
    /// Reads a configuration from JSON (see the example above; other formats through serde).
    ///
    /// # Errors
    ///
    /// The parse error, naming the unknown or malformed key.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }
}

/// How the agent picks the tools each turn offers ([`AgentConfig::selection`]): a
/// [`Bm25Selector`] with these settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelectionSettings {
    /// How many of the best-matching tools are offered (default 16, as
    /// [`Bm25Selector`]'s).
    pub top_k: usize,
    /// Tools offered every turn, matched or not (by name).
    pub always: Vec<String>,
}

impl Default for SelectionSettings {
    fn default() -> Self {
        Self { top_k: DEFAULT_TOP_K, always: Vec::new() }
    }
}

/// The model finds its tools by searching ([`AgentConfig::tool_search`]).
///
/// ```
/// use tool_runtime::agent::{AgentConfig, ToolSearchSettings};
///
/// let config = AgentConfig::from_json(r#"{"tool_search": {"always": ["core__time"], "max_results": 3}}"#)?;
/// let search = config.tool_search.unwrap();
/// assert_eq!(search.always, ["core__time"]);
/// assert_eq!(search.max_results, 3);
/// assert_eq!(search.description, ToolSearchSettings::default().description);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolSearchSettings {
    /// Tools offered from the first request on, without a search (by name).
    pub always: Vec<String>,
    /// The most tools one search finds (default 5).
    pub max_results: usize,
    /// What the model is told the search tool does.
    pub description: String,
}

impl Default for ToolSearchSettings {
    fn default() -> Self {
        Self {
            always: Vec::new(),
            max_results: 5,
            description: "Search the tools you can use for the ones that do what you need, \
                described in a few words. The tools found can be called from then on; call only \
                tools you were offered or found."
                .to_owned(),
        }
    }
}

/// Durations as whole milliseconds, in configuration.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        duration: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_millis)
    }

    pub(super) mod optional {
        use std::time::Duration;

        use serde::{Deserialize, Deserializer, Serializer};

        pub(in super::super) fn serialize<S: Serializer>(
            duration: &Option<Duration>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match duration {
                Some(duration) => super::serialize(duration, serializer),
                None => serializer.serialize_none(),
            }
        }

        pub(in super::super) fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<Duration>, D::Error> {
            Ok(Option::<u64>::deserialize(deserializer)?.map(Duration::from_millis))
        }
    }
}

/// The tool loop: model -> tool calls -> runner -> results -> model, until the model answers.
///
/// Every call goes through [`ToolRunner::exec`]: policy, approval, validation, budgets and
/// redaction apply exactly as they do everywhere. Calls whose arguments are not JSON or that
/// name an unknown tool get an error result the model can correct itself from; calls of a turn
/// the provider cut off are never run. See the [module docs](super) for an example.
///
/// Results go back whole: every part of a call's redacted output (text, images, audio, files)
/// travels in [`Message::ToolResults`](super::Message::ToolResults) to the model, whose adapter encodes it in the provider's
/// blocks ([`Adapter::result_messages`](crate::adapters::Adapter::result_messages)); the
/// details stay with the application, and [`AgentEvent::ToolCallResult`](super::AgentEvent::ToolCallResult) carries the parts as
/// [`PartSummary`](crate::content::PartSummary)s (digests, not bytes). A part the model's
/// provider cannot carry (audio for Anthropic) reaches the model as a note naming what was
/// left out, and the run goes on (see the [adapters](crate::adapters) on results).
#[derive(Debug, Clone)]
pub struct Agent {
    pub(super) model: Arc<dyn ChatModel>,
    pub(super) runner: ToolRunner,
    pub(super) config: AgentConfig,
    pub(super) key: Option<StateKey>,
    /// Keys being rotated out: states they sealed are still read.
    pub(super) retired: Vec<StateKey>,
    pub(super) store: Option<Arc<dyn RunStore>>,
    /// Picks the tools each turn offers; `None` offers every visible tool.
    pub(super) selector: Option<Arc<dyn ToolSelector>>,
}

impl Agent {
    /// A loop over `model` whose calls go through `runner`, with the default configuration.
    pub fn new(model: Arc<dyn ChatModel>, runner: ToolRunner) -> Self {
        Self {
            model,
            runner,
            config: AgentConfig::default(),
            key: None,
            retired: Vec::new(),
            store: None,
            selector: None,
        }
    }

    /// Offers each model turn the tools `selector` picks out of the visible ones, rather than
    /// all of them; the tools are picked for the latest user message. Which tools each turn
    /// offered is reported as [`AgentEvent::ToolsOffered`](super::AgentEvent::ToolsOffered) and in [`AgentDone::offered`](super::AgentDone::offered). A
    /// call of a visible tool the turn did not offer (a model that remembers it from earlier
    /// turns) still runs: selection saves tokens, policy decides what may run.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tool_runtime::agent::{Agent, ScriptedModel};
    /// use tool_runtime::catalog::ToolCatalog;
    /// use tool_runtime::catalog::select::Bm25Selector;
    /// use tool_runtime::runner::ToolRunner;
    ///
    /// let catalog = Arc::new(ToolCatalog::builder().build().unwrap());
    /// let selector = Bm25Selector::new(catalog.as_ref()).top_k(20);
    /// let agent = Agent::new(Arc::new(ScriptedModel::new(vec![])), ToolRunner::builder(catalog).build())
    ///     .with_selector(Arc::new(selector));
    /// # let _ = agent;
    /// ```
    #[must_use]
    pub fn with_selector(mut self, selector: Arc<dyn ToolSelector>) -> Self {
        self.selector = Some(selector);
        self
    }

    /// The application key that seals the [`RunState`](super::RunState) of a run that stops waiting, and
    /// checks the seal of a state handed to [`resume`](Self::resume). Without one, no state
    /// can be resumed ([`ResumeError::NoKey`](super::deferred::ResumeError::NoKey)).
    #[must_use]
    pub fn with_state_key(mut self, key: StateKey) -> Self {
        self.key = Some(key);
        self
    }

    /// A key being rotated out: states it sealed are still resumed, new ones are sealed with
    /// the [state key](Self::with_state_key). Call it once per retired key. To rotate, deploy
    /// the new key with the old one retired, and drop the old one once the states it sealed
    /// have expired ([`AgentConfig::state_ttl`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tool_runtime::agent::deferred::StateKey;
    /// use tool_runtime::agent::{Agent, ScriptedModel};
    /// use tool_runtime::prelude::*;
    ///
    /// let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap()).build();
    /// let agent = Agent::new(Arc::new(ScriptedModel::new([])), runner)
    ///     .with_state_key(StateKey::new(*b"this year's secret of 32 bytes!!"))
    ///     .with_retired_state_key(StateKey::new(*b"last year's secret of 32 bytes!!"));
    /// # let _ = agent;
    /// ```
    #[must_use]
    pub fn with_retired_state_key(mut self, key: StateKey) -> Self {
        self.retired.push(key);
        self
    }

    /// The store that keeps the runs that wait and the ledger of their decided calls, shared
    /// by every agent (in every process) that may resume them. With one, a run that stops
    /// waiting is saved there (sealed, for [`AgentConfig::state_ttl`]); a resume spends the
    /// calls it decides there before it runs any of them, so no call runs twice; a run that
    /// ends is marked ended; and every run appends the audit entries of its calls there
    /// ([`AgentConfig::audit`]). Needed to resume
    /// ([`ResumeError::NoStore`](super::deferred::ResumeError::NoStore) without one): an
    /// [`InMemoryStore`](crate::store::InMemoryStore) within one process, a `SqliteStore` for
    /// the processes of one host, a `PostgresStore` for several hosts. See
    /// [`deferred`](super::deferred) for a guide.
    #[must_use]
    pub fn with_store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Replaces the configuration. One with [`selection`](AgentConfig::selection) also sets
    /// the selector: a [`Bm25Selector`] over the runner's catalog as it is now, with those
    /// settings (call [`with_selector`](Self::with_selector) after it for another).
    ///
    /// One with [`tool_search`](AgentConfig::tool_search) and no selector yet gets a
    /// [`Bm25Selector`] over the runner's catalog to answer the searches.
    #[must_use]
    pub fn with_config(mut self, config: AgentConfig) -> Self {
        if let Some(selection) = &config.selection {
            let selector = Bm25Selector::new(self.runner.catalog())
                .top_k(selection.top_k)
                .always(selection.always.iter().cloned());
            self.selector = Some(Arc::new(selector));
        }
        if let Some(search) = &config.tool_search
            && self.selector.is_none()
        {
            let selector = Bm25Selector::new(self.runner.catalog()).top_k(search.max_results);
            self.selector = Some(Arc::new(selector));
        }
        self.config = config;
        self
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }
}
