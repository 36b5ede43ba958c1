//! The `#[serde(...)]` attributes that change the wire shape: honoured when the schema can
//! describe them, rejected with the reason when it cannot. Everything else is left to serde.

use proc_macro2::Span;
use syn::{Attribute, LitStr, Meta};

use crate::args::{Arg, ArgValue, parse_args};
use crate::case::RenameRule;
use crate::ctxt::Ctxt;

#[derive(Default)]
pub(crate) struct SerdeContainer {
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) default: bool,
    pub(crate) transparent: bool,
    pub(crate) deny_unknown_fields: bool,
    /// An enum representation that was rejected (`tag`, `content`, `untagged`): its variants'
    /// data is not reported again.
    pub(crate) rejected_repr: bool,
}

#[derive(Default)]
pub(crate) struct SerdeField {
    /// The `rename` value and the span of its literal.
    pub(crate) rename: Option<(String, Span)>,
    pub(crate) default: bool,
    pub(crate) skip: bool,
    /// The `alias` literals, in the order written: accepted on input as synonyms of the name.
    /// Each keeps its span, for errors about the alias itself.
    pub(crate) aliases: Vec<LitStr>,
    /// Where `skip_serializing_if` was written.
    pub(crate) skip_serializing_if: Option<Span>,
}

#[derive(Default)]
pub(crate) struct SerdeVariant {
    pub(crate) rename: Option<(String, Span)>,
    pub(crate) skip: bool,
}

/// The argument lists of every `#[serde(...)]` attribute.
fn serde_args(attrs: &[Attribute]) -> Vec<Arg> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        // A malformed serde attribute is serde's to report.
        if let Meta::List(list) = &attr.meta
            && let Ok(args) = parse_args(list.tokens.clone())
        {
            out.extend(args);
        }
    }
    out
}

fn lit_str(cx: &Ctxt, arg: &Arg) -> Option<LitStr> {
    match &arg.value {
        ArgValue::Eq(tokens) => match syn::parse2::<LitStr>(tokens.clone()) {
            Ok(lit) => Some(lit),
            Err(_) => {
                cx.error_at(arg.span(), format_args!("`{}` takes a string literal", arg.key));
                None
            }
        },
        _ => None,
    }
}

/// `rename = "x"` or `rename(serialize = "x", deserialize = "x")`: one name for both directions.
fn one_name(cx: &Ctxt, arg: &Arg) -> Option<(String, Span)> {
    match &arg.value {
        ArgValue::Eq(_) => lit_str(cx, arg).map(|lit| (lit.value(), lit.span())),
        ArgValue::List(tokens, _) => {
            let inner = parse_args(tokens.clone()).ok()?;
            let names: Vec<LitStr> = inner.iter().filter_map(|arg| lit_str(cx, arg)).collect();
            match names.as_slice() {
                [one] => Some((one.value(), one.span())),
                [ser, de] if ser.value() == de.value() => Some((ser.value(), ser.span())),
                [_, de] => {
                    cx.error_spanned_by(
                        de,
                        format_args!(
                            "`{}` with different names for serializing and deserializing cannot be described by one schema; use the same name for both",
                            arg.key
                        ),
                    );
                    None
                }
                _ => None,
            }
        }
        ArgValue::Flag => None,
    }
}

fn reject(cx: &Ctxt, arg: &Arg, why: &str) {
    cx.error_at(arg.span(), format_args!("`#[serde({})]` is not supported here: {why}", arg.key));
}

const TAGGED: &str = "adjacently and internally tagged enums need `oneOf`, which the schema subset forbids; use an enum whose variants carry no data, or a struct with an enum field and optional fields";
const UNTAGGED: &str = "untagged enums need `anyOf`, which the schema subset forbids; use an enum whose variants carry no data, or a struct with optional fields";

const WITH: &str = "the schema cannot see what a custom (de)serialisation function accepts; wrap the value in a newtype that implements `ToolSchema` by hand instead";

