//! Who may call a tool and whether the model waits for it, declared with the attribute: the
//! spec says so, its JSON names it, and a tool that says nothing is one the model calls
//! directly and waits for.
use tool_runtime::prelude::*;
use tool_runtime::spec::Callers;

/// Run a read-only SQL query over the sales tables.
#[tool(name = "sales__query", effect = read_only, callers = programmatic, redact = all)]
struct Query {
    /// The query.
    sql: String,
}

impl Tool for Query {
    type Output = Vec<String>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Vec<String>, ToolError> {
        Ok(vec![self.sql])
    }
}

/// Look up one customer.
#[tool(name = "sales__customer", effect = read_only, callers = both, redact = all)]
struct Customer {
    /// The customer's id.
    id: u32,
}

impl Tool for Customer {
    type Output = u32;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<u32, ToolError> {
        Ok(self.id)
    }
}

/// Say hello.
#[tool(name = "demo__hello", effect = read_only, callers = direct, asynchronous, redact = all)]
struct Hello {}

impl Tool for Hello {
    type Output = String;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<String, ToolError> {
        Ok("hello".to_owned())
    }
}

fn main() {
    assert_eq!(Query::spec().callers(), Callers::Programmatic);
    assert_eq!(Customer::spec().callers(), Callers::Both);
    assert_eq!(Hello::spec().callers(), Callers::Direct);
    assert!(Hello::spec().is_asynchronous() && !Query::spec().is_asynchronous());
    let json = serde_json::to_value(Query::spec()).unwrap();
    assert_eq!(json["callers"], "programmatic");
    // The default is not written, so the specs (and hashes) of tools that say nothing stay
    // as they were.
    assert!(serde_json::to_value(Hello::spec()).unwrap().get("callers").is_none());
}
