//! Choosing which of the visible tools to offer the model on one turn.
//!
//! A catalog of hundreds of tools (several MCP servers at once) costs tokens and accuracy when
//! every tool goes out every turn. A [`ToolSelector`] looks at what the turn is about (the
//! latest user message, say) and the [`VisibleTools`] policy allows, and returns the
//! [`Selection`] to offer. The built-in [`Bm25Selector`] scores tools with BM25 over their
//! names, descriptions and property names and descriptions: deterministic, no model needed.
//! An application can bring its own selector (embeddings, a reranker) by implementing the
//! trait.
//!
//! ```
//! use tool_runtime::catalog::select::{Bm25Selector, ToolSelector};
//! use tool_runtime::catalog::{ToolCatalog, visible_tools};
//! use tool_runtime::prelude::*;
//!
//! /// Send an email message to a recipient.
//! #[tool(name = "mail__send", effect = external_side_effect, redact = [])]
//! struct SendMail { to: String, subject: String }
//! /// Show the weather forecast for a city.
//! #[tool(name = "weather__forecast", effect = read_only, redact = [])]
//! struct Forecast { city: String }
//! /// Tell the current time.
//! #[tool(name = "core__time", effect = read_only, redact = [])]
//! struct Time {}
//! # #[derive(Serialize, ToolSchema)] struct Done {}
//! # impl Tool for SendMail { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
//! # impl Tool for Forecast { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
//! # impl Tool for Time { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
//!
//! let catalog = ToolCatalog::builder()
//!     .register::<SendMail>()
//!     .register::<Forecast>()
//!     .register::<Time>()
//!     .build()
//!     .unwrap();
//! // Built once per catalog; each turn only scores.
//! let selector = Bm25Selector::new(&catalog).top_k(1).always(["core__time"]);
//!
//! let policy = ToolPolicy::allowing(["mail__*", "weather__*", "core__*"]);
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
//! let visible = visible_tools(&catalog, &policy, &ctx);
//! let selection = selector.select("Will it rain in Lisbon tomorrow? Check the forecast.", &visible);
//! assert_eq!(selection.names().collect::<Vec<_>>(), ["core__time", "weather__forecast"]);
//! assert_eq!(selection.ranked()[0].name, "weather__forecast");
//! ```

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::embed::EmbedError;
use super::{ToolSource, VisibleTools};
use crate::runtime::BoundToolRuntime;
use crate::spec::ToolSpec;

mod hybrid;

pub use hybrid::{HybridSelector, HybridSelectorBuilder};

/// Picks the tools to offer the model on one turn, out of those it may be shown.
///
/// `select` is synchronous on purpose: the agent loop calls it before every model turn, and
/// the built-in scorers take well under a few milliseconds. A selector that needs IO or heavy
/// work per request (embedding it) does that in [`prepare`](Self::prepare), which the agent
/// awaits before it selects, and keeps the result for `select` to read:
/// [`HybridSelector`] does.
///
/// Implementations must offer only tools that are in `visible` (policy has already filtered
/// them); the agent offers exactly what the [`Selection`] holds and records it per turn.
///
/// ```
/// use tool_runtime::catalog::VisibleTools;
/// use tool_runtime::catalog::select::{Selection, ToolSelector};
///
/// /// Offers every visible tool: what a run without selection does.
/// #[derive(Debug)]
/// struct Everything;
///
/// impl ToolSelector for Everything {
///     fn select(&self, _query: &str, visible: &VisibleTools) -> Selection {
///         Selection::all(visible)
///     }
/// }
/// # let _ = Everything;
/// ```
#[async_trait]
pub trait ToolSelector: Send + Sync + fmt::Debug {
    /// The tools to offer for a turn about `query`, out of `visible`.
    fn select(&self, query: &str, visible: &VisibleTools) -> Selection;

