//! Who calls over HTTP: an [`Authenticator`] turns each request into the context its calls run
//! in (the caller's tenant and actor), or refuses it with `401 Unauthorized`; the server's
//! HTTP service ([`McpHttpService`](super::McpHttpService)) asks it before anything else.

use std::fmt;

use async_trait::async_trait;
use hyper::http;

use crate::runtime::ToolInvocationContext;

/// Decides who an HTTP request comes from. Give one to
/// [`McpServerBuilder::authenticator`](super::McpServerBuilder::authenticator): every request
/// to the server's HTTP service is asked about first, and the calls and listings it makes run
/// in the context it returns (its run, tenant and actor: policy, tool sets and everything
/// bound to a caller go by them). A refusal is answered `401 Unauthorized` with a
/// `WWW-Authenticate: Bearer` header, and nothing else happens.
///
/// ```
/// use async_trait::async_trait;
/// use tool_runtime::mcp::{Authenticator, Unauthorized};
/// use tool_runtime::mcp::http::request::Parts;
/// use tool_runtime::prelude::*;
///
/// /// Bearer tokens of a fixed table (a real one checks a signed token or asks a database).
/// #[derive(Debug)]
/// struct Tokens;
///
/// #[async_trait]
/// impl Authenticator for Tokens {
///     async fn authenticate(&self, request: &Parts) -> Result<ToolInvocationContext, Unauthorized> {
///         let token = request.headers.get("authorization").and_then(|value| value.to_str().ok());
///         let (tenant_id, actor_id) = match token {
///             Some("Bearer alice-secret") => ("acme", "alice"),
///             Some(_) => return Err(Unauthorized::new("the token is not known")),
///             None => return Err(Unauthorized::new("a bearer token is required")),
///         };
///         Ok(ToolInvocationContext::new(ContextIds { run_id: "mcp", actor_id, tenant_id }))
///     }
/// }
/// ```
#[async_trait]
pub trait Authenticator: Send + Sync + fmt::Debug {
    /// The context the calls of `request` (its method, URI and headers; the body is not read
    /// yet) run in, or why it is refused.
    ///
    /// # Errors
    ///
    /// [`Unauthorized`]: the request is answered `401` with its message.
    async fn authenticate(
        &self,
        request: &http::request::Parts,
    ) -> Result<ToolInvocationContext, Unauthorized>;
}

/// Why an [`Authenticator`] refused a request: sent to the client in the `401` answer's body,
/// so it says what is missing, never a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unauthorized {
    message: String,
}

impl Unauthorized {
    /// A refusal that tells the client `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }

    /// What the client is told.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Unauthorized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Unauthorized {}

/// The context an [`Authenticator`] gave an HTTP request, as the request carries it to the
/// server's handlers.
#[derive(Clone)]
pub(super) struct Authenticated(pub(super) ToolInvocationContext);
