//! Selection by meaning (`HybridSelector`) with a toy embedder: the agent preparing each
//! request before it selects, tool vectors kept by spec hash in memory and on disk, and what an
//! embedder that fails or answers nonsense does. The real model's tests are in
//! `selection_local` (feature `embed-local`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use tool_runtime::agent::{Agent, AgentEvent, Message, ScriptedModel, ScriptedTurn};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::catalog::embed::{EmbedError, EmbedErrorKind, Embedder, Purpose};
use tool_runtime::catalog::select::{Bm25Selector, HybridSelector, ToolSelector};
use tool_runtime::runner::ToolRunner;
use tool_tests::fixtures::context;

use super::selection::{catalog, everything, visible};

/// A directory of its own under the target directory, emptied.
pub(super) fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A toy embedder for the unit tests: each word (lower-cased) is a dimension of its own among
/// 256, so texts sharing words are close. It counts what it embeds and can be told to fail.
#[derive(Debug, Default)]
struct Words {
    id: String,
    documents: AtomicUsize,
    queries: AtomicUsize,
    answer: Mutex<Option<Answer>>,
}

/// What a [`Words`] embedder answers instead of vectors.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Fail,
    OneShort,
    NotANumber,
}

impl Words {
    fn new(id: &str) -> Arc<Self> {
        Arc::new(Self { id: id.to_owned(), ..Self::default() })
    }

    fn answer(&self, answer: Option<Answer>) {
        *self.answer.lock().unwrap() = answer;
    }
}

#[async_trait]
impl Embedder for Words {
    fn model_id(&self) -> &str {
        &self.id
    }

    async fn embed(&self, texts: &[String], purpose: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors: Vec<Vec<f32>> = texts
            .iter()
            .map(|text| {
                let mut vector = vec![0.0; 256];
                vector[255] = 0.01;
                for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
                    let hash =
                        word.to_lowercase().bytes().fold(7usize, |h, b| h * 31 + usize::from(b));
                    vector[hash % 255] += 1.0;
                }
                vector
            })
            .collect();
        match *self.answer.lock().unwrap() {
            Some(Answer::Fail) => {
                return Err(EmbedError::new(EmbedErrorKind::Transport, "the service is down"));
            }
            Some(Answer::OneShort) => {
                vectors.pop();
            }
            Some(Answer::NotANumber) => vectors[0][3] = f32::NAN,
            None => {}
        }
        let counter = if purpose == Purpose::Document { &self.documents } else { &self.queries };
        counter.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(vectors)
    }
}

/// Tool vectors are kept by spec hash: on disk, a second build embeds nothing and a changed
/// tool alone is embedded again; in memory, `rebuild` does the same; a request is embedded
/// once however often it is prepared.
#[tokio::test]
async fn tool_vectors_are_made_once_per_spec_and_model() {
    let catalog = catalog();
    let dir = scratch("embeddings-persisted");
    let words = Words::new("words-v1");
    let build = async |embedder: Arc<Words>, catalog: &ToolCatalog| {
        let builder = HybridSelector::builder(embedder).persist_in(&dir).batch_size(100);
        builder.build(catalog).await.unwrap()
    };
    let first = build(Arc::clone(&words), &catalog).await;
    assert_eq!(words.documents.load(Ordering::SeqCst), 500);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "one file per model");
    let second = build(Arc::clone(&words), &catalog).await;
    assert_eq!(words.documents.load(Ordering::SeqCst), 500, "read back, not embedded");
    assert_eq!(second.dimensions(), 256);

    // One tool changed (another description): it alone is embedded again, on disk and in memory.
    let mut builder = ToolCatalog::builder();
    let tools = tool_runtime::catalog::ToolSource::tools(&catalog);
    for tool in tools.iter().filter(|tool| tool.name() != "mail__archive_draft") {
        builder = builder.register_bound(Arc::clone(tool), "test".to_owned());
    }
    let changed = tool_runtime::runtime::DynamicTool::builder(
        "mail__archive_draft",
        "Move a draft out of the inbox without deleting it.",
        serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .allow_open_schema()
    .effect(tool_runtime::spec::ToolEffect::ReadOnly)
    .build(|args, _, _| async move { Ok::<Value, tool_runtime::runtime::ToolError>(args) })
    .unwrap();
    let changed = builder.register_dynamic(changed).build().unwrap();
    let third = build(Arc::clone(&words), &changed).await;
    assert_eq!(words.documents.load(Ordering::SeqCst), 501);
    // `rebuild` of a selector kept in memory only: what it knew is not embedded again.
    let memory = Words::new("words-memory");
    let in_memory = HybridSelector::builder(memory.clone()).build(&catalog).await.unwrap();
    let rebuilt = in_memory.rebuild(&changed).await.unwrap();
    assert_eq!(memory.documents.load(Ordering::SeqCst), 501, "all but the changed one known");
    assert_eq!(rebuilt.len(), third.len());
    // One persisted reads the changed tool's vector from disk: nothing embedded.
    first.rebuild(&changed).await.unwrap();
    assert_eq!(words.documents.load(Ordering::SeqCst), 501);

    // Another model id: a file of its own, every tool embedded.
    let other = Words::new("words-v2");
    build(Arc::clone(&other), &catalog).await;
    assert_eq!(other.documents.load(Ordering::SeqCst), 500);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);

    // A file that is not a cache is made again, not an error.
    for entry in std::fs::read_dir(&dir).unwrap() {
        std::fs::write(entry.unwrap().path(), b"garbage").unwrap();
    }
    build(Arc::clone(&other), &catalog).await;
    assert_eq!(other.documents.load(Ordering::SeqCst), 1000);

    let requests = ["Archive my draft".to_owned(), "Archive my draft".to_owned(), String::new()];
    second.prepare(&requests).await.unwrap();
    second.prepare(&requests[..1]).await.unwrap();
    assert_eq!(words.queries.load(Ordering::SeqCst), 1, "one request, embedded once");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An embedder that answers another number of vectors, or a value that is not a number, fails
