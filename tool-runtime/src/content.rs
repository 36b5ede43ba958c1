//! What a call returns: ordered [`Part`]s (text, images, audio, files, resource links and the
//! structured JSON the output schema describes) and `details` for the application that never
//! reach the model.
//!
//! A tool whose `Output` is an ordinary type (a struct, a `String`, a `Vec<T>`...) returns one
//! [`Part::Json`]. A tool that returns more builds a [`Content`]:
//!
//! ```
//! use tool_runtime::content::{Content, Part};
//! use tool_runtime::prelude::*;
//!
//! #[derive(Serialize, ToolSchema)]
//! struct Chart { points: u32 }
//!
//! let png = vec![0x89, b'P', b'N', b'G'];
//! let content = Content::new()
//!     .text("The chart of last week's sales:")
//!     .image("image/png", png)
//!     .json(Chart { points: 7 });
//! let output = tool_runtime::content::IntoToolOutput::into_output(content).unwrap();
//! assert!(matches!(&output.parts()[1], Part::Image(image) if image.mime_type == "image/png"));
//! assert_eq!(output.structured(), Some(&serde_json::json!({"points": 7})));
//! ```
//!
//! Bytes are [`Bytes`]: cloning a part shares its data, and events and records carry a
//! [`PartSummary`] (MIME type, size, SHA-256 digest) instead of copies.

use std::fmt;

pub use bytes::Bytes;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::schema::{OutputCheck, Schema, ToolSchema, validate_as};

pub mod limits;

use limits::Limited;

/// Binary media: an image or a sound, with its MIME type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    /// The MIME type (`image/png`, `audio/wav`).
    pub mime_type: String,
    /// The bytes, shared rather than copied.
    pub data: Bytes,
}

impl Media {
    /// Media of this type holding `data`.
    pub fn new(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        Self { mime_type: mime_type.into(), data: data.into() }
    }
}

/// What an embedded resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text (a source file, a CSV).
    Text(String),
    /// Bytes (a PDF, an archive).
    Bytes(Bytes),
}

/// A file or resource carried inside the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Where it lives (`file:///notes.md`), or a name of the tool's choosing.
    pub uri: String,
    /// Its MIME type, when known.
    pub mime_type: Option<String>,
    /// Its contents.
    pub body: ResourceBody,
}

/// A resource the result points at without carrying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLink {
    /// Where it lives.
    pub uri: String,
    /// A short name for it.
    pub name: String,
    /// Its MIME type, when known.
    pub mime_type: Option<String>,
    /// What it is, for the model.
    pub description: Option<String>,
}

/// One piece of a result, in the order the tool gave them.
///
/// The variants that hold more than a string or a JSON value are boxed, so a part is as small
/// as a [`Value`] and a result of one part needs no list: build them with [`Part::image`],
/// [`Part::audio`] or `Part::from(resource)`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Part {
    /// Text the model reads as text.
    Text(String),
    /// An image.
    Image(Box<Media>),
    /// A sound.
    Audio(Box<Media>),
    /// A file or embedded resource.
    Resource(Box<Resource>),
    /// A link to a resource.
    ResourceLink(Box<ResourceLink>),
    /// The structured output: validated against the output schema and redacted by the
    /// tool's allowlist. At most one per result.
    Json(Value),
}

impl Part {
    /// An image of this MIME type.
    ///
    /// ```
    /// use tool_runtime::content::Part;
    ///
    /// let part = Part::image("image/png", vec![0x89, b'P', b'N', b'G']);
    /// assert!(matches!(&part, Part::Image(media) if media.mime_type == "image/png"));
    /// ```
    pub fn image(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        Self::Image(Box::new(Media::new(mime_type, data)))
    }

    /// A sound of this MIME type.
    pub fn audio(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        Self::Audio(Box::new(Media::new(mime_type, data)))
    }

