//! Fixtures several suites share: an echo tool, tools called from code, tools to search for,
//! invocation contexts and a broker.
//!
//! A fixture that differs between suites in a way a test depends on (another tool name, another
//! redaction list, other ids) stays in its suite; only identical ones are here.

use tool_runtime::prelude::*;

/// Echo a word.
#[tool(name = "text__echo", effect = read_only, redact = ["word"])]
pub struct Echo {
    // No doc comment: it would become the property's description in the schema.
    pub word: String,
}

// What `Echo` returns. No doc comment: it would become the output schema's description.
#[derive(Serialize, ToolSchema)]
pub struct Word {
    pub word: String,
}

impl Tool for Echo {
    type Output = Word;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Word, ToolError> {
        Ok(Word { word: self.word })
    }
}

/// Run a read-only SQL query over the sales tables.
#[tool(name = "sales__query", effect = read_only, callers = programmatic, redact = all)]
pub struct SalesQuery {
    /// The query.
    pub sql: String,
}

impl Tool for SalesQuery {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(format!("rows for {}", self.sql))
    }
}

/// Look up one region's revenue.
#[tool(name = "sales__revenue", effect = read_only, callers = both, redact = all)]
pub struct SalesRevenue {
    /// The region, such as `West`.
    pub region: String,
}

impl Tool for SalesRevenue {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(format!("revenue of {}", self.region))
    }
}

/// Get the current time.
#[tool(name = "core__now", effect = read_only, redact = all)]
pub struct Now {}

impl Tool for Now {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok("12:00".to_owned())
    }
}

/// Show the weather forecast for a city.
#[tool(name = "weather__forecast", effect = read_only, redact = all)]
pub struct Forecast {
    /// The city.
    pub city: String,
}

impl Tool for Forecast {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(format!("rain in {}", self.city))
    }
}

/// Send an email message to a recipient.
#[tool(name = "mail__send", effect = external_side_effect, redact = all)]
pub struct SendMail {
    /// The recipient's address.
    pub to: String,
    /// The message.
    pub body: String,
}

impl Tool for SendMail {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(format!("sent to {}", self.to))
    }
}

/// The ids of a run, the actor asking and the tenant, in `ContextIds`' field order.
pub fn ids<'a>(run_id: &'a str, actor_id: &'a str, tenant_id: &'a str) -> ContextIds<'a> {
    ContextIds { run_id, actor_id, tenant_id }
}

/// A context for a run, an actor and a tenant, with no call id, connection or deadline.
pub fn context(run_id: &str, actor_id: &str, tenant_id: &str) -> ToolInvocationContext {
    ToolInvocationContext::new(ids(run_id, actor_id, tenant_id))
}

/// The context most suites use: run `run-1`, actor `user-1`, tenant `t-1`.
pub fn ctx() -> ToolInvocationContext {
    context("run-1", "user-1", "t-1")
}

/// A connection broker that hands every granted connection the same credential.
#[derive(Debug)]
pub struct StaticBroker(pub &'static str);

#[async_trait::async_trait]
impl tool_runtime::runtime::ConnectionBroker for StaticBroker {
    async fn credential(
        &self,
        _: &ToolInvocationContext,
        _: &str,
    ) -> Result<tool_runtime::runtime::Credential, tool_runtime::runtime::BrokerError> {
        Ok(tool_runtime::runtime::Credential::new(self.0))
    }
}
