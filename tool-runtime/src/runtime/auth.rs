use std::fmt;

use async_trait::async_trait;

use super::{Capability, ToolInvocationContext};

/// A secret handed out by a [`ConnectionBroker`]. `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential(String);

impl Credential {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret itself: put it where it is needed (a header) and nowhere else.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Credential(***)")
    }
}

/// Turns a granted connection id into a credential, at call time. Supplied by the application
/// (a vault, an OAuth token store); the runner asks it once per call that needs [`Auth`] and
/// keeps nothing between calls.
///
/// ```
/// use async_trait::async_trait;
/// use tool_runtime::prelude::*;
/// use tool_runtime::runtime::{BrokerError, ConnectionBroker, Credential};
///
/// #[derive(Debug)]
/// struct Vault;
///
/// #[async_trait]
/// impl ConnectionBroker for Vault {
///     async fn credential(&self, ctx: &ToolInvocationContext, connection_id: &str) -> Result<Credential, BrokerError> {
///         match connection_id {
///             "github-acme" if ctx.tenant_id() == "acme" => Ok(Credential::new("token-from-the-vault")),
///             _ => Err(BrokerError::new("no credential for this connection")),
///         }
///     }
/// }
/// ```
#[async_trait]
pub trait ConnectionBroker: Send + Sync + fmt::Debug {
    /// The credential for `connection_id`, which the runner has already checked against the
    /// grant.
    ///
    /// # Errors
    ///
    /// [`BrokerError`] with a safe message; the call fails with `authz_denied`.
    async fn credential(
        &self,
        ctx: &ToolInvocationContext,
        connection_id: &str,
    ) -> Result<Credential, BrokerError>;
}

/// A broker's refusal; its message must be safe to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerError(String);

impl BrokerError {
    /// A refusal with a safe message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for BrokerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BrokerError {}

/// Credentials for the one connection a call was granted: built by the runner for each call
/// of a tool that declared `capabilities = [Auth]`, never cached, never shown by `Debug`.
/// Its methods take no connection id: a tool cannot reach another connection.
///
/// ```
/// use tool_runtime::runtime::{Auth, Credential};
///
/// let auth = Auth::new("github-acme", Credential::new("s3cret"));
/// assert_eq!(auth.authorization_header(), "Bearer s3cret");
/// assert_eq!(format!("{auth:?}"), r#"Auth { connection_id: "github-acme", credential: Credential(***) }"#);
/// ```
#[derive(Clone)]
pub struct Auth {
    connection_id: String,
    credential: Credential,
}

impl Auth {
    /// Credentials for `connection_id`. The runner builds one per call from the
    /// [`ConnectionBroker`]; build one yourself only to test a tool directly.
    pub fn new(connection_id: impl Into<String>, credential: Credential) -> Self {
        Self { connection_id: connection_id.into(), credential }
    }

    /// The connection this call was granted.
    #[must_use]
    pub fn connection_id(&self) -> &str {
        &self.connection_id
    }

    /// The credential for it.
    #[must_use]
    pub fn credential(&self) -> &Credential {
        &self.credential
    }

    /// `Bearer <secret>`, for an `Authorization` header.
    #[must_use]
    pub fn authorization_header(&self) -> String {
        format!("Bearer {}", self.credential.expose())
    }
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("connection_id", &self.connection_id)
            .field("credential", &self.credential)
            .finish()
    }
}

impl Capability for Auth {
    const NAME: &'static str = "auth";
}
