//! What the encoders share about result parts: base64 written once into the string
//! that goes on the wire, and the note that stands for a part a provider cannot carry.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use crate::content::{Part, Resource, ResourceBody};
pub(crate) use crate::conversation::text_of;

use super::Provider;

/// What the model reads in place of part `index` of a result when `provider` cannot carry it:
/// the part's kind, MIME type and size and that it was left out, never its bytes. The rest of
/// the result and the conversation go on as they are: one part no provider block fits never
/// fails a request.
pub(crate) fn left_out(provider: Provider, index: usize, part: &Part) -> String {
    let (mime_type, bytes) = match part {
        Part::Image(media) | Part::Audio(media) => {
            (Some(media.mime_type.as_str()), media.data.len())
        }
        Part::Resource(resource) => (
            resource.mime_type.as_deref(),
            match &resource.body {
                ResourceBody::Bytes(bytes) => bytes.len(),
                ResourceBody::Text(text) => text.len(),
            },
        ),
        Part::ResourceLink(link) => (link.mime_type.as_deref(), 0),
        Part::Text(text) => (None, text.len()),
        Part::Json(_) => (None, 0),
    };
    let mut note = format!("[part {index} of this result left out: {}", part.kind());
    // A MIME type is a short token; one that is not (it may come from an MCP peer) is not
    // repeated to the model.
    match mime_type {
        Some(mime) if mime.len() <= 100 && mime.bytes().all(|byte| byte.is_ascii_graphic()) => {
            note.push_str(", ");
            note.push_str(mime);
        }
        Some(_) => note.push_str(", an unreadable MIME type"),
        None => {}
    }
    let _ = write!(note, ", {bytes} bytes; {} cannot carry it]", provider.label());
    note
}

/// The embedded resource a part holds, for matching on its fields.
pub(crate) fn resource(part: &Part) -> Option<&Resource> {
    match part {
        Part::Resource(resource) => Some(resource),
        _ => None,
    }
}

/// Whether the part is bytes (an image, a sound, a byte resource): the parts [`text_of`] has
/// no text for.
pub(crate) fn is_binary(part: &Part) -> bool {
    match part {
        Part::Image(_) | Part::Audio(_) => true,
        Part::Resource(resource) => matches!(resource.body, ResourceBody::Bytes(_)),
        Part::Text(_) | Part::Json(_) | Part::ResourceLink(_) => false,
    }
}

/// `bytes` as standard base64 (with padding), in a string allocated once at its final size.
pub(crate) fn base64(bytes: &[u8]) -> String {
    encode_after(String::new(), bytes)
}

/// `data:<mime>;base64,<bytes>`, allocated once at its final size.
pub(crate) fn data_url(mime_type: &str, bytes: &[u8]) -> String {
    let mut prefix = String::new();
    prefix.push_str("data:");
    prefix.push_str(mime_type);
    prefix.push_str(";base64,");
    encode_after(prefix, bytes)
}

/// `prefix` followed by `bytes` in base64: the prefix is copied into a string with room for
/// the whole, so the (large) encoded part is written once and never moved.
fn encode_after(prefix: String, bytes: &[u8]) -> String {
    let encoded = base64::encoded_len(bytes.len(), true).unwrap_or(usize::MAX);
    let mut out = String::with_capacity(prefix.len().saturating_add(encoded));
    out.push_str(&prefix);
    STANDARD.encode_string(bytes, &mut out);
    out
}

/// A JSON object of `entries`, each value moved in. (`json!` serialises every value it is
/// given, which would copy a megabyte of base64 each time a block is wrapped.)
pub(crate) fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    let mut map = Map::with_capacity(N);
    for (key, value) in entries {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

/// A file name for a resource: the last segment of its URI, or `file` when it has none.
pub(crate) fn file_name(uri: &str) -> &str {
    let path = uri.split(['?', '#']).next().unwrap_or(uri);
    match path.rsplit('/').next() {
        Some(name) if !name.is_empty() => name,
        _ => "file",
    }
}

/// The MIME type to declare for a byte resource: its own (when it is a well-formed
/// `type/subtype`, so it cannot break out of a `data:` URL), `application/octet-stream` when it
/// has none, `None` when it is malformed.
pub(crate) fn file_mime(mime_type: Option<&str>) -> Option<&str> {
    let Some(mime) = mime_type else { return Some("application/octet-stream") };
    let token = |part: &str| {
        !part.is_empty()
            && part.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&byte))
    };
    match mime.split_once('/') {
        Some((kind, subtype)) if token(kind) && token(subtype) => Some(mime),
        _ => None,
    }
}

/// Image types every provider with image input takes (OpenAI, Anthropic): PNG, JPEG, WebP,
/// GIF.
pub(crate) fn is_common_image(mime_type: &str) -> bool {
    matches!(mime_type, "image/png" | "image/jpeg" | "image/webp" | "image/gif")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_written_once_at_its_final_size() {
        let url = data_url("image/png", b"abc");
        assert_eq!(url, "data:image/png;base64,YWJj");
        assert_eq!(url.capacity(), url.len());
        let plain = base64(&[0xff; 4]);
        assert_eq!(plain, "/////w==");
        assert_eq!(plain.capacity(), plain.len());
    }

    #[test]
    fn only_well_formed_mime_types_go_into_data_urls() {
        assert_eq!(file_mime(Some("application/pdf")), Some("application/pdf"));
        assert_eq!(file_mime(Some("application/vnd.ms-excel")), Some("application/vnd.ms-excel"));
        assert_eq!(file_mime(None), Some("application/octet-stream"));
        assert_eq!(file_mime(Some("application/pdf;base64,AAAA")), None);
        assert_eq!(file_mime(Some("text/plain,x")), None);
        assert_eq!(file_mime(Some("pdf")), None);
    }

    #[test]
    fn file_names_come_from_the_uri() {
        assert_eq!(file_name("file:///reports/q3.pdf"), "q3.pdf");
        assert_eq!(file_name("https://example.com/a/b.csv?x=1#top"), "b.csv");
        assert_eq!(file_name("https://example.com/"), "file");
        assert_eq!(file_name("report"), "report");
    }
}
