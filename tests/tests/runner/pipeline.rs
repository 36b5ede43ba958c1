//! The runner's pipeline: every bad input and fault yields its error code with a safe message,
//! and the runner goes on serving.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use async_trait::async_trait;
use serde::Serializer;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_runtime::catalog::{CatalogProblem, ToolCatalog};
use tool_runtime::content::ToolOutput;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runner::{
    Approval, ApprovalDecision, ApprovalRequest, Approver, Authorizer, AuthzDenied, PreApproved,
};
use tool_runtime::runtime::{
    Arguments, Auth, BoundToolRuntime, BrokerError, Clock, CollectingSink, ConnectionBroker,
    Credential, DynamicTool, DynamicToolError, EventOutcome, StaticTool, ToolErrorCode as Code,
    ToolEvent, ValidatedArgs,
};
use tool_runtime::schema::ArgumentsError;
use tool_tests::events::{assert_paired, assert_refused_before_start, runner_marks};
use tool_tests::fixtures::context;

/// Echo the text back.
#[tool(name = "test__echo", effect = read_only, redact = ["text", "length"])]
struct Echo {
    #[schema(length(max = 100))]
    text: String,
    times: Option<u8>,
}

#[derive(Serialize, ToolSchema)]
struct Echoed {
    text: String,
    length: usize,
    internal: String,
}

impl Tool for Echo {
    type Output = Echoed;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Echoed, ToolError> {
        ctx.report_progress(1.0, Some(1.0), "echoing");
        let text = self.text.repeat(usize::from(self.times.unwrap_or(1)));
        Ok(Echoed { length: text.len(), text, internal: "never shown".into() })
    }
}

/// Panics.
#[tool(name = "test__panic", effect = read_only, redact = [])]
struct Panics {}

#[derive(Serialize, ToolSchema)]
struct Nothing {}

impl Tool for Panics {
    type Output = Nothing;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Nothing, ToolError> {
        panic!("tool bug")
    }
}

/// Never finishes.
#[tool(name = "test__hang", effect = read_only, redact = [])]
struct Hangs {}

impl Tool for Hangs {
    type Output = Nothing;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Nothing, ToolError> {
        std::future::pending().await
    }
}

/// Returns an error.
#[tool(name = "test__fail", effect = read_only, redact = [])]
struct Fails {}

impl Tool for Fails {
    type Output = Nothing;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Nothing, ToolError> {
        Err(ToolError::retryable("upstream busy"))
    }
}

/// Claims a `count: u8` but writes a string: its output breaks its own schema.
#[tool(name = "test__liar", effect = read_only, redact = ["count"])]
struct Liar {}

#[derive(ToolSchema)]
struct Count {
    #[allow(dead_code)]
    count: u8,
}

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Count", 1)?;
        out.serialize_field("count", "many")?;
        out.end()
    }
}

impl Tool for Liar {
    type Output = Count;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Count, ToolError> {
        Ok(Count { count: 1 })
    }
}

/// Returns a unit enum, of which `redact = []` keeps nothing: the call succeeds with `null`.
#[tool(name = "test__bare", effect = read_only, redact = [])]
struct Bare {}

#[derive(Serialize, ToolSchema)]
enum Mood {
    Fine,
}

impl Tool for Bare {
    type Output = Mood;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Mood, ToolError> {
        Ok(Mood::Fine)
    }
}

/// Deletes a record.
#[tool(name = "test__delete", effect = state_change, redact = ["deleted"], requires_connection, capabilities = [Auth])]
struct Delete {
    id: u32,
}

#[derive(Serialize, ToolSchema)]
struct Deleted {
    deleted: u32,
    token_seen: String,
}

impl Tool for Delete {
    type Output = Deleted;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Deleted, ToolError> {
        let auth = caps.get::<Auth>()?;
        Ok(Deleted { deleted: self.id, token_seen: auth.authorization_header() })
    }
}

/// Reads the clock but asks for nothing else.
#[tool(name = "test__clock", effect = read_only, redact = ["ms", "has_index"], capabilities = [Clock])]
struct ReadsClock {}

#[derive(Serialize, ToolSchema)]
struct Ms {
    ms: i64,
    has_index: bool,
}

#[derive(Debug)]
struct Index;
impl tool_runtime::runtime::Capability for Index {
    const NAME: &'static str = "index";
}

impl Tool for ReadsClock {
    type Output = Ms;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Ms, ToolError> {
        Ok(Ms { ms: caps.get::<Clock>()?.epoch_ms(), has_index: caps.contains::<Index>() })
    }
}

pub const CANARY: &str = "sk-live-CANARY-7f3a";

#[derive(Debug)]
struct Vault;

#[async_trait]
impl ConnectionBroker for Vault {
    async fn credential(
        &self,
        _: &ToolInvocationContext,
        connection_id: &str,
    ) -> Result<Credential, BrokerError> {
        match connection_id {
            "conn-a" => Ok(Credential::new(CANARY)),
            _ => Err(BrokerError::new("no credential for this connection")),
        }
    }
}

/// A field type whose hand-written `Deserialize` panics.
struct Boom;

impl tool_runtime::schema::ToolSchema for Boom {
    const SCHEMA: &'static tool_runtime::schema::Schema = &tool_runtime::schema::Schema::string();
}

impl<'de> Deserialize<'de> for Boom {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        panic!("bad Deserialize")
    }
}

/// Its arguments cannot be decoded without a panic.
#[tool(name = "test__boom", effect = read_only, redact = [])]
struct DecodesBadly {
    #[allow(dead_code)]
    boom: Boom,
}

impl Tool for DecodesBadly {
    type Output = Nothing;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Nothing, ToolError> {
        Ok(Nothing {})
    }
}

fn catalog() -> ToolCatalog {
    ToolCatalog::builder()
        .register::<DecodesBadly>()
        .register::<Echo>()
        .register::<Panics>()
        .register::<Hangs>()
        .register::<Fails>()
        .register::<Liar>()
        .register::<Bare>()
        .register::<Delete>()
        .register::<ReadsClock>()
        .capability(Clock::fixed(UNIX_EPOCH + Duration::from_secs(1_800_000_000)))
        .capability(Index)
        .connection_broker(Arc::new(Vault))
        .build()
        .unwrap()
}

