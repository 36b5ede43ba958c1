// `capabilities = [...]` lists the capabilities a tool is handed, `requires_connection` says
// that it runs only with a granted connection; both end up in the spec.
use std::time::{Duration, UNIX_EPOCH};

use tool_runtime::prelude::*;
use tool_runtime::runtime::{Capability, Clock};

/// Where pull requests are read from.
struct GitHubApi {
    base_url: String,
}

impl Capability for GitHubApi {
    const NAME: &'static str = "github_api";
}

/// List the pull requests opened since a given time.
#[tool(
    name = "github__recent_pulls",
    effect = read_only,
    redact = ["titles", "checked_at_ms"],
    requires_connection,
    capabilities = [Clock, GitHubApi],
)]
struct RecentPulls {
    repo: String,
}

#[derive(Serialize, ToolSchema)]
struct Pulls {
    titles: Vec<String>,
    checked_at_ms: i64,
}

impl Tool for RecentPulls {
    type Output = Pulls;
    async fn run(self, _: &ToolInvocationContext, caps: &ToolCapabilities) -> Result<Pulls, ToolError> {
        let api = caps.get::<GitHubApi>()?;
        let clock = caps.get::<Clock>()?;
        Ok(Pulls { titles: vec![format!("{}/{}", api.base_url, self.repo)], checked_at_ms: clock.epoch_ms() })
    }
}

fn main() {
    let spec = RecentPulls::spec();
    assert!(spec.requires_connection());
    let names: Vec<&str> = spec.capabilities().iter().map(|capability| capability.name()).collect();
    assert_eq!(names, [Clock::NAME, "github_api"]);

    // A test runs the tool through a runner, handing it what it declares.
    let harness = tool_runtime::testing::Harness::new()
        .capability(Clock::fixed(UNIX_EPOCH + Duration::from_millis(42)))
        .capability(GitHubApi { base_url: "https://api.example".to_owned() })
        .context(ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "actor-1", tenant_id: "tenant-1" }).with_connection_id("conn-1"));
    let args = serde_json::json!({"repo": "acme/widgets"});
    let pulls = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(harness.exec::<RecentPulls>(args));
    assert_eq!(pulls.value(), Some(&serde_json::json!({"titles": ["https://api.example/acme/widgets"], "checked_at_ms": 42})));
}
