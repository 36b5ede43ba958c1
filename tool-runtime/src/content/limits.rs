//! What the runner does to a result that is over its budgets, and to parts that are not what
//! they claim to be: the entries a record keeps ([`Limited`]) and the image checks behind them.
//!
//! The budgets themselves are policy ([`Budgets`](crate::policy::Budgets)). Every image part
//! is sniffed from its bytes (PNG, JPEG, GIF or WebP, the formats every provider takes): an image
//! whose MIME type is not its real format, whose header does not decode, or whose format is none
//! of those four is refused. An image over its byte or pixel budget is resized and re-encoded
//! with the cargo feature `image`, or refused without it. Text over the result budget is cut at
//! a character boundary with a visible marker, or refused, as the policy says; the structured
//! JSON value is never cut.
//!
//! ```
//! use tool_runtime::content::limits::{ImageFormat, sniff};
//!
//! let gif = b"GIF89a\x02\x00\x01\x00\x00\x00\x00;";
//! let header = sniff(gif).unwrap().unwrap();
//! assert_eq!((header.format, header.width, header.height), (ImageFormat::Gif, 2, 1));
//! assert_eq!(header.format.mime_type(), "image/gif");
//! assert!(sniff(b"plain text").is_none());
//! ```

use std::fmt;

use serde::Serialize;
/// The image formats the runner knows (and every provider accepts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    /// `image/png`.
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `image/gif`.
    Gif,
    /// `image/webp`.
    Webp,
}

impl ImageFormat {
    /// The format's MIME type.
    ///
    /// ```
    /// assert_eq!(tool_runtime::content::limits::ImageFormat::Webp.mime_type(), "image/webp");
    /// ```
    #[must_use]
    pub const fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    /// The format a MIME type names (ASCII case ignored), if it is one of the four.
    ///
    /// ```
    /// use tool_runtime::content::limits::ImageFormat;
    ///
    /// assert_eq!(ImageFormat::from_mime_type("IMAGE/PNG"), Some(ImageFormat::Png));
    /// assert_eq!(ImageFormat::from_mime_type("image/svg+xml"), None);
    /// ```
    #[must_use]
    pub fn from_mime_type(mime_type: &str) -> Option<Self> {
        [Self::Png, Self::Jpeg, Self::Gif, Self::Webp]
            .into_iter()
            .find(|format| format.mime_type().eq_ignore_ascii_case(mime_type.trim()))
    }
}

/// What an image's header says: its real format and size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ImageHeader {
    /// The format its bytes are in.
    pub format: ImageFormat,
    /// Width in pixels (never 0).
    pub width: u32,
    /// Height in pixels (never 0).
    pub height: u32,
}

/// The header of an image in one of the four formats, read from its first bytes.
///
/// `None`: the bytes start like none of the formats. `Some(None)`: they start like one of them
/// but the header is cut short, malformed or names a zero size.
#[must_use]
pub fn sniff(bytes: &[u8]) -> Option<Option<ImageHeader>> {
    let header = |format, width, height| {
        Some(ImageHeader { format, width, height }).filter(|h| h.width > 0 && h.height > 0)
    };
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        let dims = (bytes.get(12..16) == Some(b"IHDR")).then(|| (be32(bytes, 16), be32(bytes, 20)));
        return Some(match dims {
            Some((Some(width), Some(height))) => header(ImageFormat::Png, width, height),
            _ => None,
        });
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some(match (le16(bytes, 6), le16(bytes, 8)) {
            (Some(width), Some(height)) => header(ImageFormat::Gif, width, height),
            _ => None,
        });
    }
    if bytes.starts_with(b"\xff\xd8\xff") {
        return Some(jpeg_size(bytes).and_then(|(w, h)| header(ImageFormat::Jpeg, w, h)));
    }
    if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        return Some(webp_size(bytes).and_then(|(w, h)| header(ImageFormat::Webp, w, h)));
    }
    None
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn le16(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at + 2).map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])))
}

fn le24(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at + 3).map(|b| u32::from_le_bytes([b[0], b[1], b[2], 0]))
}

