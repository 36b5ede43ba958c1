//! `#[tool(examples = [{...}, ...])]`: examples of a tool's arguments, written as JSON in the
//! attribute. Each becomes a constant the runtime sends to the model, and each argument it gives
//! is checked against the tool's schema while the crate compiles, with any mismatch reported on
//! that argument's tokens.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::{LitBool, LitFloat, LitInt, LitStr, Token, braced, bracketed};

use crate::args::near_miss;
use crate::ast::Field;
use crate::ctxt::Ctxt;

/// A JSON value written in the attribute, with where it was written.
pub(crate) enum Json {
    Null(Span),
    Bool(LitBool),
    /// The number's value, and its tokens (a leading `-` included).
    Int(i128, Span),
    Float(f64, Span),
    Str(LitStr),
    Array(Vec<Json>, Span),
    Object(Vec<(LitStr, Json)>, Span),
}

impl Json {
    fn span(&self) -> Span {
        match self {
            Self::Null(span)
            | Self::Int(_, span)
            | Self::Float(_, span)
            | Self::Array(_, span)
            | Self::Object(_, span) => *span,
            Self::Bool(lit) => lit.span,
            Self::Str(lit) => lit.span(),
        }
    }

    /// The `ExampleValue` expression for this value.
    fn to_tokens(&self, p: &TokenStream) -> TokenStream {
        match self {
            Self::Null(_) => quote!(#p::ExampleValue::Null),
            Self::Bool(lit) => quote!(#p::ExampleValue::Bool(#lit)),
            Self::Int(value, _) => quote!(#p::ExampleValue::Int(#value)),
            Self::Float(value, _) => quote!(#p::ExampleValue::Float(#value)),
            Self::Str(lit) => quote!(#p::ExampleValue::Str(#lit)),
            Self::Array(items, _) => {
                let items = items.iter().map(|item| item.to_tokens(p));
                quote!(#p::ExampleValue::Array(&[#(#items),*]))
            }
            Self::Object(entries, _) => {
                let entries = entries.iter().map(|(key, value)| {
                    let value = value.to_tokens(p);
                    quote!((#key, #value))
                });
                quote!(#p::ExampleValue::Object(&[#(#entries),*]))
            }
        }
    }
}

const EXPECTED: &str =
    "expected a JSON value: a string, a number, `true`, `false`, `null`, `[...]` or `{...}`";

impl Parse for Json {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(LitStr) {
            return Ok(Self::Str(input.parse()?));
        }
        if input.peek(LitBool) {
            return Ok(Self::Bool(input.parse()?));
        }
        if input.peek(syn::Ident) {
            let ident: syn::Ident = input.parse()?;
            return if ident == "null" {
                Ok(Self::Null(ident.span()))
            } else {
                Err(syn::Error::new(ident.span(), EXPECTED))
            };
        }
        if input.peek(syn::token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let items = content.parse_terminated(Json::parse, Token![,])?;
            return Ok(Self::Array(items.into_iter().collect(), bracket.span.join()));
        }
        if input.peek(syn::token::Brace) {
            let content;
            let brace = braced!(content in input);
            let entries = content.parse_terminated(
                |entry: ParseStream<'_>| {
                    let key: LitStr = entry.parse().map_err(|error| {
                        syn::Error::new(error.span(), "expected a key: a string literal")
                    })?;
                    entry.parse::<Token![:]>()?;
                    Ok((key, entry.parse::<Json>()?))
                },
                Token![,],
            )?;
            return Ok(Self::Object(entries.into_iter().collect(), brace.span.join()));
        }
        let minus: Option<Token![-]> = input.parse()?;
        let negative = minus.is_some();
        let start = minus.map(|minus| minus.span);
        let joined = |span: Span| start.and_then(|start| start.join(span)).unwrap_or(span);
        if input.peek(LitInt) {
            let lit: LitInt = input.parse()?;
            no_suffix(lit.suffix(), lit.span())?;
            let value = lit.base10_parse::<i128>()?;
            return Ok(Self::Int(if negative { -value } else { value }, joined(lit.span())));
        }
        if input.peek(LitFloat) {
            let lit: LitFloat = input.parse()?;
            no_suffix(lit.suffix(), lit.span())?;
            let value = lit.base10_parse::<f64>()?;
            if !value.is_finite() {
                return Err(syn::Error::new(
                    lit.span(),
                    "a JSON number is finite; this one is too large for a 64-bit float",
                ));
            }
            return Ok(Self::Float(if negative { -value } else { value }, joined(lit.span())));
        }
        Err(input.error(EXPECTED))
    }
}

fn no_suffix(suffix: &str, span: Span) -> syn::Result<()> {
    if suffix.is_empty() {
        Ok(())
    } else {
        Err(syn::Error::new(span, format!("a JSON number has no type suffix; remove `{suffix}`")))
    }
}

/// Parses `examples = [...]`: a list of objects.
pub(crate) fn parse_examples(tokens: TokenStream) -> syn::Result<Vec<Json>> {
    let parser = |input: ParseStream<'_>| {
        let content;
        bracketed!(content in input);
        let items = content.parse_terminated(Json::parse, Token![,])?;
        Ok(items.into_iter().collect::<Vec<_>>())
    };
    let examples = syn::parse::Parser::parse2(parser, tokens)?;
    for example in &examples {
        if !matches!(example, Json::Object(..)) {
            return Err(syn::Error::new(
                example.span(),
                "an example is an object of arguments, as the model would send them: `{\"query\": \"rust\"}`",
            ));
        }
    }
    Ok(examples)
}

/// Rule: every example names arguments of the tool (by name or alias), gives each once, leaves
/// out no required one, and gives each a value its schema accepts. Names are checked here;
/// values and requiredness by `const` assertions on the schema, placed on the tokens at fault.
/// Returns the examples' `ExampleValue` expressions and the assertions.
pub(crate) fn example_checks(
    cx: &Ctxt,
    p: &TokenStream,
    schema: &TokenStream,
    fields: &[Field<'_>],
    examples: &[Json],
) -> (Vec<TokenStream>, TokenStream) {
    let names: Vec<String> = fields
        .iter()
        .flat_map(|field| {
            std::iter::once(field.name.clone()).chain(field.serde.aliases.iter().map(LitStr::value))
        })
        .collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut values = Vec::new();
    let mut checks = TokenStream::new();
    for (index, example) in examples.iter().enumerate() {
        let Json::Object(entries, span) = example else { continue };
        let number = index + 1;
        let mut given: Vec<&Field<'_>> = Vec::new();
        for (key, value) in entries {
            let name = key.value();
            let field = fields.iter().find(|field| {
                field.name == name || field.serde.aliases.iter().any(|alias| alias.value() == name)
            });
            let Some(field) = field else {
                let hint = near_miss(&name, &name_refs)
                    .map(|near| format!(" (did you mean `{near}`?)"))
                    .unwrap_or_default();
                cx.error_spanned_by(
                    key,
                    format_args!(
                        "example {number}: `{name}` is not an argument of this tool{hint}; its arguments are {}",
                        list(fields)
                    ),
                );
                continue;
            };
            if given.iter().any(|seen| std::ptr::eq(*seen, field)) {
                cx.error_spanned_by(
                    key,
                    format_args!(
                        "example {number}: argument `{}` is given twice; give it once",
                        field.name
                    ),
                );
                continue;
            }
            given.push(field);
            checks.extend(value_check(p, schema, &field.name, value, number));
        }
        for field in fields {
            if given.iter().any(|seen| std::ptr::eq(*seen, field)) {
                continue;
            }
            let name = &field.name;
            let message = format!(
                "example {number} leaves out `{name}`, a required argument of this tool; add it to the example"
            );
            checks.extend(quote_spanned! {*span=>
                const _: () = ::core::assert!(!#p::is_required(#schema, #name), #message);
            });
        }
        values.push(example.to_tokens(p));
    }
    (values, checks)
}

/// The assertion that `value` fits the schema of argument `name`, on the value's tokens.
fn value_check(
    p: &TokenStream,
    schema: &TokenStream,
    name: &str,
    value: &Json,
    number: usize,
) -> TokenStream {
    let span = value.span();
    let expr = value.to_tokens(p);
    let arms = PROBLEMS.iter().map(|(variant, text)| {
        let variant = syn::Ident::new(variant, Span::call_site());
        let message = format!("example {number}: the value of `{name}` {text}");
        quote_spanned!(span=> ::core::option::Option::Some(#p::ExampleProblem::#variant) => ::core::panic!(#message),)
    });
    quote_spanned! {span=>
        const _: () = if let ::core::option::Option::Some(schema) = #p::property_schema(#schema, #name) {
            match #p::example_problem(schema, &#expr) {
                ::core::option::Option::None => {}
                #(#arms)*
            }
        };
    }
}

/// `ExampleProblem`'s variants and how a message words each, after "the value of `x`".
const PROBLEMS: [(&str, &str); 13] = [
    ("Null", "is null, which its schema does not allow"),
    ("Type", "has the wrong JSON type for its schema"),
    ("BelowMinimum", "is below its minimum (or a value inside it is)"),
    ("AboveMaximum", "is above its maximum (or a value inside it is)"),
    ("TooShort", "is shorter than its minimum length (or a string inside it is)"),
    ("TooLong", "is longer than its maximum length (or a string inside it is)"),
    ("NotInEnum", "is not one of its enum values (or a value inside it is not)"),
    ("TooFewItems", "has fewer items than its minimum (or an array inside it has)"),
    ("TooManyItems", "has more items than its maximum (or an array inside it has)"),
    ("DuplicateItems", "repeats an item that must be unique (or an array inside it does)"),
    ("UnknownProperty", "has a key its schema does not name"),
    ("MissingProperty", "leaves out a required property"),
    ("GivenTwice", "gives one property twice"),
];

fn list(fields: &[Field<'_>]) -> String {
    fields.iter().map(|field| format!("`{}`", field.name)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_json_with_negative_numbers() {
        let examples =
            parse_examples(quote!([{"a": -1, "b": [1.5, true, null], "c": {"d": "x"}}])).unwrap();
        let Json::Object(entries, _) = &examples[0] else { panic!() };
        assert!(matches!(entries[0].1, Json::Int(-1, _)));
        assert!(matches!(&entries[1].1, Json::Array(items, _) if items.len() == 3));
    }

    #[test]
    fn refuses_what_is_not_json() {
        for tokens in [
            quote!([{"a": 1u8}]),
            quote!([{a: 1}]),
            quote!([[1]]),
            quote!([{"a": nil}]),
            quote!([{"a": 1e400}]),
        ] {
            assert!(parse_examples(tokens).is_err());
        }
    }
}