    /// What the part is, as events and records name it (`"text"`, `"image"`, ...).
    #[must_use]
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::Text(_) => "text",
            Self::Image(_) => "image",
            Self::Audio(_) => "audio",
            Self::Resource(_) => "resource",
            Self::ResourceLink(_) => "resource_link",
            Self::Json(_) => "json",
        }
    }

    /// The part without its bytes: what events and records carry.
    #[must_use]
    pub fn summary(&self) -> PartSummary {
        let (mime_type, bytes, text) = match self {
            Self::Text(text) => (None, None, Some(text.as_str())),
            Self::Image(media) | Self::Audio(media) => {
                (Some(media.mime_type.as_str()), Some(&media.data[..]), None)
            }
            Self::Resource(resource) => {
                let mime = resource.mime_type.as_deref();
                match &resource.body {
                    ResourceBody::Text(text) => (mime, None, Some(text.as_str())),
                    ResourceBody::Bytes(bytes) => (mime, Some(&bytes[..]), None),
                }
            }
            Self::ResourceLink(link) => (link.mime_type.as_deref(), None, None),
            Self::Json(_) => (None, None, None),
        };
        let uri = match self {
            Self::Resource(resource) => Some(resource.uri.clone()),
            Self::ResourceLink(link) => Some(link.uri.clone()),
            _ => None,
        };
        let (size, sha256) = match (bytes, text) {
            (Some(bytes), _) => (Some(bytes.len()), Some(crate::digest::sha256_hex(bytes))),
            (None, Some(text)) => (Some(text.len()), None),
            (None, None) => (None, None),
        };
        PartSummary {
            kind: self.kind(),
            mime_type: mime_type.map(str::to_owned),
            uri,
            size,
            sha256,
        }
    }
}

impl From<Resource> for Part {
    fn from(resource: Resource) -> Self {
        Self::Resource(Box::new(resource))
    }
}

impl From<ResourceLink> for Part {
    fn from(link: ResourceLink) -> Self {
        Self::ResourceLink(Box::new(link))
    }
}

/// A part as events and records carry it: its kind, MIME type, URI and size, and for bytes
/// their SHA-256 digest, never the bytes themselves.
///
/// ```
/// use tool_runtime::content::Part;
///
/// let summary = Part::image("image/png", vec![1, 2, 3]).summary();
/// assert_eq!((summary.kind, summary.size), ("image", Some(3)));
/// assert_eq!(summary.sha256.as_deref().map(str::len), Some(64));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartSummary {
    /// [`Part::kind`].
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The MIME type, when the part has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The URI of a resource or link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Bytes of data or UTF-8 text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<usize>,
    /// Lowercase hex SHA-256 of binary data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// A call's result as the runtime handles it: ordered parts (at most one [`Part::Json`]) and
/// the application's `details`.
///
/// What a tool returned, before redaction, in [`BoundToolRuntime::exec`]; the same type, after
/// redaction, in [`ToolExecResult::outcome`]. An ordinary output is one JSON part:
///
/// ```
/// use serde_json::json;
/// use tool_runtime::content::{Part, ToolOutput};
///
/// let output = ToolOutput::from(json!({"sum": 5}));
/// assert_eq!(output.structured(), Some(&json!({"sum": 5})));
/// assert_eq!(output.parts().len(), 1);
///
/// let output = ToolOutput::new().with(Part::Text("done".into())).with_details(json!({"rows": 3}));
/// assert_eq!(output.structured(), None);
/// assert_eq!(output.details(), Some(&json!({"rows": 3})));
/// ```
///
/// [`BoundToolRuntime::exec`]: crate::runtime::BoundToolRuntime::exec
/// [`ToolExecResult::outcome`]: crate::runtime::ToolExecResult::outcome
#[derive(Debug, Clone, Default)]
pub struct ToolOutput {
    parts: Parts,
    // Boxed: most results have neither details nor limits, and the output is moved through
    // every call's futures (a part and this pointer: 80 bytes, since a `Value` is 72 with
    // serde_json's `preserve_order`, which this crate enables).
    extra: Option<Box<Extra>>,
}

/// A result's parts: most results are one part (their structured value, or a text), which
/// lives inline rather than in a list of its own.
#[derive(Debug, Clone)]
enum Parts {
    One(Part),
    Many(Vec<Part>),
}

impl Default for Parts {
    fn default() -> Self {
        Self::Many(Vec::new())
    }
}

