//! Step 10's bounds on a result of several parts: the number of parts, each image, then the
//! bytes of everything, text cut last.

use serde_json::Value;

use crate::content::limits::{
    ImageFormat, ImageHeader, Limit, LimitAction, LimitReason, Limited, sniff,
};
use crate::content::{Media, Part, ResourceBody, ToolOutput};
use crate::policy::{Budgets, TextOverflow};
#[cfg(feature = "image")]
use crate::runtime::ExecError;
use crate::runtime::ToolErrorCode;

#[cfg(feature = "image")]
mod resize;

impl Limited {
    /// The code of the error a refusal for this reason ends the call with: `result_too_large`
    /// for a budget, `output_validation` for an image that is not what it claims.
    #[must_use]
    pub const fn error_code(&self) -> ToolErrorCode {
        match self.reason {
            LimitReason::OverBudget { .. } => ToolErrorCode::ResultTooLarge,
            _ => ToolErrorCode::OutputValidation,
        }
    }
}

/// Bounds `output` in place: what was cut or resized is kept in `output.limited()`. On
/// refusal, everything done before it and the refusal itself, last.
pub(crate) fn enforce(output: &mut ToolOutput, budgets: &Budgets) -> Result<(), Vec<Limited>> {
    // What `fit_images` resized comes first.
    let mut done = output.take_limited();
    let count = output.parts().len();
    if count > budgets.max_parts {
        done.push(refused(None, None, over(Limit::Parts, count, budgets.max_parts)));
        return Err(done);
    }
    for (index, part) in output.parts().iter().enumerate() {
        if let Part::Image(media) = part
            && let Err(refusal) = check_image(index, media, budgets)
        {
            done.push(refusal);
            return Err(done);
        }
    }
    let max = budgets.max_result_bytes;
    let json = output.structured().map_or(0, json_len);
    if json > max {
        let index = output.parts().iter().position(|part| matches!(part, Part::Json(_)));
        done.push(refused(index, Some("json"), over(Limit::ResultBytes, json, max)));
        return Err(done);
    }
    let total = result_bytes(output, json);
    if total > max {
        if budgets.text_overflow == TextOverflow::Truncate {
            truncate(output.parts_mut(), total, max, &mut done);
        }
        let after = result_bytes(output, json);
        if after > max {
            done.push(refused(None, None, over(Limit::ResultBytes, total, max)));
            return Err(done);
        }
    }
    output.set_limited(done);
    Ok(())
}

fn over(limit: Limit, size: impl TryInto<u64>, budget: impl TryInto<u64>) -> LimitReason {
    LimitReason::OverBudget {
        limit,
        size: size.try_into().unwrap_or(u64::MAX),
        budget: budget.try_into().unwrap_or(u64::MAX),
    }
}

const fn refused(part: Option<usize>, kind: Option<&'static str>, reason: LimitReason) -> Limited {
    Limited { part, kind, reason, action: LimitAction::Refused }
}

/// The image's real format must be the one its MIME type names, and it must be within its
/// budgets: over one, it is refused ([`fit_images`] resized it before, with the feature
/// `image`). The refusal is returned.
fn check_image(index: usize, media: &Media, budgets: &Budgets) -> Result<(), Limited> {
    let over_budget = over_budget(media, budgets)
        .map_err(|reason| refused(Some(index), Some("image"), reason))?;
    match over_budget {
        None => Ok(()),
        Some((_, reason)) => Err(refused(Some(index), Some("image"), reason)),
    }
}

/// The image's header and the first budget it is over (`None` when within them all); the
/// reason to refuse it when it is not the image its MIME type says.
fn over_budget(
    media: &Media,
    budgets: &Budgets,
) -> Result<Option<(ImageHeader, LimitReason)>, LimitReason> {
    let declared = ImageFormat::from_mime_type(&media.mime_type);
    let header = match sniff(&media.data) {
        Some(Some(header)) => header,
        Some(None) => return Err(LimitReason::Undecodable),
        None if declared.is_some() => return Err(LimitReason::Undecodable),
        None => return Err(LimitReason::UnsupportedFormat),
    };
    if declared != Some(header.format) {
        return Err(LimitReason::MimeMismatch { actual: header.format });
    }
    let over = [
        (Limit::ImageBytes, media.data.len() as u64, budgets.max_image_bytes as u64),
        (Limit::ImageWidth, u64::from(header.width), u64::from(budgets.max_image_width)),
        (Limit::ImageHeight, u64::from(header.height), u64::from(budgets.max_image_height)),
    ]
    .into_iter()
    .find(|(_, size, budget)| size > budget);
    Ok(over.map(|(limit, size, budget)| (header, LimitReason::OverBudget { limit, size, budget })))
}

