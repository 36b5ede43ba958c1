//! The text of a result's parts, as every provider that takes text alone reads it.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::content::{Part, ResourceBody};

/// The part as text, when it is text: a text part, the structured value (a string as it is,
/// anything else as JSON text), a text resource's contents, a resource link as
/// `{"type": "resource_link", "uri", "name", "mimeType"?, "description"?}`. `None` for bytes
/// (images, audio, byte resources), which each provider carries its own way.
pub(crate) fn text_of(part: &Part) -> Option<Cow<'_, str>> {
    match part {
        Part::Text(text) | Part::Json(Value::String(text)) => Some(Cow::Borrowed(text)),
        Part::Json(value) => Some(Cow::Owned(value.to_string())),
        Part::Resource(resource) => match &resource.body {
            ResourceBody::Text(text) => Some(Cow::Borrowed(text)),
            ResourceBody::Bytes(_) => None,
        },
        Part::ResourceLink(link) => {
            let mut object = Map::new();
            object.insert("type".to_owned(), Value::from("resource_link"));
            object.insert("uri".to_owned(), Value::from(link.uri.as_str()));
            object.insert("name".to_owned(), Value::from(link.name.as_str()));
            if let Some(mime) = &link.mime_type {
                object.insert("mimeType".to_owned(), Value::from(mime.as_str()));
            }
            if let Some(description) = &link.description {
                object.insert("description".to_owned(), Value::from(description.as_str()));
            }
            Some(Cow::Owned(Value::Object(object).to_string()))
        }
        Part::Image(_) | Part::Audio(_) => None,
    }
}

/// The text parts of `parts` joined by newlines (see [`text_of`]).
pub(crate) fn joined_text(parts: &[Part]) -> String {
    let mut out = String::new();
    for text in parts.iter().filter_map(text_of) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&text);
    }
    out
}
