//! Selection by keywords and by meaning at once: [`HybridSelector`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use super::{Bm25Selector, DEFAULT_TOP_K, Selection, ToolSelector, offer, properties};
use crate::catalog::embed::{EmbedError, EmbedErrorKind, Embedder, Purpose, checked, dot};
use crate::catalog::{ToolSource, VisibleTools};
use crate::spec::ToolSpec;

/// How much keywords count by default (see [`HybridSelectorBuilder::keyword_weight`]).
const DEFAULT_KEYWORD_WEIGHT: f32 = 0.1;
/// The requests whose vectors are kept, the most recent.
const MAX_QUERIES: usize = 1024;
/// The most bytes of a request that are embedded (and kept as its key). Sentence models read
/// a few hundred words; a pasted document says no more about which tool it needs past that.
const MAX_QUERY_BYTES: usize = 4096;
/// The most bytes of a tool's text (name, description, arguments) that are embedded.
const MAX_DOCUMENT_BYTES: usize = 2048;
/// Texts per call of the embedder by default.
const DEFAULT_BATCH: usize = 64;

/// Ranks tools by keywords ([BM25](Bm25Selector)) and by meaning (the cosine of a request's
/// embedding and each tool's) and fuses both rankings, so a request that shares no word with
/// the tool it needs ("tuck my unfinished email out of sight" for `mail__archive_draft`) still
/// finds it.
///
/// - **Built once per catalog**: [`builder`](Self::builder) embeds every tool's name,
///   description and arguments with the [`Embedder`] (in batches). Tool vectors are kept by
///   [spec hash](ToolSpec::spec_hash): [`rebuild`](Self::rebuild) after the catalog changed
///   embeds only the tools that are new or changed, and
///   [`persist_in`](HybridSelectorBuilder::persist_in) keeps them on disk (one file per
///   model), so a restart embeds nothing that did not change.
/// - **Each request is embedded once**, in [`prepare`](ToolSelector::prepare), which the agent
///   awaits before it selects; the vectors of the last 1 024 requests are kept (the first
///   4 KiB of each request is embedded).
/// - **[`select`](ToolSelector::select) only scores**: a dot product per tool, then reciprocal
///   rank fusion (`k` = 60) of the best visible tools of both rankings: a tool ranked `r`-th
///   by one scores `1 / (60 + r)`, and the scores add up. Ties go to the name that sorts
///   first, so the same catalog, request and vectors always give the same selection.
/// - **A request that was not prepared** (its embedding failed, or `select` was called
///   without `prepare`) is ranked by keywords alone: exactly what the [`Bm25Selector`] with
///   the same `top_k` and `always` offers.
///
/// ```
/// use std::sync::Arc;
/// use async_trait::async_trait;
/// use tool_runtime::catalog::embed::{EmbedError, Embedder, Purpose};
/// use tool_runtime::catalog::select::{HybridSelector, ToolSelector};
/// use tool_runtime::catalog::{ToolCatalog, visible_tools};
/// use tool_runtime::prelude::*;
///
/// /// Archive a draft in the mailbox.
/// #[tool(name = "mail__archive_draft", effect = read_only, redact = [])]
/// struct Archive { draft_id: String }
/// /// Show the weather forecast for a city.
/// #[tool(name = "weather__forecast", effect = read_only, redact = [])]
/// struct Forecast { city: String }
/// # #[derive(Serialize, ToolSchema)] struct Done {}
/// # impl Tool for Archive { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
/// # impl Tool for Forecast { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
///
/// /// A stand-in for a sentence model: knows that putting away and archiving are one thing.
/// #[derive(Debug)]
/// struct Toy;
///
/// #[async_trait]
/// impl Embedder for Toy {
///     fn model_id(&self) -> &str { "toy" }
///     async fn embed(&self, texts: &[String], _: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
///         Ok(texts.iter().map(|text| {
///             let put_away = ["archive", "out of sight"].iter().any(|w| text.contains(w));
///             if put_away { vec![1.0, 0.1] } else { vec![0.1, 1.0] }
///         }).collect())
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let catalog = ToolCatalog::builder().register::<Archive>().register::<Forecast>().build()?;
/// let selector = HybridSelector::builder(Arc::new(Toy)).top_k(1).build(&catalog).await?;
///
/// let request = "Put my unfinished email out of sight".to_owned();
/// selector.prepare(std::slice::from_ref(&request)).await?;
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
/// let visible = visible_tools(&catalog, &ToolPolicy::allowing(["mail__*", "weather__*"]), &ctx);
/// let selection = selector.select(&request, &visible);
/// assert_eq!(selection.names().collect::<Vec<_>>(), ["mail__archive_draft"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct HybridSelector {
    /// The keyword index; its tool names, `top_k` and `always` are the selector's.
    keywords: Bm25Selector,
    /// What it was built with, to build it again.
    settings: HybridSelectorBuilder,
    /// The embedder's model id when the tools were embedded.
    model: String,
    /// The keys of the tools' vectors, by document number (the keyword index's numbering).
    keys: Vec<String>,
    dimensions: usize,
    /// The tools' normalised vectors, one after the other.
    vectors: Vec<f32>,
    queries: Mutex<Queries>,
}

