//! A BERT sentence-embedding model run on the CPU (feature `embed-local`).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use candle_core::{D, DType, Device, Tensor};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use super::{EmbedError, EmbedErrorKind, Embedder, Purpose, normalised};

/// Texts run through the model at once.
const BATCH: usize = 32;
/// What a padding position adds to an attention score: nothing attends to it.
const MASKED: f64 = -1.0e9;

/// A BERT sentence-embedding model (all-MiniLM-L6-v2, all-MiniLM-L12-v2, BGE small, or any
/// `BertModel` in the sentence-transformers layout), loaded from a directory and run on the
/// CPU in pure Rust with [candle](https://docs.rs/candle-core). Feature `embed-local`.
///
/// The directory holds what a sentence-transformers model is published with:
///
/// | file | what |
/// | --- | --- |
/// | `config.json` | the BERT configuration (`model_type` `bert`, `hidden_act` `gelu`) |
/// | `tokenizer.json` | the tokenizer, read with the `tokenizers` crate |
/// | `model.safetensors` | the weights (`float32`; names with or without `bert.`) |
/// | `sentence_bert_config.json` | optional: `max_seq_length` (default 256 tokens) |
/// | `1_Pooling/config.json` | optional: mean pooling (the default) or the `[CLS]` token |
///
/// Nothing is downloaded: the files are read once, in [`load`](Self::load). Each text is cut
/// to `max_seq_length` tokens; vectors are pooled, then normalised, as sentence-transformers
/// does, so they agree with its `encode` (the crate's tests hold 20 sentences to a cosine of
/// at least 0.999 with vectors computed by sentence-transformers). Embedding runs on Tokio's
/// blocking threads, in batches of 32 texts of similar length.
///
/// [`model_id`](Embedder::model_id) is `bert-local:` and a hash of the four files' contents,
/// so vectors kept on disk are made again when any of them changes.
///
/// ```no_run
/// use std::sync::Arc;
/// use tool_runtime::catalog::embed::LocalEmbedder;
/// use tool_runtime::catalog::select::HybridSelector;
/// # async fn demo(catalog: &tool_runtime::catalog::ToolCatalog) -> Result<(), Box<dyn std::error::Error>> {
///
/// let model = LocalEmbedder::load("models/all-MiniLM-L6-v2")?;
/// let selector = HybridSelector::builder(Arc::new(model))
///     .persist_in("cache/embeddings")
///     .build(catalog)
///     .await?;
/// # let _ = selector; Ok(()) }
/// ```
#[derive(Clone)]
pub struct LocalEmbedder {
    model: Arc<Bert>,
    id: String,
    dir: PathBuf,
}

impl fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("dir", &self.dir)
            .field("id", &self.id)
            .field("dimensions", &self.model.hidden)
            .field("layers", &self.model.layers.len())
            .field("max_sequence", &self.model.max_sequence)
            .finish_non_exhaustive()
    }
}

/// The parts of `config.json` the model is built from.
#[derive(Deserialize)]
struct Config {
    model_type: String,
    hidden_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_act")]
    hidden_act: String,
    #[serde(default = "default_eps")]
    layer_norm_eps: f64,
    intermediate_size: Option<usize>,
}

fn default_act() -> String {
    "gelu".to_owned()
}

fn default_eps() -> f64 {
    1e-12
}

#[derive(Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default = "yes")]
    pooling_mode_mean_tokens: bool,
}

fn yes() -> bool {
    true
}

