//! Result limits: each budget at its limit and one past it, images that are not what they
//! claim, and what the record keeps. Run with default features (oversize images refused) and
//! with `--features image` in the `features` binary (resized: `cargo test -p tool-tests
//! --features image,embed-local --test features result_limits::`).

use serde_json::json;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::limits::{ImageFormat, Limit, LimitAction, LimitReason};
use tool_runtime::content::{Content, Part};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{Capability, ToolErrorCode as Code, ToolExecResult};
use tool_tests::fixtures::context;

#[cfg(feature = "image")]
mod bombs;
#[cfg(feature = "image")]
mod memory;

/// The parts the test tools return, bound per runner.
struct Returns(Vec<Part>);

impl Capability for Returns {
    const NAME: &'static str = "returns";
}

/// Returns the bound parts.
#[tool(name = "test__parts", effect = read_only, redact = [], capabilities = [Returns])]
struct Parts {}

impl Tool for Parts {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let parts = caps.get::<Returns>()?.0.clone();
        Ok(parts.into_iter().fold(Content::new(), Content::part))
    }
}

#[derive(Serialize, ToolSchema)]
struct Report {
    body: String,
}

/// Returns the bound parts, then a structured report of `size` bytes of body.
#[tool(name = "test__report", effect = read_only, redact = ["body"], capabilities = [Returns])]
struct MakeReport {
    size: u32,
}

impl Tool for MakeReport {
    type Output = Content<Report>;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content<Report>, ToolError> {
        let parts = caps.get::<Returns>()?.0.clone();
        let body = "r".repeat(self.size as usize);
        Ok(parts.into_iter().fold(Content::new(), Content::part).json(Report { body }))
    }
}

async fn exec(
    parts: Vec<Part>,
    budgets: serde_json::Value,
    tool: &str,
    args: &str,
) -> ToolExecResult {
    let catalog = ToolCatalog::builder()
        .register::<Parts>()
        .register::<MakeReport>()
        .capability(Returns(parts))
        .build()
        .unwrap();
    let policy = json!({"allowed_tools": ["test__*"], "tools": {tool: budgets}});
    let policy = ToolPolicy::from_json(&policy.to_string()).unwrap();
    let runner = ToolRunner::builder(catalog).policy(policy).build();
    let ctx = context("run-1", "u", "t").with_tool_call_id("call_1");
    runner.exec(tool, args, &ctx).await
}

async fn run(parts: Vec<Part>, budgets: serde_json::Value) -> ToolExecResult {
    exec(parts, budgets, "test__parts", "{}").await
}

fn text(result: &ToolExecResult, index: usize) -> &str {
    match &result.output().unwrap().parts()[index] {
        Part::Text(text) => text,
        other => panic!("not text: {other:?}"),
    }
}

/// A PNG of this size in pixels: real (decodable) with the `image` feature, a valid header
/// followed by filler without it (the runner reads only headers then).
fn png(width: u32, height: u32) -> Vec<u8> {
    #[cfg(feature = "image")]
    {
        let pixels = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x * 7 % 256) as u8, (y * 13 % 256) as u8, ((x ^ y) % 256) as u8])
        });
        let mut out = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgb8(pixels).write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    }
    #[cfg(not(feature = "image"))]
    {
        let mut out = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        out.extend_from_slice(&width.to_be_bytes());
        out.extend_from_slice(&height.to_be_bytes());
        out.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
        out.resize(out.len() + (width * height) as usize / 4, 0);
        out
    }
}

fn image(bytes: Vec<u8>) -> Part {
    Part::image("image/png", bytes)
}

#[tokio::test]
async fn text_at_the_result_budget_passes_whole_and_one_byte_past_is_cut_with_a_marker() {
    let at = run(vec![Part::Text("a".repeat(1000))], json!({"max_result_bytes": 1000})).await;
    assert_eq!(text(&at, 0), "a".repeat(1000));
    assert!(at.output().unwrap().limited().is_empty());
    assert!(at.record().limited.is_empty());

    let past = run(vec![Part::Text("a".repeat(1001))], json!({"max_result_bytes": 1000})).await;
    let cut = text(&past, 0);
    assert!(cut.len() <= 1000, "{}", cut.len());
    assert!(cut.starts_with("aaaa") && cut.ends_with(" of 1001 bytes shown]"), "{cut}");
    let record = past.record();
    assert_eq!(record.limited.len(), 1);
    let entry = &record.limited[0];
    assert_eq!((entry.part, entry.kind), (Some(0), Some("text")));
    assert_eq!(
        entry.reason,
        LimitReason::OverBudget { limit: Limit::ResultBytes, size: 1001, budget: 1000 }
    );
    let LimitAction::Truncated { from_bytes, kept_bytes } = entry.action else { panic!() };
    assert_eq!(from_bytes, 1001);
    assert_eq!(
        cut.len(),
        kept_bytes + "\n[truncated: ".len() + format!("{kept_bytes} of 1001 bytes shown]").len()
    );
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(json["limited"][0]["action"], "truncated");
    assert_eq!(json["limited"][0]["reason"], "over_budget");
    assert_eq!(json["limited"][0]["limit"], "result_bytes");
}