impl Parts {
    fn as_slice(&self) -> &[Part] {
        match self {
            Self::One(part) => std::slice::from_ref(part),
            Self::Many(parts) => parts,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [Part] {
        match self {
            Self::One(part) => std::slice::from_mut(part),
            Self::Many(parts) => parts,
        }
    }

    fn push(&mut self, part: Part) {
        match self {
            Self::Many(parts) if !parts.is_empty() => parts.push(part),
            Self::Many(_) => *self = Self::One(part),
            Self::One(_) => {
                if let Self::One(first) = std::mem::take(self) {
                    *self = Self::Many(vec![first, part]);
                }
            }
        }
    }

    fn into_vec(self) -> Vec<Part> {
        match self {
            Self::One(part) => vec![part],
            Self::Many(parts) => parts,
        }
    }

    fn from_vec(mut parts: Vec<Part>) -> Self {
        if parts.len() == 1
            && let Some(part) = parts.pop()
        {
            return Self::One(part);
        }
        Self::Many(parts)
    }
}

/// What few results have.
#[derive(Debug, Clone, Default)]
struct Extra {
    details: Option<Value>,
    limited: Vec<Limited>,
}

impl PartialEq for ToolOutput {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
            && self.details() == other.details()
            && self.limited() == other.limited()
    }
}

impl ToolOutput {
    /// No parts, no details.
    #[must_use]
    pub const fn new() -> Self {
        Self { parts: Parts::Many(Vec::new()), extra: None }
    }

    fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// `self` with `part` appended. A second [`Part::Json`] replaces the first, in place: a
    /// result has one structured value.
    #[must_use]
    pub fn with(mut self, part: Part) -> Self {
        self.push(part);
        self
    }

    /// Appends `part` (a second [`Part::Json`] replaces the first, in place).
    pub fn push(&mut self, part: Part) {
        if let Part::Json(value) = part {
            if let Some(slot) = self.structured_mut() {
                *slot = value;
                return;
            }
            self.parts.push(Part::Json(value));
        } else {
            self.parts.push(part);
        }
    }

    /// `self` with these details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.extra_mut().details = Some(details);
        self
    }

    /// The parts, in order.
    #[must_use]
    #[inline]
    pub fn parts(&self) -> &[Part] {
        self.parts.as_slice()
    }

    /// The parts, in order, to change in place. Pushing a second [`Part::Json`] here is allowed
    /// but only the first counts as [`structured`](Self::structured).
    pub fn parts_mut(&mut self) -> &mut [Part] {
        self.parts.as_mut_slice()
    }

    /// The parts and the details, taken apart.
    #[must_use]
    pub fn into_parts(self) -> (Vec<Part>, Option<Value>) {
        (self.parts.into_vec(), self.extra.and_then(|extra| extra.details))
    }

    /// The structured value and the details; the other parts are dropped.
    pub(crate) fn into_structured_and_details(self) -> (Option<Value>, Option<Value>) {
        let details = self.extra.and_then(|extra| extra.details);
        let structured = match self.parts {
            Parts::One(Part::Json(value)) => Some(value),
            Parts::One(_) => None,
            Parts::Many(parts) => parts.into_iter().find_map(|part| match part {
                Part::Json(value) => Some(value),
                _ => None,
            }),
        };
        (structured, details)
    }

    /// The structured JSON part, if any.
    #[must_use]
    #[inline]
    pub fn structured(&self) -> Option<&Value> {
        // Most results are their structured value alone.
        if let Parts::One(Part::Json(value)) = &self.parts {
            return Some(value);
        }
        self.parts().iter().find_map(|part| match part {
            Part::Json(value) => Some(value),
            _ => None,
        })
    }

    /// The structured JSON part, to change in place.
    #[inline]
    pub fn structured_mut(&mut self) -> Option<&mut Value> {
        match &mut self.parts {
            Parts::One(Part::Json(value)) => Some(value),
            Parts::One(_) => None,
            Parts::Many(parts) => parts.iter_mut().find_map(|part| match part {
                Part::Json(value) => Some(value),
                _ => None,
            }),
        }
    }

    /// Takes the structured JSON out of an output that is nothing else (no other part, no
    /// details); gives the output back otherwise.
    ///
    /// # Errors
    ///
    /// `self`, unchanged, when it holds more than the JSON part.
    pub fn into_structured(mut self) -> Result<Value, Self> {
        if self.details().is_none()
            && let Parts::One(Part::Json(_)) = &self.parts
            && let Parts::One(Part::Json(value)) = std::mem::take(&mut self.parts)
        {
            return Ok(value);
        }
        Err(self)
    }

