//! Oversize images with the `image` feature: the memory a resize takes is planned from the
//! header and held to `max_image_decode_bytes` (a decompression bomb is refused before a pixel
//! is decoded), the work runs on a blocking thread, and within the call's deadline.

use serde_json::json;
use tool_runtime::content::Part;
use tool_runtime::content::limits::{Limit, LimitAction, LimitReason};
use tool_runtime::runtime::ToolErrorCode as Code;

use super::memory::measure;
use super::{image, png, run};

const MIB: usize = 1024 * 1024;

/// A PNG of a few dozen bytes whose header claims `width` x `height` 8-bit grey pixels (a valid
/// header, checksum included), followed by the start of a compressed stream that ends early.
fn claimed_png(width: u32, height: u32) -> Vec<u8> {
    let mut header = b"IHDR".to_vec();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 0, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    for body in [header, b"IDAT\x78\x01".to_vec()] {
        out.extend_from_slice(&u32::try_from(body.len() - 4).unwrap().to_be_bytes());
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    out
}

/// CRC-32 (ISO 3309), as PNG chunks carry it.
fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |crc, &byte| {
        (0..8).fold(crc ^ u32::from(byte), |crc, _| {
            if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 }
        })
    })
}

#[test]
fn a_small_png_claiming_20000_by_20000_pixels_is_refused_from_its_header_before_any_decoding() {
    let bomb = claimed_png(20_000, 20_000);
    assert!(bomb.len() < 64, "{}", bomb.len());
    let parts = vec![image(bomb)];
    let (result, measured) = measure(|| run(parts, json!({"max_result_bytes": 1 << 20})));
    // Decoding would take 400 MB at once; nothing near a megabyte is allocated.
    assert!(measured.peak < MIB, "{measured:?}");
    assert_eq!(result.error_code(), Some(Code::ResultTooLarge), "{:?}", result.error());
    let entry = result.record().limited.last().unwrap().clone();
    let LimitReason::OverBudget { limit: Limit::ImageDecodeBytes, size, budget } = entry.reason
    else {
        panic!("{entry:?}")
    };
    assert_eq!(budget, 128 * 1024 * 1024);
    assert!(size >= 400_000_000, "{size}");
    let message = &result.error().unwrap().message;
    assert!(
        message.starts_with("part 0 (image) would take ")
            && message.ends_with(
                " bytes of memory to resize; the limit (max_image_decode_bytes) is 134217728"
            ),
        "{message}"
    );
}

#[test]
fn a_resize_takes_at_most_its_memory_budget_and_none_of_it_on_the_thread_polling_the_call() {
    let budget = 64 * MIB;
    let budgets = json!({
        "max_result_bytes": 1 << 24,
        "max_image_width": 1000,
        "max_image_decode_bytes": budget,
    });
    let parts = vec![image(png(3000, 2000))];
    let (result, measured) = measure(|| run(parts, budgets));
    assert!(result.is_ok(), "{:?}", result.error());
    let entry = result.record().limited.last().unwrap().clone();
    let LimitAction::Resized { from, to } = entry.action else { panic!("{entry:?}") };
    assert_eq!((from.width, from.height, to.width, to.height), (3000, 2000, 1000, 666));
    let Part::Image(media) = &result.output().unwrap().parts()[0] else { panic!() };
    assert_eq!(media.data.len(), to.bytes);
    // The 18 MB of decoded pixels were counted (the allocator sees the resize) ...
    assert!(measured.peak > 18_000_000, "{measured:?}");
    // ... and the whole resize stayed within its budget ...
    assert!(measured.peak <= budget, "{measured:?}");
    // ... on a blocking thread: the one polling the call never held an image.
    assert!(measured.largest_polling < MIB, "{measured:?}");
}

