//! The arguments of `#[tool(...)]` and the rules about them.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::punctuated::Punctuated;
use syn::{Ident, LitBool, LitStr, Path, Token, Type};
use tool_rules::{MAX_TOOL_NAME, RESERVED_NAMESPACE, ToolNameError};

use crate::args::{Arg, ArgValue, list_keys, near_miss, parse_args};
use crate::ctxt::Ctxt;
use crate::example::{Json, parse_examples};

const NAME: &str = "name";
const EFFECT: &str = "effect";
const REDACT: &str = "redact";
const REDACT_DETAILS: &str = "redact_details";
const DESCRIPTION: &str = "description";
const REQUIRES_CONNECTION: &str = "requires_connection";
const CAPABILITIES: &str = "capabilities";
const CRATE: &str = "crate";
const EXAMPLES: &str = "examples";
const CLIENT: &str = "client";
const TOLERATE_CASE: &str = "tolerate_case";
const CALLERS: &str = "callers";
const ASYNCHRONOUS: &str = "asynchronous";

pub(crate) const KEYS: &[&str] = &[
    NAME,
    EFFECT,
    REDACT,
    REDACT_DETAILS,
    DESCRIPTION,
    REQUIRES_CONNECTION,
    CAPABILITIES,
    EXAMPLES,
    CLIENT,
    TOLERATE_CASE,
    CALLERS,
    ASYNCHRONOUS,
    CRATE,
];

/// The value of `redact = ...` or `redact_details = ...`: the whole value, or the fields these
/// paths name (none for `[]`).
pub(crate) enum Redact {
    /// `all`, with the span of the word.
    All(Span),
    /// `["field", "nested.field"]`.
    Paths(Vec<LitStr>),
}

impl Redact {
    /// The listed paths; none for `all`.
    pub(crate) fn paths(&self) -> &[LitStr] {
        match self {
            Self::All(_) => &[],
            Self::Paths(paths) => paths,
        }
    }

    /// Reads `key = all` or `key = ["a", "b.c"]`.
    fn parse(cx: &Ctxt, arg: &Arg) -> Option<Self> {
        let key = arg.key.to_string();
        if let ArgValue::Eq(tokens) = &arg.value
            && let Ok(word) = syn::parse2::<Ident>(tokens.clone())
        {
            if word == "all" {
                return Some(Self::All(word.span()));
            }
            let hint = near_miss(&word.to_string(), &["all"])
                .map(|m| format!(" (did you mean `{m}`?)"))
                .unwrap_or_default();
            cx.error_spanned_by(
                &word,
                format_args!(
                    "unknown `{key}` value `{word}`{hint}; expected `{key} = all` or a list of field paths such as `{key} = [\"field\"]`"
                ),
            );
            return None;
        }
        let example = format!("{key} = [\"field\", \"nested.field\"]` or `{key} = all");
        parse_value(cx, arg, bracketed::<LitStr>, &example).map(Self::Paths)
    }
}

/// What running a tool may change: `tool_runtime::spec::ToolEffect`, read from `effect = ...`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolEffect {
    ReadOnly,
    StateChange,
    ExternalSideEffect,
}

impl ToolEffect {
    /// Every effect with the word that selects it.
    const ALL: [(&'static str, Self); 3] = [
        ("read_only", Self::ReadOnly),
        ("state_change", Self::StateChange),
        ("external_side_effect", Self::ExternalSideEffect),
    ];

    /// Reads the value of `effect = ...`: a bare word naming one of the effects.
    fn parse(cx: &Ctxt, arg: &Arg) -> Option<Self> {
        bare_word(cx, arg, "effect", "effect", &Self::ALL)
    }

    /// The `ToolEffect` variant's name.
    pub(crate) fn variant(self) -> TokenStream {
        match self {
            Self::ReadOnly => quote!(ReadOnly),
            Self::StateChange => quote!(StateChange),
            Self::ExternalSideEffect => quote!(ExternalSideEffect),
        }
    }
}

/// Who may call the tool: `tool_runtime::spec::Callers`, read from `callers = ...`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Callers {
    Direct,
    Programmatic,
    Both,
}