    /// Gets ready to [`select`](Self::select) for each of `queries` (the requests the agent
    /// is about to select for; the first turn of a resumed conversation passes all of its
    /// requests at once). The agent awaits it, bounded by the run's cancellation and budget,
    /// before it selects. Does nothing by default.
    ///
    /// # Errors
    ///
    /// What kept the selector from getting ready (an embedding service out of reach). The
    /// agent reports it (as `AgentEvent::SelectorFailed`) and
    /// selects all the same: `select` must still answer for a query it is not ready for
    /// ([`HybridSelector`] ranks it by keywords alone).
    async fn prepare(&self, queries: &[String]) -> Result<(), EmbedError> {
        let _ = queries;
        Ok(())
    }
}

/// One tool a selector ranked, with its score (higher is better; the scale is the
/// selector's own).
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The tool's name.
    pub name: String,
    /// How well it matched.
    pub score: f32,
}

/// The tools offered on one turn: the always-offered ones and the best-ranked, ordered by name
/// (so the request's tool list, and a provider's prompt cache, stay stable when the ranking
/// shuffles), plus the ranking that chose them.
#[derive(Debug, Clone)]
pub struct Selection {
    offered: VisibleTools,
    ranked: Vec<Scored>,
}

impl Selection {
    /// Every visible tool, ranked by nothing.
    ///
    /// ```
    /// use tool_runtime::catalog::{ToolCatalog, visible_tools};
    /// use tool_runtime::catalog::select::Selection;
    /// use tool_runtime::prelude::*;
    ///
    /// let catalog = ToolCatalog::builder().build().unwrap();
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
    /// let visible = visible_tools(&catalog, &ToolPolicy::allowing(["demo__*"]), &ctx);
    /// assert!(Selection::all(&visible).is_empty());
    /// ```
    #[must_use]
    pub fn all(visible: &VisibleTools) -> Self {
        Self { offered: visible.clone(), ranked: Vec::new() }
    }

    /// The tools to offer, ordered by name: what goes into the request.
    #[must_use]
    pub fn tools(&self) -> &VisibleTools {
        &self.offered
    }

    /// Their names, ordered: what a run records as offered on this turn.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.offered.names()
    }

    /// Their specs, ordered by name (for [`ModelRequest::tools`](crate::adapters::ModelRequest)).
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.offered.specs()
    }

    /// The ranked tools that were picked, best first (the always-offered ones are not ranked).
    #[must_use]
    pub fn ranked(&self) -> &[Scored] {
        &self.ranked
    }

    /// How many tools are offered.
    #[must_use]
    pub fn len(&self) -> usize {
        self.offered.len()
    }

    /// Whether none is.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.offered.is_empty()
    }

    /// The offered tools, to hand on.
    #[must_use]
    pub fn into_tools(self) -> VisibleTools {
        self.offered
    }
}

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;
/// The fields of a tool's document: its name, its description, and its input properties'
/// names and descriptions at any depth.
const FIELDS: usize = 3;
/// How much a match counts in each field: names are short and say the most.
const FIELD_WEIGHTS: [f32; FIELDS] = [3.0, 1.0, 1.0];
/// The most distinct terms one field of one tool brings into the index.
const MAX_FIELD_TERMS: usize = 256;
/// How many tools are ranked in by default.
pub(crate) const DEFAULT_TOP_K: usize = 16;

/// Words too common to say what a request is about.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "could", "do",
    "for", "from", "give", "have", "i", "if", "in", "into", "is", "it", "its", "me", "my", "need",
    "of", "on", "or", "our", "please", "should", "so", "some", "that", "the", "their", "them",
    "then", "there", "these", "this", "to", "up", "us", "want", "was", "we", "what", "when",
    "which", "who", "will", "with", "would", "you", "your",
];