#[test]
fn a_resize_whose_plan_is_over_the_memory_budget_is_refused_before_decoding() {
    // 3000 x 2000 RGB takes 18 MB decoded, about 25 MB with the resized copy and its encoding:
    // one byte a pixel (what the header's first check assumes) would fit 20 MiB, three do not.
    let budgets = json!({
        "max_result_bytes": 1 << 24,
        "max_image_width": 1000,
        "max_image_decode_bytes": 20 * MIB,
    });
    let parts = vec![image(png(3000, 2000))];
    let (result, measured) = measure(|| run(parts, budgets));
    assert_eq!(result.error_code(), Some(Code::ResultTooLarge), "{:?}", result.error());
    let entry = result.record().limited.last().unwrap().clone();
    let LimitReason::OverBudget { limit: Limit::ImageDecodeBytes, size, budget } = entry.reason
    else {
        panic!("{entry:?}")
    };
    assert_eq!(budget, 20 * 1024 * 1024);
    assert!(size > budget && size < 2 * budget, "{size}");
    assert_eq!(entry.action, LimitAction::Refused);
    assert!(measured.peak < 2 * MIB, "{measured:?}");
}

#[tokio::test]
async fn a_resize_past_the_calls_deadline_ends_the_call_with_timeout() {
    // The tool returns at once; decoding 6 million pixels takes far longer than 5 ms.
    let budgets = json!({
        "max_runtime_ms": 5,
        "max_result_bytes": 1 << 24,
        "max_image_width": 1000,
    });
    let result = run(vec![image(png(3000, 2000))], budgets).await;
    assert_eq!(result.error_code(), Some(Code::Timeout), "{:?}", result.error());
    let message = &result.error().unwrap().message;
    assert_eq!(
        message,
        "the call did not finish within 5 ms (it was waiting for an oversize image to be resized)"
    );
}

#[test]
fn a_bomb_from_an_imported_mcp_tool_is_refused_from_its_header_too() {
    use std::sync::Arc;

    use tool_runtime::catalog::ToolCatalog;
    use tool_runtime::mcp::rmcp::ServiceExt;
    use tool_runtime::mcp::{McpImportOptions, McpServer, McpToolSource, ServerName};
    use tool_runtime::policy::ToolPolicy;
    use tool_runtime::runner::ToolRunner;
    use tool_tests::fixtures::context;

    // The upstream server's own budgets let the image through as it is (it is within them).
    let catalog = ToolCatalog::builder()
        .register::<super::Parts>()
        .capability(super::Returns(vec![image(claimed_png(20_000, 20_000))]))
        .build()
        .unwrap();
    let roomy = json!({
        "allowed_tools": ["test__parts"],
        "budgets": {"max_image_width": 30000, "max_image_height": 30000},
    });
    let upstream = ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(&roomy.to_string()).unwrap())
        .build();
    let server = McpServer::builder(upstream).build();
    let imported = "mcp__up__test__parts";
    let (result, measured) = measure(|| async move {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(theirs).await {
                let _ = running.waiting().await;
            }
        });
        let name = ServerName::new("up").unwrap();
        let source = McpToolSource::connect(name, ours, McpImportOptions::new()).await.unwrap();
        let catalog = ToolCatalog::builder().source(Arc::new(source)).build().unwrap();
        let policy = json!({"allowed_tools": [imported], "require_approval": []});
        let runner = ToolRunner::builder(catalog)
            .policy(ToolPolicy::from_json(&policy.to_string()).unwrap())
            .build();
        runner.exec(imported, "{}", &context("run-1", "u", "t")).await
    });
    // The import and the call themselves take little; the 400 MB are never allocated.
    assert!(measured.peak < 8 * MIB, "{measured:?}");
    let entry = result.record().limited.last().cloned();
    assert!(
        matches!(
            entry.map(|entry| entry.reason),
            Some(LimitReason::OverBudget { limit: Limit::ImageDecodeBytes, .. })
        ),
        "{:?}",
        result.error()
    );
    assert_eq!(result.error_code(), Some(Code::ResultTooLarge));
}