#[tokio::test]
async fn text_is_cut_at_a_character_boundary_the_last_part_first() {
    let parts = vec![Part::Text("first".into()), Part::Text("é".repeat(600))];
    let result = run(parts, json!({"max_result_bytes": 500})).await;
    assert_eq!(text(&result, 0), "first");
    let cut = text(&result, 1);
    assert!(cut.len() <= 495);
    assert!(cut.starts_with('é') && cut.contains("é\n[truncated: "), "{cut}");
}

#[tokio::test]
async fn with_text_overflow_error_text_past_the_budget_is_refused_and_the_record_keeps_what_the_tool_returned()
 {
    let budgets = json!({"max_result_bytes": 1000, "text_overflow": "error"});
    let at = run(vec![Part::Text("a".repeat(1000))], budgets.clone()).await;
    assert!(at.is_ok());
    let past = run(vec![Part::Text("a".repeat(1001))], budgets).await;
    assert_eq!(past.error_code(), Some(Code::ResultTooLarge));
    assert_eq!(
        past.error().unwrap().message,
        "the result is 1001 bytes; the limit (max_result_bytes) is 1000"
    );
    let record = past.record();
    assert_eq!(record.parts.len(), 1);
    assert_eq!((record.parts[0].kind, record.parts[0].size), ("text", Some(1001)));
    assert_eq!(record.limited.last().unwrap().action, LimitAction::Refused);
}

