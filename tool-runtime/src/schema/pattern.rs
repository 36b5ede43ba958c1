//! A schema's `pattern`, compiled for matching many short strings.

use regex::Regex;
#[cfg(feature = "pattern-dfa")]
use regex_automata::{
    Input,
    dfa::{Automaton, dense},
};

/// The most memory a pattern's fully built DFA may take; larger ones match with `regex` alone.
#[cfg(feature = "pattern-dfa")]
const DFA_LIMIT: usize = 1 << 20;

/// A compiled `pattern`: the `regex` crate's matcher and, with the `pattern-dfa` feature and
/// where it can be built within `DFA_LIMIT`, a fully built DFA that answers the same question
/// with a single pass and no search cache.
#[derive(Debug)]
pub(super) struct Pattern {
    regex: Regex,
    #[cfg(feature = "pattern-dfa")]
    dfa: Option<dense::DFA<Vec<u32>>>,
}

impl Pattern {
    /// `source` in the `regex` crate's syntax; `None` when it does not compile.
    pub(super) fn new(source: &str) -> Option<Self> {
        let regex = Regex::new(source).ok()?;
        Some(Self {
            regex,
            #[cfg(feature = "pattern-dfa")]
            dfa: full_dfa(source),
        })
    }

    /// Whether `text` holds a match, as [`Regex::is_match`] says.
    pub(super) fn is_match(&self, text: &str) -> bool {
        #[cfg(feature = "pattern-dfa")]
        if let Some(dfa) = &self.dfa
            && let Ok(found) = dfa.try_search_fwd(&Input::new(text).earliest(true))
        {
            return found.is_some();
        }
        self.regex.is_match(text)
    }
}

/// The DFA of `source`, for patterns whose every match is at least one character long. A DFA
/// searches bytes: an empty match could fall inside a character, where `regex` (which only
/// reports matches at character boundaries) finds none. A non-empty match of a pattern in
/// Unicode mode spans whole characters, so there both always agree.
#[cfg(feature = "pattern-dfa")]
fn full_dfa(source: &str) -> Option<dense::DFA<Vec<u32>>> {
    let hir = regex_syntax::parse(source).ok()?;
    if hir.properties().minimum_len().is_none_or(|length| length == 0) {
        return None;
    }
    let config = dense::Config::new()
        .dfa_size_limit(Some(DFA_LIMIT))
        .determinize_size_limit(Some(DFA_LIMIT));
    dense::Builder::new().configure(config).build(source).ok()
}

#[cfg(all(test, feature = "pattern-dfa"))]
mod tests {
    use super::Pattern;

    #[test]
    fn the_dfa_and_the_regex_agree() {
        let cases: &[(&str, &[&str])] = &[
            ("^[A-Z]{2}-[0-9]{3,6}$", &["AB-123", "AB-1234567", "ab-123", "AB-12", "", "ÄB-123"]),
            ("^(?-u:\\b)[a-z]+$", &["abc", "é", "", "a b"]),
            ("[a-z]", &["", "1", "x", "é"]),
            ("^.{2}$", &["é", "éé", "ab", "a", "\n\n"]),
        ];
        for (source, texts) in cases {
            let pattern = Pattern::new(source).unwrap();
            assert!(pattern.dfa.is_some(), "{source} is matched by its DFA");
            let regex = regex::Regex::new(source).unwrap();
            for text in *texts {
                assert_eq!(pattern.is_match(text), regex.is_match(text), "{source} on {text:?}");
            }
        }
        // Patterns that can match the empty string match with `regex` alone.
        for source in ["^$", "(?-u:\\B)", "a*"] {
            assert!(Pattern::new(source).unwrap().dfa.is_none(), "{source}");
        }
        assert!(Pattern::new("(").is_none());
    }
}
