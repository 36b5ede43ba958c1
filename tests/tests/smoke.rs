use tool_runtime::prelude::*;

/// Get the current time, optionally in an IANA timezone.
#[tool(name = "core__get_current_time", effect = read_only, redact = ["iso8601", "timezone"])]
pub struct GetCurrentTime {
    /// IANA timezone such as "Europe/Berlin"; UTC when absent.
    #[schema(length(max = 64))]
    pub timezone: Option<String>,
}

#[derive(Serialize, ToolSchema)]
pub struct CurrentTime { pub iso8601: String, pub timezone: String, pub epoch_ms: i64 }

impl Tool for GetCurrentTime {
    type Output = CurrentTime;
    async fn run(self, _ctx: &ToolInvocationContext, _caps: &ToolCapabilities) -> Result<CurrentTime, ToolError> {
        Ok(CurrentTime { iso8601: String::new(), timezone: self.timezone.unwrap_or_default(), epoch_ms: 0 })
    }
}

#[test]
fn smoke() {
    let spec = GetCurrentTime::spec();
    println!("{}", serde_json::to_string_pretty(spec).unwrap());
}