    /// The application's details, if any: never sent to the model.
    #[must_use]
    #[inline]
    pub fn details(&self) -> Option<&Value> {
        self.extra.as_ref().and_then(|extra| extra.details.as_ref())
    }

    /// Takes the details out, leaving none.
    #[inline]
    pub fn take_details(&mut self) -> Option<Value> {
        self.extra.as_mut().and_then(|extra| extra.details.take())
    }

    /// Sets (or, with `None`, removes) the details.
    pub fn set_details(&mut self, details: Option<Value>) {
        match (details, &mut self.extra) {
            (None, None) => {}
            (None, Some(extra)) => extra.details = None,
            (Some(details), _) => self.extra_mut().details = Some(details),
        }
    }

    /// Whether the output is one JSON part and nothing else (an ordinary `Output`).
    #[must_use]
    #[inline]
    pub fn is_structured_only(&self) -> bool {
        self.details().is_none() && matches!(self.parts(), [Part::Json(_)])
    }

    /// What the runner cut or resized to keep this result within its budgets (empty for a
    /// result it left as the tool returned it): see [`limits`].
    #[must_use]
    pub fn limited(&self) -> &[Limited] {
        self.extra.as_ref().map_or(&[], |extra| &extra.limited)
    }

    #[cfg(feature = "runner")]
    pub(crate) fn set_limited(&mut self, limited: Vec<Limited>) {
        if !limited.is_empty() || self.extra.is_some() {
            self.extra_mut().limited = limited;
        }
    }

    pub(crate) fn take_limited(&mut self) -> Vec<Limited> {
        self.extra.as_mut().map(|extra| std::mem::take(&mut extra.limited)).unwrap_or_default()
    }

    /// [`summaries`](Self::summaries) as records and events list them: none for a result that
    /// is its structured value alone (the value says it all).
    #[must_use]
    pub fn part_summaries(&self) -> Vec<PartSummary> {
        if self.is_structured_only() { Vec::new() } else { self.summaries() }
    }

    /// The parts as events and records carry them.
    #[must_use]
    pub fn summaries(&self) -> Vec<PartSummary> {
        self.parts().iter().map(Part::summary).collect()
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        Self { parts: Parts::One(Part::Json(value)), extra: None }
    }
}

impl From<Part> for ToolOutput {
    fn from(part: Part) -> Self {
        Self::new().with(part)
    }
}

/// Serialised as `{"parts": [summaries...], "structured": ..., "details": ..., "limited": [...]}`:
/// no bytes.
impl Serialize for ToolOutput {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("parts", &self.summaries())?;
        if let Some(value) = self.structured() {
            map.serialize_entry("structured", value)?;
        }
        if let Some(details) = self.details() {
            map.serialize_entry("details", details)?;
        }
        if !self.limited().is_empty() {
            map.serialize_entry("limited", self.limited())?;
        }
        map.end()
    }
}

/// What a tool's `Output` can be: anything with a schema (one JSON part), or a [`Content`].
///
/// Implemented for every `T: ToolSchema + Serialize` and for [`Content`]; nothing else needs it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output",
    label = "no `ToolSchema` (or not `Serialize`)",
    note = "derive `Serialize` and `ToolSchema` on it, or return `tool_runtime::content::Content` for text, images and files"
)]
pub trait IntoToolOutput: Send + 'static {
    /// The schema of the structured part ([`Part::Json`]); `None` when there is none.
    const OUTPUT_SCHEMA: Option<&'static Schema>;
    /// The schema of the details; `None` when there are none.
    const DETAILS_SCHEMA: Option<&'static Schema>;
    /// The generated validator of the structured part ([`validate_as`] of its type), which
    /// the runner checks it with instead of walking [`Self::OUTPUT_SCHEMA`]; `None` to walk it.
    /// Not part of the API.
    #[doc(hidden)]
    const OUTPUT_CHECK: Option<OutputCheck> = None;

    /// The parts and details, serialised.
    ///
    /// # Errors
    ///
    /// The structured value or the details could not be serialised.
    fn into_output(self) -> Result<ToolOutput, serde_json::Error>;
}

