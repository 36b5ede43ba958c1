//! Code generation for a checked [`Container`]. Never reports user errors: rules that need type
//! information become `const` assertions placed on the user's tokens.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{GenericParam, Generics, Path};

use crate::ast::{Body, Container, Field};
use crate::schema_attr::{Bound, Count, Number};

/// `::tool_runtime::__private`, or the `crate = ...` override's.
pub(crate) fn private(krate: &Path) -> TokenStream {
    quote!(#krate::__private)
}

fn option<T: quote::ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

fn count(value: Option<Count>) -> TokenStream {
    option(value.map(|count| count.value))
}

fn range_bound(p: &TokenStream, value: Option<Bound>) -> TokenStream {
    option(value.map(|bound| match bound.number {
        Number::Int(value) => quote!(#p::RangeBound::Int(#value)),
        Number::Float(value) => quote!(#p::RangeBound::Float(#value)),
    }))
}

/// The assertion that a field serde may leave out of the output can also be read back without
/// it: `skip_serializing_if` needs `default` unless the type itself may be absent (`Option`).
fn skip_check(
    p: &TokenStream,
    field: &Field<'_>,
    container: &Container<'_>,
) -> Option<TokenStream> {
    let span = field.serde.skip_serializing_if?;
    if field.always_optional(&container.serde) {
        return None;
    }
    let ty = field.ty;
    let message = format!(
        "`skip_serializing_if` may leave field `{}` out of the output, but reading it back requires it; add `#[serde(default)]` to the field",
        field.name
    );
    Some(quote_spanned!(span=> ::core::assert!(<#ty as #p::ToolSchema>::OPTIONAL, #message);))
}

/// The schema expression of one field (a `Schema` value) and the assertions its constraints
/// need, each spanned at the constraint's key.
fn field_schema(p: &TokenStream, field: &Field<'_>) -> (TokenStream, Vec<TokenStream>) {
    let ty = field.ty;
    let base = quote_spanned!(ty.span()=> (*<#ty as #p::ToolSchema>::SCHEMA));
    let mut expr = base.clone();
    let mut checks = Vec::new();
    let mut first_key: Option<Span> = None;
    let name = &field.name;
    let what =
        if name.is_empty() { "this newtype's field".to_owned() } else { format!("field `{name}`") };
    let constraints = &field.schema;
    let mut check = |key: &syn::Ident, condition: TokenStream, message: String| {
        first_key.get_or_insert(key.span());
        checks.push(quote_spanned!(key.span()=> ::core::assert!(#condition, #message);));
    };
    if let Some(length) = &constraints.length {
        check(
            &length.key,
            quote!(#p::accepts_string_constraints(&#base)),
            format!(
                "`length` applies to strings only, and {what} is not a string; bound arrays with `items(...)` and numbers with `range(...)`"
            ),
        );
        let (min, max) = (count(length.min), count(length.max));
        expr = quote!(#expr.with_length(#min, #max));
    }
    if let Some((key, pattern)) = &constraints.pattern {
        check(
            key,
            quote!(#p::accepts_string_constraints(&#base)),
            format!("`pattern` applies to strings only, and {what} is not a string; remove it"),
        );
        expr = quote!(#expr.with_pattern(#pattern));
    }
    if let Some((key, format)) = &constraints.format {
        check(
            key,
            quote!(#p::accepts_string_constraints(&#base)),
            format!("`format` applies to strings only, and {what} is not a string; remove it"),
        );
        expr = quote!(#expr.with_format(#format));
    }
    if let Some(items) = &constraints.items {
        check(
            &items.key,
            quote!(#p::accepts_item_constraints(&#base)),
            format!(
                "`items` applies to arrays only, and {what} is not an array; bound strings with `length(...)` and numbers with `range(...)`"
            ),
        );
        let (min, max) = (count(items.min), count(items.max));
        expr = quote!(#expr.with_items(#min, #max));
    }
    if let Some(range) = &constraints.range {
        let [min, max, emin, emax] = range.bounds().map(|bound| range_bound(p, bound));
        check(
            &range.key,
            quote!(#p::accepts_range(&#base)),
            format!(
                "`range` applies to numbers only, and {what} is not a number; bound strings with `length(...)` and arrays with `items(...)`"
            ),
        );
        let float = range
            .bounds()
            .into_iter()
            .flatten()
            .find(|bound| matches!(bound.number, Number::Float(_)));
        if let Some(float) = float {
            // Placed on the float literal; passes for floating-point fields (and non-numbers,
            // which the check above reports).
            let message = format!(
                "{what} is an integer, so its `range` bounds must be integer literals; write `{}` as a whole number",
                float.number
            );
            checks.push(quote_spanned!(float.span=> ::core::assert!(!#p::accepts_range(&#base) || #p::accepts_range_bounds(&#base, #min, #max, #emin, #emax), #message);));
        }
        expr = quote!(#expr.with_range(#min, #max, #emin, #emax));
    }
    if let Some(span) = first_key {
        let message = format!(
            "no value of {what} satisfies its constraints together with the bounds of its type; widen the constraints or the type"
        );
        checks.push(quote_spanned!(span=> ::core::assert!(#p::is_satisfiable(&#expr), #message);));
    }
    if let Some(description) = &field.description {
        expr = quote!(#expr.describe(#description));
    }
    (expr, checks)
}

fn bounded_generics(p: &TokenStream, generics: &Generics) -> Generics {
    let mut generics = generics.clone();
    for param in &mut generics.params {
        if let GenericParam::Type(param) = param {
            param.bounds.push(syn::parse_quote!(#p::ToolSchema));
        }
    }
    generics
}

/// `impl ToolSchema for ...`, plus the constraint assertions. For a type without generics they
/// are `const` items of their own, evaluated even when nothing uses the type yet, and a failing
/// one does not also break every use of the schema; a generic type checks them inside `SCHEMA`,
/// once per instantiation.
pub(crate) fn schema_impl(
    container: &Container<'_>,
    krate: &Path,
    description: Option<&str>,
) -> TokenStream {
    let p = private(krate);
    let ident = &container.input.ident;
    let description = option(description);
    let mut optional = None;
    let mut checks = Vec::new();
    let mut check_at = None;
    let body = match &container.body {
        Body::Struct(fields) => {
            let mut properties = Vec::new();
            let mut field_checks = Vec::new();
            for (index, field) in fields.iter().enumerate() {
                let ty = field.ty;
                // Spanned as the schema's `<#ty as ToolSchema>::SCHEMA` is, so that a field type
                // without a schema is one error, not two.
                let check = quote_spanned!(ty.span()=> <#ty as #p::ToolSchema>::check_at);
                field_checks.push(quote!(
                    entries.check_property(
                        const { &#p::properties_of(<Self as #p::ToolSchema>::SCHEMA)[#index] },
                        path,
                        out,
                        #check,
                    );
                ));
                let (expr, field_checks) = field_schema(&p, field);
                checks.extend(field_checks);
                checks.extend(skip_check(&p, field, container));
                let ty = field.ty;
                let required = if field.always_optional(&container.serde) {
                    quote!(false)
                } else {
                    quote_spanned!(ty.span()=> !<#ty as #p::ToolSchema>::OPTIONAL)
                };
                let name = &field.name;
                let aliases = &field.serde.aliases;
                properties.push(quote!(#p::Property {
                    name: #name,
                    aliases: &[#(#aliases),*],
                    schema: &#expr,
                    required: #required,
                }));
            }
            check_at = Some(quote! {
                #p::check_struct(
                    schema,
                    const { #p::properties_of(<Self as #p::ToolSchema>::SCHEMA) },
                    value,
                    path,
                    out,
                    |entries, path, out| { #(#field_checks)* },
                );
            });
            quote!(#p::Schema {
                kind: #p::SchemaKind::Object(#p::ObjectSchema { properties: &[#(#properties),*] }),
                description: #description,
                nullable: false,
            })
        }
        Body::Newtype(field) => {
            let (expr, field_checks) = field_schema(&p, field);
            checks.extend(field_checks);
            let ty = field.ty;
            let check = quote_spanned!(ty.span()=> <#ty as #p::ToolSchema>::check_at);
            check_at = Some(quote! {
                #check(schema, value, path, out);
            });
            if container.serde.transparent {
                optional = Some(
                    quote!(const OPTIONAL: ::core::primitive::bool = <#ty as #p::ToolSchema>::OPTIONAL;),
                );
            }
            match &container.description {
                Some(text) if field.description.is_none() => quote!(#expr.describe(#text)),
                _ => expr,
            }
        }
        Body::Enum(variants) => {
            let names = variants.iter().map(|variant| &variant.name);
            quote!(#p::Schema {
                kind: #p::SchemaKind::Enum(&[#(#names),*]),
                description: #description,
                nullable: false,
            })
        }
    };
    let generics = bounded_generics(&p, &container.input.generics);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let (body, items) = if container.input.generics.params.is_empty() {
        let items = checks.iter().map(|check| quote!(const _: () = { #check };));
        (body, quote!(#(#items)*))
    } else {
        (quote!({ #(#checks)* #body }), TokenStream::new())
    };
    // The type's own validator: the walk over the schema tree, unrolled at compile time (each
    // field's key, constraints and type known), checking exactly what the walk checks.
    let check_at = check_at.map(|body| {
        quote! {
            #[inline]
            fn check_at(
                schema: &'static #p::Schema,
                value: &#p::JsonValue,
                path: &#p::Path<'_>,
                out: &mut #p::Findings,
            ) {
                #body
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::ToolSchema for #ident #ty_generics #where_clause {
            const SCHEMA: &'static #p::Schema = &#body;
            #optional
            #check_at
        }
        #items
    }
}

/// A stand-in `ToolSchema` impl after an error, so uses of the type do not cascade.
pub(crate) fn schema_stub(input: &syn::DeriveInput, krate: &Path) -> TokenStream {
    let p = private(krate);
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::ToolSchema for #ident #ty_generics #where_clause {
            const SCHEMA: &'static #p::Schema = #p::STUB_SCHEMA;
        }
    }
}

/// Wraps generated items in an anonymous constant, as derives do.
///
/// No lint is allowed on them: `tests/tests/schema/lints.rs` applies both macros under
/// `clippy::pedantic` and the strict opt-in rustc lints, and the expansion trips none. A lint it
/// comes to need is allowed here by name, with the reason.
pub(crate) fn dummy_const(items: TokenStream) -> TokenStream {
    quote! {
        const _: () = {
            #items
        };
    }
}
