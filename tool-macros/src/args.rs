//! A lenient parser for `key`, `key = value` and `key(...)` lists, so that one bad value does not
//! hide the errors after it: each value is parsed on its own later.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::Ident;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};

/// One entry of an attribute's argument list.
pub(crate) struct Arg {
    pub(crate) key: Ident,
    pub(crate) value: ArgValue,
}

pub(crate) enum ArgValue {
    /// `key`
    Flag,
    /// `key = tokens` (up to the next top-level comma)
    Eq(TokenStream),
    /// `key(tokens)`
    List(TokenStream, Span),
}

impl Arg {
    /// The span covering the key and its value.
    pub(crate) fn span(&self) -> Span {
        let end = match &self.value {
            ArgValue::Flag => None,
            ArgValue::Eq(tokens) => tokens.clone().into_iter().last().map(|t| t.span()),
            ArgValue::List(_, span) => Some(*span),
        };
        end.and_then(|end| self.key.span().join(end)).unwrap_or_else(|| self.key.span())
    }
}

/// Parses `a, b = 1, c(...)`; errors name the token that breaks the list shape.
pub(crate) fn parse_args(tokens: TokenStream) -> syn::Result<Vec<Arg>> {
    let parser = |input: ParseStream<'_>| {
        let mut args = Vec::new();
        while !input.is_empty() {
            let key = input.call(Ident::parse_any).map_err(|error| {
                syn::Error::new(error.span(), "expected an attribute key such as `name = ...`")
            })?;
            let value = if input.peek(syn::Token![=]) {
                input.parse::<syn::Token![=]>()?;
                let mut value = TokenStream::new();
                while !input.is_empty() && !input.peek(syn::Token![,]) {
                    value.extend([input.parse::<TokenTree>()?]);
                }
                if value.is_empty() {
                    return Err(syn::Error::new(
                        key.span(),
                        format!("`{key}` needs a value after `=`"),
                    ));
                }
                ArgValue::Eq(value)
            } else if input.peek(syn::token::Paren) {
                match input.parse::<TokenTree>()? {
                    TokenTree::Group(group) if group.delimiter() == Delimiter::Parenthesis => {
                        ArgValue::List(group.stream(), group.span())
                    }
                    other => return Err(syn::Error::new(other.span(), "expected `(...)`")),
                }
            } else {
                ArgValue::Flag
            };
            args.push(Arg { key, value });
            if input.is_empty() {
                break;
            }
            input.parse::<syn::Token![,]>()?;
        }
        Ok(args)
    };
    parser.parse2(tokens)
}

/// Levenshtein distance, for "did you mean" hints.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == *cb { previous } else { 1 + previous.min(row[j]).min(current) };
            previous = current;
        }
    }
    row[b.len()]
}

/// The closest of `candidates` to `word`, if close enough to be a likely typo.
pub(crate) fn near_miss<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let normalized = |s: &str| s.to_ascii_lowercase().replace(['_', '-'], "");
    candidates
        .iter()
        .map(|candidate| {
            let distance = if normalized(word) == normalized(candidate) {
                0
            } else {
                edit_distance(word, candidate)
            };
            (distance, *candidate)
        })
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// "`a`, `b` or `c`"
pub(crate) fn list_keys(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|key| format!("`{key}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}
