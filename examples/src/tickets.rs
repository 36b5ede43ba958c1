//! `tickets__create_ticket`: a state change in an issue tracker reached through a connection.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tool_runtime::prelude::*;
use tool_runtime::runtime::{Auth, Capability};

/// Open a ticket in the team's issue tracker.
#[tool(
    name = "tickets__create_ticket",
    effect = state_change,
    redact = ["number", "url", "status"],
    requires_connection,
    capabilities = [TicketStore, Auth],
)]
#[derive(Debug)]
pub struct CreateTicket {
    /// One-line summary of the problem.
    #[schema(length(min = 3, max = 120))]
    pub title: String,
    /// What happened, what was expected, how to reproduce it.
    #[schema(length(max = 4000))]
    pub body: String,
    /// How urgent the ticket is.
    pub priority: Priority,
    /// Labels to attach, such as `bug` or `docs`.
    #[serde(default)]
    #[schema(items(max = 5))]
    pub labels: Vec<Label>,
}

/// Close a ticket as done or as a duplicate.
#[tool(
    name = "tickets__close_ticket",
    effect = state_change,
    redact = ["number", "status"],
    requires_connection,
    capabilities = [TicketStore, Auth],
)]
#[derive(Debug)]
pub struct CloseTicket {
    /// The ticket's number.
    #[schema(range(min = 1))]
    pub number: u64,
    /// Why it is closed.
    pub reason: CloseReason,
}

/// Why a ticket is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    /// The work is done.
    Done,
    /// Another ticket covers it.
    Duplicate,
}

/// A ticket after closing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToolSchema)]
pub struct Closed {
    /// The ticket's number.
    pub number: u64,
    /// Its state now.
    pub status: Status,
}

/// How urgent a ticket is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Whenever there is time.
    Low,
    /// This week.
    Normal,
    /// Today.
    High,
    /// Drop everything.
    Urgent,
}

/// A label: lowercase words joined by dashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct Label(
    #[schema(length(min = 1, max = 32), pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")] pub String,
);

/// The ticket as created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToolSchema)]
pub struct Ticket {
    /// The ticket's number in its project.
    pub number: u64,
    /// Where to see it.
    pub url: String,
    /// Its state.
    pub status: Status,
    /// The account that created it, taken from the connection: internal, not in `redact`.
    pub created_by: String,
}

/// The state of a ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Waiting for someone to pick it up.
    Open,
    /// Being worked on.
    InProgress,
    /// Done.
    Closed,
}

/// A stored ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTicket {
    /// The connection (tracker project) it was created through.
    pub connection_id: String,
    /// Its number within that project.
    pub number: u64,
    /// Title.
    pub title: String,
    /// Body.
    pub body: String,
    /// Priority.
    pub priority: Priority,
    /// Labels.
    pub labels: Vec<String>,
    /// Whether it was closed.
    pub closed: bool,
}

/// An in-memory issue tracker with one project per connection, each guarded by an access
/// token: the capability [`CreateTicket`] writes through.
#[derive(Debug, Clone, Default)]
pub struct TicketStore {
    inner: Arc<Mutex<BTreeMap<String, Project>>>,
}

#[derive(Debug, Default)]
struct Project {
    token: String,
    tickets: Vec<StoredTicket>,
}

impl Capability for TicketStore {
    const NAME: &'static str = "ticket_store";
}

impl TicketStore {
    /// A tracker without projects.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a project reached through `connection_id` and accepting `token`.
    #[must_use]
    pub fn with_project(self, connection_id: &str, token: &str) -> Self {
        if let Ok(mut projects) = self.inner.lock() {
            projects.insert(
                connection_id.to_owned(),
                Project { token: token.to_owned(), tickets: Vec::new() },
            );
        }
        self
    }

    /// Every ticket created through `connection_id`.
    #[must_use]
    pub fn tickets(&self, connection_id: &str) -> Vec<StoredTicket> {
        self.inner
            .lock()
            .map(|projects| {
                projects
                    .get(connection_id)
                    .map(|project| project.tickets.clone())
                    .unwrap_or_default()
            })
            .unwrap_or_default()
    }

    /// Marks ticket `number` of `auth`'s project closed, if `auth`'s token opens it.
    fn close(&self, auth: &Auth, number: u64) -> Result<(), ToolError> {
        let mut projects =
            self.inner.lock().map_err(|_| ToolError::new("the ticket store is unavailable"))?;
        let project = projects
            .get_mut(auth.connection_id())
            .filter(|project| project.token == auth.credential().expose())
            .ok_or_else(|| ToolError::new("the tracker refused the connection's credential"))?;
        let ticket = project
            .tickets
            .iter_mut()
            .find(|ticket| ticket.number == number)
            .ok_or_else(|| ToolError::new(format!("there is no ticket {number}")))?;
        ticket.closed = true;
        Ok(())
    }

    /// Stores a ticket in the project of `auth`'s connection, if `auth`'s token opens it.
    fn insert(&self, auth: &Auth, ticket: StoredTicket) -> Result<u64, ToolError> {
        let mut projects =
            self.inner.lock().map_err(|_| ToolError::new("the ticket store is unavailable"))?;
        let project = projects
            .get_mut(auth.connection_id())
            .filter(|project| project.token == auth.credential().expose())
            .ok_or_else(|| ToolError::new("the tracker refused the connection's credential"))?;
        let number = project.tickets.len() as u64 + 1;
        project.tickets.push(StoredTicket { number, ..ticket });
        Ok(number)
    }
}

impl Tool for CreateTicket {
    type Output = Ticket;

    async fn run(
        self,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Ticket, ToolError> {
        let auth = caps.get::<Auth>()?;
        let connection = auth.connection_id().to_owned();
        let number = caps.get::<TicketStore>()?.insert(
            auth,
            StoredTicket {
                connection_id: connection.clone(),
                number: 0,
                title: self.title,
                body: self.body,
                priority: self.priority,
                labels: self.labels.into_iter().map(|label| label.0).collect(),
                closed: false,
            },
        )?;
        Ok(Ticket {
            number,
            url: format!("https://tracker.example.com/{connection}/{number}"),
            status: Status::Open,
            created_by: ctx.actor_id().to_owned(),
        })
    }
}

impl Tool for CloseTicket {
    type Output = Closed;

    async fn run(
        self,
        _ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Closed, ToolError> {
        caps.get::<TicketStore>()?.close(caps.get::<Auth>()?, self.number)?;
        Ok(Closed { number: self.number, status: Status::Closed })
    }
}
