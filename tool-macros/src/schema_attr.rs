//! `#[schema(...)]` on fields (constraints, description) and containers (description).

use proc_macro2::Span;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Ident, Lit, LitStr, Path, UnOp};

use crate::args::{Arg, ArgValue, list_keys, near_miss, parse_args};
use crate::ctxt::Ctxt;
use crate::mode::Mode;

const DESCRIPTION: &str = "description";
const LENGTH: &str = "length";
const RANGE: &str = "range";
const PATTERN: &str = "pattern";
const ITEMS: &str = "items";
const FORMAT: &str = "format";
const CRATE: &str = "crate";

const FIELD_KEYS: &[&str] = &[DESCRIPTION, LENGTH, RANGE, PATTERN, ITEMS, FORMAT];
const CONTAINER_KEYS: &[&str] = &[DESCRIPTION, CRATE];
const COUNT_KEYS: &[&str] = &["min", "max"];
const RANGE_KEYS: &[&str] = &["min", "max", "exclusive_min", "exclusive_max"];

/// A bound of `length(...)` or `items(...)`.
#[derive(Clone, Copy)]
pub(crate) struct Count {
    pub(crate) value: u64,
    pub(crate) span: Span,
}

/// `length(min, max)` or `items(min, max)`.
pub(crate) struct Counts {
    pub(crate) key: Ident,
    pub(crate) min: Option<Count>,
    pub(crate) max: Option<Count>,
}

/// A numeric literal, possibly negative.
#[derive(Clone, Copy)]
pub(crate) enum Number {
    Int(i128),
    Float(f64),
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Int(value) => value.fmt(f),
            Self::Float(value) => value.fmt(f),
        }
    }
}

/// A bound of `range(...)` and where it was written.
#[derive(Clone, Copy)]
pub(crate) struct Bound {
    pub(crate) number: Number,
    pub(crate) span: Span,
}

impl Number {
    fn as_f64(self) -> f64 {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Self::Int(value) => value as f64,
            Self::Float(value) => value,
        }
    }
}

/// `range(min, max, exclusive_min, exclusive_max)`.
pub(crate) struct Range {
    pub(crate) key: Ident,
    pub(crate) min: Option<Bound>,
    pub(crate) max: Option<Bound>,
    pub(crate) exclusive_min: Option<Bound>,
    pub(crate) exclusive_max: Option<Bound>,
}

impl Range {
    /// The bounds in the order `min`, `max`, `exclusive_min`, `exclusive_max`.
    pub(crate) fn bounds(&self) -> [Option<Bound>; 4] {
        [self.min, self.max, self.exclusive_min, self.exclusive_max]
    }
}

#[derive(Default)]
pub(crate) struct FieldSchema {
    pub(crate) description: Option<LitStr>,
    pub(crate) length: Option<Counts>,
    pub(crate) range: Option<Range>,
    pub(crate) pattern: Option<(Ident, LitStr)>,
    pub(crate) items: Option<Counts>,
    pub(crate) format: Option<(Ident, LitStr)>,
}

fn schema_args(cx: &Ctxt, attrs: &[Attribute]) -> Vec<Arg> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("schema")) {
        match attr.meta.require_list() {
            Ok(list) => match parse_args(list.tokens.clone()) {
                Ok(args) => out.extend(args),
                Err(error) => cx.syn_error(error),
            },
            Err(_) => cx.error_spanned_by(
                attr,
                "expected `#[schema(...)]`, for example `#[schema(length(max = 64))]`",
            ),
        }
    }
    out
}

fn unknown_key(cx: &Ctxt, what: &str, key: &Ident, accepted: &[&str]) {
    let name = key.to_string();
    let hint =
        near_miss(&name, accepted).map(|m| format!(" (did you mean `{m}`?)")).unwrap_or_default();
    cx.error_spanned_by(
        key,
        format_args!("unknown {what} `{name}`{hint}; expected one of {}", list_keys(accepted)),
    );
}

fn duplicate(cx: &Ctxt, key: &Ident) {
    cx.error_spanned_by(key, format_args!("duplicate `{key}`; give it once"));
}

fn string_value(cx: &Ctxt, arg: &Arg, example: &str) -> Option<LitStr> {
    if let ArgValue::Eq(tokens) = &arg.value
        && let Ok(lit) = syn::parse2::<LitStr>(tokens.clone())
    {
        return Some(lit);
    }
    cx.error_at(arg.span(), format_args!("`{}` takes a string literal: `{}`", arg.key, example));
    None
}