/// The size in a JPEG's first start-of-frame segment, walking the segments before it.
fn jpeg_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        if *bytes.get(at)? != 0xff {
            return None;
        }
        while *bytes.get(at)? == 0xff {
            at += 1;
        }
        let marker = *bytes.get(at)?;
        at += 1;
        match marker {
            // Markers without a length.
            0x01 | 0xd0..=0xd8 => {}
            0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                let segment = bytes.get(at..at + 7)?;
                let height = u32::from(u16::from_be_bytes([segment[3], segment[4]]));
                let width = u32::from(u16::from_be_bytes([segment[5], segment[6]]));
                return Some((width, height));
            }
            // End of image or start of scan before any frame header.
            0xd9 | 0xda => return None,
            _ => {
                let length = bytes.get(at..at + 2)?;
                at += usize::from(u16::from_be_bytes([length[0], length[1]]));
            }
        }
    }
}

/// The canvas size of a WebP file from its first chunk (lossy, lossless or extended).
fn webp_size(bytes: &[u8]) -> Option<(u32, u32)> {
    match bytes.get(12..16)? {
        b"VP8 " => {
            (bytes.get(23..26)? == b"\x9d\x01\x2a").then_some(())?;
            Some((le16(bytes, 26)? & 0x3fff, le16(bytes, 28)? & 0x3fff))
        }
        b"VP8L" => {
            (*bytes.get(20)? == 0x2f).then_some(())?;
            let b = bytes.get(21..25)?;
            let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => Some((le24(bytes, 24)? + 1, le24(bytes, 27)? + 1)),
        _ => None,
    }
}

/// Which budget a result or part went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Limit {
    /// [`Budgets::max_result_bytes`](crate::policy::Budgets::max_result_bytes).
    ResultBytes,
    /// [`Budgets::max_parts`](crate::policy::Budgets::max_parts).
    Parts,
    /// [`Budgets::max_image_bytes`](crate::policy::Budgets::max_image_bytes).
    ImageBytes,
    /// [`Budgets::max_image_width`](crate::policy::Budgets::max_image_width).
    ImageWidth,
    /// [`Budgets::max_image_height`](crate::policy::Budgets::max_image_height).
    ImageHeight,
    /// [`Budgets::max_image_decode_bytes`](crate::policy::Budgets::max_image_decode_bytes): the
    /// memory resizing an image would take.
    ImageDecodeBytes,
}

impl Limit {
    /// The budget's key in the policy (`"max_image_bytes"`).
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            Self::ResultBytes => "max_result_bytes",
            Self::Parts => "max_parts",
            Self::ImageBytes => "max_image_bytes",
            Self::ImageWidth => "max_image_width",
            Self::ImageHeight => "max_image_height",
            Self::ImageDecodeBytes => "max_image_decode_bytes",
        }
    }
}

/// Why the runner touched a result or a part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LimitReason {
    /// It was over a budget.
    OverBudget {
        /// Which budget.
        limit: Limit,
        /// How much there was (bytes, pixels or parts).
        size: u64,
        /// The budget.
        budget: u64,
    },
    /// An image whose MIME type is not its real format.
    MimeMismatch {
        /// The format its bytes are in.
        actual: ImageFormat,
    },
    /// An image whose bytes do not decode.
    Undecodable,
    /// An image in none of the formats the runner knows (PNG, JPEG, GIF, WebP).
    UnsupportedFormat,
}

/// What the runner did about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LimitAction {
    /// Text cut at a character boundary, a marker appended.
    Truncated {
        /// Bytes of text the tool returned.
        from_bytes: usize,
        /// Bytes kept (before the marker).
        kept_bytes: usize,
    },
    /// An image resized and re-encoded (feature `image`).
    Resized {
        /// The image the tool returned.
        from: ImageSize,
        /// The image sent on.
        to: ImageSize,
    },
    /// The whole result was refused: the call failed.
    Refused,
}

/// An image's format, pixels and bytes, as a record keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ImageSize {
    /// Its format.
    pub format: ImageFormat,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Size in bytes.
    pub bytes: usize,
}