#[tokio::test]
async fn structured_json_is_never_cut_text_beside_it_is() {
    // {"body":"rrr..."} is 11 bytes more than its body.
    let budgets = json!({"max_result_bytes": 111});
    let at = exec(vec![], budgets.clone(), "test__report", r#"{"size": 100}"#).await;
    assert!(at.is_ok(), "{:?}", at.error());
    let past = exec(vec![], budgets.clone(), "test__report", r#"{"size": 101}"#).await;
    assert_eq!(past.error_code(), Some(Code::ResultTooLarge));
    assert_eq!(
        past.error().unwrap().message,
        "the result is 112 bytes; the limit (max_result_bytes) is 111"
    );
    // With another part beside it, the JSON alone over the budget is refused, whatever the text.
    let with_text =
        exec(vec![Part::Text("t".into())], budgets.clone(), "test__report", r#"{"size": 101}"#)
            .await;
    assert_eq!(
        with_text.error().unwrap().message,
        "part 1 (json) is 112 bytes; the limit (max_result_bytes) is 111"
    );

    let beside =
        exec(vec![Part::Text("t".repeat(200))], budgets, "test__report", r#"{"size": 50}"#).await;
    assert_eq!(beside.value().unwrap()["body"], "r".repeat(50));
    assert!(text(&beside, 0).len() <= 111 - 61);
    assert_eq!(beside.record().limited[0].kind, Some("text"));
}

#[tokio::test]
async fn parts_at_their_budget_pass_and_one_more_is_refused() {
    let parts = |n| (0..n).map(|i| Part::Text(format!("{i}"))).collect::<Vec<_>>();
    assert!(run(parts(3), json!({"max_parts": 3})).await.is_ok());
    let past = run(parts(4), json!({"max_parts": 3})).await;
    assert_eq!(past.error_code(), Some(Code::ResultTooLarge));
    assert_eq!(past.error().unwrap().message, "the result has 4 parts; the limit (max_parts) is 3");
    assert_eq!(past.record().parts.len(), 4);
}

#[tokio::test]
async fn binary_bytes_count_toward_the_result_budget_and_are_never_cut() {
    let bytes = png(8, 8);
    let size = bytes.len();
    let at = run(vec![image(bytes.clone())], json!({"max_result_bytes": size})).await;
    assert!(at.is_ok(), "{:?}", at.error());
    let past = run(vec![image(bytes.clone())], json!({"max_result_bytes": size - 1})).await;
    assert_eq!(past.error_code(), Some(Code::ResultTooLarge));
    // Text beside an image is cut to make room for it.
    let beside = run(
        vec![Part::Text("x".repeat(500)), image(bytes)],
        json!({"max_result_bytes": size + 100}),
    )
    .await;
    assert!(beside.is_ok(), "{:?}", beside.error());
    assert!(text(&beside, 0).len() <= 100);
}

#[tokio::test]
async fn image_bytes_at_the_budget_pass_and_one_past_is_resized_or_refused() {
    let bytes = png(64, 48);
    let size = bytes.len();
    let roomy = |max_image_bytes: usize| json!({"max_result_bytes": 1 << 20, "max_image_bytes": max_image_bytes});
    let at = run(vec![image(bytes.clone())], roomy(size)).await;
    assert!(at.is_ok(), "{:?}", at.error());
    assert!(at.record().limited.is_empty());
    let past = run(vec![image(bytes)], roomy(size - 1)).await;
    let reason = LimitReason::OverBudget {
        limit: Limit::ImageBytes,
        size: size as u64,
        budget: size as u64 - 1,
    };
    check_resized_or_refused(&past, reason, |to| to.bytes < size);
}

#[tokio::test]
async fn image_width_and_height_at_the_budget_pass_and_one_past_is_resized_or_refused() {
    for (limit, key) in
        [(Limit::ImageWidth, "max_image_width"), (Limit::ImageHeight, "max_image_height")]
    {
        let bytes = png(40, 30);
        let side: u32 = if limit == Limit::ImageWidth { 40 } else { 30 };
        let at =
            run(vec![image(bytes.clone())], json!({"max_result_bytes": 1 << 20, key: side})).await;
        assert!(at.is_ok(), "{key}: {:?}", at.error());
        let past =
            run(vec![image(bytes)], json!({"max_result_bytes": 1 << 20, key: side - 1})).await;
        let reason =
            LimitReason::OverBudget { limit, size: u64::from(side), budget: u64::from(side) - 1 };
        check_resized_or_refused(&past, reason, |to| {
            if limit == Limit::ImageWidth {
                to.width == 39 && to.height <= 30
            } else {
                to.height == 29 && to.width <= 40
            }
        });
    }
}

/// With the `image` feature: the image was resized within its budgets, and the record says
/// from what to what. Without: the call was refused, naming the part and the feature.
fn check_resized_or_refused(
    result: &ToolExecResult,
    reason: LimitReason,
    fits: impl Fn(&tool_runtime::content::limits::ImageSize) -> bool,
) {
    let record = result.record();
    let entry = record.limited.last().unwrap();
    assert_eq!((entry.part, entry.kind), (Some(0), Some("image")));
    assert_eq!(entry.reason, reason);
    if cfg!(feature = "image") {
        assert!(result.is_ok(), "{:?}", result.error());
        let LimitAction::Resized { from, to } = &entry.action else { panic!("{entry:?}") };
        assert_eq!(from.format, ImageFormat::Png);
        assert!(fits(to), "{from:?} -> {to:?}");
        let Part::Image(media) = &result.output().unwrap().parts()[0] else { panic!() };
        assert_eq!(media.data.len(), to.bytes);
        let header = tool_runtime::content::limits::sniff(&media.data).unwrap().unwrap();
        assert_eq!((header.width, header.height), (to.width, to.height));
        assert_eq!(record.parts[0].sha256.as_deref().map(str::len), Some(64));
    } else {
        assert_eq!(result.error_code(), Some(Code::ResultTooLarge));
        assert_eq!(entry.action, LimitAction::Refused);
        let message = &result.error().unwrap().message;
        assert!(message.starts_with("part 0 (image) is "), "{message}");
        assert!(message.ends_with("(resizing images needs the `image` feature)"), "{message}");
        assert_eq!(record.parts[0].kind, "image");
    }
}

#[tokio::test]
async fn an_image_whose_mime_type_its_bytes_do_not_have_is_refused_naming_the_part() {
    let gif = b"GIF89a\x02\x00\x01\x00\x00\x00\x00;".to_vec();
    let parts = vec![Part::Text("see:".into()), image(gif)];
    let result = run(parts, json!({})).await;
    assert_eq!(result.error_code(), Some(Code::OutputValidation));
    assert_eq!(
        result.error().unwrap().message,
        "part 1 (image) is labelled with a MIME type its bytes do not have (they are image/gif)"
    );
    let record = result.record();
    assert_eq!(record.limited[0].reason, LimitReason::MimeMismatch { actual: ImageFormat::Gif });
    assert_eq!(record.parts[1].mime_type.as_deref(), Some("image/png"));
    assert!(record.parts[1].sha256.is_some());
}

#[tokio::test]
async fn an_image_that_does_not_decode_or_is_of_no_known_format_is_refused() {
    let mut cut = png(4, 4);
    cut.truncate(20);
    let undecodable = run(vec![image(cut)], json!({})).await;
    assert_eq!(undecodable.error_code(), Some(Code::OutputValidation));
    assert_eq!(
        undecodable.error().unwrap().message,
        "part 0 (image) does not decode as the image it claims to be"
    );
    let garbage = run(vec![image(b"secret bytes".to_vec())], json!({})).await;
    assert_eq!(garbage.error_code(), Some(Code::OutputValidation));
    assert!(!garbage.error().unwrap().message.contains("secret"));

    let svg = Part::image("image/svg+xml", &b"<svg/>"[..]);
    let unsupported = run(vec![svg], json!({})).await;
    assert_eq!(
        unsupported.error().unwrap().message,
        "part 0 (image) is not a PNG, JPEG, GIF or WebP image"
    );
}

/// Claims a `count: u32` but writes a string: its output breaks its own schema.
#[derive(ToolSchema)]
struct Miscount {
    #[allow(dead_code)]
    count: u32,
}

impl Serialize for Miscount {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Miscount", 1)?;
        out.serialize_field("count", "LEAK many")?;
        out.end()
    }
}

/// Returns a text part, then a count its output schema refuses.
#[tool(name = "test__miscount", effect = read_only, redact = ["count"])]
struct MakeMiscount {}

impl Tool for MakeMiscount {
    type Output = Content<Miscount>;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content<Miscount>, ToolError> {
        Ok(Content::new().text("counted:").json(Miscount { count: 3 }))
    }
}

#[tokio::test]
async fn an_output_that_fails_its_schema_is_refused_naming_the_part_and_kept_in_the_record() {
    let catalog = ToolCatalog::builder().register::<MakeMiscount>().build().unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["test__*"])).build();
    let ctx = context("run-1", "u", "t");
    let result = runner.exec("test__miscount", "{}", &ctx).await;
    assert_eq!(result.error_code(), Some(Code::OutputValidation));
    let error = result.error().unwrap();
    assert_eq!(error.message, "part 1 (json) does not match the tool's output schema (1 problem)");
    let refused = error.refused_output().expect("what the tool returned is kept");
    let kinds: Vec<&str> = refused.parts.iter().map(|part| part.kind).collect();
    assert_eq!(kinds, ["text", "json"]);
    assert!(refused.limited.is_empty(), "nothing was cut or resized");
    // The record says what the tool returned (no bytes, no text) and why it was refused.
    let record = result.record();
    assert_eq!(record.parts.len(), 2);
    assert_eq!(record.parts[0].size, Some("counted:".len()));
    assert!(record.result.is_none() && record.limited.is_empty());
    assert_eq!(record.error.as_ref().map(|error| error.code), Some(Code::OutputValidation));
    assert!(!serde_json::to_string(&record).unwrap().contains("LEAK"));
}

#[test]
fn budgets_are_per_tool_and_default_when_absent() {
    let policy = ToolPolicy::from_json(
        r#"{"budgets": {"max_image_bytes": 1000}, "tools": {"a__b": {"max_parts": 2, "text_overflow": "error"}}}"#,
    )
    .unwrap();
    let budgets = policy.budgets_for("a__b");
    assert_eq!((budgets.max_parts, budgets.max_image_bytes), (2, 1000));
    assert_eq!(budgets.text_overflow, tool_runtime::policy::TextOverflow::Error);
    let other = policy.budgets_for("c__d");
    assert_eq!((other.max_parts, other.max_image_width, other.max_image_height), (64, 8000, 8000));
    assert!(ToolPolicy::from_json(r#"{"budgets": {"text_overflow": "cut"}}"#).is_err());
}
