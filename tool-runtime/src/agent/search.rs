//! The model finds its tools by searching ([`AgentConfig::tool_search`]): what each request
//! offers (the tools always offered, then those found, in the order found), the searches the
//! agent answers with its selector, and the calls of tools no search found, refused.
//!
//! What was found lives in the conversation (each search's result names its finds,
//! [`ToolResult::found`]), so a run resumed in another process offers the same tools.

use std::collections::HashSet;

use serde_json::Value;

use super::config::ToolSearchSettings;
use super::{Agent, AgentEvent, Message};
use crate::adapters::{ClientSearch, SEARCH_TOOL, ToolCall, ToolResult};
use crate::catalog::VisibleTools;
use crate::runtime::{ExecError, ToolErrorCode, ToolInvocationContext};
use crate::schema::Shown;
use crate::spec::ToolSpec;

#[cfg(doc)]
use super::AgentConfig;

/// A run's tools under tool search: those always offered and those to find.
pub(super) struct Searchable<'v> {
    settings: &'v ToolSearchSettings,
    visible: &'v VisibleTools,
    always: Vec<&'v ToolSpec>,
    deferred: Vec<&'v ToolSpec>,
    deferred_names: HashSet<&'v str>,
    /// The hash of what the search adds to every request (its description and the tools to
    /// find), worked out once for the run: it is the same on every turn.
    digest: String,
}

impl<'v> Searchable<'v> {
    /// The visible tools split into those `settings` offers always and those to find.
    pub(super) fn new(settings: &'v ToolSearchSettings, visible: &'v VisibleTools) -> Self {
        let (always, deferred): (Vec<&ToolSpec>, Vec<&ToolSpec>) = visible
            .specs()
            .partition(|spec| settings.always.iter().any(|name| name == spec.name()));
        let deferred_names = deferred.iter().map(|spec| spec.name()).collect();
        let count = deferred.len().to_string();
        let parts = [SEARCH_TOOL, settings.description.as_str(), count.as_str()]
            .into_iter()
            .chain(deferred.iter().flat_map(|spec| [spec.name(), spec.spec_hash()]));
        let digest = crate::digest::hex(&crate::digest::parts_hash(parts));
        Self { settings, visible, always, deferred, deferred_names, digest }
    }

    /// The hash of the search's description and the tools to find (for the prompt hash of
    /// [`AgentEvent::ModelRequested`]).
    pub(super) fn digest(&self) -> &str {
        &self.digest
    }

    /// The search as a request carries it.
    pub(super) fn client_search(&self) -> ClientSearch<'_> {
        ClientSearch { description: &self.settings.description, deferred: &self.deferred }
    }

    /// What a request of `messages` offers: the tools always offered, then those found so
    /// far, in the order first found (so each request's tools begin with the last one's).
    pub(super) fn offered(&self, messages: &[Message]) -> Vec<&'v ToolSpec> {
        let mut offered = self.always.clone();
        let mut seen = HashSet::new();
        for name in found_in(messages) {
            if self.deferred_names.contains(name)
                && seen.insert(name)
                && let Some(spec) = self.visible.spec(name)
            {
                offered.push(spec);
            }
        }
        offered
    }

    /// The search as the calls of the turn that ends `messages` see it.
    pub(super) fn turn(&self, messages: &[Message], iteration: usize) -> TurnSearch<'_, 'v> {
        let found = found_in(messages).map(str::to_owned).collect();
        TurnSearch { searchable: self, found, iteration }
    }
}

/// The names every search result of `messages` found, in order (repeats included).
fn found_in(messages: &[Message]) -> impl Iterator<Item = &str> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::ToolResults(results) => Some(results),
            _ => None,
        })
        .flatten()
        .flat_map(ToolResult::found)
}

/// Tool search as one turn's calls see it: what earlier searches found.
pub(super) struct TurnSearch<'s, 'v> {
    searchable: &'s Searchable<'v>,
    found: HashSet<String>,
    iteration: usize,
}

impl TurnSearch<'_, '_> {
    /// `name`, unless it is a tool to find that no earlier search found: the model cannot know
    /// its schema, and it was not offered.
    pub(super) fn check<'n>(&self, name: &'n str) -> Result<&'n str, ExecError> {
        if !self.searchable.deferred_names.contains(name) || self.found.contains(name) {
            return Ok(name);
        }
        Err(ExecError::new(
            ToolErrorCode::Unavailable,
            format!(
                "`{}` was not offered and no search found it yet: search for it with `{}` first; the call was not run",
                Shown(name),
                SEARCH_TOOL
            ),
        ))
    }

    /// The tools a search of this turn may still find: those to find that no search found,
    /// before this turn or earlier in it (`found_now`).
    fn candidates(&self, found_now: &[String]) -> VisibleTools {
        self.searchable.visible.filtered(|name| {
            self.searchable.deferred_names.contains(name)
                && !self.found.contains(name)
                && !found_now.iter().any(|found| found == name)
        })
    }
}

/// What the search `call` asked for, if it is a search (`{"query": string}`).
pub(super) fn query_of(call: &ToolCall) -> Option<&str> {
    call.arguments.value().and_then(|arguments| arguments.get("query")).and_then(Value::as_str)
}

impl Agent {
    /// Answers the model's search `call` with the selector, over the tools not found yet:
    /// at most [`ToolSearchSettings::max_results`], best first, appended to `found_now`.
    pub(super) async fn answer_search(
        &self,
        call: &ToolCall,
        search: &TurnSearch<'_, '_>,
        found_now: &mut Vec<String>,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> ToolResult {
        let Some(query) = query_of(call) else {
            return ToolResult::error(
                call,
                ToolErrorCode::Validation,
                format!(
                    "`{}` takes {{\"query\": \"<what the tools should do>\"}}; the search was not run",
                    SEARCH_TOOL
                ),
            );
        };
        let Some(selector) = &self.selector else {
            return ToolResult::error(
                call,
                ToolErrorCode::Unavailable,
                "the agent has no selector to search its tools with; the search was not run",
            );
        };
        // An embedding selector embeds the query first, unless the run stops meanwhile.
        let queries = [query.to_owned()];
        let prepared = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => Ok(()),
            prepared = selector.prepare(&queries) => prepared,
        };
        if let Err(error) = prepared {
            on_event(AgentEvent::SelectorFailed {
                iteration: search.iteration,
                message: error.to_string(),
            });
        }
        let candidates = search.candidates(found_now);
        let selection = selector.select(query, &candidates);
        let found: Vec<&ToolSpec> = (selection.ranked().iter())
            .filter_map(|scored| candidates.spec(&scored.name))
            .take(search.searchable.settings.max_results)
            .collect();
        found_now.extend(found.iter().map(|spec| spec.name().to_owned()));
        on_event(AgentEvent::ToolsFound {
            id: call.id.clone(),
            query: query.to_owned(),
            names: found.iter().map(|spec| spec.name().to_owned()).collect(),
        });
        ToolResult::search(call, &found)
    }
}
