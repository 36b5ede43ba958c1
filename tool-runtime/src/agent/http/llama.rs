//! llama.cpp's `llama-server` for a model without native tool calling, constrained by a grammar.

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap};

use super::retry::RetryPolicy;
use super::transport::{Timeouts, Transport};
use super::{HttpConfigError, Settings, authority, exchange, shared_setters};
use crate::adapters::{GrammarChat, RequestOptions, StreamEvent};
use crate::agent::{ChatModel, ModelError, ModelRequest, ModelTurn};

const BASE_URL: &str = "http://127.0.0.1:8080/v1";
/// `llama-server` serves the one model it was started with, whatever the request names.
const MODEL: &str = "default";

/// A [`ChatModel`] for llama.cpp's `llama-server` and a local model that cannot call tools
/// natively: each turn is one `POST {base}/chat/completions` encoded by [`GrammarChat`], which
/// describes the tools to the model and, when a call is required, sends the
/// [GBNF grammar](crate::gbnf) of the offered tools' calls in the request's `grammar` field,
/// so the server can only sample a well-formed call. The call the model writes is decoded,
/// validated and run like any provider's. Requests are not streamed.
///
/// ```
/// use tool_runtime::agent::LlamaServer;
///
/// let model = LlamaServer::builder().base_url("http://127.0.0.1:8081/v1").body_field("seed", 42.into()).build()?;
/// assert_eq!(model.endpoint(), "http://127.0.0.1:8081/v1/chat/completions");
/// # Ok::<(), tool_runtime::agent::HttpConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct LlamaServer {
    transport: Transport,
    options: RequestOptions,
    adapter: GrammarChat,
}

/// Settings of a [`LlamaServer`]; [`build`](LlamaServerBuilder::build) makes the client.
#[derive(Debug, Clone)]
#[must_use]
pub struct LlamaServerBuilder {
    settings: Settings,
}

impl LlamaServer {
    /// A builder with the defaults: `http://127.0.0.1:8080/v1` (`llama-server`'s own), no key,
    /// model `default`.
    pub fn builder() -> LlamaServerBuilder {
        LlamaServerBuilder { settings: Settings::new(BASE_URL, MODEL) }
    }

    /// The URL requests go to.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        self.transport.url.as_str()
    }
}

impl LlamaServerBuilder {
    shared_setters! {
        base_url: "The server's base URL, up to and including `/v1` (`http://127.0.0.1:8080/v1`).",
        api_key: "The key, sent as `Authorization: Bearer {key}` (a server started with `--api-key`).",
        header: "A header sent with every request.",
        body_field: "A field added to every request body (`temperature`, `seed`, `n_predict`). `model`, `messages`, `stream` and `grammar` are the client's.",
    }

    /// The client.
    ///
    /// # Errors
    ///
    /// [`HttpConfigError`] for a base URL, key or header that cannot be used, or an HTTP
    /// client that cannot be set up.
    pub fn build(self) -> Result<LlamaServer, HttpConfigError> {
        let auth = |key: &str| (AUTHORIZATION, format!("Bearer {key}"));
        let label = |url: &reqwest::Url| format!("the llama.cpp server at {}", authority(url));
        let transport =
            self.settings.transport("/chat/completions", label, auth, None, HeaderMap::new())?;
        let options = self.settings.options().stream(false);
        Ok(LlamaServer { transport, options, adapter: GrammarChat::new() })
    }
}

#[async_trait]
impl ChatModel for LlamaServer {
    async fn respond(
        &self,
        request: ModelRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        exchange(&self.transport, &self.adapter, &request, &self.options, on_event).await
    }
}
