//! Text to vectors, for selection by meaning ([`HybridSelector`](super::select::HybridSelector)).
//!
//! An [`Embedder`] turns texts into vectors whose cosine says how close their meanings are. Two
//! come with the crate:
//!
//! - `agent::OpenAiEmbeddings` (feature `http`, beside the chat clients
//!   whose transport it shares): any OpenAI-compatible `POST {base}/embeddings`
//!   endpoint, OpenAI's own or a local server's (Ollama, vLLM, llama.cpp's `llama-server
//!   --embeddings`).
//! - `LocalEmbedder` (feature `embed-local`, in neither the default nor the lean build): a
//!   BERT sentence-embedding model such as all-MiniLM-L6-v2, loaded from files on disk and run
//!   on the CPU in pure Rust ([candle](https://docs.rs/candle-core)). Nothing is downloaded.
//!
//! An application brings any other model by implementing the trait:
//!
//! ```
//! use async_trait::async_trait;
//! use tool_runtime::catalog::embed::{EmbedError, Embedder, Purpose};
//!
//! /// Counts the letters `a` to `z`: a toy, but a real embedder's shape.
//! #[derive(Debug)]
//! struct Letters;
//!
//! #[async_trait]
//! impl Embedder for Letters {
//!     fn model_id(&self) -> &str {
//!         "letters-v1"
//!     }
//!
//!     async fn embed(&self, texts: &[String], _: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
//!         Ok(texts
//!             .iter()
//!             .map(|text| {
//!                 let mut counts = vec![0.0; 26];
//!                 for byte in text.to_ascii_lowercase().bytes().filter(u8::is_ascii_lowercase) {
//!                     counts[usize::from(byte - b'a')] += 1.0;
//!                 }
//!                 counts
//!             })
//!             .collect())
//!     }
//! }
//! # let _ = Letters;
//! ```

use std::fmt;

use async_trait::async_trait;
use serde::Serialize;

#[cfg(feature = "embed-local")]
mod local;
#[cfg(feature = "embed-local")]
pub use local::LocalEmbedder;

/// What a text to embed is: some models (E5, nomic-embed, BGE with instructions) embed a
/// question and the passage that answers it with different prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// What a user asked: the text a selector ranks tools for.
    Query,
    /// What is searched: a tool's name, description and arguments.
    Document,
}

/// Turns texts into vectors whose cosine measures how alike their meanings are; see the
/// [module docs](self).
///
/// Implementations return exactly one vector per text, in order, all of one length. Vectors
/// need not be normalised: [`HybridSelector`](super::select::HybridSelector) normalises them
/// and refuses a count, a length or a value (NaN, infinite, all zero) it cannot use with an
/// [`EmbedErrorKind::Response`] error.
#[async_trait]
pub trait Embedder: Send + Sync + fmt::Debug {
    /// Names the model, and changes whenever its vectors would: vectors made by different
    /// models never mix, and the selector's cache of tool vectors is keyed by it (with each
    /// tool's [spec hash](crate::spec::ToolSpec::spec_hash)).
    fn model_id(&self) -> &str;

    /// One vector per text of `texts`, in order.
    ///
    /// # Errors
    ///
    /// An [`EmbedError`] saying what failed: the model's files, the endpoint, its answer.
    async fn embed(&self, texts: &[String], purpose: Purpose) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Texts could not be embedded, or the vectors kept on disk could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedError {
    kind: EmbedErrorKind,
    message: String,
}

/// The kind of an [`EmbedError`]. Serialised in snake case: `"model"`, `{"status": 503}`.
///
/// ```
/// use tool_runtime::catalog::embed::EmbedErrorKind;
///
/// assert_eq!(serde_json::to_string(&EmbedErrorKind::Status(429)).unwrap(), r#"{"status":429}"#);
/// assert_eq!(serde_json::to_string(&EmbedErrorKind::Cache).unwrap(), r#""cache""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EmbedErrorKind {
    /// A local model's files are missing, unreadable, or not a model this crate runs.
    Model,
    /// The endpoint answered with an error status (after any retries).
    Status(u16),
    /// The endpoint could not be reached, or the connection dropped.
    Transport,
    /// The endpoint took longer than its timeout.
    Timeout,
    /// The request could not be built.
    Request,
    /// The answer is not what was asked for: not the documented JSON, another number of
    /// vectors than texts, vectors of different lengths, or values that are not finite.
    Response,
    /// The tool vectors kept on disk could not be read or written (a directory that cannot be
    /// created, a file that cannot be replaced). A file that is not a cache this crate wrote is
    /// no error: it is made again.
    Cache,
}

