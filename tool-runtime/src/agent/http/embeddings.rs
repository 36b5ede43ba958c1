//! OpenAI-compatible embeddings over HTTP (`POST {base}/embeddings`), for selection by meaning.

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde::Deserialize;
use serde_json::{Value, json};

use super::retry::RetryPolicy;
use super::transport::{Delivered, Timeouts, Transport};
use super::{HttpConfigError, Settings, authority, shared_setters};
use crate::adapters::{Adapter, OpenAiChat};
use crate::agent::{ModelError, ModelErrorKind};
use crate::catalog::embed::{EmbedError, EmbedErrorKind, Embedder, Purpose};

const BASE_URL: &str = "https://api.openai.com/v1";
const MODEL: &str = "text-embedding-3-small";
/// What `from_env` needs one of.
const VARIABLES: &[&str] = &["OPENAI_API_KEY", "OPENAI_BASE_URL"];

/// An [`Embedder`] over an OpenAI-compatible embeddings endpoint: OpenAI itself, Ollama's
/// `/v1`, vLLM, llama.cpp's `llama-server --embeddings`, LM Studio.
///
/// Each call of [`embed`](Embedder::embed) is one `POST {base}/embeddings` with
/// `{"model", "input": [texts], "encoding_format": "float"}`, the key (if any) as
/// `Authorization: Bearer`. Retries, timeouts, the refusal of redirects and the scrubbing of
/// the key from messages are those of the [chat clients](super); a response must be
/// `application/json`. The vectors come back in the order of `data[].index`, which must name
/// each text once.
///
/// [`model_id`](Embedder::model_id) is `{model}@{host}` (plus the dimensions and prefixes
/// when set): the same model name on two servers may be two models.
///
/// ```
/// use tool_runtime::agent::OpenAiEmbeddings;
/// use tool_runtime::catalog::embed::Embedder;
///
/// let embedder = OpenAiEmbeddings::builder()
///     .base_url("http://localhost:11434/v1")
///     .model("nomic-embed-text")
///     .query_prefix("search_query: ")
///     .document_prefix("search_document: ")
///     .build()?;
/// assert_eq!(embedder.endpoint(), "http://localhost:11434/v1/embeddings");
/// assert!(embedder.model_id().starts_with("nomic-embed-text@localhost:11434"));
/// # Ok::<(), tool_runtime::agent::HttpConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiEmbeddings {
    transport: Transport,
    model: String,
    model_id: String,
    dimensions: Option<u32>,
    prefixes: [String; 2],
    body: serde_json::Map<String, Value>,
}

/// Settings of an [`OpenAiEmbeddings`] client; [`build`](OpenAiEmbeddingsBuilder::build)
/// makes it.
#[derive(Debug, Clone)]
#[must_use]
pub struct OpenAiEmbeddingsBuilder {
    settings: Settings,
    dimensions: Option<u32>,
    /// Put before a request's text, and before a tool's.
    prefixes: [String; 2],
}

impl OpenAiEmbeddings {
    /// A builder with the defaults: `https://api.openai.com/v1`, no key,
    /// `text-embedding-3-small`, the model's own dimensions, no prefixes.
    pub fn builder() -> OpenAiEmbeddingsBuilder {
        OpenAiEmbeddingsBuilder {
            settings: Settings::new(BASE_URL, MODEL),
            dimensions: None,
            prefixes: [String::new(), String::new()],
        }
    }

    /// A builder with `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_EMBEDDING_MODEL` read
    /// through `var` (empty values count as unset; `OPENAI_MODEL` names a chat model and is
    /// not read). With neither a base URL nor a key (and none given later),
    /// [`build`](OpenAiEmbeddingsBuilder::build) fails with
    /// [`HttpConfigError::NotConfigured`].
    ///
    /// ```
    /// use tool_runtime::agent::OpenAiEmbeddings;
    /// use tool_runtime::catalog::embed::Embedder;
    ///
    /// let vars = [("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"), ("OPENAI_MODEL", "qwen"),
    ///     ("OPENAI_EMBEDDING_MODEL", "bge-small")];
    /// let lookup = |name: &str| vars.iter().find(|(key, _)| *key == name).map(|(_, v)| v.to_string());
    /// let embedder = OpenAiEmbeddings::builder_from_vars(lookup).build()?;
    /// assert_eq!(embedder.model(), "bge-small");
    /// # Ok::<(), tool_runtime::agent::HttpConfigError>(())
    /// ```
    pub fn builder_from_vars(var: impl Fn(&str) -> Option<String>) -> OpenAiEmbeddingsBuilder {
        let mut builder = Self::builder();
        let chat_model_free = |name: &str| if name == "OPENAI_MODEL" { None } else { var(name) };
        builder.settings = builder.settings.read_vars("OPENAI", VARIABLES, &chat_model_free);
        if let Some(model) = var("OPENAI_EMBEDDING_MODEL").filter(|model| !model.is_empty()) {
            builder.settings.model = model;
        }
        builder
    }

    /// A builder with `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_EMBEDDING_MODEL` read
    /// from the environment.
    pub fn builder_from_env() -> OpenAiEmbeddingsBuilder {
        Self::builder_from_vars(|name| std::env::var(name).ok())
    }

    /// The model's name, as sent.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The URL requests go to.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        self.transport.url.as_str()
    }
}