fn list_value(cx: &Ctxt, arg: &Arg, example: &str) -> Option<Vec<Arg>> {
    if let ArgValue::List(tokens, _) = &arg.value {
        match parse_args(tokens.clone()) {
            Ok(args) => return Some(args),
            Err(error) => {
                cx.syn_error(error);
                return None;
            }
        }
    }
    cx.error_at(arg.span(), format_args!("`{}` takes a list of bounds: `{}`", arg.key, example));
    None
}

fn number_value(cx: &Ctxt, arg: &Arg) -> Option<Number> {
    let ArgValue::Eq(tokens) = &arg.value else {
        cx.error_at(arg.span(), format_args!("`{}` needs a value: `{} = 10`", arg.key, arg.key));
        return None;
    };
    let parsed = syn::parse2::<Expr>(tokens.clone()).ok().and_then(|expr| {
        let (negative, lit) = match expr {
            Expr::Lit(ExprLit { lit, .. }) => (false, lit),
            Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. }) => match *expr {
                Expr::Lit(ExprLit { lit, .. }) => (true, lit),
                _ => return None,
            },
            _ => return None,
        };
        let number = match lit {
            Lit::Int(int) => Number::Int(int.base10_parse::<i128>().ok()?),
            Lit::Float(float) => Number::Float(float.base10_parse::<f64>().ok()?),
            _ => return None,
        };
        Some(match (negative, number) {
            (true, Number::Int(value)) => Number::Int(-value),
            (true, Number::Float(value)) => Number::Float(-value),
            (false, number) => number,
        })
    });
    if parsed.is_none() {
        cx.error_at(
            arg.span(),
            format_args!(
                "`{}` takes a number literal, such as `{} = 10` or `{} = -0.5`",
                arg.key, arg.key, arg.key
            ),
        );
    }
    parsed
}

fn counts(cx: &Ctxt, arg: &Arg, example: &str) -> Option<Counts> {
    let inner = list_value(cx, arg, example)?;
    let mut out = Counts { key: arg.key.clone(), min: None, max: None };
    for bound in &inner {
        let name = bound.key.to_string();
        let slot = match name.as_str() {
            "min" => &mut out.min,
            "max" => &mut out.max,
            _ => {
                unknown_key(cx, &format!("`{}` bound", arg.key), &bound.key, COUNT_KEYS);
                continue;
            }
        };
        if slot.is_some() {
            duplicate(cx, &bound.key);
            continue;
        }
        match number_value(cx, bound) {
            Some(Number::Int(value)) if value >= 0 => {
                *slot = Some(Count {
                    value: u64::try_from(value).unwrap_or(u64::MAX),
                    span: bound.span(),
                });
            }
            Some(_) => cx.error_at(
                bound.span(),
                format_args!("`{name}` of `{}` must be a whole number of zero or more", arg.key),
            ),
            None => {}
        }
    }
    // Rule: a bound list says something, and its minimum is not above its maximum.
    match (out.min, out.max) {
        (None, None) => cx.error_at(
            arg.span(),
            format_args!("`{}` needs `min`, `max` or both: `{example}`", arg.key),
        ),
        (Some(min), Some(max)) if min.value > max.value => cx.error_at(
            max.span,
            format_args!(
                "`{}` has `min = {}` above `max = {}`; no value can satisfy it",
                arg.key, min.value, max.value
            ),
        ),
        _ => {}
    }
    Some(out)
}

fn range(cx: &Ctxt, arg: &Arg) -> Option<Range> {
    let inner = list_value(cx, arg, "range(min = 1, max = 100)")?;
    let mut out = Range {
        key: arg.key.clone(),
        min: None,
        max: None,
        exclusive_min: None,
        exclusive_max: None,
    };
    let mut any = false;
    for bound in &inner {
        let slot = match bound.key.to_string().as_str() {
            "min" => &mut out.min,
            "max" => &mut out.max,
            "exclusive_min" => &mut out.exclusive_min,
            "exclusive_max" => &mut out.exclusive_max,
            _ => {
                unknown_key(cx, "`range` bound", &bound.key, RANGE_KEYS);
                continue;
            }
        };
        if slot.is_some() {
            duplicate(cx, &bound.key);
            continue;
        }
        any = true;
        *slot = number_value(cx, bound).map(|number| Bound { number, span: bound.span() });
    }
    if !any && inner.is_empty() {
        cx.error_at(arg.span(), "`range` needs at least one of `min`, `max`, `exclusive_min`, `exclusive_max`: `range(min = 1, max = 100)`");
    }
    // Rule: the lower bound is below the upper one (equal only when both are inclusive).
    let lows = [("min", out.min, false), ("exclusive_min", out.exclusive_min, true)];
    let highs = [("max", out.max, false), ("exclusive_max", out.exclusive_max, true)];
    for (low_key, low, low_open) in lows {
        for (high_key, high, high_open) in highs {
            let (Some(low), Some(high)) = (low, high) else { continue };
            let (a, b) = (low.number.as_f64(), high.number.as_f64());
            let (empty, relation) =
                if low_open || high_open { (a >= b, "not below") } else { (a > b, "above") };
            if empty {
                cx.error_at(high.span, format_args!(
                    "`range` has `{low_key} = {}` {relation} `{high_key} = {}`; no value can satisfy it",
                    low.number, high.number
                ));
            }
        }
    }
    Some(out)
}