impl fmt::Debug for HybridSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HybridSelector")
            .field("model", &self.model)
            .field("dimensions", &self.dimensions)
            .field("keywords", &self.keywords)
            .field("persist", &self.settings.persist)
            .finish_non_exhaustive()
    }
}

/// Settings of a [`HybridSelector`]; [`build`](Self::build) embeds the catalog's tools.
#[must_use]
#[derive(Debug, Clone)]
pub struct HybridSelectorBuilder {
    embedder: Arc<dyn Embedder>,
    top_k: usize,
    always: Vec<String>,
    persist: Option<PathBuf>,
    batch: usize,
    keyword_weight: f32,
}

impl HybridSelector {
    /// A builder embedding with `embedder`, ranking in 16 tools per turn and offering none
    /// always, keeping tool vectors in memory only, 64 texts per call of the embedder.
    pub fn builder(embedder: Arc<dyn Embedder>) -> HybridSelectorBuilder {
        HybridSelectorBuilder {
            embedder,
            top_k: DEFAULT_TOP_K,
            always: Vec::new(),
            persist: None,
            batch: DEFAULT_BATCH,
            keyword_weight: DEFAULT_KEYWORD_WEIGHT,
        }
    }

    /// The same selector over the tools `source` offers now, embedding only the tools that
    /// are new or whose spec changed (an MCP server's `list_changed`); the others keep their
    /// vectors.
    ///
    /// # Errors
    ///
    /// As [`HybridSelectorBuilder::build`].
    pub async fn rebuild(&self, source: &dyn ToolSource) -> Result<Self, EmbedError> {
        let tools = source.tools();
        let mut known = HashMap::new();
        if self.settings.embedder.model_id() == self.model {
            for (document, key) in self.keys.iter().enumerate() {
                known.insert(key.clone(), self.vector(document).to_vec());
            }
        }
        self.settings.clone().embed(tools.iter().map(|tool| tool.spec()), known).await
    }

    /// How many tools are indexed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.keywords.len()
    }

    /// Whether none is.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.keywords.is_empty()
    }

    /// How many values each vector has.
    #[must_use]
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The embedder's model id the tools were embedded with.
    #[must_use]
    pub fn model_id(&self) -> &str {
        &self.model
    }

    fn vector(&self, document: usize) -> &[f32] {
        &self.vectors[document * self.dimensions..(document + 1) * self.dimensions]
    }
}

impl HybridSelectorBuilder {
    /// Ranks in at most `k` tools per turn (besides the always-offered ones).
    pub fn top_k(mut self, k: usize) -> Self {
        self.top_k = k;
        self
    }

