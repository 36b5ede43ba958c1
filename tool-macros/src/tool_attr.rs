//! The arguments of `#[tool(...)]` and the rules about them.

use proc_macro2::{Span, TokenStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitBool, LitStr, Path, Token, Type};

use crate::args::{Arg, ArgValue, list_keys, near_miss, parse_args};
use crate::ctxt::Ctxt;

pub(crate) const KEYS: &[&str] =
    &["name", "effect", "redact", "description", "requires_connection", "capabilities", "crate"];

pub(crate) const EFFECTS: &[&str] = &["read_only", "state_change", "external_side_effect"];

/// The namespace reserved for tools imported at run time.
const RESERVED_NAMESPACE: &str = "mcp";

#[derive(Default)]
pub(crate) struct ToolArgs {
    pub(crate) name: Option<LitStr>,
    pub(crate) effect: Option<Ident>,
    pub(crate) redact: Option<Vec<LitStr>>,
    pub(crate) description: Option<LitStr>,
    pub(crate) requires_connection: bool,
    pub(crate) capabilities: Vec<Type>,
    pub(crate) krate: Option<Path>,
}

fn parse_value<T>(
    cx: &Ctxt,
    arg: &Arg,
    parse: impl FnOnce(TokenStream) -> syn::Result<T>,
    example: &str,
) -> Option<T> {
    let parsed = match &arg.value {
        ArgValue::Eq(tokens) => parse(tokens.clone()).ok(),
        _ => None,
    };
    if parsed.is_none() {
        cx.error_at(arg.span(), format_args!("expected `{example}`"));
    }
    parsed
}

fn bracketed<T: syn::parse::Parse>(tokens: TokenStream) -> syn::Result<Vec<T>> {
    let parser = |input: syn::parse::ParseStream<'_>| {
        let content;
        syn::bracketed!(content in input);
        let items = Punctuated::<T, Token![,]>::parse_terminated(&content)?;
        Ok(items.into_iter().collect())
    };
    syn::parse::Parser::parse2(parser, tokens)
}

/// Parses `#[tool(...)]`, recording every mistake. Missing required keys are reported at
/// `item_span` (the struct's name).
pub(crate) fn parse(cx: &Ctxt, tokens: TokenStream, item_span: Span) -> ToolArgs {
    let mut out = ToolArgs::default();
    let args = match parse_args(tokens) {
        Ok(args) => args,
        Err(error) => {
            cx.syn_error(error);
            return out;
        }
    };
    let mut seen: Vec<String> = Vec::new();
    // Keys suggested for a misspelt one: not reported missing as well.
    let mut hinted: Vec<&str> = Vec::new();
    for arg in &args {
        let key = arg.key.to_string();
        if !KEYS.contains(&key.as_str()) {
            let near = near_miss(&key, KEYS);
            hinted.extend(near);
            let hint = near.map(|m| format!(" (did you mean `{m}`?)")).unwrap_or_default();
            cx.error_spanned_by(
                &arg.key,
                format_args!(
                    "unknown tool attribute `{key}`{hint}; expected one of {}",
                    list_keys(KEYS)
                ),
            );
            continue;
        }
        if seen.contains(&key) {
            cx.error_spanned_by(
                &arg.key,
                format_args!("duplicate tool attribute `{key}`; give it once"),
            );
            continue;
        }
        seen.push(key.clone());
        match key.as_str() {
            "name" => {
                out.name = parse_value(cx, arg, syn::parse2::<LitStr>, "name = \"namespace__tool\"")
            }
            "description" => {
                out.description = parse_value(
                    cx,
                    arg,
                    syn::parse2::<LitStr>,
                    "description = \"What the tool does\"",
                )
            }
            "effect" => {
                if let ArgValue::Eq(tokens) = &arg.value
                    && let Ok(lit) = syn::parse2::<LitStr>(tokens.clone())
                {
                    cx.error_spanned_by(
                        &lit,
                        format_args!("write the effect as a bare word: `effect = {}`", lit.value()),
                    );
                    continue;
                }
                out.effect = parse_value(cx, arg, syn::parse2::<Ident>, "effect = read_only");
            }
            "redact" => {
                out.redact = parse_value(
                    cx,
                    arg,
                    bracketed::<LitStr>,
                    "redact = [\"field\", \"nested.field\"]",
                )
            }
            "capabilities" => {
                out.capabilities =
                    parse_value(cx, arg, bracketed::<Type>, "capabilities = [Clock, MyHttpClient]")
                        .unwrap_or_default()
            }
            "crate" => {
                out.krate =
                    parse_value(cx, arg, syn::parse2::<Path>, "crate = ::path::to::tool_runtime")
            }
            _ => {
                out.requires_connection = match &arg.value {
                    ArgValue::Flag => true,
                    _ => parse_value(cx, arg, syn::parse2::<LitBool>, "requires_connection = true")
                        .is_some_and(|lit| lit.value),
                };
            }
        }
    }
    for (key, fix) in [
        ("name", "add `name = \"namespace__tool\"`"),
        (
            "effect",
            "add `effect = read_only`, `effect = state_change` or `effect = external_side_effect`",
        ),
        (
            "redact",
            "add `redact = [\"field\", \"nested.field\"]` listing the output fields that may leave the runner, or `redact = []` to let none through",
        ),
    ] {
        if !seen.iter().any(|seen| seen == key) && !hinted.contains(&key) {
            cx.error_at(item_span, format_args!("missing tool attribute `{key}`; {fix}"));
        }
    }
    if let Some(name) = &out.name {
        check_name(cx, name);
    }
    if let Some(effect) = &out.effect {
        check_effect(cx, effect);
    }
    if let Some(paths) = &out.redact {
        check_redact_shape(cx, paths);
    }
    out
}

