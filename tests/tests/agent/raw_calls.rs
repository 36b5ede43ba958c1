//! The provider's payload is kept, never shown: every record the agent makes keeps the call as
//! the model sent it (refused calls too), and nothing prints or serialises it.

use std::sync::{Arc, Mutex};

use tool_runtime::agent::{Agent, AgentEvent, Message, ScriptedModel, ScriptedTurn};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runtime::{CollectingSink, MAX_RAW_CALL_BYTES, RawCall, ToolErrorCode as Code};
use tool_tests::fixtures::{Echo, ctx};

/// Refund an order.
#[tool(name = "shop__refund", effect = state_change, redact = [])]
struct Refund {
    order: u32,
}

#[derive(Serialize, ToolSchema)]
struct Refunded {
    done: bool,
}

impl Tool for Refund {
    type Output = Refunded;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Refunded, ToolError> {
        Ok(Refunded { done: self.order > 0 })
    }
}

const CANARY: &str = "CANARY-7f3a";

#[tokio::test]
async fn every_record_keeps_what_the_model_sent_and_nothing_shows_it() {
    let catalog = ToolCatalog::builder().register::<Echo>().register::<Refund>().build().unwrap();
    let sink = CollectingSink::with_arguments();
    // `shop__refund` needs approval and no approver says yes: it is denied.
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::allowing(["text__*", "shop__*"]))
        .event_sink(sink.clone())
        .build();
    let ok = format!(r#"{{ "word":  "{CANARY}" }}"#);
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("a", "text__echo", ok.as_str()),
            ("b", "text__echo", r#"{"word": "CANARY-7f3a"#),
            ("c", "nope__missing", r#"{"why": "CANARY-7f3a"}"#),
            ("d", "shop__refund", r#"{"order": 7 }"#),
        ]),
        ScriptedTurn::openai_text("done"),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let output = Agent::new(Arc::new(model), runner)
        .run(vec![Message::user("go")], &ctx(), &move |event: AgentEvent| {
            seen.lock().unwrap().push(event);
        })
        .await;
    let records = &output.done.records;
    let codes: Vec<Option<Code>> =
        records.iter().map(|r| r.error.as_ref().map(|e| e.code)).collect();
    assert_eq!(
        codes,
        [None, Some(Code::InvalidJson), Some(Code::Unavailable), Some(Code::ApprovalDenied)]
    );
    // Each keeps the call as sent: the arguments' text exactly as it arrived.
    let raw: Vec<&str> = records.iter().map(|r| r.raw.as_ref().expect("kept").text()).collect();
    assert!(raw[0].contains(r#"{ \"word\":  \"CANARY-7f3a\" }"#), "{}", raw[0]);
    assert!(raw[..3].iter().all(|text| text.contains(CANARY)), "{raw:?}");
    assert!(raw[3].contains(r#"{\"order\": 7 }"#), "{}", raw[3]);
    assert!(raw[2].contains("nope__missing"));
    // Never shown: not by `Debug`, not in the JSON of a record, the run or its events.
    for record in records {
        assert!(!format!("{record:?}").contains("CANARY-7f3a\\\" }"), "Debug shows the raw text");
        assert!(!format!("{record:#?}").contains("\"id\":"), "Debug shows the raw text");
        assert!(format!("{record:?}").contains("RawCall("));
        assert!(serde_json::to_value(record).unwrap().get("raw").is_none());
    }
    let done = serde_json::to_string(&output.done).unwrap();
    assert!(!done.contains("nope__missing\",\"arguments\""), "{done}");
    let events = events.lock().unwrap();
    let shown = format!("{:?}", *events);
    assert!(!shown.contains(r#"\"why\": \"CANARY-7f3a\""#), "an agent event shows a raw call");
    let runner_events = format!("{:?}", sink.events());
    assert!(!runner_events.contains(r#"\"why\""#), "a runner event shows a raw call");
}

#[test]
fn a_long_payload_is_cut_on_a_character_boundary() {
    let long = "é".repeat(MAX_RAW_CALL_BYTES);
    let raw = RawCall::new(&long);
    assert!(raw.was_cut());
    assert!(raw.len() <= MAX_RAW_CALL_BYTES && raw.len() >= MAX_RAW_CALL_BYTES - 1);
    assert_eq!(format!("{raw:?}"), format!("RawCall({} bytes, cut)", raw.len()));
}