    /// Offers these tools on every turn they are visible, whatever the request.
    pub fn always<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.always = names.into_iter().map(Into::into).collect();
        self
    }

    /// Keeps the tools' vectors in `dir` (created if missing), one file per model id: a build
    /// reads the file, embeds only the tools it does not hold (by spec hash), and writes it
    /// again with the catalog's tools when anything changed. The file is replaced whole (a
    /// temporary file renamed over it), so processes sharing it never read half of one; a file
    /// that is not one this crate wrote, or holds another model's vectors, is made again.
    pub fn persist_in(mut self, dir: impl Into<PathBuf>) -> Self {
        self.persist = Some(dir.into());
        self
    }

    /// How much keywords count against meaning, from 0 (meaning alone) to 1 (keywords alone);
    /// default 0.1. A tool's score is `(1 - w)` times its cosine with the request plus `w`
    /// times the share it reached of the best BM25 score the request's words could give.
    pub fn keyword_weight(mut self, weight: f32) -> Self {
        self.keyword_weight =
            if weight.is_nan() { DEFAULT_KEYWORD_WEIGHT } else { weight.clamp(0.0, 1.0) };
        self
    }

    /// Texts sent per call of the embedder (at least 1; default 64).
    pub fn batch_size(mut self, texts: usize) -> Self {
        self.batch = texts.max(1);
        self
    }

    /// Embeds every tool `source` offers now (a [`ToolCatalog`](crate::catalog::ToolCatalog)
    /// is a source), except those whose vectors are on disk already.
    ///
    /// # Errors
    ///
    /// The embedder's [`EmbedError`]; [`EmbedErrorKind::Response`] when its vectors cannot be
    /// used (a count, a length or a value); [`EmbedErrorKind::Cache`] when the directory
    /// given to [`persist_in`](Self::persist_in) cannot be read or written.
    pub async fn build(self, source: &dyn ToolSource) -> Result<HybridSelector, EmbedError> {
        let tools = source.tools();
        self.embed(tools.iter().map(|tool| tool.spec()), HashMap::new()).await
    }

    /// Embeds these specs.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build).
    pub async fn build_from_specs<'a>(
        self,
        specs: impl IntoIterator<Item = &'a ToolSpec>,
    ) -> Result<HybridSelector, EmbedError> {
        self.embed(specs, HashMap::new()).await
    }

    /// Builds the selector, `known` holding vectors already made (by spec hash).
    async fn embed<'a>(
        self,
        specs: impl IntoIterator<Item = &'a ToolSpec>,
        mut known: HashMap<String, Vec<f32>>,
    ) -> Result<HybridSelector, EmbedError> {
        let specs: Vec<&ToolSpec> = specs.into_iter().collect();
        let model = self.embedder.model_id().to_owned();
        let file = self.persist.as_deref().map(|dir| cache_file(dir, &model));
        let mut rewrite = false;
        if let Some(file) = &file {
            match read_cache(file, &model)? {
                Some(stored) => {
                    for (hash, vector) in stored {
                        known.entry(hash).or_insert(vector);
                    }
                }
                None => rewrite = true,
            }
        }
        let mut dimensions = known.values().next().map(Vec::len);
        // Each tool's text, and the key of its vector: the spec hash and the text hashed
        // together, so a vector is made again when either changes.
        let texts: Vec<String> = specs.iter().map(|spec| document(spec)).collect();
        let keys: Vec<String> = specs
            .iter()
            .zip(&texts)
            .map(|(spec, text)| {
                crate::digest::sha256_hex(format!("{}\n{text}", spec.spec_hash()).as_bytes())
            })
            .collect();
        // Each text missing a vector, once however often it is listed.
        let mut seen = HashSet::new();
        let missing: Vec<usize> = (0..specs.len())
            .filter(|&at| !known.contains_key(&keys[at]) && seen.insert(&keys[at]))
            .collect();
        for chunk in missing.chunks(self.batch) {
            let batch: Vec<String> = chunk.iter().map(|&at| texts[at].clone()).collect();
            let vectors = self.embedder.embed(&batch, Purpose::Document).await?;
            let vectors = checked(&model, batch.len(), vectors, dimensions)?;
            dimensions = dimensions.or_else(|| vectors.first().map(Vec::len));
            for (&at, vector) in chunk.iter().zip(vectors) {
                known.insert(keys[at].clone(), vector);
            }
            rewrite = true;
        }
        let dimensions = dimensions.unwrap_or(0);
        let mut vectors = Vec::with_capacity(specs.len() * dimensions);
        for (spec, key) in specs.iter().zip(&keys) {
            let vector = known.get(key).filter(|vector| vector.len() == dimensions);
            let Some(vector) = vector else {
                // A vector read from disk of another length than the ones just made: the file
                // was of another model under the same id.
                return Err(EmbedError::new(
                    EmbedErrorKind::Response,
                    format!(
                        "the embedding model `{model}` gave vectors of {dimensions} values, and \
                         the vector kept for `{}` has another length: delete the cache",
                        spec.name()
                    ),
                ));
            };
            vectors.extend_from_slice(vector);
        }
        let keywords = Bm25Selector::from_specs(specs.iter().copied())
            .top_k(self.top_k)
            .always(self.always.iter().cloned());
        if let (Some(file), true) = (&file, rewrite) {
            let tools = keys.iter().zip(vectors.chunks(dimensions.max(1)));
            write_cache(file, &model, dimensions, tools)?;
        }
        Ok(HybridSelector {
            keywords,
            settings: self,
            model,
            keys,
            dimensions,
            vectors,
            queries: Mutex::default(),
        })
    }
}

