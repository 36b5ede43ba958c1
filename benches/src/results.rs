//! Tools whose results are content: a text result and a result carrying a 1 MB image, for the
//! `results` benchmark and the allocation test of the image's path through `exec`.

use std::sync::Arc;

use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::{Bytes, Content};
use tool_runtime::policy::{Budgets, ToolPolicy};
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::Capability;

/// Bytes of text the text tool returns (half the default result budget).
pub const TEXT_BYTES: usize = 16 * 1024;

/// Bytes of the image the image tool returns.
pub const IMAGE_BYTES: usize = 1024 * 1024;

/// The result tools' arguments.
pub const RESULT_ARGS: &str = r#"{"caption": "last week"}"#;

/// A PNG header of 1024 x 1024 pixels followed by filler to [`IMAGE_BYTES`]: the runner reads
/// only an image's header unless it has to resize it, so the rest need not decode.
#[must_use]
pub fn png_1mb() -> Bytes {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend_from_slice(&1024_u32.to_be_bytes());
    png.extend_from_slice(&1024_u32.to_be_bytes());
    png.resize(IMAGE_BYTES, 0x5a);
    Bytes::from(png)
}

/// The image the image tool returns, made once and shared (cloning [`Bytes`] copies nothing).
#[derive(Debug)]
pub struct Picture(pub Bytes);

impl Capability for Picture {
    const NAME: &'static str = "picture";
}

/// Returns 16 KiB of text.
#[derive(Debug)]
#[tool(name = "bench__text", effect = read_only, redact = [])]
pub struct TextResult {
    /// Printed first.
    pub caption: String,
}

impl Tool for TextResult {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let mut text = self.caption;
        text.push('\n');
        while text.len() < TEXT_BYTES {
            text.push_str("row of the report, ");
        }
        text.truncate(TEXT_BYTES);
        Ok(Content::new().text(text))
    }
}

/// Returns a caption and the 1 MB image.
#[derive(Debug)]
#[tool(name = "bench__image", effect = read_only, redact = [], capabilities = [Picture])]
pub struct ImageResult {
    /// The caption.
    pub caption: String,
}

impl Tool for ImageResult {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let picture = caps.get::<Picture>()?;
        Ok(Content::new().text(self.caption).image("image/png", picture.0.clone()))
    }
}

/// A runner over the two result tools, their budgets large enough for both results (2 MiB).
///
/// # Panics
///
/// Never: the catalog has no duplicate ids and its one capability is bound.
#[must_use]
pub fn results_runner() -> ToolRunner {
    let catalog = ToolCatalog::builder()
        .register::<TextResult>()
        .register::<ImageResult>()
        .capability(Picture(png_1mb()))
        .build()
        .expect("two distinct tools, their capability bound");
    let policy = ToolPolicy {
        allowed_tools: vec!["bench__*".to_owned()],
        budgets: Budgets { max_result_bytes: 2 * IMAGE_BYTES, ..Budgets::default() },
        ..ToolPolicy::default()
    };
    ToolRunner::builder(catalog).policy(policy).event_sink(Arc::new(crate::DroppingSink)).build()
}
