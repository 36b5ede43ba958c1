//! Tool definitions the way a library of tools is written: on `tool-runtime` with
//! `default-features = false`, so without the runner, the adapters, the agent loop, run-time
//! tools or `schemars` interop. The tests check that everything a tool definition needs is
//! there and behaves as with the default features.

use tool_runtime::prelude::*;
use tool_runtime::runtime::Clock;

/// Look up orders of a customer.
#[tool(
    name = "shop__find_orders",
    effect = read_only,
    redact = ["orders.id", "orders.total_cents"],
    capabilities = [Clock]
)]
#[derive(Debug, PartialEq)]
pub struct FindOrders {
    /// The customer, as `cus_` and 6 to 12 letters or digits.
    #[schema(pattern = "^cus_[a-z0-9]{6,12}$")]
    pub customer_id: String,
    /// Which orders.
    pub status: Option<Status>,
    /// How many orders at most.
    #[schema(range(min = 1, max = 50))]
    pub limit: u8,
}

/// An order's state.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not shipped yet.
    Open,
    /// Shipped.
    Shipped,
}

/// The orders found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Orders {
    /// Newest first.
    pub orders: Vec<Order>,
    /// When the lookup ran, in ms since the Unix epoch.
    pub looked_up_ms: i64,
}

/// One order.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Order {
    /// The order's id.
    pub id: String,
    /// Its total.
    pub total_cents: u64,
    /// Its state.
    pub status: Status,
}

impl Tool for FindOrders {
    type Output = Orders;

    async fn run(
        self,
        _ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Orders, ToolError> {
        let clock = caps.get::<Clock>().map_err(|missing| ToolError::new(missing.to_string()))?;
        let status = self.status.unwrap_or(Status::Open);
        let orders = (1..=self.limit.min(2))
            .map(|n| Order { id: format!("ord_{n}"), total_cents: 1000 * u64::from(n), status })
            .collect();
        Ok(Orders { orders, looked_up_ms: clock.epoch_ms() })
    }
}