impl LocalEmbedder {
    /// Loads the model in `dir` (see the [type docs](Self) for its files).
    ///
    /// # Errors
    ///
    /// [`EmbedErrorKind::Model`] naming the file that is missing, unreadable or not what a
    /// BERT model in the sentence-transformers layout holds (another architecture, another
    /// activation or pooling, a weight of another shape).
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, EmbedError> {
        let dir = dir.as_ref();
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|error| {
                model_error(format!("{} cannot be read: {error}", dir.join(name).display()))
            })
        };
        let optional = |name: &str| std::fs::read(dir.join(name)).ok();
        let config_bytes = read("config.json")?;
        let tokenizer_bytes = read("tokenizer.json")?;
        let weights = read("model.safetensors")?;
        let sentence = optional("sentence_bert_config.json");
        let pooling = optional("1_Pooling/config.json");

        let config: Config = parse(dir, "config.json", &config_bytes)?;
        let max_seq_length = match &sentence {
            Some(bytes) => parse::<SentenceConfig>(dir, "sentence_bert_config.json", bytes)?
                .max_seq_length
                .unwrap_or(256),
            None => 256,
        };
        let cls = match &pooling {
            Some(bytes) => {
                let pooling: PoolingConfig = parse(dir, "1_Pooling/config.json", bytes)?;
                if !pooling.pooling_mode_cls_token && !pooling.pooling_mode_mean_tokens {
                    return Err(model_error(format!(
                        "{}: only mean and [CLS] pooling are supported",
                        dir.join("1_Pooling/config.json").display()
                    )));
                }
                pooling.pooling_mode_cls_token && !pooling.pooling_mode_mean_tokens
            }
            None => false,
        };
        let max_sequence = max_seq_length.min(config.max_position_embeddings);

        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes).map_err(|error| {
            model_error(format!(
                "{} is no tokenizer: {error}",
                dir.join("tokenizer.json").display()
            ))
        })?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_sequence,
                ..Default::default()
            }))
            .map_err(|error| model_error(format!("the tokenizer cannot truncate: {error}")))?;

        let model =
            Bert::new(&config, &weights, tokenizer, max_sequence, cls).map_err(|error| {
                model_error(format!("{}: {error}", dir.join("model.safetensors").display()))
            })?;
        let mut hash = Sha256::new();
        for part in [&config_bytes, &tokenizer_bytes, &weights] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        hash.update(max_sequence.to_le_bytes());
        hash.update([u8::from(cls)]);
        let digest = crate::digest::hex(&hash.finalize());
        Ok(Self {
            model: Arc::new(model),
            id: format!("bert-local:{}", &digest[..32]),
            dir: dir.to_owned(),
        })
    }

    /// How many values each vector has (384 for all-MiniLM-L6-v2).
    #[must_use]
    pub fn dimensions(&self) -> usize {
        self.model.hidden
    }

    /// Embeds `texts` on the calling thread (what [`embed`](Embedder::embed) runs on a
    /// blocking thread): for benchmarks and code that is not async.
    ///
    /// # Errors
    ///
    /// [`EmbedErrorKind::Model`] when the tokenizer or the model fails on a text.
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.model.embed(texts)
    }
}

#[async_trait]
impl Embedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    async fn embed(&self, texts: &[String], _: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let model = Arc::clone(&self.model);
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || model.embed(&texts))
            .await
            .map_err(|error| model_error(format!("the embedding thread failed: {error}")))?
    }
}

fn model_error(message: String) -> EmbedError {
    EmbedError::new(EmbedErrorKind::Model, message)
}

fn parse<T: serde::de::DeserializeOwned>(
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<T, EmbedError> {
    serde_json::from_slice(bytes).map_err(|error| {
        model_error(format!("{} cannot be read: {error}", dir.join(name).display()))
    })
}

/// `x · weightᵀ + bias`, the weight kept transposed.
struct Linear {
    weight: Tensor,
    bias: Tensor,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        x.broadcast_matmul(&self.weight)?.broadcast_add(&self.bias)
    }
}

/// Layer normalisation over the last dimension.
struct Norm {
    gamma: Tensor,
    beta: Tensor,
    eps: f64,
}

impl Norm {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let mean = x.mean_keepdim(D::Minus1)?;
        let centred = x.broadcast_sub(&mean)?;
        let variance = centred.sqr()?.mean_keepdim(D::Minus1)?;
        let scaled = centred.broadcast_div(&variance.affine(1.0, self.eps)?.sqrt()?)?;
        scaled.broadcast_mul(&self.gamma)?.broadcast_add(&self.beta)
    }
}

/// One encoder layer: self-attention, then the feed-forward block, each with its residual and
/// normalisation after it.
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

struct Bert {
    tokenizer: Tokenizer,
    words: Tensor,
    positions: Tensor,
    /// The embedding of token type 0 (every token of a single sentence).
    token_type: Tensor,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
    max_sequence: usize,
    /// Pool the `[CLS]` token's vector rather than the mean of all tokens'.
    cls: bool,
}

