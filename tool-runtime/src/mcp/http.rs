//! Serving over Streamable HTTP: the tower service ([`McpServer::http_service`]), the accept
//! loop ([`McpServer::serve_http`]), and the [`HttpLimits`] that keep a client from holding the
//! server's memory, connections or file descriptors.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::serve::{McpServeError, McpServer};

/// What one HTTP client may hold of a server: how long it may take to send a request's head,
/// how many connections and sessions may be open at once, how long a session may sit idle.
/// Set them with [`McpServerBuilder::http_limits`](super::McpServerBuilder::http_limits);
/// [`McpServer::serve_http`] applies all four, [`McpServer::http_service`] the two about
/// sessions (the HTTP server you mount it in owns connections and header timeouts).
///
/// | limit | default | past it |
/// | --- | --- | --- |
/// | [`header_read_timeout`](Self::header_read_timeout) | 10 s | the connection is closed |
/// | [`max_connections`](Self::max_connections) | 256 | a new connection gets `503` and is closed at once |
/// | [`max_sessions`](Self::max_sessions) | 1 024 | `initialize` gets `500` ("too many MCP sessions") and no session is made |
/// | [`session_idle_timeout`](Self::session_idle_timeout) | 5 min | the session ends; its next request gets `404` (the client starts a new one) |
///
/// The defaults fit a server on this machine ([`serve_http`](McpServer::serve_http) answers
/// only loopback hosts): 256 connections stay well below the usual limit of 1 024 open files,
/// and 1 024 sessions opened and abandoned hold about 60 MiB (so 4 000 `initialize` requests
/// never followed up grow the heap by less than 128 MiB; without the cap each session holds
/// about 58 KiB until it expires).
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::mcp::HttpLimits;
///
/// let limits = HttpLimits::new().max_sessions(64).session_idle_timeout(Duration::from_secs(60));
/// assert_eq!(limits.get_max_sessions(), 64);
/// assert_eq!(HttpLimits::default().get_header_read_timeout(), Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    header_read_timeout: Duration,
    max_connections: usize,
    max_sessions: usize,
    session_idle_timeout: Duration,
}

impl Default for HttpLimits {
    /// 10 s to send a request's head, 256 connections, 1 024 sessions, 5 minutes idle.
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            max_connections: 256,
            max_sessions: 1024,
            session_idle_timeout: Duration::from_secs(300),
        }
    }
}

impl HttpLimits {
    /// The defaults (see [`HttpLimits::default`]).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How long a client may take to send a request's head (request line and headers), on a
    /// new connection or between requests on a kept-alive one; then the connection is closed.
    /// A response being streamed (an SSE stream of a call, or `GET`) is not cut by it.
    #[must_use]
    pub const fn header_read_timeout(self, timeout: Duration) -> Self {
        Self { header_read_timeout: timeout, ..self }
    }

    /// How many connections may be open at once. A connection past it is answered
    /// `503 Service Unavailable` and closed at once (nothing of it is read), so the server never
    /// runs out of file descriptors on idle connections. At least 1.
    #[must_use]
    pub const fn max_connections(self, connections: usize) -> Self {
        Self { max_connections: if connections == 0 { 1 } else { connections }, ..self }
    }

    /// How many MCP sessions may be open at once. An `initialize` past it is refused with
    /// `500 Internal Server Error` (rmcp's answer when no session can be made) and makes no
    /// session; a slot frees when a session is closed (`DELETE`) or expires. At least 1.
    #[must_use]
    pub const fn max_sessions(self, sessions: usize) -> Self {
        Self { max_sessions: if sessions == 0 { 1 } else { sessions }, ..self }
    }

    /// How long a session may go without a request or a message of its own before it ends
    /// (also one that was opened and never used again). A call running longer than this while
    /// sending nothing ends with its session: keep it above the policy's longest
    /// `max_runtime_ms`.
    #[must_use]
    pub const fn session_idle_timeout(self, timeout: Duration) -> Self {
        Self { session_idle_timeout: timeout, ..self }
    }

    /// See [`header_read_timeout`](Self::header_read_timeout).
    #[must_use]
    pub const fn get_header_read_timeout(&self) -> Duration {
        self.header_read_timeout
    }

    /// See [`max_connections`](Self::max_connections).
    #[must_use]
    pub const fn get_max_connections(&self) -> usize {
        self.max_connections
    }

    /// See [`max_sessions`](Self::max_sessions).
    #[must_use]
    pub const fn get_max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// See [`session_idle_timeout`](Self::session_idle_timeout).
    #[must_use]
    pub const fn get_session_idle_timeout(&self) -> Duration {
        self.session_idle_timeout
    }
}

/// One open session of an HTTP service, held by the session's server for as long as it lives:
/// rmcp drops the server when the session is closed or expires.
pub(super) struct SessionSlot(Arc<AtomicUsize>);

impl SessionSlot {
    /// A slot among `open`, unless `max` are taken.
    fn take(open: &Arc<AtomicUsize>, max: usize) -> Option<Self> {
        open.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < max).then_some(n + 1))
            .ok()
            .map(|_| Self(Arc::clone(open)))
    }
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

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
    /// for a server on this machine.
    ///
    /// The [session limits](HttpLimits) apply: at most
    /// [`max_sessions`](HttpLimits::max_sessions) open at once (per service this returns), each
    /// ended after [`session_idle_timeout`](HttpLimits::session_idle_timeout) without traffic.
    /// Connection limits and header timeouts are the mounting server's to set.
    pub fn http_service(
        &self,
        config: StreamableHttpServerConfig,
    ) -> StreamableHttpService<McpServer, LocalSessionManager> {
        let limits = self.http_limits();
        let mut session_config = SessionConfig::default();
        session_config.keep_alive = Some(limits.session_idle_timeout);
        let mut sessions = LocalSessionManager::default();
        sessions.session_config = session_config;
        let server = self.clone();
        let open = Arc::new(AtomicUsize::new(0));
        let max = limits.max_sessions;
        StreamableHttpService::new(
            move || match SessionSlot::take(&open, max) {
                Some(slot) => Ok(server.for_http_session(slot)),
                None => Err(std::io::Error::other(format!(
                    "too many MCP sessions: {max} are open, the most this server allows"
                ))),
            },
            Arc::new(sessions),
            config,
        )
    }

    /// Serves Streamable HTTP (HTTP/1.1) on `listener`, at every path, until `shutdown` is
    /// cancelled, with [`local_http_config`](Self::local_http_config): requests whose `Host` or
    /// `Origin` header is not loopback are refused with `403`. The server's [`HttpLimits`]
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
        let connections = Arc::new(Semaphore::new(limits.max_connections));
        let mut backoff = ACCEPT_BACKOFF_MIN;
        loop {
            let accepted = tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                accepted = listener.accept() => accepted,
            };
            let stream = match accepted {
                Ok((stream, _)) => {
                    backoff = ACCEPT_BACKOFF_MIN;
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
                    .header_read_timeout(limits.header_read_timeout)
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
