//! Arguments mirrored into HTTP headers (MCP 2026-07-28, SEP-2243): a served tool's property
//! marked `x-mcp-header` must come again as `Mcp-Param-<Name>`, equal to the body's, or the call
//! is refused before it runs; an imported tool's client sends the header, and the model never
//! sees the annotation.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use serde_json::{Value, json};
use tool_runtime::catalog::{ToolCatalog, ToolSource};
use tool_runtime::mcp::{McpImportOptions, McpServer, McpToolSource, ParamHeaderError, ServerName};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::Capability;
use tool_tests::fixtures::context;

use super::support::on_loopback;

/// How many deploys ran.
#[derive(Debug, Clone, Default)]
struct Deploys(Arc<AtomicUsize>);

impl Capability for Deploys {
    const NAME: &'static str = "deploys";
}

/// Deploy a service to a region.
#[tool(name = "ops__deploy", effect = read_only, redact = ["at"], capabilities = [Deploys])]
struct Deploy {
    service: String,
    region: String,
    /// How many replicas.
    replicas: u32,
}

#[derive(Serialize, ToolSchema)]
struct Deployed {
    at: String,
}

impl Tool for Deploy {
    type Output = Deployed;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Deployed, ToolError> {
        caps.get::<Deploys>()?.0.fetch_add(1, Ordering::SeqCst);
        Ok(Deployed { at: format!("{}@{}x{}", self.service, self.region, self.replicas) })
    }
}

fn runner(deploys: &Deploys) -> ToolRunner {
    let catalog =
        ToolCatalog::builder().register::<Deploy>().capability(deploys.clone()).build().unwrap();
    ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["ops__*"])).build()
}

/// A server mirroring `region` into `Mcp-Param-Region` and `replicas` into
/// `Mcp-Param-Replicas`, over HTTP on a port of its own; its URL and shutdown guard.
async fn serve(deploys: &Deploys) -> (String, tokio_util::sync::DropGuard) {
    let server = McpServer::builder(runner(deploys))
        .param_header("ops__deploy", "region", "Region")
        .unwrap()
        .param_header("ops__deploy", "replicas", "Replicas")
        .unwrap()
        .build();
    on_loopback(server).await
}

/// One stateless 2026-07-28 `tools/call` of `ops__deploy` with `arguments` and the extra
/// `headers`: the HTTP status and the JSON-RPC response.
async fn deploy(url: &str, arguments: Value, headers: &[(&str, &str)]) -> (u16, Value) {
    let params = json!({
        "name": "ops__deploy",
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "headers-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ops__deploy");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.json(&body).send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let json = text.lines().rev().find_map(|line| line.strip_prefix("data:")).unwrap_or(&text);
    (status, serde_json::from_str(json.trim()).unwrap_or_else(|error| panic!("{error}: {text}")))
}

#[tokio::test]
async fn a_call_whose_param_headers_differ_from_its_arguments_is_refused_before_it_runs() {
    let deploys = Deploys::default();
    let (url, _shutdown) = serve(&deploys).await;
    let args = |region: &str| json!({"service": "api", "region": region, "replicas": 3});

    let (status, ok) = deploy(
        &url,
        args("eu-west"),
        &[("mcp-param-region", "eu-west"), ("mcp-param-replicas", "3")],
    )
    .await;
    assert_eq!(
        (status, &ok["result"]["structuredContent"]),
        (200, &json!({"at": "api@eu-westx3"}))
    );
    // A value that is not plain ASCII travels Base64-encoded between `=?base64?` and `?=`.
    let zurich =
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode("zürich"));
    let (status, _) =
        deploy(&url, args("zürich"), &[("mcp-param-region", &zurich), ("mcp-param-replicas", "3")])
            .await;
    assert_eq!(status, 200);
    assert_eq!(deploys.0.load(Ordering::SeqCst), 2);

    let refused = [
        // A gateway routed on `us-east`; the body says `eu-west`.
        vec![("mcp-param-region", "us-east"), ("mcp-param-replicas", "3")],
        // No header for an argument the body has.
        vec![("mcp-param-replicas", "3")],
        // Base64 without its padding, and characters outside its alphabet.
        vec![("mcp-param-region", "=?base64?ZXUtd2VzdA?="), ("mcp-param-replicas", "3")],
        vec![("mcp-param-region", "=?base64?ZXUt!!!d2VzdA==?="), ("mcp-param-replicas", "3")],
        // An integer argument is compared as its decimal text.
        vec![("mcp-param-region", "eu-west"), ("mcp-param-replicas", "30")],
    ];
    for headers in refused {
        let (status, response) = deploy(&url, args("eu-west"), &headers).await;
        assert_eq!(
            (status, &response["error"]["code"]),
            (400, &json!(-32020)),
            "{headers:?}: {response}"
        );
    }
    assert_eq!(deploys.0.load(Ordering::SeqCst), 2, "no refused call ran");
}

#[tokio::test]
async fn the_listing_marks_the_mirrored_properties_and_the_import_sends_their_headers() {
    let deploys = Deploys::default();
    let (url, _shutdown) = serve(&deploys).await;
    let options = McpImportOptions::new().redact("mcp__ops__ops__deploy", ["at"]);
    let source =
        McpToolSource::connect_http(ServerName::new("ops").unwrap(), &url, options).await.unwrap();
    assert!(source.refused().is_empty(), "{:?}", source.refused());
    let imported = source.get("mcp__ops__ops__deploy").unwrap();
    // Transport detail: the model is offered the schema without the annotations.
    let schema = imported.spec().input_schema().to_json();
    assert_eq!(schema["properties"]["region"], json!({"type": "string"}));
    assert!(!schema.to_string().contains("x-mcp-header"), "{schema}");

    let catalog = ToolCatalog::builder().source(Arc::new(source)).build().unwrap();
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::allowing(["mcp__ops__ops__deploy"]))
        .build();
    let arguments = r#"{"service": "api", "region": "zürich", "replicas": 2}"#.as_bytes();
    let result =
        runner.exec("mcp__ops__ops__deploy", arguments, &context("run-1", "alice", "acme")).await;
    // The server refuses a 2026 call without matching headers: rmcp's client sent them.
    assert_eq!(result.value(), Some(&json!({"at": "api@zürichx2"})), "{:?}", result.error());
    assert_eq!(deploys.0.load(Ordering::SeqCst), 1);
}

#[test]
fn a_property_that_cannot_ride_in_a_header_is_refused_when_the_server_is_built() {
    let deploys = Deploys::default();
    let refused = |id: &str, property: &str, header: &str| {
        McpServer::builder(runner(&deploys)).param_header(id, property, header).err()
    };
    assert_eq!(refused("ops__deploy", "region", "Region"), None);
    assert_eq!(
        refused("ops__undeploy", "region", "Region"),
        Some(ParamHeaderError::UnknownTool("ops__undeploy".into()))
    );
    assert!(matches!(
        refused("ops__deploy", "zone", "Zone"),
        Some(ParamHeaderError::UnknownProperty { .. })
    ));
    assert_eq!(
        refused("ops__deploy", "region", "Bad Name"),
        Some(ParamHeaderError::InvalidHeader("Bad Name".into()))
    );
    let twice = McpServer::builder(runner(&deploys))
        .param_header("ops__deploy", "region", "Target")
        .unwrap()
        .param_header("ops__deploy", "service", "target")
        .unwrap_err();
    assert!(matches!(twice, ParamHeaderError::Duplicate { .. }), "{twice}");
}