pub(crate) fn container(cx: &Ctxt, attrs: &[Attribute], is_enum: bool) -> SerdeContainer {
    let mut out = SerdeContainer::default();
    for arg in serde_args(attrs) {
        match arg.key.to_string().as_str() {
            "rename_all" => {
                if let Some((name, span)) = one_name(cx, &arg) {
                    match RenameRule::from_name(&name) {
                        Some(rule) => out.rename_all = Some(rule),
                        None => cx.error_at(
                            span,
                            format_args!(
                                "unknown `rename_all` rule `{name}`; expected one of {}",
                                crate::args::list_keys(RenameRule::NAMES)
                            ),
                        ),
                    }
                }
            }
            "default" => out.default = true,
            "transparent" => out.transparent = true,
            "deny_unknown_fields" => out.deny_unknown_fields = true,
            "tag" | "content" if is_enum => {
                reject(cx, &arg, TAGGED);
                out.rejected_repr = true;
            }
            "tag" => reject(
                cx,
                &arg,
                "it adds a property the schema does not describe; add the field to the struct instead",
            ),
            "untagged" => {
                reject(cx, &arg, UNTAGGED);
                out.rejected_repr = true;
            }
            "from" | "try_from" | "into" => reject(
                cx,
                &arg,
                "serde would read or write another type than the one the schema describes; derive `ToolSchema` on that type and use it directly",
            ),
            "remote" => reject(
                cx,
                &arg,
                "the schema describes the remote type's shape only if it is derived on a local copy; derive `ToolSchema` on the type serde reads",
            ),
            _ => {}
        }
    }
    out
}

pub(crate) fn field(cx: &Ctxt, attrs: &[Attribute]) -> SerdeField {
    let mut out = SerdeField::default();
    for arg in serde_args(attrs) {
        match arg.key.to_string().as_str() {
            "rename" => out.rename = one_name(cx, &arg),
            "alias" => out.aliases.extend(lit_str(cx, &arg)),
            "default" => out.default = true,
            "skip" => out.skip = true,
            "skip_serializing_if" => out.skip_serializing_if = Some(arg.key.span()),
            "skip_serializing" | "skip_deserializing" => reject(
                cx,
                &arg,
                "the field would be in the input but not the output (or the reverse), which one schema cannot describe; use `skip` to leave it out of both",
            ),
            "flatten" => reject(
                cx,
                &arg,
                "flattening merges another type's properties (or a map) into this object, which the schema subset cannot describe; keep the nested struct as a named field",
            ),
            "with" | "serialize_with" | "deserialize_with" => reject(cx, &arg, WITH),
            _ => {}
        }
    }
    out
}

pub(crate) fn variant(cx: &Ctxt, attrs: &[Attribute]) -> SerdeVariant {
    let mut out = SerdeVariant::default();
    for arg in serde_args(attrs) {
        match arg.key.to_string().as_str() {
            "rename" => out.rename = one_name(cx, &arg),
            "skip" => out.skip = true,
            "skip_serializing" | "skip_deserializing" => reject(
                cx,
                &arg,
                "the value would be accepted but never produced (or the reverse), which one schema cannot describe; use `skip` to leave it out of both",
            ),
            "other" | "untagged" => reject(
                cx,
                &arg,
                "a catch-all variant accepts values the schema's `enum` does not list",
            ),
            "with" | "serialize_with" | "deserialize_with" => reject(cx, &arg, WITH),
            _ => {}
        }
    }
    out
}

/// Whether `#[serde(deny_unknown_fields)]` is already there (serde refuses it twice).
pub(crate) fn has_flag(attrs: &[Attribute], flag: &str) -> bool {
    attrs.iter().filter(|attr| attr.path().is_ident("serde")).any(|attr| match &attr.meta {
        Meta::List(list) => parse_args(list.tokens.clone())
            .map(|args| args.iter().any(|arg| arg.key == flag))
            .unwrap_or(false),
        _ => false,
    })
}