#[async_trait]
impl ToolSelector for HybridSelector {
    /// The visible tools named in [`always`](HybridSelectorBuilder::always), then the
    /// [`top_k`](HybridSelectorBuilder::top_k) visible tools the fused ranking puts first. A
    /// request [`prepare`](ToolSelector::prepare) did not embed is ranked by keywords alone.
    fn select(&self, query: &str, visible: &VisibleTools) -> Selection {
        let key = query_key(query);
        let vector = self.queries.lock().unwrap_or_else(PoisonError::into_inner).get(key);
        let Some(vector) = vector else {
            return self.keywords.select(query, visible);
        };
        let keywords = &self.keywords;
        let weight = self.settings.keyword_weight;
        let mut fused: Vec<(u32, f32)> = (0..keywords.len())
            .map(|document| {
                let id = u32::try_from(document).unwrap_or(u32::MAX);
                (id, (1.0 - weight) * dot(self.vector(document), &vector))
            })
            .collect();
        let terms = keywords.query_terms(query);
        let ceiling = keywords.ceiling(&terms);
        if ceiling > 0.0 {
            for (document, score) in keywords.scores(&terms) {
                fused[document as usize].1 += weight * score / ceiling;
            }
        }
        let names = &keywords.names;
        let best_first = |a: &(u32, f32), b: &(u32, f32)| {
            b.1.total_cmp(&a.1).then_with(|| names[a.0 as usize].cmp(&names[b.0 as usize]))
        };
        // Only the best few need an order: a full sort of every tool's score is most of the
        // time otherwise. All of them are sorted when the few hold too few tools to offer.
        let few = keywords.top_k.saturating_add(keywords.always.len()).saturating_mul(4).max(64);
        let usable = |document: u32| {
            let name = &names[document as usize];
            keywords.always.binary_search(name).is_err()
                && visible.0.binary_search_by(|tool| tool.name().cmp(name)).is_ok()
        };
        if fused.len() > few {
            fused.select_nth_unstable_by(few, best_first);
            fused[..few].sort_unstable_by(best_first);
            if fused[..few].iter().filter(|(document, _)| usable(*document)).count()
                >= keywords.top_k
            {
                fused.truncate(few);
            } else {
                fused[few..].sort_unstable_by(best_first);
            }
        } else {
            fused.sort_unstable_by(best_first);
        }
        let ranked = fused.into_iter().map(|(document, score)| (&names[document as usize], score));
        offer(visible, &keywords.always, keywords.top_k, ranked)
    }

    /// Embeds the requests of `queries` whose vectors are not kept yet, in batches.
    async fn prepare(&self, queries: &[String]) -> Result<(), EmbedError> {
        let missing: Vec<String> = {
            let kept = self.queries.lock().unwrap_or_else(PoisonError::into_inner);
            let mut seen = HashSet::new();
            queries
                .iter()
                .map(|query| query_key(query))
                .filter(|key| {
                    !key.trim().is_empty() && kept.get(key).is_none() && seen.insert(*key)
                })
                .map(str::to_owned)
                .collect()
        };
        for chunk in missing.chunks(self.settings.batch) {
            let vectors = self.settings.embedder.embed(chunk, Purpose::Query).await?;
            let vectors = checked(&self.model, chunk.len(), vectors, Some(self.dimensions))?;
            let mut kept = self.queries.lock().unwrap_or_else(PoisonError::into_inner);
            for (query, vector) in chunk.iter().zip(vectors) {
                kept.insert(query.clone(), vector.into());
            }
        }
        Ok(())
    }
}

