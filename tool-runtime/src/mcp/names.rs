//! Names for imported tools: `mcp__<server>__<tool>`, shortened deterministically when the MCP
//! name would break the naming rule (64 characters of `a-z`, `A-Z`, `0-9`, `_`, `-`).

use std::fmt;

use sha2::{Digest, Sha256};

/// The longest server name: leaves room in a 64-character name for a recognisable tool name.
const MAX_SERVER: usize = 24;
/// The longest tool name every provider accepts.
const MAX_NAME: usize = tool_rules::MAX_TOOL_NAME;
/// Hex digits of the hash suffix a shortened name ends with.
const HASH_DIGITS: usize = 8;

/// The name an application gives an MCP server it imports from: the `<server>` in
/// `mcp__<server>__<tool>`. 1 to 24 characters of `a-z`, `A-Z`, `0-9`, `_` and `-`, without
/// `__` and not starting or ending with `_`, so a tool name splits back into its parts one way only.
///
/// ```
/// use tool_runtime::mcp::ServerName;
///
/// assert_eq!(ServerName::new("github").unwrap().as_str(), "github");
/// assert!(ServerName::new("git__hub").is_err());
/// assert!(ServerName::new("git.hub").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerName(String);

/// A server name that breaks the [`ServerName`] rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerNameError(String);

impl fmt::Display for ServerNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServerNameError {}

/// Whether every provider accepts `c` in a tool name.
fn name_char(c: char) -> bool {
    u8::try_from(c).is_ok_and(tool_rules::is_name_byte)
}

impl ServerName {
    /// Checks `name` against the rule.
    ///
    /// # Errors
    ///
    /// [`ServerNameError`] saying which part of the rule is broken.
    pub fn new(name: impl Into<String>) -> Result<Self, ServerNameError> {
        let name = name.into();
        let count = name.chars().count();
        if count == 0 || count > MAX_SERVER {
            return Err(ServerNameError(format!(
                "an MCP server name must be 1 to {MAX_SERVER} characters long; this one has {count}"
            )));
        }
        if !name.chars().all(name_char) {
            return Err(ServerNameError(
                "an MCP server name may use only `a-z`, `A-Z`, `0-9`, `_` and `-`".to_owned(),
            ));
        }
        if name.contains("__") || name.starts_with('_') || name.ends_with('_') {
            return Err(ServerNameError(
                "an MCP server name may not contain `__` nor start or end with `_`".to_owned(),
            ));
        }
        Ok(Self(name))
    }

    /// The name.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The name of the tool `tool` of `server` in a catalog: `mcp__<server>__<tool>` when that is a
/// valid tool name;
/// otherwise the tool part is cut to fit, its rejected characters become `_`, and it ends with
/// `_` and 8 hex digits of SHA-256 over the server and the original name, so distinct names
/// keep distinct names and the same name always gets the same one. The original name is what the
/// importer sends to the server.
///
/// ```
/// use tool_runtime::mcp::{ServerName, imported_tool_name};
///
/// let github = ServerName::new("github").unwrap();
/// assert_eq!(imported_tool_name(&github, "create_issue"), "mcp__github__create_issue");
///
/// let dotted = imported_tool_name(&github, "issues.create");
/// assert!(dotted.starts_with("mcp__github__issues_create_"));
/// assert_eq!(dotted, imported_tool_name(&github, "issues.create"));   // deterministic
/// assert_ne!(dotted, imported_tool_name(&github, "issues/create"));  // distinct
///
/// let long = imported_tool_name(&github, &"x".repeat(100));
/// assert_eq!(long.len(), 64);
/// ```
#[must_use]
pub fn imported_tool_name(server: &ServerName, tool: &str) -> String {
    let plain = format!("mcp__{server}__{tool}");
    if !tool.is_empty() && plain.len() <= MAX_NAME && tool.chars().all(name_char) {
        return plain;
    }
    let mut hasher = Sha256::new();
    hasher.update(server.as_str().as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    let digest: String =
        hasher.finalize().iter().take(HASH_DIGITS / 2).map(|byte| format!("{byte:02x}")).collect();
    let room = MAX_NAME - "mcp__".len() - server.as_str().len() - "__".len() - 1 - HASH_DIGITS;
    let stem: String =
        tool.chars().map(|c| if name_char(c) { c } else { '_' }).take(room).collect();
    if stem.is_empty() {
        format!("mcp__{server}__{digest}")
    } else {
        format!("mcp__{server}__{stem}_{digest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::check_tool_name;

    #[test]
    fn every_name_is_valid() {
        let server = ServerName::new("a-server-name-of-24-char").unwrap();
        for tool in ["", "ok", "with space", "ünïcödé", "a/b.c", &"y".repeat(200), "__"] {
            let name = imported_tool_name(&server, tool);
            assert!(check_tool_name(&name).is_ok(), "{name}");
        }
    }

    #[test]
    fn server_names() {
        assert!(ServerName::new("").is_err());
        assert!(ServerName::new("_a").is_err());
        assert!(ServerName::new("a_").is_err());
        assert!(ServerName::new("x".repeat(25)).is_err());
        assert!(ServerName::new("my_server-2").is_ok());
    }
}