/// the build with a `Response` error naming the model; a directory that cannot be written is a
/// `Cache` error.
#[tokio::test]
async fn unusable_vectors_and_caches_are_typed_errors() {
    let catalog = catalog();
    for (answer, says) in [(Answer::OneShort, "vectors for"), (Answer::NotANumber, "finite")] {
        let words = Words::new("words-bad");
        words.answer(Some(answer));
        let error = HybridSelector::builder(words).build(&catalog).await.unwrap_err();
        assert_eq!(error.kind(), EmbedErrorKind::Response, "{error}");
        assert!(error.message().contains("words-bad") && error.message().contains(says), "{error}");
    }
    let file = scratch("embeddings-not-a-directory");
    std::fs::write(&file, b"a file").unwrap();
    let error = HybridSelector::builder(Words::new("words-v1"))
        .persist_in(file.join("below"))
        .build(&catalog)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), EmbedErrorKind::Cache, "{error}");
    std::fs::remove_file(&file).unwrap();
}

/// In an agent run the selector is prepared before each selection. When the embedder fails,
/// the run goes on: the failure is reported (`SelectorFailed`) and the turn offers what BM25
/// alone would.
#[tokio::test]
async fn an_agent_prepares_the_selector_and_goes_on_without_it() {
    let catalog = Arc::new(catalog());
    let words = Words::new("words-v1");
    let hybrid = HybridSelector::builder(Arc::clone(&words) as Arc<dyn Embedder>)
        .top_k(5)
        .build(catalog.as_ref())
        .await
        .unwrap();
    let hybrid = Arc::new(hybrid);
    let runner = ToolRunner::builder(Arc::clone(&catalog)).policy(everything()).build();
    let request = "Could you archive the draft about the offsite?";
    // Failing first: the request is embedded only once it works, and kept.
    for fail in [true, false] {
        words.answer(fail.then_some(Answer::Fail));
        let model = Arc::new(ScriptedModel::new([ScriptedTurn::openai_text("Done.")]));
        let agent = Agent::new(model, runner.clone()).with_selector(hybrid.clone());
        let events = Mutex::new(Vec::new());
        let output = agent
            .run(vec![Message::user(request)], &context("run", "user", "t"), &|event| {
                if let AgentEvent::SelectorFailed { message, .. } = &event {
                    events.lock().unwrap().push(message.clone());
                }
            })
            .await;
        let failures = events.into_inner().unwrap();
        let visible = visible(&catalog);
        if fail {
            assert_eq!(failures, ["the service is down"]);
            let bm25 = Bm25Selector::new(catalog.as_ref()).top_k(5);
            let expected: Vec<String> =
                bm25.select(request, &visible).names().map(str::to_owned).collect();
            assert_eq!(output.done.offered[0], expected, "keywords alone");
        } else {
            assert!(failures.is_empty(), "{failures:?}");
            assert!(output.done.offered[0].iter().any(|name| name == "mail__archive_draft"));
        }
        // Prepared once by the agent: selecting again now uses the kept vector.
        let again = hybrid.select(request, &visible);
        assert_eq!(again.names().collect::<Vec<_>>(), output.done.offered[0]);
        words.answer(None);
        hybrid.prepare(&[request.to_owned()]).await.unwrap();
    }
    assert_eq!(words.queries.load(Ordering::SeqCst), 1, "embedded once, when it first worked");
}