impl Bert {
    fn new(
        config: &Config,
        weights: &[u8],
        tokenizer: Tokenizer,
        max_sequence: usize,
        cls: bool,
    ) -> Result<Self, String> {
        if config.model_type != "bert" {
            return Err(format!("the model type `{}` is not `bert`", config.model_type));
        }
        if config.hidden_act != "gelu" {
            return Err(format!("the activation `{}` is not `gelu`", config.hidden_act));
        }
        let hidden = config.hidden_size;
        if config.num_attention_heads == 0 || !hidden.is_multiple_of(config.num_attention_heads) {
            return Err(format!(
                "{hidden} hidden values do not split into {} heads",
                config.num_attention_heads
            ));
        }
        let tensors = candle_core::safetensors::load_buffer(weights, &Device::Cpu)
            .map_err(|error| format!("not safetensors: {error}"))?;
        let mut weights = Weights(tensors);
        let eps = config.layer_norm_eps;
        let inner = config.intermediate_size.unwrap_or(hidden * 4);
        let embedding_norm = weights.norm("embeddings.LayerNorm", hidden, eps)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for layer in 0..config.num_hidden_layers {
            let at = |part: &str| format!("encoder.layer.{layer}.{part}");
            layers.push(Layer {
                query: weights.linear(&at("attention.self.query"), hidden, hidden)?,
                key: weights.linear(&at("attention.self.key"), hidden, hidden)?,
                value: weights.linear(&at("attention.self.value"), hidden, hidden)?,
                attention_out: weights.linear(&at("attention.output.dense"), hidden, hidden)?,
                attention_norm: weights.norm(&at("attention.output.LayerNorm"), hidden, eps)?,
                intermediate: weights.linear(&at("intermediate.dense"), hidden, inner)?,
                output: weights.linear(&at("output.dense"), inner, hidden)?,
                output_norm: weights.norm(&at("output.LayerNorm"), hidden, eps)?,
            });
        }
        let words = weights.table("embeddings.word_embeddings.weight", hidden)?;
        let positions = weights.table("embeddings.position_embeddings.weight", hidden)?;
        let types = weights.table("embeddings.token_type_embeddings.weight", hidden)?;
        if positions.dims()[0] < max_sequence {
            return Err(format!("{} positions for {max_sequence} tokens", positions.dims()[0]));
        }
        let token_type = types.get(0).map_err(|error| error.to_string())?;
        Ok(Self {
            tokenizer,
            words,
            positions,
            token_type,
            embedding_norm,
            layers,
            heads: config.num_attention_heads,
            hidden,
            max_sequence,
            cls,
        })
    }

