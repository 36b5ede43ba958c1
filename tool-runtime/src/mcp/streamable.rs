//! Serving over Streamable HTTP: the tower service ([`McpServer::http_service`]) and the
//! accept loop ([`McpServer::serve_http`]), within the [`HttpLimits`](super::HttpLimits) that
//! keep a client from holding the server's memory, connections or file descriptors.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::http::{HeaderValue, Request, Response, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::auth::{Authenticated, Authenticator, Unauthorized};
use super::limits::SessionSlot;
use super::serve::{McpServeError, McpServer};

/// The first wait after a failed `accept`; it doubles up to [`ACCEPT_BACKOFF_MAX`].
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// What a connection past the cap is told before it is closed.
const BUSY: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";

impl McpServer {
    /// A Streamable HTTP configuration for a server on this machine: rmcp's defaults (only
    /// loopback `Host` headers: `localhost`, `127.0.0.1`, `::1`) plus the same check on a
    /// browser's `Origin` header, so a web page cannot reach the server through DNS rebinding.
    /// [`serve_http`](Self::serve_http) uses it; start from it when mounting
    /// [`http_service`](Self::http_service) yourself.
    ///
    /// ```
    /// use tool_runtime::mcp::McpServer;
    ///
    /// let config = McpServer::local_http_config();
    /// assert!(config.allowed_hosts.iter().any(|host| host == "localhost"));
    /// assert!(config.allowed_origins.iter().any(|origin| origin == "http://127.0.0.1:*"));
    /// ```
    #[must_use]
    pub fn local_http_config() -> StreamableHttpServerConfig {
        let origins = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")]);
        StreamableHttpServerConfig::default().with_allowed_origins(origins)
    }

    /// The server as a Streamable HTTP tower service, to mount in an HTTP server (for example
    /// `axum::Router::nest_service("/mcp", ...)`). Each session gets a copy of this server with
    /// its own log level. [`local_http_config`](Self::local_http_config) is the configuration
    /// for a server on this machine. With an [authenticator](super::McpServerBuilder::authenticator),
    /// every request is asked about first: a refused one gets `401`, and the calls of an
    /// accepted one run in the context it gave.
    ///
    /// The [session limits](super::HttpLimits) apply: at most
    /// [`max_sessions`](super::HttpLimits::max_sessions) open at once (per service this returns), each
    /// ended after [`session_idle_timeout`](super::HttpLimits::session_idle_timeout) without traffic.
    /// Connection limits and header timeouts are the mounting server's to set, and so is
    /// `TCP_NODELAY` on its sockets, which [`serve_http`](Self::serve_http) sets: a response
    /// goes out in pieces, and without it each later piece waits for the client's delayed
    /// acknowledgement (some 40 ms a request).
    pub fn http_service(&self, config: StreamableHttpServerConfig) -> McpHttpService {
        let limits = self.http_limits();
        let mut session_config = SessionConfig::default();
        session_config.keep_alive = Some(limits.get_session_idle_timeout());
        let mut sessions = LocalSessionManager::default();
        sessions.session_config = session_config;
        let server = self.clone();
        let open = Arc::new(AtomicUsize::new(0));
        let max = limits.get_max_sessions();
        let service = StreamableHttpService::new(
            move || match SessionSlot::take(&open, max) {
                Some(slot) => Ok(server.for_http_session(slot)),
                None => Err(std::io::Error::other(format!(
                    "too many MCP sessions: {max} are open, the most this server allows"
                ))),
            },
            Arc::new(sessions),
            config,
        );
        McpHttpService::new(service, self.authenticator())
    }

