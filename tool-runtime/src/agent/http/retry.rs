//! When to try a request again and how long to wait first: exponential backoff with jitter,
//! or what the provider asked for in `retry-after`, both capped.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

/// How a client retries a request that failed before any byte of the response body arrived:
/// on `429 Too Many Requests`, on `5xx`, and on connection errors and timeouts.
///
/// The wait before attempt `n + 1` is what the provider asked for (`retry-after-ms`, then
/// `retry-after` in seconds or as an HTTP date), capped at [`max_retry_after`]; without such a
/// header it is `initial_backoff * 2^(n - 1)`, capped at [`max_backoff`], with up to half of it
/// taken off at random so that clients do not retry in lockstep.
///
/// A response whose body has started is never retried: its events were already forwarded.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::agent::RetryPolicy;
///
/// let mut retry = RetryPolicy::default();
/// assert_eq!(retry.max_attempts, 3);
/// retry.initial_backoff = Duration::from_millis(100);
/// let never = RetryPolicy::none();
/// assert_eq!(never.max_attempts, 1);
/// ```
///
/// [`max_retry_after`]: RetryPolicy::max_retry_after
/// [`max_backoff`]: RetryPolicy::max_backoff
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Attempts in all, the first included (default 3; 0 counts as 1).
    pub max_attempts: u32,
    /// The wait before the first retry when the provider did not say (default 500 ms).
    pub initial_backoff: Duration,
    /// The longest computed wait (default 8 s).
    pub max_backoff: Duration,
    /// The longest wait a `retry-after` header can impose (default 60 s).
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retry.
    #[must_use]
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// Whether attempt number `attempt` (1-based) may be followed by another.
    pub(super) fn allows_another(&self, attempt: u32) -> bool {
        attempt < self.max_attempts.max(1)
    }

    /// The wait after failed attempt `attempt` (1-based), given what the provider asked for.
    pub(super) fn delay(&self, attempt: u32, asked: Option<Duration>) -> Duration {
        if let Some(asked) = asked {
            return asked.min(self.max_retry_after);
        }
        let doubled = self.initial_backoff.saturating_mul(1 << attempt.saturating_sub(1).min(20));
        let full = doubled.min(self.max_backoff);
        full.saturating_sub(full.mul_f64(jitter() / 2.0))
    }
}

/// A number in `[0, 1)`, random enough to spread retries (std's hasher keys are random).
fn jitter() -> f64 {
    let bits = RandomState::new().build_hasher().finish() >> 11;
    // 53 bits fit an f64 exactly.
    #[allow(clippy::cast_precision_loss)]
    let unit = bits as f64 / (1u64 << 53) as f64;
    unit
}

/// Whether a status is worth another attempt: `429` and every `5xx`.
pub(super) fn retryable_status(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// What the response asked for: `retry-after-ms` (OpenAI), then `retry-after` as seconds or an
/// HTTP date. A date in the past means "now".
pub(super) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    if let Some(millis) = header("retry-after-ms").and_then(|text| seconds(text, 1000.0)) {
        return Some(millis);
    }
    let text = header("retry-after")?.trim();
    seconds(text, 1.0).or_else(|| {
        let at = http_date(text)?;
        Some(at.duration_since(now).unwrap_or(Duration::ZERO))
    })
}

/// A non-negative decimal number of `1 / per_second` seconds.
fn seconds(text: &str, per_second: f64) -> Option<Duration> {
    let value: f64 = text.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0)
        .then(|| Duration::try_from_secs_f64(value / per_second).ok())
        .flatten()
}

/// An HTTP date in any of its three forms (IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, the
/// obsolete RFC 850 and asctime forms).
fn http_date(text: &str) -> Option<SystemTime> {
    httpdate::parse_http_date(text).ok()
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use reqwest::header::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        let read = |pairs| retry_after(&headers(pairs), now);
        assert_eq!(read(&[("retry-after", "2")]), Some(Duration::from_secs(2)));
        assert_eq!(read(&[("retry-after", "1.5")]), Some(Duration::from_millis(1500)));
        assert_eq!(
            read(&[("retry-after-ms", "250"), ("retry-after", "9")]),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            read(&[("retry-after", "Sun, 06 Nov 1994 08:49:47 GMT")]),
            Some(Duration::from_secs(10))
        );
        assert_eq!(read(&[("retry-after", "Sun, 06 Nov 1994 08:00:00 GMT")]), Some(Duration::ZERO));
        assert_eq!(
            read(&[("retry-after", "Sunday, 06-Nov-94 08:49:57 GMT")]),
            Some(Duration::from_secs(20))
        );
        assert_eq!(
            read(&[("retry-after", "Sun Nov  6 08:49:38 1994")]),
            Some(Duration::from_secs(1))
        );
        assert_eq!(read(&[("retry-after", "soon")]), None);
        assert_eq!(read(&[("retry-after", "-3")]), None);
        assert_eq!(read(&[]), None);
    }

    #[test]
    fn http_dates() {
        assert_eq!(http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(UNIX_EPOCH));
        let leap = http_date("Tue, 29 Feb 2028 12:00:00 GMT").unwrap();
        assert_eq!(leap.duration_since(UNIX_EPOCH).unwrap().as_secs(), 1_835_438_400);
        assert_eq!(http_date("Tue, 29 Feb 2028 12:00 GMT"), None);
        assert_eq!(http_date("Tue, 29 Feb 2028 12:00:00 UTC"), None);
        assert_eq!(http_date("Tue, 30 Feb 2028 12:00:00 GMT"), None);
    }

    #[test]
    fn backoff_doubles_within_its_cap_and_retry_after_is_capped() {
        let policy = RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(300),
            max_retry_after: Duration::from_secs(2),
        };
        for (attempt, full) in [(1, 100), (2, 200), (3, 300), (30, 300)] {
            let wait = policy.delay(attempt, None);
            assert!(wait <= Duration::from_millis(full), "{attempt}: {wait:?}");
            assert!(wait >= Duration::from_millis(full / 2), "{attempt}: {wait:?}");
        }
        assert_eq!(policy.delay(1, Some(Duration::from_secs(3600))), Duration::from_secs(2));
        assert!(policy.allows_another(4));
        assert!(!policy.allows_another(5));
        assert!(!RetryPolicy { max_attempts: 0, ..policy }.allows_another(1));
    }

    #[test]
    fn retryable_statuses() {
        assert!(retryable_status(StatusCode::TOO_MANY_REQUESTS));
        assert!(retryable_status(StatusCode::from_u16(529).unwrap()));
        assert!(!retryable_status(StatusCode::UNAUTHORIZED));
        assert!(!retryable_status(StatusCode::BAD_REQUEST));
    }
}
