//! Images a tool returns: the header check and, with the feature `image`, the resize, on
//! arbitrary bytes.
//!
//! A tool (an imported MCP tool above all) may return any bytes labelled as an image. The
//! runner reads the header ([`sniff`]) and, over the budgets, resizes the image (feature
//! `image`) or refuses it. The bytes go through a real runner with small budgets, as the
//! image part of a tool's result, labelled with the format their header names.

use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::limits::{ImageFormat, sniff};
use tool_runtime::content::{Bytes, Part, ToolOutput};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{ContextIds, DynamicTool, ToolErrorCode, ToolInvocationContext};
use tool_runtime::spec::ToolEffect;

/// The budgets the check runs under: small, so that resizing is the rule, not the exception,
/// and a decoder that ignored its memory limit would stand out (libFuzzer's `-malloc_limit_mb`).
const BUDGETS: &str = r#"{
    "allowed_tools": ["fuzz__image"],
    "budgets": {
        "max_result_bytes": 1048576,
        "max_image_bytes": 4096,
        "max_image_width": 64,
        "max_image_height": 64,
        "max_image_decode_bytes": 4194304,
        "max_runtime_ms": 60000
    }
}"#;

/// The header check and the runner agree and never panic.
///
/// A header [`sniff`] reads belongs to the format whose signature the bytes start with. Run
/// as a tool's image part, the call either succeeds with an image within every budget (and a
/// header that says so) or fails `result_too_large` or `output_validation`: nothing else, and
/// never a panic.
///
/// # Panics
///
/// When that does not hold, or when the runtime panics.
pub fn check(data: &[u8]) {
    let sniffed = sniff(data);
    if let Some(Some(header)) = sniffed {
        assert!(signature_of(data) == Some(header.format), "{header:?}");
    }
    let format = match sniffed {
        Some(Some(header)) => header.format,
        _ => signature_of(data).unwrap_or(ImageFormat::Png),
    };
    let bytes = Bytes::copy_from_slice(data);
    let tool = DynamicTool::builder(
        "fuzz__image",
        "Returns the input as an image.",
        serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .effect(ToolEffect::ReadOnly)
    .build(move |_, _, _| {
        let part = Part::image(format.mime_type(), bytes.clone());
        async move { Ok::<_, tool_runtime::runtime::ToolError>(ToolOutput::from(part)) }
    })
    .expect("a tool that returns an image");
    let catalog = ToolCatalog::builder().register_dynamic(tool).build().expect("one tool");
    let policy = ToolPolicy::from_json(BUDGETS).expect("the check's policy");
    let runner = ToolRunner::builder(catalog).policy(policy).build();
    let ids = ContextIds { run_id: "fuzz-run", actor_id: "fuzz-user", tenant_id: "fuzz-tenant" };
    let ctx = ToolInvocationContext::new(ids);
    let result = crate::block_on(runner.exec("fuzz__image", "{}", &ctx));
    if let Some(output) = result.output() {
        let [Part::Image(media)] = output.parts() else { panic!("{:?}", output.parts()) };
        assert!(media.data.len() <= 4096, "{}", media.data.len());
        let header = sniff(&media.data).flatten().expect("a resized image has a header");
        assert!(header.width <= 64 && header.height <= 64, "{header:?}");
        assert_eq!(ImageFormat::from_mime_type(&media.mime_type), Some(header.format));
    } else {
        let code = result.error_code();
        assert!(
            matches!(code, Some(ToolErrorCode::ResultTooLarge | ToolErrorCode::OutputValidation)),
            "{:?}",
            result.error()
        );
    }
}

/// The format whose signature `data` starts with.
fn signature_of(data: &[u8]) -> Option<ImageFormat> {
    if data.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageFormat::Png)
    } else if data.starts_with(b"\xFF\xD8\xFF") {
        Some(ImageFormat::Jpeg)
    } else if data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a") {
        Some(ImageFormat::Gif)
    } else if data.len() >= 12 && &data[..4] == b"RIFF" && &data[8..12] == b"WEBP" {
        Some(ImageFormat::Webp)
    } else {
        None
    }
}