impl<T: ToolSchema + Serialize + Send + 'static> IntoToolOutput for T {
    const OUTPUT_SCHEMA: Option<&'static Schema> = Some(T::SCHEMA);
    const DETAILS_SCHEMA: Option<&'static Schema> = None;
    const OUTPUT_CHECK: Option<OutputCheck> = Some(validate_as::<T>);

    fn into_output(self) -> Result<ToolOutput, serde_json::Error> {
        serde_json::to_value(&self).map(ToolOutput::from)
    }
}

/// A slot of [`Content`]: `()` for none, or a type with a schema.
pub trait Slot: Send + 'static {
    /// The slot's schema; `None` for `()`.
    const SCHEMA: Option<&'static Schema>;
    /// The slot's generated validator ([`validate_as`] of its type). Not part of the API.
    #[doc(hidden)]
    const CHECK: Option<OutputCheck> = None;
    /// The value as JSON; `None` for `()`.
    ///
    /// # Errors
    ///
    /// It could not be serialised.
    fn to_json(&self) -> Result<Option<Value>, serde_json::Error>;
}

impl Slot for () {
    const SCHEMA: Option<&'static Schema> = None;

    fn to_json(&self) -> Result<Option<Value>, serde_json::Error> {
        Ok(None)
    }
}

impl<T: ToolSchema + Serialize + Send + 'static> Slot for T {
    const SCHEMA: Option<&'static Schema> = Some(T::SCHEMA);
    const CHECK: Option<OutputCheck> = Some(validate_as::<T>);

    fn to_json(&self) -> Result<Option<Value>, serde_json::Error> {
        serde_json::to_value(self).map(Some)
    }
}

/// A result of several parts, typed: `T` is the structured part (its schema is the tool's
/// output schema; `()` for none) and `D` the details (`()` for none; their schema and their
/// own allowlist, `redact_details`, are checked at compile time).
///
/// Parts keep the order they were added in; [`json`](Content::json) places the structured
/// value where it is called.
///
/// ```
/// use tool_runtime::content::{Content, IntoToolOutput, Part};
/// use tool_runtime::prelude::*;
///
/// #[derive(Serialize, ToolSchema)]
/// struct Shot { width: u32, height: u32 }
/// #[derive(Serialize, ToolSchema)]
/// struct Where { path: String }
///
/// let content = Content::new()
///     .json(Shot { width: 2, height: 1 })
///     .image("image/png", vec![0u8; 8])
///     .details(Where { path: "/tmp/shot.png".into() });
/// let output = content.into_output().unwrap();
/// assert!(matches!(output.parts()[0], Part::Json(_)));
/// assert_eq!(output.details().unwrap()["path"], "/tmp/shot.png");
/// ```
#[derive(Debug, Clone)]
pub struct Content<T = (), D = ()> {
    parts: Vec<Part>,
    structured: Option<(usize, T)>,
    details: Option<D>,
}

impl Content {
    /// No parts yet.
    #[must_use]
    pub const fn new() -> Self {
        Self { parts: Vec::new(), structured: None, details: None }
    }
}

impl Default for Content {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, D> Content<T, D> {
    /// Appends a part. A [`Part::Json`] here is refused when the result is converted: the
    /// structured value goes through [`json`](Content::json), so its type is the schema's.
    #[must_use]
    pub fn part(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }

    /// Appends text.
    #[must_use]
    pub fn text(self, text: impl Into<String>) -> Self {
        self.part(Part::Text(text.into()))
    }

    /// Appends an image.
    #[must_use]
    pub fn image(self, mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        self.part(Part::image(mime_type, data))
    }

    /// Appends a sound.
    #[must_use]
    pub fn audio(self, mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        self.part(Part::audio(mime_type, data))
    }

    /// Appends an embedded resource.
    #[must_use]
    pub fn resource(self, resource: Resource) -> Self {
        self.part(Part::from(resource))
    }