/// A BM25 index over a catalog's tools, built once; see the [module docs](self).
///
/// Each tool is one document of three fields: the words of its name, of its description, and
/// of the names and descriptions of its input properties at any depth. Words are split at
/// punctuation, `snake_case` and `camelCase` boundaries and between letters and digits,
/// lower-cased, stripped of a plural or `-ing`/`-ed` ending, and common words are dropped.
/// Scores are BM25F (`k1` = 1.2, `b` = 0.75): a match in the name counts three times one in
/// the description or the properties; ties go to the name that sorts first, so the same
/// catalog and query always give the same selection.
///
/// A field cannot buy rank by volume (issue 24, "selection stuffing"): a word counts once per
/// field however often it repeats there, a field brings at most 256 distinct words into the
/// index, and each field's length is measured against the median length of that field over
/// the catalog, which one outlier cannot move, so a description that lists every word dilutes
/// each of them instead of matching every request. Descriptions of tools imported over MCP are
/// also cut (`McpImportOptions::max_description_bytes`, 2 KiB by default).
///
/// A tool that joins the catalog after the index was built (an MCP server's `list_changed`)
/// is not ranked until the selector is built again; it is still offered when named in
/// [`always`](Self::always).
#[derive(Clone)]
pub struct Bm25Selector {
    terms: HashMap<String, u32>,
    /// Per term, the tools containing it with their saturated, length-normalised frequency.
    postings: Vec<Vec<(u32, f32)>>,
    /// Per term, its inverse document frequency.
    idf: Vec<f32>,
    /// Tool names by document number.
    names: Vec<String>,
    always: Vec<String>,
    top_k: usize,
}

impl fmt::Debug for Bm25Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bm25Selector")
            .field("tools", &self.names.len())
            .field("terms", &self.terms.len())
            .field("always", &self.always)
            .field("top_k", &self.top_k)
            .finish()
    }
}

impl Bm25Selector {
    /// Indexes every tool `source` offers now (a [`ToolCatalog`](super::ToolCatalog) is a
    /// source), ranking in 16 tools per turn and offering none always.
    #[must_use]
    pub fn new(source: &dyn ToolSource) -> Self {
        let tools = source.tools();
        Self::from_specs(tools.iter().map(|tool| tool.spec()))
    }