    /// One vector per text, normalised.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut encoded = Vec::with_capacity(texts.len());
        for text in texts {
            let encoding = self
                .tokenizer
                .encode(text.as_str(), true)
                .map_err(|error| model_error(format!("the tokenizer failed on a text: {error}")))?;
            encoded.push(encoding.get_ids().to_vec());
        }
        // Texts of similar lengths together, so little of each batch is padding.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&at| encoded[at].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            let ids: Vec<&[u32]> = batch.iter().map(|&at| encoded[at].as_slice()).collect();
            let vectors = self
                .forward(&ids)
                .map_err(|error| model_error(format!("the model failed: {error}")))?;
            for (&at, vector) in batch.iter().zip(vectors) {
                out[at] = normalised(vector).map_err(|why| {
                    model_error(format!("the model's vector for text {at} {why}"))
                })?;
            }
        }
        Ok(out)
    }

    /// The pooled vectors of a batch of token sequences (at least one token each).
    fn forward(&self, ids: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let batch = ids.len();
        let length = ids.iter().map(|ids| ids.len()).max().unwrap_or(0).clamp(1, self.max_sequence);
        let mut flat = Vec::with_capacity(batch * length);
        let mut mask = Vec::with_capacity(batch * length);
        for ids in ids {
            for at in 0..length {
                let id = ids.get(at).copied();
                flat.push(id.unwrap_or(0));
                mask.push(if id.is_some() { 1f32 } else { 0.0 });
            }
        }
        let device = Device::Cpu;
        let flat = Tensor::from_vec(flat, (batch * length,), &device)?;
        let mask = Tensor::from_vec(mask, (batch, length), &device)?;
        let words = self.words.index_select(&flat, 0)?.reshape((batch, length, self.hidden))?;
        let positions = self.positions.narrow(0, 0, length)?;
        let embedded = words.broadcast_add(&positions)?.broadcast_add(&self.token_type)?;
        let mut x = self.embedding_norm.forward(&embedded)?;
        // 0 where a token is, a large negative number where padding is: [batch, 1, 1, length].
        let bias = mask.affine(-MASKED, MASKED)?.reshape((batch, 1, 1, length))?;
        let head = self.hidden / self.heads;
        let scale = 1.0 / (head as f64).sqrt();
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((batch, length, self.heads, head))?.transpose(1, 2)?.contiguous()
        };
        for layer in &self.layers {
            let query = split(layer.query.forward(&x)?)?;
            let key = split(layer.key.forward(&x)?)?;
            let value = split(layer.value.forward(&x)?)?;
            let scores = query.matmul(&key.t()?.contiguous()?)?.affine(scale, 0.0)?;
            let scores = scores.broadcast_add(&bias)?;
            let top = scores.max_keepdim(D::Minus1)?;
            let weights = scores.broadcast_sub(&top)?.exp()?;
            let weights = weights.broadcast_div(&weights.sum_keepdim(D::Minus1)?)?;
            let context = weights.matmul(&value)?.transpose(1, 2)?.contiguous()?;
            let context = context.reshape((batch, length, self.hidden))?;
            let attended =
                layer.attention_norm.forward(&(layer.attention_out.forward(&context)? + &x)?)?;
            let inner = layer.intermediate.forward(&attended)?.gelu_erf()?;
            x = layer.output_norm.forward(&(layer.output.forward(&inner)? + &attended)?)?;
        }
        let pooled = if self.cls {
            x.narrow(1, 0, 1)?.squeeze(1)?
        } else {
            let mask = mask.unsqueeze(2)?;
            let summed = x.broadcast_mul(&mask)?.sum(1)?;
            summed.broadcast_div(&mask.sum(1)?)?
        };
        pooled.to_vec2::<f32>()
    }
}

/// The weights of a safetensors file, by name.
struct Weights(HashMap<String, Tensor>);

impl Weights {
    /// The weight `name`, with or without the `bert.` a `BertModel` checkpoint may prefix, in
    /// `float32`, if `fits` its dimensions; `wanted` says what it should be.
    fn take(
        &mut self,
        name: &str,
        wanted: &str,
        fits: impl Fn(&[usize]) -> bool,
    ) -> Result<Tensor, String> {
        let tensor = (self.0.remove(name))
            .or_else(|| self.0.remove(&format!("bert.{name}")))
            .ok_or_else(|| format!("holds no weight `{name}`"))?;
        if !fits(tensor.dims()) {
            return Err(format!("`{name}` is {:?}, not {wanted}", tensor.dims()));
        }
        tensor.to_dtype(DType::F32).map_err(|error| format!("`{name}`: {error}"))
    }

    /// A vector of `length` values.
    fn vector(&mut self, name: &str, length: usize) -> Result<Tensor, String> {
        self.take(name, &format!("[{length}]"), |dims| dims == [length])
    }

    /// A table of any number of rows of `columns` values (an embedding table).
    fn table(&mut self, name: &str, columns: usize) -> Result<Tensor, String> {
        self.take(name, &format!("[_, {columns}]"), |dims| matches!(dims, [_, c] if *c == columns))
    }

    fn norm(&mut self, name: &str, hidden: usize, eps: f64) -> Result<Norm, String> {
        Ok(Norm {
            gamma: self.vector(&format!("{name}.weight"), hidden)?,
            beta: self.vector(&format!("{name}.bias"), hidden)?,
            eps,
        })
    }

    fn linear(&mut self, name: &str, inputs: usize, outputs: usize) -> Result<Linear, String> {
        let weight_name = format!("{name}.weight");
        let wanted = format!("[{outputs}, {inputs}]");
        let weight = self.take(&weight_name, &wanted, |dims| dims == [outputs, inputs])?;
        let weight = weight.t().and_then(|weight| weight.contiguous());
        Ok(Linear {
            weight: weight.map_err(|error| format!("`{weight_name}`: {error}"))?,
            bias: self.vector(&format!("{name}.bias"), outputs)?,
        })
    }
}
