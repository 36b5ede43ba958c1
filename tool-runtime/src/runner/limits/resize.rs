//! Resizing and re-encoding an oversize image (feature `image`).

use std::io::Cursor;

use image::imageops::FilterType;
use image::{DynamicImage, GenericImageView};

use crate::content::limits::{ImageFormat, ImageHeader, ImageSize, Limit, LimitReason};
use crate::content::{Bytes, Media};
use crate::policy::Budgets;

/// How many smaller encodings are tried before the image is refused.
const ATTEMPTS: usize = 8;

/// Replaces `media` with the image scaled down to fit the pixel budgets and re-encoded (JPEG
/// stays JPEG; PNG, GIF and WebP become PNG; an animation keeps its first frame), smaller
/// again while it is over the byte budget. Gives the sizes before and after.
pub(super) fn fit(
    media: &mut Media,
    header: ImageHeader,
    budgets: &Budgets,
) -> Result<(ImageSize, ImageSize), LimitReason> {
    let decoded = image::load_from_memory_with_format(&media.data, codec(header.format))
        .map_err(|_| LimitReason::Undecodable)?;
    let (width, height) = decoded.dimensions();
    let from = ImageSize { format: header.format, width, height, bytes: media.data.len() };
    let out = if header.format == ImageFormat::Jpeg { ImageFormat::Jpeg } else { ImageFormat::Png };
    let (mut target_w, mut target_h) =
        scale_within(width, height, budgets.max_image_width, budgets.max_image_height);
    let mut last = media.data.len();
    for _ in 0..ATTEMPTS {
        let encoded = encode(&decoded, (target_w, target_h), out)?;
        if encoded.len() <= budgets.max_image_bytes {
            let to =
                ImageSize { format: out, width: target_w, height: target_h, bytes: encoded.len() };
            media.data = Bytes::from(encoded);
            out.mime_type().clone_into(&mut media.mime_type);
            return Ok((from, to));
        }
        last = encoded.len();
        if target_w == 1 && target_h == 1 {
            break;
        }
        // Encoded size grows about with the pixel count: shrink both sides by the square root
        // of the ratio, a little more to converge in few attempts.
        let ratio = (budgets.max_image_bytes as f64 / encoded.len() as f64).sqrt() * 0.9;
        (target_w, target_h) = scale_by(target_w, target_h, ratio);
    }
    Err(LimitReason::OverBudget {
        limit: Limit::ImageBytes,
        size: last as u64,
        budget: budgets.max_image_bytes as u64,
    })
}

const fn codec(format: ImageFormat) -> image::ImageFormat {
    match format {
        ImageFormat::Png => image::ImageFormat::Png,
        ImageFormat::Jpeg => image::ImageFormat::Jpeg,
        ImageFormat::Gif => image::ImageFormat::Gif,
        ImageFormat::Webp => image::ImageFormat::WebP,
    }
}

/// The largest size with the same aspect ratio within `max_w` x `max_h` (never 0).
fn scale_within(width: u32, height: u32, max_w: u32, max_h: u32) -> (u32, u32) {
    if width <= max_w && height <= max_h {
        return (width, height);
    }
    let ratio = (f64::from(max_w.max(1)) / f64::from(width))
        .min(f64::from(max_h.max(1)) / f64::from(height));
    let (w, h) = scale_by(width, height, ratio);
    (w.min(max_w.max(1)), h.min(max_h.max(1)))
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn scale_by(width: u32, height: u32, ratio: f64) -> (u32, u32) {
    let side = |side: u32| ((f64::from(side) * ratio).floor() as u32).clamp(1, side);
    (side(width), side(height))
}

fn encode(
    decoded: &DynamicImage,
    (width, height): (u32, u32),
    out: ImageFormat,
) -> Result<Vec<u8>, LimitReason> {
    let resized = if decoded.dimensions() == (width, height) {
        None
    } else {
        Some(decoded.resize_exact(width, height, FilterType::Triangle))
    };
    let image = resized.as_ref().unwrap_or(decoded);
    let mut buffer = Cursor::new(Vec::new());
    let written = if out == ImageFormat::Jpeg {
        // JPEG has no alpha channel.
        DynamicImage::ImageRgb8(image.to_rgb8()).write_to(&mut buffer, image::ImageFormat::Jpeg)
    } else {
        image.write_to(&mut buffer, image::ImageFormat::Png)
    };
    written.map_err(|_| LimitReason::Undecodable)?;
    Ok(buffer.into_inner())
}