    /// Indexes these specs.
    ///
    /// ```
    /// use tool_runtime::catalog::select::Bm25Selector;
    ///
    /// let selector = Bm25Selector::from_specs([]);
    /// assert!(selector.is_empty());
    /// ```
    #[must_use]
    pub fn from_specs<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        let mut terms: HashMap<String, u32> = HashMap::new();
        // Per term, the tools that have it and in which fields.
        let mut found: Vec<Vec<(u32, [bool; FIELDS])>> = Vec::new();
        // Per field, its length (distinct terms) in each tool.
        let mut lengths: [Vec<f32>; FIELDS] = Default::default();
        let mut names = Vec::new();
        for spec in specs {
            let document = u32::try_from(names.len()).unwrap_or(u32::MAX);
            let mut fields: [Field; FIELDS] = Default::default();
            let [name, description, inputs] = &mut fields;
            name.add(spec.name());
            description.add(spec.description());
            properties(&spec.input_schema().to_json(), &mut |text| inputs.add(text));
            // Sorted, so term numbers (and float sums) do not depend on hashing.
            let mut bag: BTreeMap<&str, [bool; FIELDS]> = BTreeMap::new();
            for (at, field) in fields.iter().enumerate() {
                lengths[at].push(field.0.len() as f32);
                for term in &field.0 {
                    bag.entry(term.as_str()).or_default()[at] = true;
                }
            }
            for (term, present) in bag {
                let next = u32::try_from(found.len()).unwrap_or(u32::MAX);
                let id = *terms.entry(term.to_owned()).or_insert(next);
                if id == next {
                    found.push(Vec::new());
                }
                found[id as usize].push((document, present));
            }
            names.push(spec.name().to_owned());
        }
        let typical = lengths.each_ref().map(|lengths| median(lengths).max(1.0));
        let documents = names.len() as f32;
        let idf = found
            .iter()
            .map(|posting| {
                let df = posting.len() as f32;
                (1.0 + (documents - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let postings = found
            .into_iter()
            .map(|posting| {
                posting
                    .into_iter()
                    .map(|(document, present)| {
                        let mut tf = 0.0;
                        for at in (0..FIELDS).filter(|at| present[*at]) {
                            let length = lengths[at][document as usize];
                            let norm = 1.0 - B + B * length / typical[at];
                            tf += FIELD_WEIGHTS[at] / norm;
                        }
                        (document, tf * (K1 + 1.0) / (tf + K1))
                    })
                    .collect()
            })
            .collect();
        Self { terms, postings, idf, names, always: Vec::new(), top_k: DEFAULT_TOP_K }
    }

    /// Ranks in at most `k` tools per turn (besides the always-offered ones).
    #[must_use]
    pub fn top_k(self, k: usize) -> Self {
        Self { top_k: k, ..self }
    }

    /// Offers these tools on every turn they are visible, whatever the query.
    #[must_use]
    pub fn always<I, S>(self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut always: Vec<String> = names.into_iter().map(Into::into).collect();
        always.sort_unstable();
        always.dedup();
        Self { always, ..self }
    }

    /// How many tools are indexed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether none is.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The distinct terms of `query` the index holds, by number.
    fn query_terms(&self, query: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for_each_term(query, |term| ids.extend(self.terms.get(term).copied()));
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The score a tool matching each of `terms` would reach at most: each term's weight at
    /// full saturation.
    fn ceiling(&self, terms: &[u32]) -> f32 {
        terms.iter().map(|&id| self.idf[id as usize] * (K1 + 1.0)).sum()
    }

    /// Every indexed tool that matches a word of `query`, best first.
    fn rank(&self, query: &str) -> Vec<(u32, f32)> {
        let mut ranked = self.scores(&self.query_terms(query));
        ranked.sort_unstable_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(Ordering::Equal)
                .then_with(|| self.names[a.0 as usize].cmp(&self.names[b.0 as usize]))
        });
        ranked
    }

    /// The tools matching any of `terms` (distinct term numbers), with their scores, in no
    /// order.
    fn scores(&self, terms: &[u32]) -> Vec<(u32, f32)> {
        let mut scores = vec![0f32; self.names.len()];
        let mut touched = Vec::new();
        for &id in terms {
            let idf = self.idf[id as usize];
            for &(document, frequency) in &self.postings[id as usize] {
                let score = &mut scores[document as usize];
                if *score == 0.0 {
                    touched.push(document);
                }
                *score += idf * frequency;
            }
        }
        touched.into_iter().map(|document| (document, scores[document as usize])).collect()
    }
}

impl ToolSelector for Bm25Selector {
    /// The visible tools named in [`always`](Bm25Selector::always), then the
    /// [`top_k`](Bm25Selector::top_k) best-scoring visible tools that matched a word of
    /// `query`. A query that matches nothing offers the always-offered tools only.
    fn select(&self, query: &str, visible: &VisibleTools) -> Selection {
        let ranked = self.rank(query).into_iter();
        let ranked = ranked.map(|(document, score)| (&self.names[document as usize], score));
        offer(visible, &self.always, self.top_k, ranked)
    }
}

/// The selection of the visible tools named in `always` (sorted), then of the first `top_k`
/// visible tools of `ranked` (best first; a name ranked twice counts once).
fn offer<'a>(
    visible: &VisibleTools,
    always: &[String],
    top_k: usize,
    ranked: impl Iterator<Item = (&'a String, f32)>,
) -> Selection {
    let position = |name: &str| visible.0.binary_search_by(|tool| tool.name().cmp(name)).ok();
    let mut offered: Vec<usize> = always.iter().filter_map(|name| position(name)).collect();
    let mut scored = Vec::with_capacity(top_k);
    for (name, score) in ranked {
        if scored.len() == top_k {
            break;
        }
        if always.binary_search(name).is_ok() {
            continue;
        }
        // `from_specs` may index one name twice: it is offered and ranked once.
        if let Some(index) = position(name)
            && !offered.contains(&index)
        {
            offered.push(index);
            scored.push(Scored { name: name.clone(), score });
        }
    }
    offered.sort_unstable();
    offered.dedup();
    let tools: Vec<Arc<dyn BoundToolRuntime>> =
        offered.into_iter().map(|index| Arc::clone(&visible.0[index])).collect();
    Selection { offered: VisibleTools(tools), ranked: scored }
}

/// The distinct terms of one field of a tool, in the order they first appear, at most
/// [`MAX_FIELD_TERMS`].
#[derive(Default)]
struct Field(Vec<String>, HashSet<String>);

impl Field {
    fn add(&mut self, text: &str) {
        for_each_term(text, |term| {
            if self.0.len() < MAX_FIELD_TERMS && !self.1.contains(term) {
                self.1.insert(term.to_owned());
                self.0.push(term.to_owned());
            }
        });
    }
}

/// The median of `values` (0 for none).
fn median(values: &[f32]) -> f32 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f32::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Feeds the names and descriptions of the properties of `schema`, at any depth, to `add`.
fn properties(schema: &Value, add: &mut impl FnMut(&str)) {
    if let Some(children) = schema.get("properties").and_then(Value::as_object) {
        for (name, child) in children {
            add(name);
            if let Some(description) = child.get("description").and_then(Value::as_str) {
                add(description);
            }
            properties(child, add);
        }
    }
    if let Some(items) = schema.get("items") {
        properties(items, add);
    }
}

/// The terms [`Bm25Selector`] indexes and matches in `text`, in order: words split at
/// punctuation, `snake_case` and `camelCase` boundaries and between letters and digits,
/// lower-cased, stemmed, common words left out. Two texts that share no term cannot match each
/// other, whatever their meaning.
///
/// ```
/// use tool_runtime::catalog::select::terms;
///
/// assert_eq!(terms("github__createPullRequest"), ["github", "creat", "pull", "request"]);
/// assert_eq!(terms("Archived files"), ["archiv", "file"]);
/// ```
#[must_use]
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |term| out.push(term.to_owned()));
    out
}