fn policy() -> ToolPolicy {
    ToolPolicy::from_json(
        r#"{
            "allowed_tools": ["test__*"],
            "require_approval": [],
            "tools": {"test__hang": {"max_runtime_ms": 50}, "test__echo": {"max_result_bytes": 300}},
            "connections": {"allowed_connection_ids": ["conn-a", "conn-b"]}
        }"#,
    )
    .unwrap()
}

fn runner(sink: &CollectingSink) -> ToolRunner {
    ToolRunner::builder(catalog()).policy(policy()).event_sink(Arc::new(sink.clone())).build()
}

fn ctx() -> ToolInvocationContext {
    context("run-1", "user-1", "tenant-1").with_tool_call_id("call_1")
}

fn connected(id: &str) -> ToolInvocationContext {
    ctx().with_connection_id(id).with_requested_connections(["conn-a", "conn-b"])
}

async fn code(
    runner: &ToolRunner,
    tool: &str,
    raw: &[u8],
    ctx: &ToolInvocationContext,
) -> Option<Code> {
    runner.exec(tool, raw, ctx).await.error_code()
}

#[tokio::test(start_paused = true)]
async fn every_fault_has_its_code_and_the_runner_goes_on() {
    let sink = CollectingSink::new();
    let runner = runner(&sink);
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    let cases: Vec<(&str, Vec<u8>, Option<Code>)> = vec![
        ("test__echo", br#"{"text": "hi"}"#.to_vec(), None),
        ("test__echo", br#"{"text": "hi""#.to_vec(), Some(Code::InvalidJson)),
        ("test__echo", br#"{"text": 5}"#.to_vec(), Some(Code::Validation)),
        ("test__echo", br"{}".to_vec(), Some(Code::Validation)),
        ("test__echo", br#"{"text": "a", "extra": 1}"#.to_vec(), Some(Code::Validation)),
        (
            "test__echo",
            format!(r#"{{"text": "{}"}}"#, "a".repeat(9000)).into_bytes(),
            Some(Code::Validation),
        ),
        ("test__echo", deep.clone().into_bytes(), Some(Code::Validation)),
        ("test__echo", br#"{"text": NaN}"#.to_vec(), Some(Code::InvalidJson)),
        ("test__echo", br#"{"text": Infinity}"#.to_vec(), Some(Code::InvalidJson)),
        ("test__echo", b"{\"text\": \"\xff\xfe\"}".to_vec(), Some(Code::InvalidJson)),
        ("test__echo", br#"{"text": "a", "text": "b"}"#.to_vec(), Some(Code::InvalidJson)),
        ("test__echo", b"".to_vec(), Some(Code::InvalidJson)),
        ("test__echo", br#"{"text": "hi"} {}"#.to_vec(), Some(Code::InvalidJson)),
        ("test__nope", br"{}".to_vec(), Some(Code::Unavailable)),
        ("test__panic", br"{}".to_vec(), Some(Code::Execution)),
        ("test__boom", br#"{"boom": "x"}"#.to_vec(), Some(Code::Execution)),
        ("test__fail", br"{}".to_vec(), Some(Code::Execution)),
        ("test__hang", br"{}".to_vec(), Some(Code::Timeout)),
        ("test__liar", br"{}".to_vec(), Some(Code::OutputValidation)),
        ("test__bare", br"{}".to_vec(), None),
        (
            "test__echo",
            br#"{"text": "0123456789012345678901234567890123456789", "times": 10}"#.to_vec(),
            Some(Code::ResultTooLarge),
        ),
        ("test__delete", br#"{"id": 1}"#.to_vec(), Some(Code::PolicyDenied)),
        ("test__echo", br#"{"text": "still serving"}"#.to_vec(), None),
    ];
    for (tool, raw, expected) in cases {
        let result = runner.exec(tool, &raw, &ctx()).await;
        let shown = format!("{tool} {}", String::from_utf8_lossy(&raw[..raw.len().min(60)]));
        assert_eq!(result.error_code(), expected, "{shown}");
        // The sink saw the same outcome: one result, after a start only for calls that ran.
        let events = sink.take();
        // `test__boom`'s arguments panic as they are read, before the start.
        let refused_before_start = tool == "test__boom"
            || matches!(
                expected,
                Some(Code::InvalidJson | Code::Validation | Code::Unavailable | Code::PolicyDenied)
            );
        if refused_before_start {
            assert_eq!(assert_refused_before_start(runner_marks(&events)), ["call_1"], "{shown}");
        } else {
            assert_eq!(assert_paired(runner_marks(&events)), ["call_1"], "{shown}");
        }
        let event_code = match events.last() {
            Some(ToolEvent::ToolCallResult { outcome: EventOutcome::Err { error }, .. }) => {
                Some(error.code)
            }
            Some(ToolEvent::ToolCallResult { .. }) => None,
            other => panic!("{shown}: no result event last: {other:?}"),
        };
        assert_eq!(event_code, expected, "{shown}");
        if let Some(error) = result.error() {
            assert!(!error.message.is_empty());
            assert!(
                !error.message.contains("0123456789"),
                "messages never echo values: {}",
                error.message
            );
        }
    }
    let roomy = ToolRunner::builder(catalog())
        .policy(
            ToolPolicy::from_json(
                r#"{"allowed_tools": ["test__echo"], "budgets": {"max_argument_bytes": 1000000}}"#,
            )
            .unwrap(),
        )
        .build();
    let nested = roomy.exec("test__echo", deep.as_bytes(), &ctx()).await;
    assert_eq!(
        nested.error_code(),
        Some(Code::InvalidJson),
        "deep nesting hits the parser's limit, not the stack"
    );
    assert!(
        nested.error().unwrap().message.contains("recursion limit"),
        "{}",
        nested.error().unwrap().message
    );

    let fails = runner.exec("test__fail", b"{}", &ctx()).await;
    assert!(fails.error().unwrap().retryable);
    assert_eq!(fails.error().unwrap().message, "upstream busy");
}

#[tokio::test]
async fn a_disallowed_tool_is_refused_and_hidden() {
    let sink = CollectingSink::new();
    let runner = ToolRunner::builder(catalog())
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["test__echo"]}"#).unwrap())
        .event_sink(Arc::new(sink.clone()))
        .build();
    assert_eq!(code(&runner, "test__fail", b"{}", &ctx()).await, Some(Code::PolicyDenied));
    assert_eq!(runner.visible_tools(&ctx()).names().collect::<Vec<_>>(), ["test__echo"]);
    let nothing = ToolRunner::builder(catalog()).build();
    assert_eq!(
        code(&nothing, "test__echo", br#"{"text": "a"}"#, &ctx()).await,
        Some(Code::PolicyDenied)
    );
    assert!(nothing.visible_tools(&ctx()).is_empty(), "deny by default");
}

#[tokio::test]
async fn connections_must_be_granted_and_requested() {
    let sink = CollectingSink::new();
    let runner = runner(&sink);
    let args = br#"{"id": 7}"#;
    assert_eq!(code(&runner, "test__delete", args, &ctx()).await, Some(Code::PolicyDenied));
    let foreign = ctx().with_connection_id("conn-z").with_requested_connections(["conn-z"]);
    assert_eq!(code(&runner, "test__delete", args, &foreign).await, Some(Code::PolicyDenied));
    let unrequested = ctx().with_connection_id("conn-a").with_requested_connections(["conn-b"]);
    assert_eq!(code(&runner, "test__delete", args, &unrequested).await, Some(Code::PolicyDenied));
    let ok = runner.exec("test__delete", args, &connected("conn-a")).await;
    assert_eq!(ok.value(), Some(&json!({"deleted": 7})));
    let no_credential = runner.exec("test__delete", args, &connected("conn-b")).await;
    assert_eq!(no_credential.error_code(), Some(Code::AuthzDenied));
    assert_eq!(no_credential.error().unwrap().message, "no credential for this connection");

    let hidden = runner.visible_tools(&ctx());
    assert!(!hidden.names().any(|name| name == "test__delete"), "no effective connection: hidden");
    assert!(runner.visible_tools(&connected("conn-a")).names().any(|name| name == "test__delete"));
}

#[derive(Debug)]
struct Wrongful;

#[async_trait]
impl Approver for Wrongful {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        // An approval of other arguments, replayed: it must not pass.
        ApprovalDecision::Approved(Approval::of(
            request.ctx,
            request.spec,
            request.tool_call_id,
            &json!({"id": 1}),
        ))
    }
}

#[tokio::test]
async fn approvals_are_bound_to_the_call_and_its_arguments() {
    let gated = || {
        ToolPolicy::from_json(
            r#"{"allowed_tools": ["test__*"], "require_approval": ["state_change"],
                "connections": {"allowed_connection_ids": ["conn-a"]}}"#,
        )
        .unwrap()
    };
    let ctx = connected("conn-a");
    let default = ToolRunner::builder(catalog()).policy(gated()).build();
    assert_eq!(
        code(&default, "test__delete", br#"{"id": 1}"#, &ctx).await,
        Some(Code::ApprovalDenied)
    );

    let approved = Approval::of(&ctx, Delete::spec(), "call_1", &json!({"id": 1}));
    let runner = ToolRunner::builder(catalog())
        .policy(gated())
        .approver(Arc::new(PreApproved::new([approved])))
        .build();
    assert_eq!(code(&runner, "test__delete", br#"{ "id" : 1 }"#, &ctx).await, None);
    assert_eq!(
        code(&runner, "test__delete", br#"{"id": 2}"#, &ctx).await,
        Some(Code::ApprovalDenied)
    );
    let other_call = ctx.clone().with_tool_call_id("call_2");
    assert_eq!(
        code(&runner, "test__delete", br#"{"id": 1}"#, &other_call).await,
        Some(Code::ApprovalDenied)
    );

    let replay =
        ToolRunner::builder(catalog()).policy(gated()).approver(Arc::new(Wrongful)).build();
    assert_eq!(code(&replay, "test__delete", br#"{"id": 1}"#, &ctx).await, None);
    assert_eq!(
        code(&replay, "test__delete", br#"{"id": 2}"#, &ctx).await,
        Some(Code::ApprovalDenied)
    );
    assert_eq!(
        code(&replay, "test__echo", br#"{"text": "a"}"#, &ctx).await,
        None,
        "read-only needs none"
    );
}

#[derive(Debug)]
struct Corrects;

#[async_trait]
impl Approver for Corrects {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        let id = request.arguments["id"].as_u64().unwrap_or(0);
        if id == 13 {
            request.edit(json!({"id": "thirteen"}))
        } else {
            request.edit(json!({"id": id + 100}))
        }
    }
}

#[tokio::test]
async fn an_approver_may_edit_the_arguments_which_are_validated_again() {
    let policy = ToolPolicy::from_json(
        r#"{"allowed_tools": ["test__*"], "require_approval": ["state_change"],
            "connections": {"allowed_connection_ids": ["conn-a"]}}"#,
    )
    .unwrap();
    let runner = ToolRunner::builder(catalog()).policy(policy).approver(Arc::new(Corrects)).build();
    let edited = runner.exec("test__delete", br#"{"id": 1}"#, &connected("conn-a")).await;
    assert_eq!(edited.value(), Some(&json!({"deleted": 101})));
    assert_eq!(edited.record().args, Some(json!({"id": 101})), "the record shows what ran");
    let invalid = runner.exec("test__delete", br#"{"id": 13}"#, &connected("conn-a")).await;
    assert_eq!(invalid.error_code(), Some(Code::Validation));
    assert!(invalid.error().unwrap().message.starts_with("the approver's edited arguments: /id"));
}

#[derive(Debug)]
struct TenantOnly;

#[async_trait]
impl Authorizer for TenantOnly {
    async fn authorize(
        &self,
        ctx: &ToolInvocationContext,
        _: &ToolSpec,
    ) -> Result<(), AuthzDenied> {
        if ctx.tenant_id() == "tenant-1" { Ok(()) } else { Err(AuthzDenied("wrong tenant".into())) }
    }
}

#[tokio::test]
async fn the_authorization_hook_runs() {
    let runner =
        ToolRunner::builder(catalog()).policy(policy()).authorizer(Arc::new(TenantOnly)).build();
    assert_eq!(code(&runner, "test__echo", br#"{"text": "a"}"#, &ctx()).await, None);
    let other = context("run", "user", "tenant-2");
    assert_eq!(
        code(&runner, "test__echo", br#"{"text": "a"}"#, &other).await,
        Some(Code::AuthzDenied)
    );
}

#[tokio::test]
async fn a_tool_gets_only_what_it_declared() {
    let runner = runner(&CollectingSink::new());
    let result = runner.exec("test__clock", b"{}", &ctx()).await;
    assert_eq!(result.value(), Some(&json!({"ms": 1_800_000_000_000_i64, "has_index": false})));
}

/// A source whose tools the test changes.
#[derive(Debug, Default)]
struct Changing(std::sync::Mutex<Vec<Arc<dyn BoundToolRuntime>>>);

impl Changing {
    fn offering(tools: Vec<Arc<dyn BoundToolRuntime>>) -> Arc<Self> {
        Arc::new(Self(std::sync::Mutex::new(tools)))
    }
}

impl tool_runtime::catalog::ToolSource for Changing {
    fn tools(&self) -> Vec<Arc<dyn BoundToolRuntime>> {
        self.0.lock().unwrap().clone()
    }
}

#[test]
fn a_source_offering_a_taken_name_fails_the_build_naming_both() {
    let echo = || Arc::new(StaticTool::<Echo>::new()) as Arc<dyn BoundToolRuntime>;
    let error = ToolCatalog::builder()
        .register::<Echo>()
        .source(Changing::offering(vec![echo()]))
        .build()
        .unwrap_err();
    assert!(
        error.to_string().contains(
            "tool name `test__echo` is registered twice: by `runner::pipeline::Echo` and by source #1"
        ),
        "{error}"
    );
    let error = ToolCatalog::builder()
        .source(Changing::offering(vec![echo()]))
        .source(Changing::offering(vec![echo()]))
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("by source #1 (`.source(...)` call 1 of the builder) and by source #2"),
        "{error}"
    );
}

#[tokio::test]
async fn a_later_collision_is_reported_and_the_registered_tool_runs() {
    let source = Changing::offering(Vec::new());
    let catalog = ToolCatalog::builder().register::<Echo>().source(source.clone()).build().unwrap();
    assert!(catalog.collisions().is_empty());
    source.0.lock().unwrap().push(Arc::new(StaticTool::<Echo>::new()));
    assert_eq!(
        catalog.collisions(),
        vec![(
            "test__echo".to_owned(),
            vec![
                "a registered tool".to_owned(),
                "source #1 (`.source(...)` call 1 of the builder)".to_owned()
            ]
        )]
    );
    let tool = tool_runtime::catalog::ToolSource::get(&catalog, "test__echo").unwrap();
    assert_eq!(tool.name(), "test__echo");
}

/// A source that answers `alias__echo` with `test__echo`.
#[derive(Debug)]
struct Aliasing;

impl tool_runtime::catalog::ToolSource for Aliasing {
    fn tools(&self) -> Vec<Arc<dyn BoundToolRuntime>> {
        vec![Arc::new(StaticTool::<Echo>::new())]
    }

    fn get(&self, name: &str) -> Option<Arc<dyn BoundToolRuntime>> {
        (name == "alias__echo" || name == "test__echo")
            .then(|| Arc::new(StaticTool::<Echo>::new()) as Arc<dyn BoundToolRuntime>)
    }
}

#[tokio::test]
async fn policy_and_budgets_go_by_the_tools_own_name_not_the_requested_one() {
    let catalog = || ToolCatalog::builder().source(Arc::new(Aliasing)).build().unwrap();
    let runner = ToolRunner::builder(catalog()).policy(ToolPolicy::allowing(["alias__*"])).build();
    let result = runner.exec("alias__echo", br#"{"text": "hi"}"#, &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::PolicyDenied), "{result:?}");
    let policy = ToolPolicy::from_json(
        r#"{"allowed_tools": ["test__*", "alias__*"], "tools": {"test__echo": {"max_argument_bytes": 4}}}"#,
    )
    .unwrap();
    let runner = ToolRunner::builder(catalog()).policy(policy).build();
    let result = runner.exec("alias__echo", br#"{"text": "hi"}"#, &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::Validation), "{result:?}");
}

#[test]
fn unbound_capabilities_and_duplicate_ids_fail_the_build() {
    let error = ToolCatalog::builder()
        .register::<ReadsClock>()
        .register::<Delete>()
        .register::<Echo>()
        .register::<Echo>()
        .build()
        .unwrap_err();
    let problems = error.problems();
    assert_eq!(problems.len(), 3, "{error}");
    assert!(matches!(&problems[0], CatalogProblem::UnboundCapability { capability: "clock", .. }));
    assert!(matches!(&problems[1], CatalogProblem::UnboundCapability { capability: "auth", .. }));
    assert!(
        error.to_string().contains(
            "tool name `test__echo` is registered twice: by `runner::pipeline::Echo` and by `runner::pipeline::Echo`"
        ),
        "{error}"
    );

    let dynamic = DynamicTool::builder("test__echo", "dup", json!({"type": "object"}))
        .allow_open_schema()
        .build(|v, _, _| async { Ok(v) })
        .unwrap();
    let error =
        ToolCatalog::builder().register::<Echo>().register_dynamic(dynamic).build().unwrap_err();
    assert!(error.to_string().contains("by a dynamic tool (`test__echo`)"), "{error}");
}

#[tokio::test]
async fn events_share_one_call_id_and_a_missing_id_is_minted() {
    let sink = CollectingSink::new();
    let runner = runner(&sink);
    let result = runner.exec("test__echo", br#"{"text": "hi"}"#, &ctx()).await;
    let events = sink.take();
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| match event {
            ToolEvent::ToolCallStart { .. } => "start",
            ToolEvent::ToolCallProgress { .. } => "progress",
            ToolEvent::ToolCallResult { .. } => "result",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["start", "progress", "result"]);
    assert!(events.iter().all(|event| event.tool_call_id() == "call_1"));
    assert_eq!(result.record().args, Some(json!({"text": "hi"})));
    assert_eq!(result.record().result, Some(json!({"text": "hi", "length": 2})));
    assert!(result.record().started_ms <= result.record().ended_ms);

    let anonymous = context("run-1", "user-1", "tenant-1");
    let first = runner.exec("test__echo", br#"{"text": "a"}"#, &anonymous).await;
    let second = runner.exec("test__echo", br#"{"text": "a"}"#, &anonymous).await;
    assert!(first.tool_call_id.starts_with("call_"));
    assert_ne!(first.tool_call_id, second.tool_call_id);
    assert!(sink.take().iter().all(|event| event.tool_call_id() == first.tool_call_id
        || event.tool_call_id() == second.tool_call_id));

    let refused = runner.exec("test__echo", b"not json", &ctx()).await;
    let events = sink.take();
    assert_eq!(events.len(), 1, "a call refused before it starts has only its result event");
    assert!(
        matches!(&events[0], ToolEvent::ToolCallResult { outcome: EventOutcome::Err { error }, .. } if error.code == Code::InvalidJson)
    );
    assert_eq!(refused.record().args, None);
    let json = serde_json::to_value(&refused).unwrap();
    assert_eq!(json["ok"], false);
    assert_eq!(json["error_code"], "invalid_json");
}

/// Says which call it is.
#[tool(name = "test__whoami", effect = read_only, redact = ["call_id"])]
struct WhoAmI {}

#[derive(Serialize, ToolSchema)]
struct Me {
    call_id: String,
}

impl Tool for WhoAmI {
    type Output = Me;
    async fn run(self, ctx: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Me, ToolError> {
        ctx.report_progress(0.5, None, "looking");
        Ok(Me { call_id: ctx.tool_call_id().unwrap_or("none").to_owned() })
    }
}

/// Counts what it is given, and says it takes nothing.
#[derive(Debug, Default)]
struct Uninterested(std::sync::atomic::AtomicUsize);

impl tool_runtime::runtime::EventSink for Uninterested {
    fn emit(&self, _: ToolEvent) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    fn enabled(&self) -> bool {
        false
    }
}

#[tokio::test]
async fn a_sink_that_takes_no_events_gets_none_and_the_call_is_unchanged() {
    let sink = Arc::new(Uninterested::default());
    let catalog = ToolCatalog::builder().register::<WhoAmI>().register::<Echo>().build().unwrap();
    let runner =
        ToolRunner::builder(catalog).policy(policy()).event_sink(Arc::clone(&sink)).build();
    let reports = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&reports);
    let reporter = tool_runtime::runtime::ProgressReporter::new(move |p| {
        seen.lock().unwrap().push((p.progress, p.message));
    });

    let named = ctx().with_progress(reporter.clone());
    let result = runner.exec("test__whoami", b"{}", &named).await;
    assert_eq!(result.value(), Some(&json!({"call_id": "call_1"})));
    let anonymous = context("run-1", "user-1", "tenant-1").with_progress(reporter);
    let minted = runner.exec("test__whoami", b"{}", &anonymous).await;
    assert!(minted.tool_call_id.starts_with("call_"));
    assert_eq!(
        minted.value(),
        Some(&json!({"call_id": minted.tool_call_id})),
        "the tool sees the minted id"
    );
    let refused = runner.exec("test__echo", br#"{"text": 1}"#, &named).await;
    assert_eq!(refused.error_code(), Some(Code::Validation));

    assert_eq!(sink.0.load(std::sync::atomic::Ordering::SeqCst), 0, "no event was emitted");
    let looking = (0.5, Some("looking".to_owned()));
    assert_eq!(
        *reports.lock().unwrap(),
        [looking.clone(), looking],
        "progress still reaches the caller"
    );

    let record = result.record();
    assert_eq!(record, result.clone().into_record());
    assert_eq!((record.args, record.result), (Some(json!({})), Some(json!({"call_id": "call_1"}))));
    let refused = refused.into_record();
    assert_eq!((refused.args, refused.result), (None, None));
    assert_eq!(refused.error.map(|error| error.code), Some(Code::Validation));
}

#[tokio::test]
async fn cancellation_stops_a_running_tool() {
    let sink = CollectingSink::new();
    let runner = ToolRunner::builder(catalog())
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["test__hang"]}"#).unwrap())
        .event_sink(Arc::new(sink.clone()))
        .build();
    let token = CancellationToken::new();
    let ctx = ctx().with_cancellation(token.clone());
    let call = runner.exec("test__hang", b"{}", &ctx);
    let cancel = async {
        tokio::task::yield_now().await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(call, cancel);
    assert_eq!(result.error_code(), Some(Code::Cancelled));
    let events = sink.events();
    assert_eq!(events.len(), 2, "a started call still gets its one result");
    assert_eq!(
        code(&runner, "test__hang", b"{}", &ctx).await,
        Some(Code::Cancelled),
        "cancelled before it starts"
    );
}

#[tokio::test]
async fn dynamic_tools_are_validated_with_their_json_schema() {
    let tool = DynamicTool::builder(
        "remote__lookup",
        "Look something up.",
        json!({"type": "object", "properties": {"key": {"type": "string", "maxLength": 5}}, "required": ["key"], "additionalProperties": false}),
    )
    .effect(ToolEffect::ReadOnly)
    .output_schema(json!({"type": "object", "properties": {"value": {"type": "string"}, "owner": {"type": "string"}}}))
    .redact(["value"])
    .build(|args, _, _| async move {
        let key = args["key"].as_str().unwrap_or_default().to_owned();
        if key == "bad" {
            return Ok(json!({"value": 5}));
        }
        Ok(json!({"value": format!("v-{key}"), "owner": "someone@example.com"}))
    })
    .unwrap();
    let catalog = ToolCatalog::builder().register_dynamic(tool).build().unwrap();
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["remote__lookup"]}"#).unwrap())
        .build();
    let ok = runner.exec("remote__lookup", br#"{"key": "k"}"#, &ctx()).await;
    assert_eq!(ok.value(), Some(&json!({"value": "v-k"})));
    let invalid = runner.exec("remote__lookup", br#"{"key": "sk-live-toolong"}"#, &ctx()).await;
    assert_eq!(invalid.error_code(), Some(Code::Validation));
    assert!(
        !invalid.error().unwrap().message.contains("sk-live"),
        "{}",
        invalid.error().unwrap().message
    );
    assert_eq!(
        code(&runner, "remote__lookup", br#"{"key": "bad"}"#, &ctx()).await,
        Some(Code::OutputValidation)
    );

    let forbidden =
        DynamicTool::builder("remote__x", "", json!({"type": "object", "patternProperties": {}}))
            .allow_open_schema()
            .build(|v, _, _| async { Ok(v) })
            .unwrap_err();
    assert!(forbidden.to_string().contains("/patternProperties"), "{forbidden}");
    let unknown_path = DynamicTool::builder("remote__x", "", json!({"type": "object"}))
        .allow_open_schema()
        .output_schema(json!({"type": "object", "properties": {"a": {"type": "string"}}}))
        .redact(["b"])
        .build(|v, _, _| async { Ok(v) })
        .unwrap_err();
    assert_eq!(unknown_path.to_string(), "`redact` entry `b` names no field of the output schema");
    assert!(
        DynamicTool::builder("no_namespace", "", json!({"type": "object"}))
            .allow_open_schema()
            .build(|v, _, _| async { Ok(v) })
            .is_err()
    );
}

#[tokio::test]
async fn output_validation_errors_carry_no_output_text() {
    let tool = DynamicTool::builder("remote__chatty", "Returns extra keys.", json!({"type": "object"})).allow_open_schema()
        .effect(ToolEffect::ReadOnly)
        .output_schema(json!({"type": "object", "properties": {"ok": {"type": "string"}}, "additionalProperties": false}))
        .redact(["ok"])
        .build(|_, _, _| async {
            let mut output = serde_json::Map::new();
            output.insert("ok".into(), json!("fine"));
            for i in 0..2000 {
                output.insert(format!("LEAK_{i}_ignore_previous_instructions"), json!(1));
            }
            Ok(Value::Object(output))
        })
        .unwrap();
    let runner =
        ToolRunner::builder(ToolCatalog::builder().register_dynamic(tool).build().unwrap())
            .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["remote__chatty"]}"#).unwrap())
            .build();
    let result = runner.exec("remote__chatty", b"{}", &ctx()).await;
    let error = result.error().unwrap();
    assert_eq!(error.code, Code::OutputValidation);
    assert!(!error.message.contains("LEAK"), "{}", error.message);
    assert!(error.message.len() < 200, "{}", error.message);
}

#[tokio::test]
async fn a_policy_built_by_allowing_runs_what_it_lists_and_nothing_else() {
    let allowing = ToolPolicy::allowing(["test__*", "other__exact"]);
    assert_eq!(
        allowing,
        ToolPolicy::from_json(r#"{"allowed_tools": ["test__*", "other__exact"]}"#).unwrap()
    );
    let events = CollectingSink::new();
    // The sink goes in by value; the clone kept here sees the same events.
    let runner = ToolRunner::builder(catalog())
        .policy(ToolPolicy::allowing(["test__clock"]))
        .event_sink(events.clone())
        .build();
    assert_eq!(code(&runner, "test__clock", b"{}", &ctx()).await, None);
    assert_eq!(
        code(&runner, "test__echo", br#"{"text": "a"}"#, &ctx()).await,
        Some(Code::PolicyDenied)
    );
    // start + result of the allowed call, then the refused call's result
    assert_eq!(events.events().len(), 3);
}

#[test]
fn context_ids_are_kept_by_name() {
    let run = String::from("run-7");
    let ctx = context(&run, "user-42", "acme");
    assert_eq!((ctx.run_id(), ctx.actor_id(), ctx.tenant_id()), ("run-7", "user-42", "acme"));
}

#[test]
fn policy_reads_from_toml_and_json_alike() {
    let from_toml: ToolPolicy = toml::from_str(
        r#"
        allowed_tools = ["core__*", "mcp__github__create_issue"]
        require_approval = ["external_side_effect"]

        [budgets]
        max_runtime_ms = 2000

        [tools.core__report]
        max_result_bytes = 65536

        [connections]
        allowed_connection_ids = ["github-acme"]
        "#,
    )
    .unwrap();
    let from_json = ToolPolicy::from_json(
        r#"{"allowed_tools": ["core__*", "mcp__github__create_issue"], "require_approval": ["external_side_effect"],
            "budgets": {"max_runtime_ms": 2000}, "tools": {"core__report": {"max_result_bytes": 65536}},
            "connections": {"allowed_connection_ids": ["github-acme"]}}"#,
    )
    .unwrap();
    assert_eq!(from_toml, from_json);
    assert_eq!(from_toml.budgets_for("core__report").max_result_bytes, 65536);
    assert_eq!(from_toml.budgets_for("core__report").max_argument_bytes, 8192);
    assert!(from_toml.lists("mcp__github__create_issue"));
    assert!(
        ToolPolicy::from_json(r#"{"allowed_tools": ["mcp__*"]}"#).is_err(),
        "imported tools only by exact id: a wildcard over them is refused"
    );
    assert!(ToolPolicy::from_json(r#"{"allowed_tool": []}"#).is_err(), "unknown keys are errors");
}

#[test]
fn debug_output_shows_no_secret() {
    let credential = Credential::new(CANARY);
    assert!(!format!("{credential:?}").contains(CANARY));
    let ctx = connected("conn-a");
    assert!(!format!("{ctx:?}").contains(CANARY));
    // Capabilities show their names only (unit-tested where they are made: only the runner
    // makes them).
}

#[tokio::test]
async fn errors_of_a_started_call_carry_the_id_in_events_and_record() {
    let sink = CollectingSink::new();
    let runner = runner(&sink);
    let result = runner.exec("test__panic", b"{}", &ctx()).await;
    assert_eq!(result.record().error.as_ref().map(|e| e.code), Some(Code::Execution));
    let events: Vec<Value> =
        sink.events().iter().map(|e| serde_json::to_value(e).unwrap()).collect();
    assert_eq!(events[0]["type"], "tool_call_start");
    assert_eq!(events[1]["type"], "tool_call_result");
    assert_eq!(events[1]["error"]["code"], "execution");
}

#[derive(Serialize, ToolSchema)]
struct Part {
    a: u8,
    b: String,
}

#[derive(Serialize, ToolSchema)]
struct Layered {
    id: u64,
    inner: Part,
    items: Vec<Part>,
    maybe: Option<Part>,
}

fn layered() -> Layered {
    let part = || Part { a: 1, b: "x".to_owned() };
    Layered { id: 7, inner: part(), items: vec![part(), part()], maybe: Some(part()) }
}

/// Every field allowed, some through dotted paths.
#[tool(name = "test__whole", effect = read_only, redact = ["id", "inner.a", "inner.b", "items", "maybe.a", "maybe.b"])]
struct Whole {}

impl Tool for Whole {
    type Output = Layered;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Layered, ToolError> {
        Ok(layered())
    }
}

/// All but `maybe.b`.
#[tool(name = "test__most", effect = read_only, redact = ["id", "inner", "items.a", "items.b", "maybe.a"])]
struct Most {}

impl Tool for Most {
    type Output = Layered;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Layered, ToolError> {
        Ok(layered())
    }
}

#[tokio::test]
async fn an_allowlist_that_keeps_every_field_skips_the_walk_and_changes_nothing() {
    assert!(Whole::spec().redaction_keeps_valid_output());
    assert!(!Most::spec().redaction_keeps_valid_output(), "`maybe.b` is not allowed");
    assert!(!Echo::spec().redaction_keeps_valid_output(), "`internal` is not allowed");
    // The liar's output breaks its schema: its allowlist keeps every field the schema has.
    assert!(Liar::spec().redaction_keeps_valid_output());

    let catalog = ToolCatalog::builder().register::<Whole>().register::<Most>().build().unwrap();
    let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["test__whole", "test__most"]}"#);
    let runner = ToolRunner::builder(catalog).policy(policy.unwrap()).build();
    let whole = runner.exec("test__whole", b"{}", &ctx()).await;
    let expected = serde_json::to_value(layered()).unwrap();
    assert_eq!(whole.value(), Some(&expected));
    let most = runner.exec("test__most", b"{}", &ctx()).await;
    let mut expected = expected;
    expected["maybe"].as_object_mut().unwrap().remove("b");
    assert_eq!(most.value(), Some(&expected));
}

/// Wraps a tool and refuses the calls `refuses` picks (with its message), judging by the
/// validated arguments it is handed, and remembers what it saw.
struct Guard<T: Tool> {
    inner: StaticTool<T>,
    refuses: fn(&Value) -> Option<&'static str>,
    seen: std::sync::Mutex<Vec<Value>>,
}

impl<T: Tool> Guard<T> {
    fn new(refuses: fn(&Value) -> Option<&'static str>) -> Self {
        Self { inner: StaticTool::new(), refuses, seen: std::sync::Mutex::default() }
    }
}

impl<T: Tool> std::fmt::Debug for Guard<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard").field("tool", &T::spec().name()).finish_non_exhaustive()
    }
}

#[async_trait]
impl<T: Tool + Sync> BoundToolRuntime for Guard<T> {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn arguments(&self, args: Arguments<'_>) -> Result<ValidatedArgs, ArgumentsError> {
        self.inner.arguments(args)
    }

    async fn exec(
        &self,
        args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<ToolOutput, ToolError> {
        self.seen.lock().unwrap().push(args.value().clone());
        if let Some(message) = (self.refuses)(args.value()) {
            return Err(ToolError::new(message));
        }
        self.inner.exec(args, ctx, caps).await
    }

    fn validate_output(
        &self,
        output: &Value,
    ) -> Result<(), tool_runtime::schema::ValidationErrors> {
        self.inner.validate_output(output)
    }
}

#[tokio::test]
async fn a_wrapper_sees_the_validated_arguments_the_tool_runs_with() {
    let guard = Arc::new(Guard::<Echo>::new(|args| {
        (args["text"] == "forbidden").then_some("refused by the guard")
    }));
    let catalog = ToolCatalog::builder()
        .register_bound(Arc::clone(&guard) as Arc<dyn BoundToolRuntime>, "the guard".into())
        .build()
        .unwrap();
    let runner = ToolRunner::builder(catalog).policy(policy()).build();

    // Raw text takes the one-pass path, a parsed value the ordinary one: the guard sees the
    // arguments either way.
    let refused = runner.exec("test__echo", br#"{"text": "forbidden"}"#, &ctx()).await;
    assert_eq!(refused.error().map(|e| e.message.as_str()), Some("refused by the guard"));
    let parsed = json!({"text": "forbidden", "times": 2});
    let refused = runner.exec("test__echo", &parsed, &ctx()).await;
    assert_eq!(refused.error_code(), Some(Code::Execution));
    let allowed = runner.exec("test__echo", br#"{"text": "hi"}"#, &ctx()).await;
    assert_eq!(allowed.value(), Some(&json!({"text": "hi", "length": 2})));
    assert_eq!(
        *guard.seen.lock().unwrap(),
        [json!({"text": "forbidden"}), parsed.clone(), json!({"text": "hi"})]
    );
    // The record still has them too.
    assert_eq!(refused.args(), Some(&parsed));
    assert_eq!(allowed.into_record().args, Some(json!({"text": "hi"})));
}

#[tokio::test]
async fn parsed_arguments_go_through_the_same_steps_as_text() {
    let sink = CollectingSink::new();
    let runner = runner(&sink);
    let text = br#"{"text": "ab", "times": 3}"#;
    let value = json!({"text": "ab", "times": 3});
    let from_text = runner.exec("test__echo", text, &ctx()).await;
    let borrowed = runner.exec("test__echo", &value, &ctx()).await;
    let owned = runner.exec("test__echo", value.clone(), &ctx()).await;
    for result in [&borrowed, &owned] {
        assert_eq!(result.value(), from_text.value());
        assert_eq!(result.args(), Some(&value));
    }
    assert_eq!(from_text.value(), Some(&json!({"text": "ababab", "length": 6})));

    let bad_text = runner.exec("test__echo", br#"{"text": 1, "extra": true}"#, &ctx()).await;
    let bad_value = runner.exec("test__echo", json!({"text": 1, "extra": true}), &ctx()).await;
    assert_eq!(bad_value.error_code(), Some(Code::Validation));
    assert_eq!(bad_value.error(), bad_text.error(), "the same errors, every one reported");
    assert_eq!(bad_value.args(), None);

    // The argument budget counts a value's compact JSON.
    let small = ToolRunner::builder(catalog())
        .policy(
            ToolPolicy::from_json(
                r#"{"allowed_tools": ["test__echo"], "budgets": {"max_argument_bytes": 15}}"#,
            )
            .unwrap(),
        )
        .build();
    let fits = json!({"text": "abcdef"}); // 17 bytes
    let too_large = small.exec("test__echo", &fits, &ctx()).await;
    assert_eq!(too_large.error_code(), Some(Code::Validation));
    assert_eq!(too_large.error().unwrap().message, "the arguments are 17 bytes; the limit is 15");
    let fits = json!({"text": "abcd"}); // 15 bytes
    assert!(small.exec("test__echo", &fits, &ctx()).await.is_ok());
}

/// The liar, wrapped by something that vouches for every output.
#[derive(Debug, Default)]
struct Lenient(StaticTool<Liar>);

#[async_trait]
impl BoundToolRuntime for Lenient {
    fn spec(&self) -> &ToolSpec {
        self.0.spec()
    }

    fn arguments(&self, args: Arguments<'_>) -> Result<ValidatedArgs, ArgumentsError> {
        self.0.arguments(args)
    }

    async fn exec(
        &self,
        args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<ToolOutput, ToolError> {
        self.0.exec(args, ctx, caps).await
    }

    fn validate_output(&self, _: &Value) -> Result<(), tool_runtime::schema::ValidationErrors> {
        Ok(())
    }
}

#[tokio::test]
async fn a_compile_time_output_schema_is_checked_whatever_the_tool_says() {
    let catalog = ToolCatalog::builder()
        .register_bound(Arc::new(Lenient::default()), "the lenient liar".into())
        .build()
        .unwrap();
    let runner = ToolRunner::builder(catalog).policy(policy()).build();
    let result = runner.exec("test__liar", b"{}", &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::OutputValidation));
}

/// Read a file.
#[tool(name = "test__read", effect = read_only, redact = ["path", "lines"])]
struct ReadFile {
    /// Where to read.
    #[serde(alias = "file")]
    path: String,
    lines: Option<u32>,
}

#[derive(Serialize, ToolSchema)]
struct ReadOut {
    path: String,
    lines: u32,
}

impl Tool for ReadFile {
    type Output = ReadOut;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<ReadOut, ToolError> {
        Ok(ReadOut { path: self.path, lines: self.lines.unwrap_or(0) })
    }
}

#[tokio::test]
async fn arguments_sent_under_an_alias_reach_wrappers_and_records_under_the_name() {
    let guard = Arc::new(Guard::<ReadFile>::new(|args| {
        let under_etc = args["path"].as_str().is_some_and(|path| path.starts_with("/etc"));
        under_etc.then_some("paths under /etc are off limits")
    }));
    let catalog = ToolCatalog::builder()
        .register_bound(Arc::clone(&guard) as Arc<dyn BoundToolRuntime>, "the guard".into())
        .build()
        .unwrap();
    let runner = ToolRunner::builder(catalog).policy(policy()).build();

    // The alias, as text (the one-pass path) and as a parsed value (the ordinary path): the
    // guard reads `path` and refuses both.
    let from_text = runner.exec("test__read", br#"{"file": "/etc/passwd"}"#, &ctx()).await;
    let from_value = runner.exec("test__read", json!({"file": "/etc/passwd"}), &ctx()).await;
    for refused in [&from_text, &from_value] {
        assert_eq!(
            refused.error().map(|e| e.message.as_str()),
            Some("paths under /etc are off limits")
        );
        assert_eq!(refused.record().args, Some(json!({"path": "/etc/passwd"})));
    }
    // The renamed key keeps the alias's place among the others.
    let later = runner.exec("test__read", br#"{"lines": 2, "file": "notes.txt"}"#, &ctx()).await;
    assert_eq!(later.value(), Some(&json!({"path": "notes.txt", "lines": 2})));
    let named = runner.exec("test__read", br#"{"path": "notes.txt", "lines": 2}"#, &ctx()).await;
    assert_eq!(later.record().args, named.record().args);
    let seen: Vec<String> = guard.seen.lock().unwrap().iter().map(Value::to_string).collect();
    assert_eq!(
        seen,
        [
            r#"{"path":"/etc/passwd"}"#,
            r#"{"path":"/etc/passwd"}"#,
            r#"{"lines":2,"path":"notes.txt"}"#,
            r#"{"path":"notes.txt","lines":2}"#,
        ]
    );
}

/// A run-time tool fails closed: an input schema that lets undescribed arguments through, at
/// the top or inside, is refused unless the application allows it by name.
#[test]
fn an_open_run_time_schema_is_refused_unless_allowed() {
    let build = |schema: Value, allow: bool| {
        let builder = DynamicTool::builder("test__open", "Open.", schema);
        let builder = if allow { builder.allow_open_schema() } else { builder };
        builder.build(|args, _, _| async move { Ok(args) })
    };
    let closed = |inner: Value| json!({"type": "object", "properties": {"inner": inner}, "additionalProperties": false});
    for open in [
        json!({"type": "object"}),
        json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        closed(json!({"type": "object", "properties": {"x": {"type": "string"}}})),
        closed(json!({"type": "array", "items": {"type": "object", "properties": {}}})),
    ] {
        let refused = build(open.clone(), false).unwrap_err();
        assert!(
            matches!(refused, DynamicToolError::OpenSchema(ref name) if name == "test__open"),
            "{open}"
        );
        assert!(refused.to_string().contains("allow_open_schema"), "{refused}");
        assert!(build(open, true).is_ok());
    }
    let no_arguments = json!({"type": "object", "properties": {}, "additionalProperties": false});
    assert!(build(no_arguments, false).is_ok());
    let inner = json!({"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false});
    assert!(build(closed(inner), false).is_ok());
}
