//! A schema's `pattern`: its ECMA-262 meaning translated to Rust's `regex`, compiled once per
//! process for matching many short strings.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hash as _, Hasher};
use std::sync::{OnceLock, RwLock};

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

/// The compiled [`Pattern`] of a schema's `pattern`, compiled once per process and kept for its
/// lifetime: patterns are `'static`, so there are finitely many, and a `&'static Pattern` costs
/// no reference count per search. (Cloning a `Regex` would give the clone an empty search
/// cache, which costs more to build on its first search than the search does.)
///
/// Patterns are found by their address and length rather than their text (hashing the text with
/// SipHash cost as much as the search), in a fixed table whose slots are filled once and never
/// change, so a lookup takes no lock. A pattern whose text sits at two addresses is compiled
/// twice, which is harmless; patterns beyond the table's size go to a locked map.
pub(super) fn pattern_regex(pattern: &'static str) -> Option<&'static Pattern> {
    /// A pattern's address and length, and its matcher (`None` if it does not compile).
    type Compiled = ((usize, usize), Option<Pattern>);
    const SLOTS: usize = 256;
    const _: () = assert!(SLOTS.is_power_of_two());
    static TABLE: [OnceLock<Compiled>; SLOTS] = [const { OnceLock::new() }; SLOTS];
    /// Each further pattern's regex, leaked like the table's.
    type Overflow = RwLock<
        HashMap<(usize, usize), Option<&'static Pattern>, BuildHasherDefault<AddressHasher>>,
    >;
    static OVERFLOW: OnceLock<Overflow> = OnceLock::new();

    let key = (pattern.as_ptr().addr(), pattern.len());
    let compile = || Pattern::new(&ecma_pattern(pattern));
    let mut hasher = AddressHasher::default();
    key.hash(&mut hasher);
    // The top bits of the product are the well-mixed ones.
    #[allow(clippy::cast_possible_truncation)]
    let start = (hasher.finish() >> (u64::BITS - SLOTS.ilog2())) as usize;
    for probe in 0..SLOTS {
        // Racing threads agree: one fills an empty slot, the others read what it put there.
        let (slot_key, regex) = TABLE[(start + probe) % SLOTS].get_or_init(|| (key, compile()));
        if *slot_key == key {
            return regex.as_ref();
        }
    }
    let overflow = OVERFLOW.get_or_init(RwLock::default);
    if let Ok(read) = overflow.read()
        && let Some(found) = read.get(&key)
    {
        return *found;
    }
    // Compiled under the write lock, so that racing threads do not each leak a copy.
    let mut write = overflow.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    *write.entry(key).or_insert_with(|| compile().map(|regex| &*Box::leak(Box::new(regex))))
}

/// Hashes the address and length of a `'static` pattern (FxHash's multiply-rotate): keys are
/// few and not chosen by a caller, so no defence against collisions is needed.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// ECMA-262 `\s`: white space and line terminators.
const ECMA_SPACE: &str =
    r"\t-\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}";

/// Gives the escapes whose meaning differs between Rust's `regex` and ECMA-262 (the dialect of
/// JSON Schema's `pattern`, and of every validator a model's output meets) their ECMA meaning:
/// `\d` is `[0-9]` and `\w` is `[A-Za-z0-9_]` (Rust's are Unicode-aware), `\s` is ECMA's
/// white space, and `\b`/`\B` are ASCII word boundaries. Rust classes nest, so the replacements
/// are valid inside `[...]` too.
fn ecma_pattern(pattern: &str) -> Cow<'_, str> {
    if !pattern.contains('\\') {
        return Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("[0-9]"),
            Some('D') => out.push_str("[^0-9]"),
            Some('w') => out.push_str("[A-Za-z0-9_]"),
            Some('W') => out.push_str("[^A-Za-z0-9_]"),
            Some('s') => {
                let _ = write!(out, "[{ECMA_SPACE}]");
            }
            Some('S') => {
                let _ = write!(out, "[^{ECMA_SPACE}]");
            }
            Some('b') => out.push_str(r"(?-u:\b)"),
            Some('B') => out.push_str(r"(?-u:\B)"),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
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

#[cfg(test)]
mod cache_tests {
    use super::pattern_regex;

    #[test]
    fn patterns_beyond_the_table_are_compiled_once_and_kept() {
        // More distinct patterns than the table has slots (other tests' patterns share it).
        let patterns: Vec<&'static str> =
            (0..300).map(|n| &*Box::leak(format!("^p{n}$").into_boxed_str())).collect();
        let invalid: &'static str = Box::leak(String::from("(p").into_boxed_str());
        for _ in 0..2 {
            let compiled: Vec<_> = patterns.iter().map(|pattern| pattern_regex(pattern)).collect();
            for (n, regex) in compiled.iter().enumerate() {
                let regex = regex.expect("compiles");
                assert!(regex.is_match(&format!("p{n}")), "{n}");
                assert!(!regex.is_match(&format!("p{n}0")), "{n}");
                assert!(std::ptr::eq(regex, pattern_regex(patterns[n]).unwrap()), "kept: {n}");
            }
            assert!(pattern_regex(invalid).is_none());
        }
    }
}