/// Calls `f` with each term of `text`, in order: words split at anything but letters and
/// digits, at lower-to-upper case changes and between letters and digits; lower-cased,
/// stemmed, stop words left out.
fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    let mut previous: Option<char> = None;
    let mut flush = |word: &mut String| {
        if !word.is_empty() {
            if !STOP_WORDS.contains(&word.as_str()) {
                f(stem(word));
            }
            word.clear();
        }
    };
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut word);
            previous = None;
            continue;
        }
        if let Some(p) = previous {
            let case_change = p.is_lowercase() && c.is_uppercase();
            let digit_change = p.is_ascii_digit() != c.is_ascii_digit();
            if case_change || digit_change {
                flush(&mut word);
            }
        }
        word.extend(c.to_lowercase());
        previous = Some(c);
    }
    flush(&mut word);
}

/// A light, deterministic suffix stripper: `files` -> `file`, `queries` -> `query`,
/// `scheduling` -> `schedul`, `archived` -> `archiv`, `uploads` -> `upload`.
fn stem(word: &mut String) -> &str {
    let len = word.len();
    if len > 4 && word.ends_with("ies") {
        word.truncate(len - 3);
        word.push('y');
    } else if len > 5 && word.ends_with("ing") {
        word.truncate(len - 3);
    } else if len > 4 && word.ends_with("ed") {
        word.truncate(len - 2);
    } else if len > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        word.truncate(len - 1);
    }
    trim_e(word)
}

/// Drops a final `e`, so `archive`, `archived` and `archiving` meet at `archiv`.
fn trim_e(word: &mut String) -> &str {
    if word.len() > 4 && word.ends_with('e') {
        word.pop();
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_snake_camel_digits_and_punctuation() {
        assert_eq!(terms("github__createPullRequest"), ["github", "creat", "pull", "request"]);
        assert_eq!(terms("s3_bucket-list.v2"), ["s", "3", "bucket", "list", "v", "2"]);
        assert_eq!(terms("The HTTPServer"), ["httpserver"]);
    }

    #[test]
    fn stems_endings_to_one_form() {
        for word in ["archive", "archived", "archiving", "archives"] {
            assert_eq!(terms(word), ["archiv"], "{word}");
        }
        assert_eq!(terms("queries"), ["query"]);
        assert_eq!(terms("files"), ["file"]);
        assert_eq!(terms("status address"), ["status", "address"]);
    }
}
