//! Step 10's bounds on a result of several parts: the number of parts, each image, then the
//! bytes of everything, text cut last.

use serde_json::Value;

use crate::content::limits::{ImageFormat, Limit, LimitAction, LimitReason, Limited, sniff};
use crate::content::{Media, Part, ResourceBody, ToolOutput};
use crate::policy::{Budgets, TextOverflow};
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
    let mut done = Vec::new();
    let count = output.parts().len();
    if count > budgets.max_parts {
        done.push(refused(None, None, over(Limit::Parts, count, budgets.max_parts)));
        return Err(done);
    }
    for (index, part) in output.parts_mut().iter_mut().enumerate() {
        if let Part::Image(media) = part
            && let Err(refusal) = check_image(index, media, budgets, &mut done)
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

/// The image's real format must be the one its MIME type names; over a budget it is resized
/// (feature `image`) or refused. The refusal is returned; a resize is pushed on `done`.
fn check_image(
    index: usize,
    media: &mut Media,
    budgets: &Budgets,
    done: &mut Vec<Limited>,
) -> Result<(), Limited> {
    let refuse = |reason| refused(Some(index), Some("image"), reason);
    let declared = ImageFormat::from_mime_type(&media.mime_type);
    let header = match sniff(&media.data) {
        Some(Some(header)) => header,
        Some(None) => return Err(refuse(LimitReason::Undecodable)),
        None if declared.is_some() => return Err(refuse(LimitReason::Undecodable)),
        None => return Err(refuse(LimitReason::UnsupportedFormat)),
    };
    if declared != Some(header.format) {
        return Err(refuse(LimitReason::MimeMismatch { actual: header.format }));
    }
    let over_budget = [
        (Limit::ImageBytes, media.data.len() as u64, budgets.max_image_bytes as u64),
        (Limit::ImageWidth, u64::from(header.width), u64::from(budgets.max_image_width)),
        (Limit::ImageHeight, u64::from(header.height), u64::from(budgets.max_image_height)),
    ]
    .into_iter()
    .find(|(_, size, budget)| size > budget);
    let Some((limit, size, budget)) = over_budget else {
        return Ok(());
    };
    let reason = LimitReason::OverBudget { limit, size, budget };
    #[cfg(feature = "image")]
    {
        let (from, to) = resize::fit(media, header, budgets).map_err(refuse)?;
        done.push(Limited {
            part: Some(index),
            kind: Some("image"),
            reason,
            action: LimitAction::Resized { from, to },
        });
        Ok(())
    }
    #[cfg(not(feature = "image"))]
    {
        let _ = done;
        Err(refuse(reason))
    }
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
