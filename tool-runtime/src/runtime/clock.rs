use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Capability;

/// The time, as a capability: tools read the clock through it, so tests and replays can fix it.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use tool_runtime::runtime::Clock;
///
/// let clock = Clock::fixed(UNIX_EPOCH + Duration::from_millis(1_700_000_000_000));
/// assert_eq!(clock.epoch_ms(), 1_700_000_000_000);
/// assert!(Clock::system().epoch_ms() > 1_700_000_000_000);
/// ```
#[derive(Clone)]
pub struct Clock {
    now: Arc<dyn Fn() -> SystemTime + Send + Sync>,
}

impl Clock {
    /// The system clock.
    #[must_use]
    pub fn system() -> Self {
        Self::from_fn(SystemTime::now)
    }

    /// A clock that always reads `at`.
    #[must_use]
    pub fn fixed(at: SystemTime) -> Self {
        Self::from_fn(move || at)
    }

    /// A clock that reads `now()`.
    pub fn from_fn(now: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        Self { now: Arc::new(now) }
    }

    /// The current time.
    #[must_use]
    pub fn now(&self) -> SystemTime {
        (self.now)()
    }

    /// Milliseconds since the Unix epoch (negative before it).
    #[must_use]
    pub fn epoch_ms(&self) -> i64 {
        let millis = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        match self.now().duration_since(UNIX_EPOCH) {
            Ok(after) => millis(after),
            Err(before) => -millis(before.duration()),
        }
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Clock").finish_non_exhaustive()
    }
}

impl Capability for Clock {
    const NAME: &'static str = "clock";
}
