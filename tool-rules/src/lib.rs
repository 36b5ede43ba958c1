//! The naming rules of [`tool-runtime`](https://docs.rs/tool-runtime), written once: `#[tool]`
//! (in `tool-macros`) applies them while it expands, so a broken name is a compile error on the
//! user's literal, and the runtime applies them to tools and schemas that arrive at run time.
//!
//! Depend on `tool-runtime`, not on this crate: it offers what users call
//! (`tool_runtime::spec::check_tool_name`, over [`parse_tool_name`]) and pins this crate's exact
//! version.
//!
//! Every check is a `const fn` over bytes, so it also runs in `const` assertions.
//!
//! ```
//! use tool_rules::{ToolNameError, is_connection_id, parse_tool_name};
//!
//! let name = parse_tool_name("core__get_time").unwrap();
//! assert_eq!((name.namespace, name.tool), ("core", "get_time"));
//! assert_eq!(parse_tool_name("get_time").unwrap_err(), ToolNameError::NoNamespace);
//! assert!(is_connection_id("connection-id"));
//! ```

#![no_std]

use core::fmt;

/// The longest tool name every provider accepts, in characters.
pub const MAX_TOOL_NAME: usize = 64;

/// The namespace of tools imported at run time (`mcp__<server>__<tool>`): a tool written in
/// Rust may not use it.
///
/// ```
/// assert_eq!(tool_rules::RESERVED_NAMESPACE, "mcp");
/// ```
pub const RESERVED_NAMESPACE: &str = "mcp";

/// A tool name split at its first `__`.
///
/// ```
/// let name = tool_rules::parse_tool_name("mcp__github__create_issue").unwrap();
/// assert_eq!(name.namespace, "mcp");
/// assert_eq!(name.tool, "github__create_issue");
/// assert!(name.is_reserved());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolName<'a> {
    /// What comes before the first `__`.
    pub namespace: &'a str,
    /// What comes after it.
    pub tool: &'a str,
}

impl ToolName<'_> {
    /// Whether the name is in [`RESERVED_NAMESPACE`] (ASCII case ignored).
    ///
    /// ```
    /// assert!(tool_rules::parse_tool_name("MCP__clock__now").unwrap().is_reserved());
    /// assert!(!tool_rules::parse_tool_name("core__now").unwrap().is_reserved());
    /// ```
    #[must_use]
    pub const fn is_reserved(&self) -> bool {
        self.namespace.eq_ignore_ascii_case(RESERVED_NAMESPACE)
    }
}

/// Which part of the tool-name rule a name breaks.
///
/// ```
/// use tool_rules::{ToolNameError, parse_tool_name};
///
/// assert_eq!(parse_tool_name("").unwrap_err(), ToolNameError::Empty);
/// assert_eq!(parse_tool_name("core__a.b").unwrap_err(), ToolNameError::InvalidChar { at: 7 });
/// assert_eq!(parse_tool_name("core__").unwrap_err(), ToolNameError::NoNamespace);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolNameError {
    /// The name is empty.
    Empty,
    /// The name is longer than [`MAX_TOOL_NAME`] characters.
    TooLong {
        /// How many characters it has.
        chars: usize,
    },
    /// The name has a character outside `a-z`, `A-Z`, `0-9`, `_` and `-`.
    InvalidChar {
        /// The byte offset of the first such character.
        at: usize,
    },
    /// The name is not `<namespace>__<tool>` with both parts non-empty.
    NoNamespace,
}

impl fmt::Display for ToolNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => {
                write!(
                    f,
                    "a tool name must be 1 to {MAX_TOOL_NAME} characters long; this one has 0"
                )
            }
            Self::TooLong { chars } => write!(
                f,
                "a tool name must be 1 to {MAX_TOOL_NAME} characters long; this one has {chars}"
            ),
            Self::InvalidChar { .. } => {
                f.write_str("a tool name may use only `a-z`, `A-Z`, `0-9`, `_` and `-`")
            }
            Self::NoNamespace => f.write_str("a tool name is namespaced: `<namespace>__<tool>`"),
        }
    }
}

impl core::error::Error for ToolNameError {}

/// Whether every provider accepts `byte` in a tool name: `a-z`, `A-Z`, `0-9`, `_` and `-`.
///
/// ```
/// assert!(tool_rules::is_name_byte(b'-'));
/// assert!(!tool_rules::is_name_byte(b'.'));
/// ```
#[must_use]
pub const fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