/// Resizes each image over its budgets (feature `image`), in order, before [`enforce`] checks
/// the result: on Tokio's blocking threads (inline outside a Tokio runtime), within `deadline`
/// -> `timeout`. An image that cannot be resized within `max_image_decode_bytes` (or at all)
/// ends the call `result_too_large` or `output_validation`, as [`enforce`] would; one that is
/// not what it claims is left for [`enforce`] to refuse, and no image after it is touched.
#[cfg(feature = "image")]
pub(super) async fn fit_images(
    mut output: ToolOutput,
    budgets: &Budgets,
    deadline: &super::drive::Deadline,
) -> Result<ToolOutput, ExecError> {
    if output.is_structured_only() || output.parts().len() > budgets.max_parts {
        return Ok(output);
    }
    let mut done = output.take_limited();
    for index in 0..output.parts().len() {
        let Part::Image(media) = &output.parts()[index] else { continue };
        let (header, reason) = match over_budget(media, budgets) {
            Ok(Some(over)) => over,
            Ok(None) => continue,
            Err(_) => break,
        };
        let data = media.data.clone();
        let fitted = resize_off_the_workers(data, header, *budgets, deadline).await?;
        match fitted {
            Ok((media, from, to)) => {
                output.parts_mut()[index] = Part::Image(Box::new(media));
                let action = LimitAction::Resized { from, to };
                done.push(Limited { part: Some(index), kind: Some("image"), reason, action });
            }
            Err(reason) => {
                done.push(refused(Some(index), Some("image"), reason));
                return Err(ExecError::refused(output.summaries(), done));
            }
        }
    }
    output.set_limited(done);
    Ok(output)
}

/// [`resize::fit`] on a blocking thread, awaited within `deadline`. The decoder cannot be
/// interrupted: past the deadline it finishes on its own thread (within its memory budget) and
/// its work is dropped. A panic in it refuses the image as undecodable.
#[cfg(feature = "image")]
async fn resize_off_the_workers(
    data: crate::content::Bytes,
    header: ImageHeader,
    budgets: Budgets,
    deadline: &super::drive::Deadline,
) -> Result<resize::Fitted, ExecError> {
    let work = move || resize::fit(&data, header, &budgets);
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return Ok(std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
            .unwrap_or(Err(LimitReason::Undecodable)));
    };
    let task = runtime.spawn_blocking(work);
    let joined = deadline.bound(task, "an oversize image to be resized").await?;
    Ok(joined.unwrap_or(Err(LimitReason::Undecodable)))
}

/// Every part's bytes as the budget counts them; `json` is the structured value's.
fn result_bytes(output: &ToolOutput, json: usize) -> usize {
    output.parts().iter().fold(json, |total, part| {
        let size = match part {
            Part::Text(text) => text.len(),
            Part::Image(media) | Part::Audio(media) => media.data.len(),
            Part::Resource(resource) => match &resource.body {
                ResourceBody::Text(text) => text.len(),
                ResourceBody::Bytes(bytes) => bytes.len(),
            },
            Part::ResourceLink(link) => {
                link.uri.len()
                    + link.name.len()
                    + link.description.as_ref().map_or(0, String::len)
                    + link.mime_type.as_ref().map_or(0, String::len)
            }
            Part::Json(_) => 0,
        };
        total.saturating_add(size)
    })
}

/// The marker that ends a cut text part.
fn marker(kept: usize, from: usize) -> String {
    format!("\n[truncated: {kept} of {from} bytes shown]")
}

/// Cuts text parts, the last first, until the result is within `max` bytes (or no text is
/// left to cut). Each cut part ends with a [`marker`].
fn truncate(parts: &mut [Part], total: usize, max: usize, done: &mut Vec<Limited>) {
    let mut excess = total - max;
    for (index, part) in parts.iter_mut().enumerate().rev() {
        if excess == 0 {
            break;
        }
        let Part::Text(text) = part else { continue };
        let from = text.len();
        // The marker is never longer than this one: `kept` has no more digits than `from`.
        let longest_marker = marker(from, from).len();
        let kept = text.floor_char_boundary(from.saturating_sub(excess + longest_marker));
        let end = marker(kept, from);
        if kept + end.len() >= from {
            continue;
        }
        text.truncate(kept);
        text.push_str(&end);
        excess = excess.saturating_sub(from - text.len());
        done.push(Limited {
            part: Some(index),
            kind: Some("text"),
            reason: over(Limit::ResultBytes, total, max),
            action: LimitAction::Truncated { from_bytes: from, kept_bytes: kept },
        });
    }
}

/// The compact JSON length of `value`, without writing it anywhere.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_at_a_character_boundary_with_a_marker() {
        let mut parts = vec![Part::Text("é".repeat(100))];
        let mut done = Vec::new();
        truncate(&mut parts, 200, 120, &mut done);
        let Part::Text(text) = &parts[0] else { unreachable!() };
        assert!(text.len() <= 120, "{}", text.len());
        assert!(text.ends_with(" of 200 bytes shown]"), "{text}");
        let LimitAction::Truncated { kept_bytes, .. } = done[0].action else { unreachable!() };
        assert_eq!(kept_bytes % 2, 0);
        assert!(text.starts_with(&"é".repeat(kept_bytes / 2)));
    }
}
