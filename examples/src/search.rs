//! `docs__search`: full-text search over a document index, with nested filters and enums.

use std::collections::BTreeSet;
use std::sync::Arc;

use tool_runtime::prelude::*;
use tool_runtime::runtime::Capability;

/// Search the documentation and return the best matching pages.
#[tool(
    name = "docs__search",
    effect = read_only,
    redact = ["hits.title", "hits.url", "hits.kind", "hits.score", "total"],
    capabilities = [DocumentIndex],
)]
#[derive(Debug)]
pub struct SearchDocs {
    /// Words to look for; every word must appear in the title or body.
    #[schema(length(min = 1, max = 200))]
    pub query: String,
    /// Narrow the search down.
    pub filters: Option<SearchFilters>,
    /// How to order the hits.
    #[serde(default)]
    pub order: Order,
    /// How many hits to return at most.
    #[serde(default = "default_limit")]
    #[schema(range(min = 1, max = 20))]
    pub limit: u8,
}

fn default_limit() -> u8 {
    5
}

/// Restrictions on which documents match.
#[derive(Debug, Clone, Default, Deserialize, ToolSchema)]
pub struct SearchFilters {
    /// Only these kinds of document; any kind when empty.
    #[serde(default)]
    #[schema(items(max = 4))]
    pub kinds: Vec<DocKind>,
    /// Every one of these tags must be on the document.
    #[serde(default)]
    #[schema(items(max = 8))]
    pub tags: BTreeSet<String>,
    /// Only documents updated in or after this year.
    #[schema(range(min = 2000, max = 2100))]
    pub updated_since_year: Option<u16>,
}

/// The kind of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocKind {
    /// Step-by-step learning material.
    Tutorial,
    /// How to solve one problem.
    HowTo,
    /// Exhaustive description of an API.
    Reference,
    /// Background and design discussion.
    Explanation,
}

/// The order of search hits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Best match first.
    #[default]
    Relevance,
    /// Most recently updated first.
    Newest,
}

/// The best matching documents.
#[derive(Debug, Clone, PartialEq, Serialize, ToolSchema)]
pub struct SearchResults {
    /// The hits, best first.
    pub hits: Vec<Hit>,
    /// How many documents matched in all.
    pub total: u32,
}

/// One matching document.
#[derive(Debug, Clone, PartialEq, Serialize, ToolSchema)]
pub struct Hit {
    /// The page title.
    pub title: String,
    /// Where to read it.
    pub url: String,
    /// Its kind.
    pub kind: DocKind,
    /// Match quality from 0 to 1.
    pub score: f64,
    /// Who maintains the page: internal, never shown to the model (not in `redact`).
    pub owner_email: String,
}

/// One document in the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Title.
    pub title: String,
    /// Body text.
    pub body: String,
    /// Address.
    pub url: String,
    /// Kind.
    pub kind: DocKind,
    /// Tags.
    pub tags: BTreeSet<String>,
    /// Year of the last update.
    pub updated_year: u16,
    /// Maintainer.
    pub owner_email: String,
}

/// The documents a [`SearchDocs`] call searches: a capability the application binds.
#[derive(Debug, Clone, Default)]
pub struct DocumentIndex {
    documents: Arc<[Document]>,
}

impl Capability for DocumentIndex {
    const NAME: &'static str = "document_index";
}

impl DocumentIndex {
    /// An index over these documents.
    #[must_use]
    pub fn new(documents: Vec<Document>) -> Self {
        Self { documents: documents.into() }
    }

    /// A small built-in corpus, for examples and tests.
    #[must_use]
    pub fn sample() -> Self {
        let doc = |title: &str, body: &str, slug: &str, kind, tags: &[&str], year| Document {
            title: title.to_owned(),
            body: body.to_owned(),
            url: format!("https://docs.example.com/{slug}"),
            kind,
            tags: tags.iter().map(|tag| (*tag).to_owned()).collect(),
            updated_year: year,
            owner_email: format!("{slug}-owner@example.com"),
        };
        Self::new(vec![
            doc(
                "Your first tool",
                "Write a struct, add the tool attribute and implement Tool.",
                "first-tool",
                DocKind::Tutorial,
                &["tools", "start"],
                2026,
            ),
            doc(
                "Redact tool output",
                "List the output fields the model may see; everything else is removed.",
                "redaction",
                DocKind::HowTo,
                &["tools", "security"],
                2025,
            ),
            doc(
                "The tool attribute",
                "Every key of the tool attribute: name, effect, redact, description.",
                "tool-attribute",
                DocKind::Reference,
                &["tools", "macros"],
                2026,
            ),
            doc(
                "Why schemas are constants",
                "Schemas are built at compile time, so a tool's contract cannot drift.",
                "const-schemas",
                DocKind::Explanation,
                &["schemas"],
                2024,
            ),
            doc(
                "Validate tool arguments",
                "Arguments are parsed once, validated against the schema, then deserialised.",
                "validation",
                DocKind::HowTo,
                &["schemas", "security"],
                2026,
            ),
        ])
    }
}

impl Tool for SearchDocs {
    type Output = SearchResults;

    async fn run(
        self,
        _ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<SearchResults, ToolError> {
        let index = caps.get::<DocumentIndex>()?;
        let words: Vec<String> = self.query.split_whitespace().map(str::to_lowercase).collect();
        let filters = self.filters.unwrap_or_default();
        let mut hits: Vec<(f64, &Document)> = index
            .documents
            .iter()
            .filter(|doc| filters.kinds.is_empty() || filters.kinds.contains(&doc.kind))
            .filter(|doc| filters.tags.is_subset(&doc.tags))
            .filter(|doc| filters.updated_since_year.is_none_or(|year| doc.updated_year >= year))
            .filter_map(|doc| {
                let title = doc.title.to_lowercase();
                let body = doc.body.to_lowercase();
                let mut score = 0.0;
                for word in &words {
                    match (title.contains(word.as_str()), body.contains(word.as_str())) {
                        (true, _) => score += 1.0,
                        (false, true) => score += 0.5,
                        (false, false) => return None,
                    }
                }
                #[allow(clippy::cast_precision_loss)]
                let normalized = score / words.len().max(1) as f64;
                Some((normalized, doc))
            })
            .collect();
        match self.order {
            Order::Relevance => {
                hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.title.cmp(&b.1.title)))
            }
            Order::Newest => hits.sort_by(|a, b| {
                b.1.updated_year.cmp(&a.1.updated_year).then_with(|| a.1.title.cmp(&b.1.title))
            }),
        }
        let total = u32::try_from(hits.len()).unwrap_or(u32::MAX);
        let hits = hits
            .into_iter()
            .take(usize::from(self.limit))
            .map(|(score, doc)| Hit {
                title: doc.title.clone(),
                url: doc.url.clone(),
                kind: doc.kind,
                score,
                owner_email: doc.owner_email.clone(),
            })
            .collect();
        Ok(SearchResults { hits, total })
    }
}
