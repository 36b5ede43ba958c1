//! The tools the runner and validation benchmarks call: [`Small`] (3 fields) and [`Medium`]
//! (30 fields, nested), each with a trivial `run` that only moves its arguments into its output,
//! so a benchmark of the runner measures the runner.

use tool_runtime::prelude::*;

/// Echo a query back: the small tool.
#[tool(name = "bench__small", effect = read_only, redact = ["query", "limit", "exact"])]
#[derive(Debug)]
pub struct Small {
    /// Words to look for.
    #[schema(length(max = 200))]
    pub query: String,
    /// How many results at most.
    #[schema(range(min = 1, max = 100))]
    pub limit: u32,
    /// Whether to match exactly.
    pub exact: bool,
}

/// What [`Small`] returns; also the arguments and the output of the plain rmcp peer's
/// `bench__small` ([`crate::peers`]).
#[derive(Debug, Serialize, Deserialize, ToolSchema, schemars::JsonSchema)]
pub struct SmallOut {
    /// The query.
    pub query: String,
    /// The limit.
    pub limit: u32,
    /// The exact flag.
    pub exact: bool,
}

impl Small {
    /// The tool's work, shared with the baseline: move the arguments into the output.
    #[must_use]
    pub fn answer(self) -> SmallOut {
        SmallOut { query: self.query, limit: self.limit, exact: self.exact }
    }
}

impl Tool for Small {
    type Output = SmallOut;

    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<SmallOut, ToolError> {
        Ok(self.answer())
    }
}

/// Arguments of [`Small`], as a model sends them.
pub const SMALL_ARGS: &str = r#"{"query": "streaming json decoders", "limit": 10, "exact": false}"#;

/// [`SMALL_ARGS`] with three violations (too long a query, a limit out of range, an unknown
/// property).
#[must_use]
pub fn small_invalid_args() -> String {
    format!(r#"{{"query": "{}", "limit": 0, "exact": false, "extra": 1}}"#, "q".repeat(201))
}

/// A postal address.
#[derive(Debug, Clone, Serialize, Deserialize, ToolSchema, schemars::JsonSchema)]
pub struct Address {
    /// Street and number.
    #[schema(length(min = 1, max = 128))]
    pub street: String,
    /// City.
    pub city: String,
    /// Postal code, when the country has them.
    pub postcode: Option<String>,
    /// ISO 3166 country code.
    #[schema(length(min = 2, max = 2))]
    pub country: String,
}

/// One line of an order.
#[derive(Debug, Clone, Serialize, Deserialize, ToolSchema, schemars::JsonSchema)]
pub struct LineItem {
    /// Stock keeping unit.
    #[schema(pattern = "^[A-Z]{2}-[0-9]{3,6}$")]
    pub sku: String,
    /// How many.
    #[schema(range(min = 1, max = 1000))]
    pub quantity: u16,
    /// Unit price in cents.
    pub price_cents: u64,
    /// Whether to gift-wrap it.
    pub gift: bool,
}

/// How urgent an order is.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToolSchema, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Whenever.
    Low,
    /// Usual.
    Normal,
    /// Now.
    High,
}

/// How the customer wants to be treated.
#[derive(Debug, Clone, Serialize, Deserialize, ToolSchema, schemars::JsonSchema)]
pub struct Preferences {
    /// BCP 47 language tag.
    pub language: String,
    /// Whether to send notifications.
    pub notify: bool,
    /// How urgent.
    pub priority: Priority,
    /// Free-form labels.
    #[schema(items(max = 16))]
    pub tags: Vec<String>,
}

macro_rules! medium_fields {
    ($(#[$attr:meta])* pub struct $name:ident;) => {
        $(#[$attr])*
        pub struct $name {
            /// Customer id.
            #[schema(length(min = 1, max = 64))]
            pub customer_id: String,
            /// Order id.
            #[schema(length(min = 1, max = 64))]
            pub order_id: String,
            /// A note for the warehouse.
            pub note: Option<String>,
            /// Sales channel.
            pub channel: String,
            /// ISO 4217 currency.
            #[schema(length(min = 3, max = 3))]
            pub currency: String,
            /// Order total in cents.
            pub total_cents: u64,
            /// Discount in percent.
            #[schema(range(min = 0.0, max = 100.0))]
            pub discount_pct: f64,
            /// Ship today.
            pub rush: bool,
            /// Delivery attempts so far.
            pub attempts: u8,
            /// Sales region.
            pub region: Option<String>,
            /// Where the parcel goes.
            pub shipping: Address,
            /// Where the invoice goes; the shipping address when absent.
            pub billing: Option<Address>,
            /// The lines.
            #[schema(items(min = 1, max = 50))]
            pub items: Vec<LineItem>,
            /// Customer preferences.
            pub preferences: Preferences,
            /// Year the customer signed up.
            #[schema(range(min = 2000, max = 2100))]
            pub created_year: u16,
            /// Where the order came from.
            pub source: Priority,
            /// Coupon code.
            pub coupon: Option<String>,
            /// Parcel weight.
            pub weight_kg: f64,
        }
    };
}

medium_fields! {
    /// Record an order: the medium tool (18 properties, 30 fields counting the nested ones).
    #[tool(
        name = "bench__medium",
        effect = read_only,
        redact = [
            "customer_id", "order_id", "note", "channel", "currency", "total_cents",
            "discount_pct", "rush", "attempts", "region", "shipping", "billing", "items",
            "preferences", "created_year", "source", "coupon", "weight_kg",
        ],
    )]
    #[derive(Debug)]
    pub struct Medium;
}

