//! What a tool has produced so far, kept for the case it is cut off.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use super::Capability;
use crate::content::Part;

/// The most parts a tool may keep; later ones are dropped (the result budgets still apply to
/// what is kept).
pub const MAX_PARTIAL_PARTS: usize = 256;

/// Where a tool keeps what it has produced so far, in case its run is cut off: when the call
/// times out or is cancelled, the runner answers with these parts (text, images, files),
/// marked as partial ([`ToolExecResult::partial`](super::ToolExecResult::partial), the
/// record's `partial`), instead of the bare `timeout` or `cancelled` error. A tool that kept
/// nothing, or finished, is answered as before. Declare it, and the runner hands each call its
/// own (nothing to bind in the catalog):
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::content::Part;
/// use tool_runtime::prelude::*;
/// use tool_runtime::runtime::Partial;
///
/// /// Summarise every page of a long report.
/// #[tool(name = "docs__summarise", effect = read_only, redact = all, capabilities = [Partial])]
/// struct Summarise { pages: u32 }
///
/// impl Tool for Summarise {
///     type Output = String;
///     async fn run(self, _: &ToolInvocationContext, caps: &ToolCapabilities) -> Result<String, ToolError> {
///         let partial = caps.get::<Partial>()?;
///         let mut summary = String::new();
///         for page in 1..=self.pages {
///             let line = format!("page {page}: ...\n");
///             partial.keep(Part::Text(line.clone()));
///             summary.push_str(&line);
///             tokio::time::sleep(Duration::from_millis(40)).await;
///         }
///         Ok(summary)
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let catalog = ToolCatalog::builder().register::<Summarise>().build().unwrap();
/// let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["docs__*"], "budgets": {"max_runtime_ms": 100}}"#).unwrap();
/// let runner = ToolRunner::builder(catalog).policy(policy).build();
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
/// let cut = runner.exec("docs__summarise", r#"{"pages": 50}"#, &ctx).await;
/// assert_eq!(cut.partial().map(|error| error.code), Some(ToolErrorCode::Timeout));
/// let parts = cut.output().unwrap().parts();
/// assert!(matches!(&parts[0], Part::Text(text) if text == "page 1: ...\n"));
/// assert!(matches!(parts.last(), Some(Part::Text(note)) if note.contains("partial")));
/// # });
/// ```
#[derive(Clone, Default)]
pub struct Partial {
    parts: Arc<Mutex<Vec<Part>>>,
}

impl Capability for Partial {
    const NAME: &'static str = "partial";
}

impl Partial {
    /// Keeps `part` after the ones kept before (up to [`MAX_PARTIAL_PARTS`]).
    pub fn keep(&self, part: impl Into<Part>) {
        let mut parts = self.parts.lock().unwrap_or_else(PoisonError::into_inner);
        if parts.len() < MAX_PARTIAL_PARTS {
            parts.push(part.into());
        }
    }

    /// Replaces what was kept with `parts` (a tool that rewrites its draft as it goes).
    pub fn replace(&self, parts: impl IntoIterator<Item = Part>) {
        let mut kept = self.parts.lock().unwrap_or_else(PoisonError::into_inner);
        kept.clear();
        kept.extend(parts.into_iter().take(MAX_PARTIAL_PARTS));
    }

    /// What was kept, taken (the runner, once the call was cut off).
    #[cfg(feature = "runner")]
    pub(crate) fn take(&self) -> Vec<Part> {
        std::mem::take(&mut *self.parts.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl fmt::Debug for Partial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept = self.parts.lock().unwrap_or_else(PoisonError::into_inner).len();
        f.debug_struct("Partial").field("kept", &kept).finish()
    }
}