/// Rule: a name is 1 to 64 of `[a-zA-Z0-9_-]` (what every provider accepts), namespaced as
/// `<namespace>__<tool>`, and not in the namespace reserved for imported tools.
fn check_name(cx: &Ctxt, lit: &LitStr) {
    let name = lit.value();
    let count = name.chars().count();
    if name.is_empty() {
        cx.error_spanned_by(lit, "tool name is empty; name it `<namespace>__<tool>`");
        return;
    }
    if count > 64 {
        cx.error_spanned_by(
            lit,
            format_args!(
                "tool name is {count} characters long; providers accept at most 64: shorten it"
            ),
        );
        return;
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        cx.error_spanned_by(lit, format_args!("tool name `{name}` contains `{}`; names may use only `a-z`, `A-Z`, `0-9`, `_` and `-`", bad.escape_default()));
        return;
    }
    match name.split_once("__") {
        Some((namespace, tool)) if !namespace.is_empty() && !tool.is_empty() => {
            if namespace.eq_ignore_ascii_case(RESERVED_NAMESPACE) {
                cx.error_spanned_by(lit, format_args!("the `{RESERVED_NAMESPACE}` namespace is reserved for tools imported at run time; choose another namespace for `{tool}`"));
            }
        }
        _ => cx.error_spanned_by(lit, format_args!("tool name `{name}` has no namespace; name it `<namespace>__<tool>`, for example `core__{}`", name.trim_matches('_'))),
    }
}

/// Rule: the effect is one of the three known effects.
fn check_effect(cx: &Ctxt, effect: &Ident) {
    let name = effect.to_string();
    if !EFFECTS.contains(&name.as_str()) {
        let hint = near_miss(&name, EFFECTS)
            .map(|m| format!(" (did you mean `{m}`?)"))
            .unwrap_or_default();
        cx.error_spanned_by(
            effect,
            format_args!("unknown effect `{name}`{hint}; expected {}", list_keys(EFFECTS)),
        );
    }
}

/// Rule: every redaction entry is a non-empty dotted path, listed once. Whether it names a
/// field of the output type is checked by a `const` assertion, where the type is known.
fn check_redact_shape(cx: &Ctxt, paths: &[LitStr]) {
    let mut seen = Vec::new();
    for lit in paths {
        let path = lit.value();
        if path.is_empty() || path.split('.').any(str::is_empty) {
            cx.error_spanned_by(lit, format_args!("`redact` entry `{path}` is not a field path; write field names joined by dots, such as `\"hits.title\"`"));
        } else if seen.contains(&path) {
            cx.error_spanned_by(lit, format_args!("`redact` entry `{path}` is listed twice"));
        } else {
            seen.push(path);
        }
    }
}
