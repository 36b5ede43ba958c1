//! The errors of validation: which constraint a value broke, where, and a message that never
//! repeats the value.

use std::fmt;

/// At most this many errors are kept; the rest are counted.
const MAX_ERRORS: usize = 64;

/// The constraint a value broke, with the value the schema expects.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Constraint {
    /// Wrong JSON type; `expected` is the schema's type (`"integer"`, `"string or null"`...).
    Type {
        /// The schema's type.
        expected: &'static str,
    },
    /// A required property is missing.
    Required,
    /// A property the schema does not list (objects are closed).
    AdditionalProperty,
    /// One property given under two of its names: its name and a `#[serde(alias)]`, or two
    /// aliases. The error points at the later of the two keys.
    GivenTwice {
        /// The property's name in the schema.
        property: &'static str,
    },
    /// Below `minimum`.
    Minimum(f64),
    /// Above `maximum`.
    Maximum(f64),
    /// At or below `exclusiveMinimum`.
    ExclusiveMinimum(f64),
    /// At or above `exclusiveMaximum`.
    ExclusiveMaximum(f64),
    /// Fewer characters than `minLength`.
    MinLength(u64),
    /// More characters than `maxLength`.
    MaxLength(u64),
    /// No match of `pattern`.
    Pattern(&'static str),
    /// Not one of `enum`.
    Enum(&'static [&'static str]),
    /// Fewer items than `minItems`.
    MinItems(u64),
    /// More items than `maxItems`.
    MaxItems(u64),
    /// Two equal items where `uniqueItems` is set.
    UniqueItems,
    /// A constraint of a schema received at run time (checked by the `jsonschema` crate); the
    /// message says which.
    External,
}

/// One schema violation.
#[derive(Clone, PartialEq)]
pub struct ValidationError {
    /// The pointer followed by the message: one allocation per error, not two.
    text: String,
    /// Where the pointer ends and the message starts in `text`.
    split: usize,
    constraint: Constraint,
}

impl ValidationError {
    /// JSON pointer (RFC 6901) to the offending value; `""` is the whole document.
    #[must_use]
    pub fn pointer(&self) -> &str {
        self.text.get(..self.split).unwrap_or_default()
    }

    /// The constraint that was broken.
    #[must_use]
    pub fn constraint(&self) -> Constraint {
        self.constraint
    }

    /// What is wrong, safe to show to a model or log: it states the expectation and at most the
    /// received JSON type or size, never the received value.
    #[must_use]
    pub fn message(&self) -> &str {
        self.text.get(self.split..).unwrap_or_default()
    }
}

impl fmt::Debug for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidationError")
            .field("pointer", &self.pointer())
            .field("constraint", &self.constraint)
            .field("message", &self.message())
            .finish()
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = self.pointer();
        let pointer = if pointer.is_empty() { "/" } else { pointer };
        write!(f, "{pointer}: {}", self.message())
    }
}

impl std::error::Error for ValidationError {}

/// Every violation found in one value (the first 64, with a count of the rest).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValidationErrors {
    errors: Vec<ValidationError>,
    omitted: usize,
}

impl ValidationErrors {
    /// The recorded errors, in document order.
    pub fn iter(&self) -> std::slice::Iter<'_, ValidationError> {
        self.errors.iter()
    }

    /// How many errors were found, including those not recorded.
    #[must_use]
    pub fn len(&self) -> usize {
        self.errors.len() + self.omitted
    }

    /// Whether no error was found.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records an error another validator found (`jsonschema` for run-time schemas, or the
    /// [validator](crate::schema::ArgumentsValidator) of a tool written by hand), as
    /// [`Constraint::External`]: where (a JSON pointer, `""` for the whole value) and what is
    /// wrong. The message reaches the model and the logs, so it must not repeat the received
    /// value; it is cut to 200 characters.
    ///
    /// ```
    /// use tool_runtime::schema::{Constraint, ValidationErrors};
    ///
    /// let mut errors = ValidationErrors::default();
    /// errors.push("/count", "must be even");
    /// assert_eq!(errors.iter().next().unwrap().to_string(), "/count: must be even");
    /// assert_eq!(errors.iter().next().unwrap().constraint(), Constraint::External);
    /// ```
    pub fn push(&mut self, pointer: &str, message: impl Into<String>) {
        self.push_external(pointer, message.into());
    }

    /// Records an error found by another validator (`jsonschema`, for run-time schemas).
    /// Its message is cut to 200 characters: it may quote the (masked) input's property names.
    pub(crate) fn push_external(&mut self, pointer: &str, mut message: String) {
        const MAX: usize = 200;
        if let Some((end, _)) = message.char_indices().nth(MAX) {
            message.truncate(end);
            message.push_str("...");
        }
        self.push_capped(Constraint::External, pointer.len() + message.len(), |text| {
            text.push_str(pointer);
            let split = text.len();
            text.push_str(&message);
            split
        });
    }

    /// Records one error, unless [`MAX_ERRORS`] are recorded already (then it is only
    /// counted). `write` fills the error's text (pointer, then message) and returns where the
    /// message starts.
    #[inline]
    pub(super) fn push_capped(
        &mut self,
        constraint: Constraint,
        capacity: usize,
        write: impl FnOnce(&mut String) -> usize,
    ) {
        if self.errors.len() < MAX_ERRORS {
            let mut text = String::with_capacity(capacity);
            let split = write(&mut text);
            self.errors.push(ValidationError { text, split, constraint });
        } else {
            self.omitted += 1;
        }
    }
}

impl<'a> IntoIterator for &'a ValidationErrors {
    type Item = &'a ValidationError;
    type IntoIter = std::slice::Iter<'a, ValidationError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{error}")?;
        }
        if self.omitted > 0 {
            write!(f, "; and {} more", self.omitted)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}
