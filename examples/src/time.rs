//! `core__get_current_time`: the current time in an IANA timezone.

use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Tz;
use tool_runtime::prelude::*;
use tool_runtime::runtime::Clock;

/// Get the current time, optionally in an IANA timezone.
#[tool(
    name = "core__get_current_time",
    effect = read_only,
    redact = ["iso8601", "timezone", "epoch_ms"],
    capabilities = [Clock],
)]
#[derive(Debug)]
pub struct GetCurrentTime {
    /// IANA timezone such as "Europe/Berlin"; UTC when absent.
    #[schema(length(min = 1, max = 64), pattern = "^[A-Za-z0-9_+/-]+$")]
    pub timezone: Option<String>,
}

/// The time at one instant, in one timezone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToolSchema)]
pub struct CurrentTime {
    /// RFC 3339 timestamp with the zone's offset, to the second.
    pub iso8601: String,
    /// The IANA timezone used.
    pub timezone: String,
    /// Milliseconds since the Unix epoch.
    pub epoch_ms: i64,
}

impl Tool for GetCurrentTime {
    type Output = CurrentTime;

    async fn run(
        self,
        _ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<CurrentTime, ToolError> {
        let name = self.timezone.as_deref().unwrap_or("UTC");
        let zone: Tz = name.parse().map_err(|_| {
            ToolError::new(format!(
                "unknown timezone `{name}`; use an IANA name such as `Europe/Berlin`"
            ))
        })?;
        let epoch_ms = caps.get::<Clock>()?.epoch_ms();
        let instant = DateTime::<Utc>::from_timestamp_millis(epoch_ms)
            .ok_or_else(|| ToolError::new("the clock is outside the representable range"))?;
        Ok(CurrentTime {
            iso8601: instant.with_timezone(&zone).to_rfc3339_opts(SecondsFormat::Secs, false),
            timezone: zone.name().to_owned(),
            epoch_ms,
        })
    }
}
