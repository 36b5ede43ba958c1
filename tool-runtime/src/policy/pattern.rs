//! The forms a policy names tools in, checked when the policy is built: a pattern that would
//! allow no tool, or not the tools it seems to name, is refused rather than kept silently.

use std::fmt;

use crate::spec::{NameError, check_tool_name};

/// A policy entry that names no tool the way it reads: refused when the policy is built
/// ([`ToolPolicy::try_allowing`](super::ToolPolicy::try_allowing),
/// [`ToolPolicy::from_json`](super::ToolPolicy::from_json) and any serde format,
/// [`ToolPolicy::check`](super::ToolPolicy::check)).
///
/// ```
/// use tool_runtime::policy::{PatternProblem, PolicyError, ToolPolicy};
///
/// let error = ToolPolicy::try_allowing(["*"]).unwrap_err();
/// assert_eq!(error.entry(), "*");
/// assert_eq!(error.problem(), &PatternProblem::Everything);
/// assert!(error.to_string().starts_with("`allowed_tools` entry `*`"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    field: &'static str,
    entry: String,
    problem: PatternProblem,
}

impl PolicyError {
    /// The setting that holds the entry: `allowed_tools`, or `tools` for a per-tool
    /// exception's key.
    #[must_use]
    pub fn field(&self) -> &'static str {
        self.field
    }

    /// The entry as written.
    #[must_use]
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// What is wrong with it.
    #[must_use]
    pub fn problem(&self) -> &PatternProblem {
        &self.problem
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { field, entry, problem } = self;
        let what = if *field == "tools" { "key" } else { "entry" };
        write!(f, "`{field}` {what} `{}`: {problem}", entry.escape_debug())
    }
}

impl std::error::Error for PolicyError {}

/// Why a policy entry is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternProblem {
    /// `*` alone (or `**`). A policy allows no tool it does not name, so there is no "every
    /// tool": it would have to take in every tool imported later too, from any server.
    Everything,
    /// A `*` anywhere but right after a namespace's `__` (`core*`, `core__get_*`,
    /// `*__get_time`): no other wildcard exists, so the entry would match no tool.
    MisplacedWildcard,
    /// A wildcard over the namespace of imported tools (`mcp__*`, `mcp__github__*`):
    /// imported tools are allowed only by their exact name, so that a tool a server adds later
    /// stays hidden; the entry would allow nothing.
    ImportedWildcard,
    /// A wildcard over a namespace no tool can have (`__*`, a namespace with a character
    /// outside `a-z`, `A-Z`, `0-9`, `_` and `-`, or one too long for any tool name).
    BadNamespace,
    /// Not a valid tool name, so no tool has it (`core`, `core__`, `core__get time`).
    Name(NameError),
    /// A pattern where only an exact tool name goes (a key of `tools`).
    NotExact,
}

impl fmt::Display for PatternProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Everything => f.write_str(
                "there is no pattern for every tool: a policy allows only the tools it names; list each namespace (`core__*`) or exact name",
            ),
            Self::MisplacedWildcard => f.write_str(
                "`*` is accepted only at the end, right after a namespace's `__` (`core__*`); this entry would match no tool",
            ),
            Self::ImportedWildcard => f.write_str(
                "imported tools are allowed only by their exact name (`mcp__github__create_issue`), so that a tool a server adds later stays hidden; this wildcard would allow nothing",
            ),
            Self::BadNamespace => f.write_str(
                "no tool can be in this namespace: a namespace is 1 or more of `a-z`, `A-Z`, `0-9`, `_` and `-`, and a tool name at most 64 characters",
            ),
            Self::Name(error) => write!(f, "no tool has this name: {error}"),
            Self::NotExact => {
                f.write_str("per-tool exceptions take exact tool names, not patterns")
            }
        }
    }
}

/// Checks one `allowed_tools` entry: an exact tool name, or `namespace__*`.
pub(super) fn check_pattern(entry: &str) -> Result<(), PolicyError> {
    let refuse = |problem| PolicyError { field: "allowed_tools", entry: entry.to_owned(), problem };
    if !entry.is_empty() && entry.bytes().all(|byte| byte == b'*') {
        return Err(refuse(PatternProblem::Everything));
    }
    let Some(prefix) = entry.strip_suffix('*') else {
        return check_tool_name(entry).map_err(|error| refuse(PatternProblem::Name(error)));
    };
    if prefix.contains('*') || !prefix.ends_with("__") {
        return Err(refuse(PatternProblem::MisplacedWildcard));
    }
    // A prefix is good when some tool name can start with it: `<prefix>x` is a name.
    match tool_rules::parse_tool_name(&format!("{prefix}x")) {
        Ok(name) if name.is_reserved() => Err(refuse(PatternProblem::ImportedWildcard)),
        Ok(_) => Ok(()),
        Err(_) => Err(refuse(PatternProblem::BadNamespace)),
    }
}

/// Checks one key of `tools`: an exact tool name.
pub(super) fn check_exact(key: &str) -> Result<(), PolicyError> {
    let refuse = |problem| PolicyError { field: "tools", entry: key.to_owned(), problem };
    if key.contains('*') {
        return Err(refuse(PatternProblem::NotExact));
    }
    check_tool_name(key).map_err(|error| refuse(PatternProblem::Name(error)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(entry: &str) -> Option<PatternProblem> {
        check_pattern(entry).err().map(|error| error.problem)
    }

    #[test]
    fn each_form_is_read_or_refused() {
        assert_eq!(problem("core__*"), None);
        assert_eq!(problem("a-b__c__*"), None);
        assert_eq!(problem("core__get_time"), None);
        assert_eq!(problem("mcp__github__create_issue"), None);
        assert_eq!(problem("*"), Some(PatternProblem::Everything));
        assert_eq!(problem("core*"), Some(PatternProblem::MisplacedWildcard));
        assert_eq!(problem("core__get_*"), Some(PatternProblem::MisplacedWildcard));
        assert_eq!(problem("*__x__*"), Some(PatternProblem::MisplacedWildcard));
        assert_eq!(problem("Mcp__*"), Some(PatternProblem::ImportedWildcard));
        assert_eq!(problem("mcp__github__*"), Some(PatternProblem::ImportedWildcard));
        assert_eq!(problem("__*"), Some(PatternProblem::BadNamespace));
        assert_eq!(problem(&format!("{}__*", "a".repeat(62))), Some(PatternProblem::BadNamespace));
        assert!(matches!(problem("core"), Some(PatternProblem::Name(_))));
        assert_eq!(check_exact("core__*").unwrap_err().problem, PatternProblem::NotExact);
        assert!(check_exact("core__x").is_ok());
    }
}