/// Checks a tool name against the rule every tool name follows: 1 to [`MAX_TOOL_NAME`]
/// characters of `a-z`, `A-Z`, `0-9`, `_` and `-`, namespaced as `<namespace>__<tool>`. The
/// parts of the rule are checked in that order; the first one broken is reported.
///
/// Whether the namespace is [reserved](ToolName::is_reserved) is left to the caller: imported
/// tools live there, tools written in Rust may not.
///
/// ```
/// use tool_rules::{ToolNameError, parse_tool_name};
///
/// assert!(parse_tool_name("core__get_current_time").is_ok());
/// assert_eq!(
///     parse_tool_name(&"a".repeat(65)).unwrap_err(),
///     ToolNameError::TooLong { chars: 65 },
/// );
/// assert_eq!(parse_tool_name("__get_time").unwrap_err(), ToolNameError::NoNamespace);
/// ```
///
/// # Errors
///
/// [`ToolNameError`] naming the first part of the rule the name breaks.
pub const fn parse_tool_name(name: &str) -> Result<ToolName<'_>, ToolNameError> {
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return Err(ToolNameError::Empty);
    }
    let chars = char_count(bytes);
    if chars > MAX_TOOL_NAME {
        return Err(ToolNameError::TooLong { chars });
    }
    let mut i = 0;
    while i < bytes.len() {
        if !is_name_byte(bytes[i]) {
            return Err(ToolNameError::InvalidChar { at: i });
        }
        i += 1;
    }
    // Every byte is ASCII from here on, so any index is a character boundary.
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'_' && bytes[i + 1] == b'_' {
            let (namespace, rest) = name.split_at(i);
            let (_, tool) = rest.split_at(2);
            if namespace.is_empty() || tool.is_empty() {
                return Err(ToolNameError::NoNamespace);
            }
            return Ok(ToolName { namespace, tool });
        }
        i += 1;
    }
    Err(ToolNameError::NoNamespace)
}

/// Characters in UTF-8 `bytes`: every byte that does not continue a character.
const fn char_count(bytes: &[u8]) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] & 0xC0 != 0x80 {
            count += 1;
        }
        i += 1;
    }
    count
}

/// Whether a property name means "connection id" however it is spelt: ASCII case, `_`, `-`,
/// `.` and spaces are ignored (`connectionId`, `connection_id`, `ConnectionID`,
/// `connection-id`).
///
/// Connections travel in the invocation context, never in arguments or results, so no schema
/// may have such a property.
///
/// ```
/// use tool_rules::is_connection_id;
///
/// assert!(is_connection_id("connectionId"));
/// assert!(is_connection_id("CONNECTION-ID"));
/// assert!(is_connection_id("connection id"));
/// assert!(!is_connection_id("connection"));
/// assert!(!is_connection_id("connection_ids"));
/// ```
#[must_use]
pub const fn is_connection_id(name: &str) -> bool {
    const TARGET: &[u8] = b"connectionid";
    let bytes = name.as_bytes();
    let mut matched = 0;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i].to_ascii_lowercase();
        i += 1;
        if matches!(byte, b'_' | b'-' | b'.' | b' ') {
            continue;
        }
        if matched == TARGET.len() || byte != TARGET[matched] {
            return false;
        }
        matched += 1;
    }
    matched == TARGET.len()
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn names_split_at_the_first_double_underscore() {
        let name = parse_tool_name("a___b").unwrap();
        assert_eq!((name.namespace, name.tool), ("a", "_b"));
        let name = parse_tool_name("mcp__github__create_issue").unwrap();
        assert_eq!((name.namespace, name.tool), ("mcp", "github__create_issue"));
    }

    #[test]
    fn length_counts_characters_before_the_character_set() {
        assert!(parse_tool_name(&"a__b".repeat(16)).is_ok());
        assert_eq!(
            parse_tool_name("é".repeat(65).as_str()),
            Err(ToolNameError::TooLong { chars: 65 })
        );
        assert_eq!(parse_tool_name("core__é"), Err(ToolNameError::InvalidChar { at: 6 }));
    }

    #[test]
    fn a_name_needs_both_parts() {
        for name in ["core", "core_x", "__x", "core__", "_"] {
            assert_eq!(parse_tool_name(name), Err(ToolNameError::NoNamespace), "{name}");
        }
    }

    #[test]
    fn the_reserved_namespace_ignores_ascii_case() {
        assert!(parse_tool_name("Mcp__x__y").unwrap().is_reserved());
        assert!(!parse_tool_name("mcpx__y").unwrap().is_reserved());
    }

    #[test]
    fn connection_ids_are_recognised_however_spelt() {
        for name in
            ["connectionId", "connection_id", "ConnectionID", "connection-id", "c.onnectionid"]
        {
            assert!(is_connection_id(name), "{name}");
        }
        for name in ["", "connection", "connectionIdx", "id", "connexionId"] {
            assert!(!is_connection_id(name), "{name}");
        }
    }
}