impl OpenAiEmbeddingsBuilder {
    shared_setters! {
        base_url: "The API's base URL, up to and including `/v1` (`http://localhost:11434/v1`).",
        api_key: "The key, sent as `Authorization: Bearer {key}`.",
        header: "A header sent with every request (`OpenAI-Organization`, a proxy's token).",
        body_field: "A field added to every request body (`user`, a server's own options). `model`, `input`, `encoding_format` and `dimensions` are the client's.",
    }

    /// Asks for vectors of `dimensions` values (`dimensions` in the request; OpenAI's
    /// `text-embedding-3` models shorten theirs).
    pub fn dimensions(mut self, dimensions: u32) -> Self {
        self.dimensions = Some(dimensions);
        self
    }

    /// Put before each request's text (`"search_query: "` for nomic-embed-text, `"query: "`
    /// for E5).
    pub fn query_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefixes[0] = prefix.into();
        self
    }

    /// Put before each tool's text (`"search_document: "`, `"passage: "`).
    pub fn document_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefixes[1] = prefix.into();
        self
    }

    /// The client.
    ///
    /// # Errors
    ///
    /// [`HttpConfigError`] for a base URL, key or header that cannot be used, settings read
    /// from an environment that configures nothing, or an HTTP client that cannot be set up.
    pub fn build(self) -> Result<OpenAiEmbeddings, HttpConfigError> {
        let auth = |key: &str| (AUTHORIZATION, format!("Bearer {key}"));
        let label = |url: &reqwest::Url| match url.host_str() {
            Some("api.openai.com") => "OpenAI".to_owned(),
            _ => format!("the OpenAI-compatible server at {}", authority(url)),
        };
        let transport =
            self.settings.transport("/embeddings", label, auth, None, HeaderMap::new())?;
        let mut model_id = format!("{}@{}", self.settings.model, authority(&transport.url));
        if let Some(dimensions) = self.dimensions {
            model_id.push_str(&format!(" dimensions={dimensions}"));
        }
        for (name, prefix) in ["query", "document"].iter().zip(&self.prefixes) {
            if !prefix.is_empty() {
                model_id.push_str(&format!(" {name}_prefix={prefix:?}"));
            }
        }
        Ok(OpenAiEmbeddings {
            transport,
            model: self.settings.model,
            model_id,
            dimensions: self.dimensions,
            prefixes: self.prefixes,
            body: self.settings.body,
        })
    }
}

/// The part of an embeddings response the client reads.
#[derive(Deserialize)]
struct Response {
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    embedding: Vec<f32>,
    index: usize,
}

#[async_trait]
impl Embedder for OpenAiEmbeddings {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    async fn embed(&self, texts: &[String], purpose: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let [query_prefix, document_prefix] = &self.prefixes;
        let prefix = match purpose {
            Purpose::Query => query_prefix,
            Purpose::Document => document_prefix,
        };
        let input: Vec<String> = texts.iter().map(|text| format!("{prefix}{text}")).collect();
        let mut body = self.body.clone();
        body.insert("model".to_owned(), json!(self.model));
        body.insert("input".to_owned(), json!(input));
        body.insert("encoding_format".to_owned(), json!("float"));
        if let Some(dimensions) = self.dimensions {
            body.insert("dimensions".to_owned(), json!(dimensions));
        }
        let body = serde_json::to_vec(&body).map_err(|error| {
            EmbedError::new(
                EmbedErrorKind::Request,
                format!("the request cannot be built: {error}"),
            )
        })?;
        // A body that is not JSON streams into a session whose events are dropped: it is
        // refused below whatever it holds.
        let adapter = OpenAiChat::new();
        let session = || adapter.stream();
        let label = &self.transport.label;
        let bytes = match self.transport.exchange(body, &session, &|_| {}).await {
            Ok(Delivered::Whole(bytes)) => bytes,
            Ok(Delivered::Streamed(_)) => {
                return Err(EmbedError::new(
                    EmbedErrorKind::Response,
                    format!("{label} answered the embeddings request with a body that is not JSON"),
                ));
            }
            Err(error) => return Err(from_model_error(error)),
        };
        let decoded: Response = serde_json::from_slice(&bytes).map_err(|error| {
            let message = format!("the embeddings response of {label} cannot be decoded: {error}");
            let error = self.transport.scrub(ModelError::new(ModelErrorKind::Decode, message));
            EmbedError::new(EmbedErrorKind::Response, error.message())
        })?;
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for datum in decoded.data {
            let slot = vectors.get_mut(datum.index).filter(|slot| slot.is_none());
            let Some(slot) = slot else {
                return Err(EmbedError::new(
                    EmbedErrorKind::Response,
                    format!(
                        "the embeddings response of {label} holds index {} for {} texts, or twice",
                        datum.index,
                        texts.len()
                    ),
                ));
            };
            *slot = Some(datum.embedding);
        }
        let answered = vectors.iter().filter(|vector| vector.is_some()).count();
        vectors.into_iter().collect::<Option<Vec<_>>>().ok_or_else(|| {
            EmbedError::new(
                EmbedErrorKind::Response,
                format!("{label} returned {answered} embeddings for {} texts", texts.len()),
            )
        })
    }
}

/// The transport's failure as an embedding error of the same kind and message.
fn from_model_error(error: ModelError) -> EmbedError {
    let kind = match error.kind() {
        ModelErrorKind::Status(status) => EmbedErrorKind::Status(status),
        ModelErrorKind::Transport => EmbedErrorKind::Transport,
        ModelErrorKind::Timeout => EmbedErrorKind::Timeout,
        ModelErrorKind::Request => EmbedErrorKind::Request,
        _ => EmbedErrorKind::Response,
    };
    EmbedError::new(kind, error.message())
}