medium_fields! {
    /// What [`Medium`] returns: the order as recorded; also the arguments and the output of
    /// the plain rmcp peer's `bench__medium` ([`crate::peers`]).
    #[derive(Debug, Serialize, Deserialize, ToolSchema, schemars::JsonSchema)]
    pub struct MediumOut;
}

impl Medium {
    /// The tool's work, shared with the baseline: move the arguments into the output.
    #[must_use]
    pub fn answer(self) -> MediumOut {
        MediumOut {
            customer_id: self.customer_id,
            order_id: self.order_id,
            note: self.note,
            channel: self.channel,
            currency: self.currency,
            total_cents: self.total_cents,
            discount_pct: self.discount_pct,
            rush: self.rush,
            attempts: self.attempts,
            region: self.region,
            shipping: self.shipping,
            billing: self.billing,
            items: self.items,
            preferences: self.preferences,
            created_year: self.created_year,
            source: self.source,
            coupon: self.coupon,
            weight_kg: self.weight_kg,
        }
    }
}

impl Tool for Medium {
    type Output = MediumOut;

    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<MediumOut, ToolError> {
        Ok(self.answer())
    }
}

/// Arguments of [`Medium`], as a model sends them (three order lines).
pub const MEDIUM_ARGS: &str = r#"{
  "customer_id": "cus_8f2k3j", "order_id": "ord_20260101_0042", "note": "leave at the door",
  "channel": "web", "currency": "EUR", "total_cents": 15990, "discount_pct": 12.5,
  "rush": true, "attempts": 0, "region": null,
  "shipping": {"street": "Hauptstrasse 1", "city": "Berlin", "postcode": "10115", "country": "DE"},
  "billing": {"street": "Rue de Rivoli 99", "city": "Paris", "postcode": null, "country": "FR"},
  "items": [
    {"sku": "AB-1234", "quantity": 2, "price_cents": 4995, "gift": false},
    {"sku": "CD-98765", "quantity": 1, "price_cents": 3000, "gift": true},
    {"sku": "EF-555", "quantity": 10, "price_cents": 300, "gift": false}
  ],
  "preferences": {"language": "de-DE", "notify": true, "priority": "high", "tags": ["vip", "b2b"]},
  "created_year": 2019, "source": "normal", "coupon": "SPRING26", "weight_kg": 3.25
}"#;

/// [`MEDIUM_ARGS`] with six violations at several depths: a bad currency length, a discount
/// above 100, a bad SKU, a quantity of 0, an unknown priority and an unknown property.
pub const MEDIUM_INVALID_ARGS: &str = r#"{
  "customer_id": "cus_8f2k3j", "order_id": "ord_20260101_0042", "note": "leave at the door",
  "channel": "web", "currency": "EURO", "total_cents": 15990, "discount_pct": 112.5,
  "rush": true, "attempts": 0, "region": null,
  "shipping": {"street": "Hauptstrasse 1", "city": "Berlin", "postcode": "10115", "country": "DE"},
  "billing": {"street": "Rue de Rivoli 99", "city": "Paris", "postcode": null, "country": "FR"},
  "items": [
    {"sku": "AB-1234", "quantity": 2, "price_cents": 4995, "gift": false},
    {"sku": "cd_98765", "quantity": 0, "price_cents": 3000, "gift": true},
    {"sku": "EF-555", "quantity": 10, "price_cents": 300, "gift": false}
  ],
  "preferences": {"language": "de-DE", "notify": true, "priority": "urgent", "tags": ["vip"]},
  "created_year": 2019, "source": "normal", "coupon": "SPRING26", "weight_kg": 3.25,
  "express": true
}"#;
