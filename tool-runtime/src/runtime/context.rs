/// Who and what a tool call is for: references only.
///
/// There is deliberately no field for a token, key or header: a tool that needs credentials
/// gets them through a capability bound to [`connection_id`](Self::connection_id), never from
/// its arguments or its context. `Debug` shows only these ids.
///
/// ```
/// use tool_runtime::prelude::*;
///
/// let ctx = ToolInvocationContext::new("run-7", "user-42", "acme")
///     .with_tool_call_id("call_1")
///     .with_connection_id("conn-github");
/// assert_eq!(ctx.tenant_id(), "acme");
/// assert_eq!(ctx.connection_id(), Some("conn-github"));
/// assert_eq!(ctx.subject_id(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolInvocationContext {
    run_id: String,
    tool_call_id: Option<String>,
    actor_id: String,
    tenant_id: String,
    subject_id: Option<String>,
    graph_id: Option<String>,
    connection_id: Option<String>,
}

impl ToolInvocationContext {
    /// A context for one run, on behalf of `actor_id` within `tenant_id`.
    pub fn new(
        run_id: impl Into<String>,
        actor_id: impl Into<String>,
        tenant_id: impl Into<String>,
    ) -> Self {
        Self {
            run_id: run_id.into(),
            tool_call_id: None,
            actor_id: actor_id.into(),
            tenant_id: tenant_id.into(),
            subject_id: None,
            graph_id: None,
            connection_id: None,
        }
    }

    /// Sets the id of this tool call (as given by the model, or minted by the runtime).
    #[must_use]
    pub fn with_tool_call_id(mut self, id: impl Into<String>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }

    /// Sets the subject the call acts upon on behalf of the actor.
    #[must_use]
    pub fn with_subject_id(mut self, id: impl Into<String>) -> Self {
        self.subject_id = Some(id.into());
        self
    }

    /// Sets the graph (agent, workflow) the run belongs to.
    #[must_use]
    pub fn with_graph_id(mut self, id: impl Into<String>) -> Self {
        self.graph_id = Some(id.into());
        self
    }

    /// Sets the connection the call may use; the runtime checks it against the grant.
    #[must_use]
    pub fn with_connection_id(mut self, id: impl Into<String>) -> Self {
        self.connection_id = Some(id.into());
        self
    }

    /// The run this call belongs to.
    #[must_use]
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The tool call's id, once known.
    #[must_use]
    pub fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }

    /// Who asked for the call.
    #[must_use]
    pub fn actor_id(&self) -> &str {
        &self.actor_id
    }

    /// The tenant the call runs in.
    #[must_use]
    pub fn tenant_id(&self) -> &str {
        &self.tenant_id
    }

    /// Whom the call acts upon, if not the actor.
    #[must_use]
    pub fn subject_id(&self) -> Option<&str> {
        self.subject_id.as_deref()
    }

    /// The graph the run belongs to.
    #[must_use]
    pub fn graph_id(&self) -> Option<&str> {
        self.graph_id.as_deref()
    }

    /// The connection the call may use.
    #[must_use]
    pub fn connection_id(&self) -> Option<&str> {
        self.connection_id.as_deref()
    }
}
