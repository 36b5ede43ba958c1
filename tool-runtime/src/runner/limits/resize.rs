//! Resizing and re-encoding an oversize image (feature `image`), within a memory budget.
//!
//! Decoding is where a hostile image hurts: a few kilobytes of PNG can claim 20 000 x 20 000
//! pixels, 1.6 GB once decoded. So the memory a resize needs (the decoded pixels, the resized
//! copy, a colour conversion for JPEG, the new encoding) is planned from the header before a
//! pixel is decoded, checked against `max_image_decode_bytes`, and handed to the decoder as its
//! own limits: no larger than the header said, no more memory than the plan left it.

use std::io::Cursor;

use image::{ColorType, DynamicImage, GenericImageView, ImageDecoder, ImageReader, Limits};

use crate::content::limits::{ImageFormat, ImageHeader, ImageSize, Limit, LimitReason};
use crate::content::{Bytes, Media};
use crate::policy::Budgets;

/// An image resized: the new one, and its sizes before and after; or why it was refused.
pub(super) type Fitted = Result<(Media, ImageSize, ImageSize), LimitReason>;

/// How many smaller encodings are tried before the image is refused.
const ATTEMPTS: usize = 8;

/// What an encoder may hold beside the pixels it writes (its tables, a row, chunk headers).
const ENCODER_SLACK: u64 = 1024 * 1024;

/// `data` (whose header is `header`) scaled down to fit the pixel budgets and re-encoded (JPEG
/// stays JPEG; PNG, GIF and WebP become PNG; an animation keeps its first frame), smaller again
/// while it is over the byte budget; with the sizes before and after. Refused, never decoded,
/// when the work would take more than `max_image_decode_bytes`.
pub(super) fn fit(data: &[u8], header: ImageHeader, budgets: &Budgets) -> Fitted {
    let budget = budgets.max_image_decode_bytes as u64;
    let (width, height) = (header.width, header.height);
    let out = if header.format == ImageFormat::Jpeg { ImageFormat::Jpeg } else { ImageFormat::Png };
    let target = scale_within(width, height, budgets.max_image_width, budgets.max_image_height);
    // At least one byte a pixel, whatever the colour type: checked before the decoder even
    // reads the header its own way.
    let least = plan(width, height, target, ColorType::L8, out);
    if least > budget {
        return Err(over_memory(least, budget));
    }
    let mut reader = ImageReader::with_format(Cursor::new(data), codec(header.format));
    reader.limits(limits(width, height, budget));
    let decoder = reader.into_decoder().map_err(|error| refusal(&error, least, budget))?;
    if decoder.dimensions() != (width, height) {
        return Err(LimitReason::Undecodable);
    }
    let planned = plan(width, height, target, decoder.color_type(), out);
    if planned > budget {
        return Err(over_memory(planned, budget));
    }
    let decoded =
        DynamicImage::from_decoder(decoder).map_err(|error| refusal(&error, planned, budget))?;
    let from = ImageSize { format: header.format, width, height, bytes: data.len() };
    let (mut target_w, mut target_h) = target;
    let mut last = data.len();
    for _ in 0..ATTEMPTS {
        let encoded = encode(&decoded, (target_w, target_h), out)?;
        if encoded.len() <= budgets.max_image_bytes {
            let to =
                ImageSize { format: out, width: target_w, height: target_h, bytes: encoded.len() };
            return Ok((Media::new(out.mime_type(), Bytes::from(encoded)), from, to));
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

/// The most memory resizing a `width` x `height` image of `color` to `target` (the largest
/// attempt) takes: the decoded pixels, the resized copy, a conversion to RGB for JPEG, and the
/// encoding (its output and, for PNG, the compressed stream it builds first).
fn plan(width: u32, height: u32, target: (u32, u32), color: ColorType, out: ImageFormat) -> u64 {
    let bytes_per_pixel = u64::from(color.bytes_per_pixel());
    let decoded = u64::from(width) * u64::from(height) * bytes_per_pixel;
    let pixels = u64::from(target.0) * u64::from(target.1);
    let resized = if target == (width, height) { 0 } else { pixels * bytes_per_pixel };
    let (converted, written) = if out == ImageFormat::Jpeg {
        let converted = if needs_rgb(color) { pixels * 3 } else { 0 };
        (converted, room(pixels * bytes_per_pixel.min(3)))
    } else {
        (0, 2 * room(pixels * bytes_per_pixel))
    };
    decoded + resized + converted + written + ENCODER_SLACK
}

/// Room for an encoding of `raw` bytes of pixels: PNG's filter bytes and uncompressible
/// blocks can take it a little past them, JPEG stays well under.
const fn room(raw: u64) -> u64 {
    raw + raw / 32 + 64 * 1024
}

/// The decoder's limits: the header's size, and the whole budget for its allocations (the plan
/// checked before decoding leaves it no more than that).
fn limits(width: u32, height: u32, budget: u64) -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(width);
    limits.max_image_height = Some(height);
    limits.max_alloc = Some(budget);
    limits
}

fn over_memory(size: u64, budget: u64) -> LimitReason {
    LimitReason::OverBudget { limit: Limit::ImageDecodeBytes, size, budget }
}

/// A decoder's error as the reason the image is refused: out of memory is the budget's; a size
/// past the header's means the image contradicts its own header.
fn refusal(error: &image::ImageError, planned: u64, budget: u64) -> LimitReason {
    match error {
        image::ImageError::Limits(limit)
            if matches!(limit.kind(), image::error::LimitErrorKind::InsufficientMemory) =>
        {
            over_memory(planned.max(budget.saturating_add(1)), budget)
        }
        _ => LimitReason::Undecodable,
    }
}

/// JPEG takes 8-bit grey or RGB; any other colour type is converted to RGB first.
const fn needs_rgb(color: ColorType) -> bool {
    !matches!(color, ColorType::L8 | ColorType::Rgb8)
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

/// `decoded` at `width` x `height` (never larger than it is: the sizes only shrink), written as
/// `out`. Downscaling averages each block of pixels into one, with no intermediate image.
fn encode(
    decoded: &DynamicImage,
    (width, height): (u32, u32),
    out: ImageFormat,
) -> Result<Vec<u8>, LimitReason> {
    let resized = if decoded.dimensions() == (width, height) {
        None
    } else {
        Some(decoded.thumbnail_exact(width, height))
    };
    let image = resized.as_ref().unwrap_or(decoded);
    let per_pixel = u64::from(image.color().bytes_per_pixel());
    let per_pixel = if out == ImageFormat::Jpeg { per_pixel.min(3) } else { per_pixel };
    let raw = u64::from(width) * u64::from(height) * per_pixel;
    // Room for the whole encoding at once: it never grows by doubling past the plan.
    let mut buffer = Cursor::new(Vec::with_capacity(usize::try_from(room(raw)).unwrap_or(0)));
    let written = if out == ImageFormat::Jpeg && needs_rgb(image.color()) {
        DynamicImage::ImageRgb8(image.to_rgb8()).write_to(&mut buffer, image::ImageFormat::Jpeg)
    } else {
        image.write_to(&mut buffer, codec(out))
    };
    written.map_err(|_| LimitReason::Undecodable)?;
    Ok(buffer.into_inner())
}