/// Checks a `pattern` with the regular expression syntax the validator uses.
fn check_pattern(cx: &Ctxt, lit: &LitStr) {
    if let Err(error) = regex_syntax::Parser::new().parse(&lit.value()) {
        let detail = error.to_string();
        let last = detail.lines().rfind(|line| !line.trim().is_empty()).unwrap_or("invalid");
        let last = last.trim().trim_start_matches("error:").trim();
        cx.error_spanned_by(lit, format_args!("invalid `pattern` regular expression: {last}"));
    }
}

/// Whether `arg` gives its key for the first time (`slot` still empty); reports the second
/// occurrence of a key.
fn first<T>(cx: &Ctxt, slot: &Option<T>, arg: &Arg) -> bool {
    if slot.is_some() {
        duplicate(cx, &arg.key);
    }
    slot.is_none()
}

pub(crate) fn field(cx: &Ctxt, attrs: &[Attribute]) -> FieldSchema {
    let mut out = FieldSchema::default();
    for arg in schema_args(cx, attrs) {
        match arg.key.to_string().as_str() {
            DESCRIPTION if first(cx, &out.description, &arg) => {
                out.description = string_value(cx, &arg, "description = \"...\"");
            }
            LENGTH if first(cx, &out.length, &arg) => {
                out.length = counts(cx, &arg, "length(min = 1, max = 64)");
            }
            ITEMS if first(cx, &out.items, &arg) => {
                out.items = counts(cx, &arg, "items(min = 1, max = 10)");
            }
            RANGE if first(cx, &out.range, &arg) => out.range = range(cx, &arg),
            PATTERN if first(cx, &out.pattern, &arg) => {
                if let Some(lit) = string_value(cx, &arg, "pattern = \"^[a-z]+$\"") {
                    check_pattern(cx, &lit);
                    out.pattern = Some((arg.key.clone(), lit));
                }
            }
            FORMAT if first(cx, &out.format, &arg) => {
                out.format = string_value(cx, &arg, "format = \"date-time\"")
                    .map(|lit| (arg.key.clone(), lit));
            }
            // A known key given twice, reported by `first`.
            DESCRIPTION | LENGTH | ITEMS | RANGE | PATTERN | FORMAT => {}
            _ => unknown_key(cx, "schema attribute", &arg.key, FIELD_KEYS),
        }
    }
    out
}

/// `#[schema(description = "...")]` on a container.
pub(crate) fn container(cx: &Ctxt, attrs: &[Attribute], mode: Mode) -> Option<LitStr> {
    let mut description = None;
    let mut krate = false;
    for arg in schema_args(cx, attrs) {
        if arg.key == CRATE {
            if mode == Mode::Tool {
                cx.error_spanned_by(
                    &arg.key,
                    "on a tool, write the crate path in the tool attribute: `#[tool(crate = path, ...)]`",
                );
            } else if krate {
                duplicate(cx, &arg.key);
            } else if crate_path(&arg).is_none() {
                cx.error_at(arg.span(), "expected `crate = path::to::tool_runtime`");
            }
            krate = true;
        } else if arg.key != DESCRIPTION {
            unknown_key(cx, "container schema attribute", &arg.key, CONTAINER_KEYS);
        } else if description.is_some() {
            duplicate(cx, &arg.key);
        } else {
            description = string_value(cx, &arg, "description = \"...\"");
        }
    }
    description
}

fn crate_path(arg: &Arg) -> Option<Path> {
    match &arg.value {
        ArgValue::Eq(tokens) => syn::parse2::<Path>(tokens.clone()).ok(),
        _ => None,
    }
}

/// The `#[schema(crate = path)]` of a derived type: where `tool_runtime` is, when it is
/// re-exported under another name. Mistakes in it are reported by [`container`].
pub(crate) fn crate_override(attrs: &[Attribute]) -> Option<Path> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("schema"))
        .filter_map(|attr| attr.meta.require_list().ok())
        .filter_map(|list| parse_args(list.tokens.clone()).ok())
        .flatten()
        .find(|arg| arg.key == CRATE)
        .and_then(|arg| crate_path(&arg))
}