    /// Appends a link to a resource.
    #[must_use]
    pub fn resource_link(self, link: ResourceLink) -> Self {
        self.part(Part::from(link))
    }
}

impl<D> Content<(), D> {
    /// Places the structured value here, after the parts added so far.
    #[must_use]
    pub fn json<T>(self, value: T) -> Content<T, D> {
        let at = self.parts.len();
        Content { parts: self.parts, structured: Some((at, value)), details: self.details }
    }
}

impl<T> Content<T, ()> {
    /// Sets the details: for the application and its UI, never for the model.
    #[must_use]
    pub fn details<D>(self, details: D) -> Content<T, D> {
        Content { parts: self.parts, structured: self.structured, details: Some(details) }
    }
}

/// A [`Part::Json`] added through [`Content::part`]: the structured value has a type, so it
/// goes through [`Content::json`].
#[derive(Debug)]
struct UntypedJson;

impl fmt::Display for UntypedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON part was added with `Content::part`; use `Content::json`")
    }
}

impl<T: Slot, D: Slot> IntoToolOutput for Content<T, D> {
    const OUTPUT_SCHEMA: Option<&'static Schema> = T::SCHEMA;
    const DETAILS_SCHEMA: Option<&'static Schema> = D::SCHEMA;
    const OUTPUT_CHECK: Option<OutputCheck> = T::CHECK;

    fn into_output(self) -> Result<ToolOutput, serde_json::Error> {
        if self.parts.iter().any(|part| matches!(part, Part::Json(_))) {
            return Err(serde::ser::Error::custom(UntypedJson));
        }
        let mut parts = self.parts;
        if let Some((at, value)) = self.structured
            && let Some(json) = value.to_json()?
        {
            parts.insert(at.min(parts.len()), Part::Json(json));
        }
        let details = match self.details {
            Some(details) => details.to_json()?,
            None => None,
        };
        let mut output = ToolOutput { parts: Parts::from_vec(parts), extra: None };
        output.set_details(details);
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_part_is_as_small_as_a_value_and_one_part_needs_no_list() {
        assert_eq!(size_of::<Part>(), size_of::<Value>());
        assert_eq!(size_of::<ToolOutput>(), size_of::<Value>() + size_of::<usize>());
        let one = ToolOutput::from(json!({"a": 1}));
        assert!(matches!(one.parts, Parts::One(Part::Json(_))));
        assert_eq!(one.clone().into_structured().ok(), Some(json!({"a": 1})));
        let text = ToolOutput::new().with(Part::Text("t".into()));
        assert!(matches!(text.parts, Parts::One(Part::Text(_))));
    }

    #[test]
    fn parts_stay_in_order_as_one_part_becomes_many() {
        let mut output = ToolOutput::new();
        for text in ["a", "b", "c"] {
            output.push(Part::Text(text.into()));
        }
        let texts: Vec<_> = output
            .parts()
            .iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["a", "b", "c"]);
        output.push(Part::Json(json!(1)));
        output.push(Part::Json(json!(2)));
        assert_eq!(output.structured(), Some(&json!(2)));
        assert_eq!(output.parts().len(), 4);
        let (structured, _) = output.into_structured_and_details();
        assert_eq!(structured, Some(json!(2)));
    }

    #[test]
    fn a_second_json_part_replaces_the_first_in_place() {
        let output =
            ToolOutput::from(json!(1)).with(Part::Text("a".into())).with(Part::Json(json!(2)));
        assert_eq!(output.parts(), &[Part::Json(json!(2)), Part::Text("a".into())]);
    }

    #[test]
    fn content_places_json_where_it_was_called() {
        let output = Content::new().text("a").json(7u8).text("b").into_output().unwrap();
        assert_eq!(
            output.parts(),
            &[Part::Text("a".into()), Part::Json(json!(7)), Part::Text("b".into())]
        );
        assert!(!output.is_structured_only());
        assert_eq!(ToolOutput::from(json!(7)).into_structured(), Ok(json!(7)));
    }

    #[test]
    fn an_untyped_json_part_is_refused() {
        let error = Content::new().part(Part::Json(json!({}))).into_output().unwrap_err();
        assert!(error.to_string().contains("Content::json"), "{error}");
    }

    #[test]
    fn summaries_carry_digests_not_bytes() {
        let output =
            Content::new().image("image/png", &b"abc"[..]).text("hi").into_output().unwrap();
        let json = serde_json::to_value(&output).unwrap();
        assert_eq!(
            json,
            json!({"parts": [
                {"type": "image", "mime_type": "image/png", "size": 3,
                 "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
                {"type": "text", "size": 2}
            ]})
        );
    }
}