/// The vectors of the most recent requests, at most [`MAX_QUERIES`].
#[derive(Default)]
struct Queries {
    vectors: HashMap<String, Arc<[f32]>>,
    order: VecDeque<String>,
}

impl Queries {
    fn get(&self, key: &str) -> Option<Arc<[f32]>> {
        self.vectors.get(key).cloned()
    }

    fn insert(&mut self, key: String, vector: Arc<[f32]>) {
        if self.vectors.insert(key.clone(), vector).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > MAX_QUERIES {
            if let Some(oldest) = self.order.pop_front() {
                self.vectors.remove(&oldest);
            }
        }
    }
}

/// The part of a request that is embedded and keyed: its first [`MAX_QUERY_BYTES`].
fn query_key(query: &str) -> &str {
    &query[..query.floor_char_boundary(MAX_QUERY_BYTES)]
}

/// The text a tool is embedded by: its name in words, its description, and its arguments'
/// names and descriptions, cut to [`MAX_DOCUMENT_BYTES`].
fn document(spec: &ToolSpec) -> String {
    let mut text = spoken(spec.name());
    text.push_str(". ");
    text.push_str(spec.description().trim());
    let mut arguments = Vec::new();
    properties(&spec.input_schema().to_json(), &mut |part| arguments.push(part.trim().to_owned()));
    if !arguments.is_empty() {
        text.push_str(" Arguments: ");
        text.push_str(&arguments.join("; "));
    }
    text.truncate(text.floor_char_boundary(MAX_DOCUMENT_BYTES));
    text
}

/// A name in words: `github__createPullRequest` -> `github create pull request`.
fn spoken(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            previous = None;
            continue;
        }
        if previous.is_some_and(|p| p.is_lowercase() && c.is_uppercase()) {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
        previous = Some(c);
    }
    out.trim_end().to_owned()
}

/// Where the vectors of `model` are kept in `dir`: named by a hash of the model id, which may
/// hold anything (`/`, `:`).
fn cache_file(dir: &Path, model: &str) -> PathBuf {
    let digest = crate::digest::sha256_hex(model.as_bytes());
    dir.join(format!("{}.embeddings", &digest[..16]))
}

/// The vectors of a cache file, each with its key.
type Stored = Vec<(String, Vec<f32>)>;

/// What a cache file begins with.
const MAGIC: &[u8; 8] = b"TREMB\x00\x00\x01";
/// The length of a spec hash (SHA-256, hex).
const HASH_LEN: usize = 64;

/// The vectors kept in `file` for `model`, by spec hash; `None` when there is no file, or it
/// is not one this crate wrote for `model` (it is made again).
fn read_cache(file: &Path, model: &str) -> Result<Option<Stored>, EmbedError> {
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(EmbedError::new(
                EmbedErrorKind::Cache,
                format!("the embedding cache {} cannot be read: {error}", file.display()),
            ));
        }
    };
    let parsed = parse_cache(&bytes, model);
    if parsed.is_none() {
        tracing::warn!(
            file = %file.display(),
            "the embedding cache is not one this crate wrote for this model; it is made again"
        );
    }
    Ok(parsed)
}

/// Reads a cache file's bytes: the magic, the model id (length and UTF-8), the dimensions and
/// the count (little-endian), then per entry its spec hash and its vector.
fn parse_cache(bytes: &[u8], model: &str) -> Option<Stored> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (length, rest) = rest.split_first_chunk::<4>()?;
    let length = usize::try_from(u32::from_le_bytes(*length)).ok()?;
    let (id, rest) = rest.split_at_checked(length)?;
    if id != model.as_bytes() {
        return None;
    }
    let (dimensions, rest) = rest.split_first_chunk::<4>()?;
    let dimensions = usize::try_from(u32::from_le_bytes(*dimensions)).ok()?;
    let (count, rest) = rest.split_first_chunk::<8>()?;
    let count = usize::try_from(u64::from_le_bytes(*count)).ok()?;
    let entry = HASH_LEN.checked_add(dimensions.checked_mul(4)?)?;
    if dimensions == 0 || rest.len() != count.checked_mul(entry)? {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    for chunk in rest.chunks_exact(entry) {
        let (hash, values) = chunk.split_at(HASH_LEN);
        let hash = std::str::from_utf8(hash).ok()?;
        if !hash.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return None;
        }
        let vector: Vec<f32> =
            values.as_chunks::<4>().0.iter().map(|value| f32::from_le_bytes(*value)).collect();
        if vector.iter().any(|value| !value.is_finite()) {
            return None;
        }
        out.push((hash.to_owned(), vector));
    }
    Some(out)
}