/// One thing the runner cut, resized or refused in a result, and why: what records and
/// results keep ([`ToolOutput::limited`](crate::content::ToolOutput::limited),
/// `ToolInvocationRecord::limited`). Naming the part by index and kind, never by its bytes,
/// it is also the typed error of a refused result (its `Display` is the safe message).
///
/// ```
/// use tool_runtime::content::limits::{Limit, LimitAction, LimitReason, Limited};
///
/// let refused = Limited {
///     part: Some(1),
///     kind: Some("image"),
///     reason: LimitReason::OverBudget { limit: Limit::ImageBytes, size: 9_000_000, budget: 5_242_880 },
///     action: LimitAction::Refused,
/// };
/// // Without the `image` feature, the message adds that resizing needs it.
/// assert!(refused.to_string().starts_with(
///     "part 1 (image) is 9000000 bytes; the limit (max_image_bytes) is 5242880"
/// ));
/// assert_eq!(refused.error_code(), tool_runtime::runtime::ToolErrorCode::ResultTooLarge);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Limited {
    /// The part's index in the result; `None` for the result as a whole.
    pub part: Option<usize>,
    /// The part's kind ([`Part::kind`](crate::content::Part::kind)).
    pub kind: Option<&'static str>,
    /// Why.
    #[serde(flatten)]
    pub reason: LimitReason,
    /// What was done.
    #[serde(flatten)]
    pub action: LimitAction,
}

impl fmt::Display for Limited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.part, self.kind) {
            (Some(index), Some(kind)) => write!(f, "part {index} ({kind})")?,
            (Some(index), None) => write!(f, "part {index}")?,
            _ => f.write_str("the result")?,
        }
        match &self.reason {
            LimitReason::OverBudget { limit, size, budget } => {
                let unit = match limit {
                    Limit::Parts => " parts",
                    Limit::ImageWidth | Limit::ImageHeight => " pixels",
                    _ => " bytes",
                };
                let what = match limit {
                    Limit::ImageWidth => " wide",
                    Limit::ImageHeight => " high",
                    Limit::ImageDecodeBytes => " of memory to resize",
                    _ => "",
                };
                let verb = match limit {
                    Limit::Parts => " has ",
                    Limit::ImageDecodeBytes => " would take ",
                    _ => " is ",
                };
                write!(f, "{verb}{size}{unit}{what}; the limit ({}) is {budget}", limit.key())?;
            }
            LimitReason::MimeMismatch { actual } => write!(
                f,
                " is labelled with a MIME type its bytes do not have (they are {})",
                actual.mime_type()
            )?,
            LimitReason::Undecodable => {
                f.write_str(" does not decode as the image it claims to be")?
            }
            LimitReason::UnsupportedFormat => {
                f.write_str(" is not a PNG, JPEG, GIF or WebP image")?;
            }
        }
        match &self.action {
            LimitAction::Truncated { from_bytes, kept_bytes } => {
                write!(f, " (cut from {from_bytes} to {kept_bytes} bytes)")
            }
            LimitAction::Resized { from, to } => write!(
                f,
                " (resized from {}x{} {} bytes to {}x{} {} bytes)",
                from.width, from.height, from.bytes, to.width, to.height, to.bytes
            ),
            LimitAction::Refused
                if !cfg!(feature = "image")
                    && matches!(
                        self.reason,
                        LimitReason::OverBudget {
                            limit: Limit::ImageBytes | Limit::ImageWidth | Limit::ImageHeight,
                            ..
                        }
                    ) =>
            {
                f.write_str(" (resizing images needs the `image` feature)")
            }
            LimitAction::Refused => Ok(()),
        }
    }
}

impl std::error::Error for Limited {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_of_each_format() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 2]);
        assert_eq!(
            sniff(&png),
            Some(Some(ImageHeader { format: ImageFormat::Png, width: 256, height: 2 }))
        );
        assert_eq!(sniff(&png[..20]), Some(None));

        let jpeg =
            [0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xc0, 0, 11, 8, 0, 3, 0, 5, 1, 0, 0, 0];
        assert_eq!(sniff(&jpeg).unwrap().map(|h| (h.width, h.height)), Some((5, 3)));
        assert_eq!(sniff(&jpeg[..12]), Some(None));

        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\0\0\0\0\0\0\0\0".to_vec();
        webp.extend_from_slice(&[9, 0, 0, 4, 0, 0]);
        assert_eq!(sniff(&webp).unwrap().map(|h| (h.width, h.height)), Some((10, 5)));
        assert_eq!(sniff(b"GIF89a\0\0\x01\0"), Some(None), "zero width");
        assert_eq!(sniff(b"<svg/>"), None);
    }
}
