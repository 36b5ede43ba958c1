//! [`HttpLimits`]: what one HTTP client may hold of a server, and the session slots that count
//! its sessions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// What one HTTP client may hold of a server: how long it may take to send a request's head,
/// how many connections and sessions may be open at once, how long a session may sit idle.
/// Set them with [`McpServerBuilder::http_limits`](super::McpServerBuilder::http_limits);
/// [`McpServer::serve_http`](super::McpServer::serve_http) applies all four,
/// [`McpServer::http_service`](super::McpServer::http_service) the two about
/// sessions (the HTTP server you mount it in owns connections and header timeouts).
///
/// | limit | default | past it |
/// | --- | --- | --- |
/// | [`header_read_timeout`](Self::header_read_timeout) | 10 s | the connection is closed |
/// | [`max_connections`](Self::max_connections) | 256 | a new connection gets `503` and is closed at once |
/// | [`max_sessions`](Self::max_sessions) | 1 024 | `initialize` gets `500` ("too many MCP sessions") and no session is made |
/// | [`session_idle_timeout`](Self::session_idle_timeout) | 5 min | the session ends; its next request gets `404` (the client starts a new one) |
///
/// The defaults fit a server on this machine ([`serve_http`](super::McpServer::serve_http) answers
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
    pub(super) fn take(open: &Arc<AtomicUsize>, max: usize) -> Option<Self> {
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