/// Writes `entries` to `file` whole: to a temporary file beside it, renamed over it.
fn write_cache<'a>(
    file: &Path,
    model: &str,
    dimensions: usize,
    entries: impl Iterator<Item = (&'a String, &'a [f32])>,
) -> Result<(), EmbedError> {
    let failed = |what: &str, error: std::io::Error| {
        EmbedError::new(
            EmbedErrorKind::Cache,
            format!("the embedding cache {} cannot be {what}: {error}", file.display()),
        )
    };
    let too_large =
        || EmbedError::new(EmbedErrorKind::Cache, format!("the model id `{model}` is too long"));
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&u32::try_from(model.len()).map_err(|_| too_large())?.to_le_bytes());
    bytes.extend_from_slice(model.as_bytes());
    bytes.extend_from_slice(&u32::try_from(dimensions).map_err(|_| too_large())?.to_le_bytes());
    let count_at = bytes.len();
    bytes.extend_from_slice(&0u64.to_le_bytes());
    let mut count = 0u64;
    let mut written = HashSet::new();
    for (hash, vector) in entries {
        if hash.len() != HASH_LEN || !written.insert(hash) {
            continue;
        }
        bytes.extend_from_slice(hash.as_bytes());
        vector.iter().for_each(|value| bytes.extend_from_slice(&value.to_le_bytes()));
        count += 1;
    }
    bytes[count_at..count_at + 8].copy_from_slice(&count.to_le_bytes());
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|error| failed("created", error))?;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    let temporary = file.with_extension(format!("tmp-{}-{nanos}", std::process::id()));
    std::fs::write(&temporary, &bytes).map_err(|error| failed("written", error))?;
    std::fs::rename(&temporary, file).map_err(|error| {
        let _ = std::fs::remove_file(&temporary);
        failed("replaced", error)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_spoken_as_words() {
        assert_eq!(spoken("github__createPullRequest"), "github create pull request");
        assert_eq!(spoken("mail.archive-draft_"), "mail archive draft");
    }

    #[test]
    fn a_cache_file_round_trips_and_anything_else_is_no_cache() {
        let hash = "a".repeat(64);
        let dir = std::env::temp_dir().join(format!("tr-embed-cache-{}", std::process::id()));
        let file = cache_file(&dir, "model/x");
        write_cache(&file, "model/x", 2, [(&hash, [0.6f32, 0.8].as_slice())].into_iter()).unwrap();
        let read = read_cache(&file, "model/x").unwrap().unwrap();
        assert_eq!(read, [(hash.clone(), vec![0.6, 0.8])]);
        // Another model's, cut short, or not a cache: made again.
        assert_eq!(read_cache(&file, "model/y").unwrap(), None);
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(parse_cache(&bytes[..bytes.len() - 1], "model/x"), None);
        assert_eq!(parse_cache(b"{\"json\": true}", "model/x"), None);
        assert_eq!(read_cache(&dir.join("absent"), "model/x").unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn at_most_the_latest_requests_are_kept() {
        let mut queries = Queries::default();
        for n in 0..=MAX_QUERIES {
            queries.insert(n.to_string(), Arc::from([1.0f32].as_slice()));
        }
        assert_eq!(queries.vectors.len(), MAX_QUERIES);
        assert!(queries.get("0").is_none());
        assert!(queries.get(&MAX_QUERIES.to_string()).is_some());
        assert_eq!(query_key(&"é".repeat(MAX_QUERY_BYTES)).len(), MAX_QUERY_BYTES);
    }
}
