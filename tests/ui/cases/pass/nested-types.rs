// Nested structs are inlined, and `Option`, `Vec`, `Box`, arrays and sets map to nullable
// types, arrays, the inner schema, fixed-size arrays and `uniqueItems` arrays.
use std::collections::{BTreeSet, HashSet};

use serde_json::json;
use tool_runtime::prelude::*;

/// Where a parcel goes.
#[derive(Debug, Deserialize, ToolSchema)]
struct Address {
    street: String,
    /// Postal code, when the country has them.
    postcode: Option<String>,
}

/// One line of an order.
#[derive(Debug, Deserialize, ToolSchema)]
struct Line {
    sku: String,
    quantity: u16,
}

/// Place an order for delivery.
#[tool(name = "shop__place_order", effect = external_side_effect, redact = ["order_id", "lines.sku"])]
struct PlaceOrder {
    lines: Vec<Line>,
    address: Box<Address>,
    /// Billing address; the delivery address when absent.
    billing: Option<Address>,
    tags: BTreeSet<String>,
    coupons: HashSet<String>,
    /// Width, height and depth in centimetres.
    size_cm: [f64; 3],
    gift_notes: Option<Vec<Option<String>>>,
}

#[derive(Serialize, ToolSchema)]
struct Placed {
    order_id: String,
    lines: Vec<PlacedLine>,
}

#[derive(Serialize, ToolSchema)]
struct PlacedLine {
    sku: String,
    price_cents: u64,
}

impl Tool for PlaceOrder {
    type Output = Placed;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Placed, ToolError> {
        let lines = self.lines.into_iter().map(|line| PlacedLine { sku: line.sku, price_cents: 100 * u64::from(line.quantity) });
        Ok(Placed { order_id: format!("{:?}{:?}", self.address, self.billing), lines: lines.collect() })
    }
}

fn main() {
    let spec = PlaceOrder::spec();
    assert_eq!(spec.name(), "shop__place_order");
    assert_eq!(spec.effect(), ToolEffect::ExternalSideEffect);
    assert_eq!(spec.redaction().paths().collect::<Vec<_>>(), ["order_id", "lines.sku"]);

    let input = spec.input_schema().to_json();
    let address = json!({
        "type": "object",
        "description": "Where a parcel goes.",
        "properties": {
            "street": {"type": "string"},
            "postcode": {"type": ["string", "null"], "description": "Postal code, when the country has them."},
        },
        "required": ["street"],
        "additionalProperties": false,
    });
    let properties = &input["properties"];
    assert_eq!(properties["address"], address);
    assert_eq!(properties["billing"]["type"], json!(["object", "null"]));
    assert_eq!(properties["billing"]["description"], "Billing address; the delivery address when absent.");
    assert_eq!(properties["lines"]["items"]["properties"]["quantity"], json!({"type": "integer", "minimum": 0, "maximum": 65535}));
    assert_eq!(properties["tags"], json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}));
    assert_eq!(properties["coupons"]["uniqueItems"], true);
    assert_eq!(properties["size_cm"]["minItems"], 3);
    assert_eq!(properties["size_cm"]["maxItems"], 3);
    assert_eq!(properties["gift_notes"]["type"], json!(["array", "null"]));
    assert_eq!(properties["gift_notes"]["items"]["type"], json!(["string", "null"]));
    assert_eq!(input["required"], json!(["lines", "address", "tags", "coupons", "size_cm"]));
    assert_eq!(input["additionalProperties"], false);
    assert_eq!(spec.output_schema().map(|schema| schema.to_json()["required"].clone()), Some(json!(["order_id", "lines"])));

    let args = json!({
        "lines": [{"sku": "A-1", "quantity": 2}],
        "address": {"street": "Main St 1"},
        "tags": ["gift"],
        "coupons": [],
        "size_cm": [10.0, 20.0, 5.5],
    });
    let order: PlaceOrder = serde_json::from_value(args.clone()).unwrap();
    assert_eq!(order.lines[0].quantity, 2);
    assert!(order.billing.is_none());
    let mut unknown = args;
    unknown["express"] = json!(true);
    assert!(serde_json::from_value::<PlaceOrder>(unknown).is_err(), "unknown fields are rejected");
}