    /// Serves Streamable HTTP (HTTP/1.1) on `listener`, at every path, until `shutdown` is
    /// cancelled, with [`local_http_config`](Self::local_http_config): requests whose `Host` or
    /// `Origin` header is not loopback are refused with `403`. The server's [`HttpLimits`](super::HttpLimits)
    /// apply: a header-read timeout, a cap on connections (past it: `503` and closed) and on
    /// sessions, idle sessions expired.
    ///
    /// A failed `accept` (out of file descriptors, say) does not end the loop: it is logged
    /// (`tracing` warning) and retried after a pause of 10 ms, doubling up to 1 s while it keeps
    /// failing; only `shutdown` ends it.
    ///
    /// # Errors
    ///
    /// None today: every accept error is retried. The `Result` stays for errors to come.
    pub async fn serve_http(
        self,
        listener: TcpListener,
        shutdown: CancellationToken,
    ) -> Result<(), McpServeError> {
        let limits = self.http_limits();
        let config = Self::local_http_config().with_cancellation_token(shutdown.child_token());
        let service = self.http_service(config);
        let connections = Arc::new(Semaphore::new(limits.get_max_connections()));
        let mut backoff = ACCEPT_BACKOFF_MIN;
        loop {
            let accepted = tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                accepted = listener.accept() => accepted,
            };
            let stream = match accepted {
                Ok((stream, _)) => {
                    backoff = ACCEPT_BACKOFF_MIN;
                    // A response goes out in pieces (its head, then its events): with Nagle's
                    // algorithm each later piece waited for the client's delayed ACK, some
                    // 40 ms a request on loopback.
                    let _ = stream.set_nodelay(true);
                    stream
                }
                Err(error) => {
                    tracing::warn!(
                        %error,
                        retry_in_ms = u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX),
                        "accepting an MCP connection failed; retrying"
                    );
                    tokio::select! {
                        () = shutdown.cancelled() => return Ok(()),
                        () = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                    continue;
                }
            };
            let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
                refuse(stream);
                continue;
            };
            let service = hyper_util::service::TowerToHyperService::new(service.clone());
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                let _permit = permit;
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(limits.get_header_read_timeout())
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                tokio::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => {}
                    () = shutdown.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        let _ = connection.await;
                    }
                }
            });
        }
    }
}

/// A connection past the cap: told `503` if its send buffer takes the answer at once (a fresh
/// socket's does), never waited for, and closed.
fn refuse(stream: TcpStream) {
    tracing::debug!("an MCP connection past the connection cap was refused");
    if let Ok(stream) = stream.into_std() {
        let _ = (&stream).write(BUSY);
    }
}

/// What the HTTP service answers.
type Answer = Response<BoxBody<Bytes, Infallible>>;

/// An [`McpServer`] as a Streamable HTTP tower service
/// ([`McpServer::http_service`]): rmcp's service, behind the server's
/// [`Authenticator`] when it has one.
#[derive(Clone)]
pub struct McpHttpService {
    inner: StreamableHttpService<McpServer, LocalSessionManager>,
    authenticator: Option<Arc<dyn Authenticator>>,
}

impl McpHttpService {
    pub(super) fn new(
        inner: StreamableHttpService<McpServer, LocalSessionManager>,
        authenticator: Option<Arc<dyn Authenticator>>,
    ) -> Self {
        Self { inner, authenticator }
    }
}

impl fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttpService")
            .field("authenticator", &self.authenticator)
            .finish_non_exhaustive()
    }
}

/// The `401` answer to a refused request.
fn unauthorized(refused: &Unauthorized) -> Answer {
    let body = serde_json::json!({"error": refused.message()}).to_string();
    let mut answer = Response::new(Full::new(Bytes::from(body)).boxed());
    *answer.status_mut() = StatusCode::UNAUTHORIZED;
    let headers = answer.headers_mut();
    headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    answer
}

impl<B> tower_service::Service<Request<B>> for McpHttpService
where
    B: http_body::Body + Send + 'static,
    B::Error: fmt::Display,
    B::Data: Send + 'static,
{
    type Response = Answer;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let mut inner = self.inner.clone();
        let authenticator = self.authenticator.clone();
        Box::pin(async move {
            let Some(authenticator) = authenticator else { return inner.call(request).await };
            let (mut parts, body) = request.into_parts();
            match authenticator.authenticate(&parts).await {
                Ok(ctx) => {
                    parts.extensions.insert(Authenticated(ctx));
                    inner.call(Request::from_parts(parts, body)).await
                }
                Err(refused) => Ok(unauthorized(&refused)),
            }
        })
    }
}