impl Callers {
    /// Every value with the word that selects it.
    const ALL: [(&'static str, Self); 3] =
        [("direct", Self::Direct), ("programmatic", Self::Programmatic), ("both", Self::Both)];

    /// Reads the value of `callers = ...`: a bare word naming one of the values.
    fn parse(cx: &Ctxt, arg: &Arg) -> Option<Self> {
        bare_word(cx, arg, "callers", "`callers` value", &Self::ALL)
    }

    /// The `Callers` variant's name.
    pub(crate) fn variant(self) -> TokenStream {
        match self {
            Self::Direct => quote!(Direct),
            Self::Programmatic => quote!(Programmatic),
            Self::Both => quote!(Both),
        }
    }
}

/// Reads `key = word` where `word` is a bare identifier among `known`; reports a string
/// literal, anything else, or an unknown word (with the nearest known one), calling the value
/// `noun` (`effect`).
fn bare_word<T: Copy>(
    cx: &Ctxt,
    arg: &Arg,
    key: &str,
    noun: &str,
    known: &[(&'static str, T)],
) -> Option<T> {
    let example = format!("expected `{key} = {}`", known[0].0);
    let ArgValue::Eq(tokens) = &arg.value else {
        cx.error_at(arg.span(), example);
        return None;
    };
    if let Ok(lit) = syn::parse2::<LitStr>(tokens.clone()) {
        cx.error_spanned_by(
            &lit,
            format_args!("write the {noun} as a bare word: `{key} = {}`", lit.value()),
        );
        return None;
    }
    let Ok(word) = syn::parse2::<Ident>(tokens.clone()) else {
        cx.error_at(arg.span(), example);
        return None;
    };
    let name = word.to_string();
    let found = known.iter().find(|(known, _)| *known == name).map(|(_, value)| *value);
    if found.is_none() {
        let names: Vec<&str> = known.iter().map(|(name, _)| *name).collect();
        let hint =
            near_miss(&name, &names).map(|m| format!(" (did you mean `{m}`?)")).unwrap_or_default();
        cx.error_spanned_by(
            &word,
            format_args!("unknown {noun} `{name}`{hint}; expected {}", list_keys(&names)),
        );
    }
    found
}

#[derive(Default)]
pub(crate) struct ToolArgs {
    pub(crate) name: Option<LitStr>,
    pub(crate) effect: Option<ToolEffect>,
    pub(crate) redact: Option<Redact>,
    /// The key (for errors placed on it) and its value.
    pub(crate) redact_details: Option<(Ident, Redact)>,
    pub(crate) description: Option<LitStr>,
    pub(crate) requires_connection: bool,
    pub(crate) capabilities: Vec<Type>,
    /// `examples = [{...}, ...]`: objects of arguments.
    pub(crate) examples: Vec<Json>,
    /// `client = Output`: the application's client runs the tool, whose results are `Output`.
    pub(crate) client: Option<Type>,
    /// `tolerate_case`: top-level properties are taken in their other spelling too.
    pub(crate) tolerate_case: bool,
    /// `callers = programmatic`: who may call the tool (the model directly when absent).
    pub(crate) callers: Option<Callers>,
    /// `asynchronous`: the model goes on working while a call runs.
    pub(crate) asynchronous: bool,
    pub(crate) krate: Option<Path>,
}

/// The keys a valid `#[tool(...)]` always has.
pub(crate) struct Required<'a> {
    pub(crate) name: &'a LitStr,
    pub(crate) effect: ToolEffect,
    pub(crate) redact: &'a Redact,
}

impl ToolArgs {
    /// The required keys; `None` only when one is missing, which [`parse`] has reported.
    pub(crate) fn required(&self) -> Option<Required<'_>> {
        Some(Required {
            name: self.name.as_ref()?,
            effect: self.effect?,
            redact: self.redact.as_ref()?,
        })
    }
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

/// A flag: the bare key (`tolerate_case`) or `key = true` / `key = false`; `example` is the
/// second form, for the error.
fn flag(cx: &Ctxt, arg: &Arg, example: &str) -> bool {
    match &arg.value {
        ArgValue::Flag => true,
        _ => parse_value(cx, arg, syn::parse2::<LitBool>, example).is_some_and(|lit| lit.value),
    }
}

/// Whether `arg` gives its key for the first time (`slot` still empty); reports the second
/// occurrence of a key.
fn first<T>(cx: &Ctxt, slot: &Option<T>, arg: &Arg) -> bool {
    if slot.is_some() {
        cx.error_spanned_by(
            &arg.key,
            format_args!("duplicate tool attribute `{}`; give it once", arg.key),
        );
    }
    slot.is_none()
}

/// Parses `#[tool(...)]`, recording every mistake. Missing required keys are reported on the
/// attribute itself (`Span::call_site()` of an attribute macro), where the key is to be added.
pub(crate) fn parse(cx: &Ctxt, tokens: TokenStream) -> ToolArgs {
    let args = match parse_args(tokens) {
        Ok(args) => args,
        Err(error) => {
            cx.syn_error(error);
            return ToolArgs::default();
        }
    };
    // Each key is read into its slot once; a second occurrence is reported and ignored.
    let mut name = None;
    let mut effect = None;
    let mut redact = None;
    let mut redact_details = None;
    let mut description = None;
    let mut requires_connection = None;
    let mut capabilities = None;
    let mut examples = None;
    let mut client = None;
    let mut tolerate_case = None;
    let mut callers = None;
    let mut asynchronous = None;
    let mut krate = None;
    // Keys suggested for a misspelt one: not reported missing as well.
    let mut hinted: Vec<&str> = Vec::new();
    for arg in &args {
        let key = arg.key.to_string();
        match key.as_str() {
            NAME if first(cx, &name, arg) => {
                name =
                    Some(parse_value(cx, arg, syn::parse2::<LitStr>, "name = \"namespace__tool\""));
            }
            EFFECT if first(cx, &effect, arg) => effect = Some(ToolEffect::parse(cx, arg)),
            REDACT if first(cx, &redact, arg) => redact = Some(Redact::parse(cx, arg)),
            REDACT_DETAILS if first(cx, &redact_details, arg) => {
                redact_details = Some(Redact::parse(cx, arg).map(|value| (arg.key.clone(), value)));
            }
            DESCRIPTION if first(cx, &description, arg) => {
                description = Some(parse_value(
                    cx,
                    arg,
                    syn::parse2::<LitStr>,
                    "description = \"What the tool does\"",
                ));
            }
            REQUIRES_CONNECTION if first(cx, &requires_connection, arg) => {
                requires_connection = Some(flag(cx, arg, "requires_connection = true"));
            }
            CAPABILITIES if first(cx, &capabilities, arg) => {
                capabilities = Some(
                    parse_value(cx, arg, bracketed::<Type>, "capabilities = [Clock, MyHttpClient]")
                        .unwrap_or_default(),
                );
            }
            EXAMPLES if first(cx, &examples, arg) => {
                examples = Some(match &arg.value {
                    ArgValue::Eq(tokens) => {
                        parse_examples(tokens.clone()).unwrap_or_else(|error| {
                            cx.syn_error(error);
                            Vec::new()
                        })
                    }
                    _ => {
                        cx.error_at(arg.span(), "expected `examples = [{\"query\": \"rust\"}]`");
                        Vec::new()
                    }
                });
            }
            CLIENT if first(cx, &client, arg) => {
                client = Some(parse_value(cx, arg, syn::parse2::<Type>, "client = PickedDate"));
            }
            TOLERATE_CASE if first(cx, &tolerate_case, arg) => {
                tolerate_case = Some(flag(cx, arg, "tolerate_case = true"));
            }
            CALLERS if first(cx, &callers, arg) => callers = Some(Callers::parse(cx, arg)),
            ASYNCHRONOUS if first(cx, &asynchronous, arg) => {
                asynchronous = Some(flag(cx, arg, "asynchronous = true"));
            }
            CRATE if first(cx, &krate, arg) => {
                krate = Some(parse_value(
                    cx,
                    arg,
                    syn::parse2::<Path>,
                    "crate = ::path::to::tool_runtime",
                ));
            }
            // A known key given twice, reported by `first`.
            NAME | EFFECT | REDACT | REDACT_DETAILS | DESCRIPTION | REQUIRES_CONNECTION
            | CAPABILITIES | EXAMPLES | CLIENT | TOLERATE_CASE | CALLERS | ASYNCHRONOUS | CRATE => {
            }
            unknown => {
                let near = near_miss(unknown, KEYS);
                hinted.extend(near);
                let hint = near.map(|m| format!(" (did you mean `{m}`?)")).unwrap_or_default();
                cx.error_spanned_by(
                    &arg.key,
                    format_args!(
                        "unknown tool attribute `{unknown}`{hint}; expected one of {}",
                        list_keys(KEYS)
                    ),
                );
            }
        }
    }
    let required = [
        (NAME, name.is_some(), "add `name = \"namespace__tool\"`"),
        (
            EFFECT,
            effect.is_some(),
            "add `effect = read_only`, `effect = state_change` or `effect = external_side_effect`",
        ),
        (
            REDACT,
            redact.is_some(),
            "add `redact = [\"field\", \"nested.field\"]` listing the output fields that may leave the runner, `redact = all` to let the whole output through, or `redact = []` to let none through",
        ),
    ];
    for (key, given, fix) in required {
        if !given && !hinted.contains(&key) {
            cx.error_at(Span::call_site(), format_args!("missing tool attribute `{key}`; {fix}"));
        }
    }
    let out = ToolArgs {
        name: name.flatten(),
        effect: effect.flatten(),
        redact: redact.flatten(),
        redact_details: redact_details.flatten(),
        description: description.flatten(),
        requires_connection: requires_connection.unwrap_or(false),
        capabilities: capabilities.unwrap_or_default(),
        examples: examples.unwrap_or_default(),
        client: client.flatten(),
        tolerate_case: tolerate_case.unwrap_or(false),
        callers: callers.flatten(),
        asynchronous: asynchronous.unwrap_or(false),
        krate: krate.flatten(),
    };
    // Rule: a tool its client runs never runs in the runner, so it is handed no capabilities.
    if out.client.is_some()
        && let Some(arg) = args.iter().find(|arg| arg.key == CAPABILITIES)
    {
        cx.error_spanned_by(
            &arg.key,
            "a `client` tool runs on the application's client, never in the runner, so it is handed no capabilities; remove `capabilities`",
        );
    }
    if let Some(name) = &out.name {
        check_name(cx, name);
    }
    if let Some(redact) = &out.redact {
        check_redact_shape(cx, REDACT, redact.paths());
    }
    if let Some((_, redact)) = &out.redact_details {
        check_redact_shape(cx, REDACT_DETAILS, redact.paths());
    }
    out
}

/// Rule: a name follows the tool-name rule every tool name follows (`tool_rules::parse_tool_name`:
/// 1 to 64 of `[a-zA-Z0-9_-]`, namespaced as `<namespace>__<tool>`), and is not in the
/// namespace reserved for imported tools.
fn check_name(cx: &Ctxt, lit: &LitStr) {
    let name = lit.value();
    match tool_rules::parse_tool_name(&name) {
        Ok(parsed) if parsed.is_reserved() => cx.error_spanned_by(
            lit,
            format_args!(
                "the `{RESERVED_NAMESPACE}` namespace is reserved for tools imported at run time; choose another namespace for `{}`",
                parsed.tool
            ),
        ),
        Ok(_) => {}
        Err(ToolNameError::Empty) => {
            cx.error_spanned_by(lit, "tool name is empty; name it `<namespace>__<tool>`");
        }
        Err(ToolNameError::TooLong { chars }) => cx.error_spanned_by(
            lit,
            format_args!(
                "tool name is {chars} characters long; providers accept at most {MAX_TOOL_NAME}: shorten it"
            ),
        ),
        Err(ToolNameError::InvalidChar { at }) => {
            let bad = name.get(at..).and_then(|rest| rest.chars().next()).unwrap_or_default();
            cx.error_spanned_by(
                lit,
                format_args!(
                    "tool name `{name}` contains `{}`; names may use only `a-z`, `A-Z`, `0-9`, `_` and `-`",
                    bad.escape_debug()
                ),
            );
        }
        Err(ToolNameError::NoNamespace) => cx.error_spanned_by(
            lit,
            format_args!(
                "tool name `{name}` has no namespace; name it `<namespace>__<tool>`, for example `core__{}`",
                name.trim_matches('_')
            ),
        ),
    }
}

/// Rule: every `redact` (and `redact_details`) entry is a non-empty dotted path, listed once.
/// Whether it names a field of the output (or details) type is checked by a `const` assertion,
/// where the type is known.
fn check_redact_shape(cx: &Ctxt, key: &str, paths: &[LitStr]) {
    let mut seen = Vec::new();
    for lit in paths {
        let path = lit.value();
        if path.is_empty() || path.split('.').any(str::is_empty) {
            cx.error_spanned_by(lit, format_args!("`{key}` entry `{path}` is not a field path; write field names joined by dots, such as `\"hits.title\"`"));
        } else if seen.contains(&path) {
            cx.error_spanned_by(lit, format_args!("`{key}` entry `{path}` is listed twice"));
        } else {
            seen.push(path);
        }
    }
}