impl EmbedError {
    /// An error of `kind` saying `message`.
    ///
    /// ```
    /// use tool_runtime::catalog::embed::{EmbedError, EmbedErrorKind};
    ///
    /// let error = EmbedError::new(EmbedErrorKind::Transport, "the embedding service is down");
    /// assert_eq!(error.kind(), EmbedErrorKind::Transport);
    /// assert_eq!(error.to_string(), "the embedding service is down");
    /// ```
    pub fn new(kind: EmbedErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    /// What kind of failure it is.
    #[must_use]
    pub fn kind(&self) -> EmbedErrorKind {
        self.kind
    }

    /// What went wrong.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EmbedError {}

/// `vector` scaled to length 1, or why it cannot be: a value that is not finite, or all zero.
pub(crate) fn normalised(mut vector: Vec<f32>) -> Result<Vec<f32>, &'static str> {
    if vector.iter().any(|value| !value.is_finite()) {
        return Err("holds a value that is not a finite number");
    }
    let norm = vector.iter().map(|value| value * value).sum::<f32>().sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err("has no direction (all zero, or too large to measure)");
    }
    vector.iter_mut().for_each(|value| *value /= norm);
    Ok(vector)
}

/// Checks what an embedder returned for `asked` texts: one vector each, all of `dimensions`
/// values (the first vector's when `None`), each finite and not zero; returns them normalised.
pub(crate) fn checked(
    model: &str,
    asked: usize,
    vectors: Vec<Vec<f32>>,
    dimensions: Option<usize>,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let refuse = |message: String| EmbedError::new(EmbedErrorKind::Response, message);
    if vectors.len() != asked {
        return Err(refuse(format!(
            "the embedding model `{model}` returned {} vectors for {asked} texts",
            vectors.len()
        )));
    }
    let Some(dimensions) = dimensions.or_else(|| vectors.first().map(Vec::len)) else {
        return Ok(vectors);
    };
    vectors
        .into_iter()
        .enumerate()
        .map(|(at, vector)| {
            if vector.len() != dimensions {
                return Err(refuse(format!(
                    "the embedding model `{model}` returned a vector of {} values for text {at}, \
                     where the others have {dimensions}",
                    vector.len()
                )));
            }
            normalised(vector).map_err(|why| {
                refuse(format!("the embedding model `{model}`'s vector for text {at} {why}"))
            })
        })
        .collect()
}

/// The dot product of two vectors of one length (their cosine, when both are normalised).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight partial sums the compiler keeps in one vector register.
    let mut sums = [0f32; 8];
    let (a_chunks, a_rest) = a.as_chunks::<8>();
    let (b_chunks, b_rest) = b.as_chunks::<8>();
    for (a, b) in a_chunks.iter().zip(b_chunks) {
        for lane in 0..8 {
            sums[lane] += a[lane] * b[lane];
        }
    }
    let rest: f32 = a_rest.iter().zip(b_rest).map(|(a, b)| a * b).sum();
    sums.iter().sum::<f32>() + rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_normalised_and_bad_ones_refused() {
        let out = checked("m", 2, vec![vec![3.0, 4.0], vec![0.0, 2.0]], None).unwrap();
        assert_eq!(out, [vec![0.6, 0.8], vec![0.0, 1.0]]);
        let error = checked("m", 2, vec![vec![1.0]], None).unwrap_err();
        assert_eq!(error.kind(), EmbedErrorKind::Response);
        assert!(error.message().contains("1 vectors for 2 texts"), "{error}");
        let error = checked("m", 2, vec![vec![1.0, 0.0], vec![1.0]], None).unwrap_err();
        assert!(error.message().contains("vector of 1 values for text 1"), "{error}");
        let error = checked("m", 1, vec![vec![f32::NAN, 1.0]], None).unwrap_err();
        assert!(error.message().contains("not a finite number"), "{error}");
        let error = checked("m", 1, vec![vec![0.0, 0.0]], None).unwrap_err();
        assert!(error.message().contains("no direction"), "{error}");
        let error = checked("m", 1, vec![vec![1.0, 0.0]], Some(3)).unwrap_err();
        assert!(error.message().contains("where the others have 3"), "{error}");
    }

    #[test]
    fn dot_sums_every_lane_and_the_rest() {
        let a: Vec<f32> = (0..19).map(|n| n as f32).collect();
        let b = vec![2.0; 19];
        assert!((dot(&a, &b) - 342.0).abs() < 1e-4);
    }
}
