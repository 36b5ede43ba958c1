//! The expansions of `#[tool]` and `#[derive(ToolSchema)]` name everything by absolute path, so
//! they compile in a module where the prelude's names, primitive types and the crates they use
//! mean something else, and they produce the same spec there.

use serde_json::json;
use tool_runtime::prelude::{ToolDefinition, ToolSchema as _};

#[allow(dead_code, non_camel_case_types, non_upper_case_globals, non_snake_case, clippy::all)]
mod shadowed {
    use ::tool_runtime::prelude::{
        Serialize, Tool, ToolCapabilities, ToolError, ToolInvocationContext, ToolSchema, tool,
    };

    // Everything the standard prelude offers, shadowed by local items.
    pub struct Result;
    pub struct Option;
    pub struct Box;
    pub struct Vec;
    pub struct String;
    pub fn Some() {}
    pub const None: () = ();
    pub fn Ok() {}
    pub fn Err() {}
    pub trait Send {}
    pub trait Sized {}
    pub trait Default {}
    pub trait Clone {}
    pub trait Into {}
    pub trait Iterator {}
    pub trait Drop {}
    pub mod assert {}
    // Primitive types the expansions name (serde's own expansion needs `str` and the integer
    // types unshadowed, so those stay).
    pub type bool = ();
    pub type i128 = ();
    pub type f64 = ();
    // The crates the expansions use, shadowed too: they must be reached as `::name`.
    pub mod core {}
    pub mod std {}
    pub mod alloc {}
    pub mod serde {}
    pub mod tool_runtime {}
    pub mod __private {}

    /// How urgent a ticket is.
    #[derive(Debug, Serialize, ::serde::Deserialize, ToolSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Urgency {
        Low,
        High,
    }

    /// A ticket number.
    #[derive(Debug, Serialize, ::serde::Deserialize, ToolSchema)]
    #[serde(transparent)]
    pub struct TicketId(#[schema(range(min = 1))] pub ::core::primitive::u64);

    /// A ticket, as the tracker returns it.
    #[derive(Debug, Serialize, ToolSchema)]
    pub struct Ticket {
        pub id: TicketId,
        #[schema(length(min = 1, max = 200), pattern = "^\\S")]
        pub title: ::std::string::String,
        pub urgency: ::core::option::Option<Urgency>,
        #[schema(items(max = 10))]
        pub labels: ::std::vec::Vec<::std::string::String>,
        #[schema(range(min = 0.0, max = 1.0))]
        pub score: ::core::primitive::f64,
    }

    /// The tickets found.
    #[derive(Debug, Serialize, ToolSchema)]
    pub struct Found {
        pub tickets: ::std::vec::Vec<Ticket>,
        pub total: ::core::primitive::u32,
    }

    /// Find tickets by text.
    #[tool(name = "tracker__find", effect = read_only, redact = ["tickets.id", "tickets.title", "total"])]
    #[serde(rename_all = "camelCase")]
    pub struct FindTickets {
        /// What to look for.
        #[schema(length(max = 100))]
        pub query_text: ::std::string::String,
        pub min_urgency: ::core::option::Option<Urgency>,
        #[serde(default)]
        pub first: ::std::boxed::Box<::core::option::Option<TicketId>>,
        #[schema(range(min = 1, max = 50))]
        pub limit: ::core::primitive::u8,
    }

    impl Tool for FindTickets {
        type Output = Found;

        async fn run(
            self,
            _: &ToolInvocationContext,
            _: &ToolCapabilities,
        ) -> ::core::result::Result<Found, ToolError> {
            let ticket = Ticket {
                id: TicketId(1),
                title: self.query_text,
                urgency: self.min_urgency,
                labels: ::std::vec::Vec::new(),
                score: 0.5,
            };
            ::core::result::Result::Ok(Found { tickets: ::std::vec![ticket], total: 1 })
        }
    }
}

#[test]
fn the_spec_is_the_same_as_anywhere_else() {
    let spec = shadowed::FindTickets::spec();
    assert_eq!(spec.name(), "tracker__find");
    assert_eq!(spec.description(), "Find tickets by text.");
    assert_eq!(
        spec.redaction().paths().collect::<Vec<_>>(),
        ["tickets.id", "tickets.title", "total"]
    );
    let ticket_id = json!({"type": "integer", "description": "A ticket number.", "minimum": 1, "maximum": u64::MAX});
    let urgency = json!({"type": ["string", "null"], "description": "How urgent a ticket is.", "enum": ["low", "high", null]});
    assert_eq!(
        spec.input_schema().to_json(),
        json!({
            "type": "object",
            "properties": {
                "queryText": {"type": "string", "description": "What to look for.", "maxLength": 100},
                "minUrgency": urgency,
                "first": {
                    "type": ["integer", "null"],
                    "description": "A ticket number.",
                    "minimum": 1,
                    "maximum": u64::MAX,
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "required": ["queryText", "limit"],
            "additionalProperties": false,
        })
    );
    let output = spec.output_schema().expect("a #[tool] has an output schema").to_json();
    let ticket = &output["properties"]["tickets"]["items"];
    assert_eq!(ticket["properties"]["id"], ticket_id);
    assert_eq!(
        ticket["properties"]["title"],
        json!({"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^\\S"})
    );
    assert_eq!(ticket["properties"]["labels"]["maxItems"], 10);
    assert_eq!(
        ticket["properties"]["score"],
        json!({"type": "number", "minimum": 0.0, "maximum": 1.0})
    );
    assert_eq!(ticket["required"], json!(["id", "title", "labels", "score"]));
    assert_eq!(shadowed::Urgency::SCHEMA.to_json()["enum"], json!(["low", "high"]));
}

#[test]
fn arguments_deserialise_as_the_schema_says() {
    let args: shadowed::FindTickets =
        serde_json::from_value(json!({"queryText": "printer", "minUrgency": "high", "limit": 5}))
            .unwrap();
    assert_eq!(args.query_text, "printer");
    assert!(args.first.is_none());
    assert!(
        serde_json::from_value::<shadowed::FindTickets>(
            json!({"queryText": "x", "limit": 5, "extra": 1})
        )
        .is_err()
    );
}
