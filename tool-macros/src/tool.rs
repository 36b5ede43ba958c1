//! `#[tool(...)]`: the struct is re-emitted with `Deserialize` derived, and gets `ToolSchema`,
//! `ToolDefinition` and the `const` assertions that check it against its `Tool` impl.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Path, Token};

use crate::ast::{Body, Container};
use crate::check::check_container;
use crate::ctxt::Ctxt;
use crate::docs::doc_text;
use crate::example::example_checks;
use crate::expand::{dummy_const, private, schema_impl, schema_stub};
use crate::mode::Mode;
use crate::serde_attr;
use crate::tool_attr::{self, Redact, Required, ToolArgs};

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input.clone()) {
        Ok(input) => input,
        // Not a struct, enum or union: hand the item back untouched with the error.
        Err(_) => {
            let error = syn::Error::new_spanned(
                &input,
                "`#[tool]` goes on a struct with named fields (the tool's arguments)",
            )
            .to_compile_error();
            return quote!(#input #error);
        }
    };
    let cx = Ctxt::new();
    let args = tool_attr::parse(&cx, args);
    let krate = args.krate.clone().unwrap_or_else(|| syn::parse_quote!(::tool_runtime));
    check_not_generic(&cx, &input);
    check_no_own_derives(&cx, &input.attrs);
    let container = Container::from_ast(&cx, &input, Mode::Tool);
    if let Some(container) = &container {
        check_container(&cx, container);
    }
    let description = check_description(&cx, &input, &args, container.as_ref());
    let item = emit_struct(&input, &krate, args.client.is_some());
    let examples = container.as_ref().map(|container| {
        let fields = match &container.body {
            Body::Struct(fields) => fields.as_slice(),
            _ => &[],
        };
        let p = private(&krate);
        let ident = &input.ident;
        let schema = quote!(<#ident as #p::ToolSchema>::SCHEMA);
        example_checks(&cx, &p, &schema, fields, &args.examples)
    });
    match (cx.check(), container, args.required()) {
        (Ok(()), Some(container), Some(required)) => {
            let schema = schema_impl(&container, &krate, None);
            let (examples, example_checks) = examples.unwrap_or_default();
            let definition =
                definition_impl(&input, &args, &required, &krate, &description, &examples);
            let definition = quote!(#definition #example_checks);
            let body = dummy_const(quote!(#schema #definition));
            quote!(#item #body)
        }
        (result, _, _) => {
            let errors = result.err().map(|error| error.to_compile_error());
            let p = private(&krate);
            let ident = &input.ident;
            let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
            let schema = schema_stub(&input, &krate);
            let deserialize = deserialize_stub(&input, &krate);
            let stub = dummy_const(quote! {
                #schema
                #deserialize
                #[automatically_derived]
                impl #impl_generics #p::ToolDefinition for #ident #ty_generics #where_clause {
                    fn spec() -> &'static #p::ToolSpec {
                        &#p::STUB_SPEC
                    }
                }
            });
            quote!(#item #stub #errors)
        }
    }
}

/// Rule: a tool is not generic; its schema and spec are one frozen constant per tool.
fn check_not_generic(cx: &Ctxt, input: &DeriveInput) {
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "a tool cannot be generic: its schema and spec are frozen at compile time, one per tool; write a concrete struct for each instantiation",
        );
    }
}

/// Splits a `#[derive(...)]` into the paths `#[tool]` implements itself (`Deserialize`,
/// `ToolSchema`) and the others; `None` for other attributes.
fn split_derives(attr: &Attribute) -> Option<(Vec<Path>, Vec<Path>)> {
    if !attr.path().is_ident("derive") {
        return None;
    }
    let paths = attr.parse_args_with(Punctuated::<Path, Token![,]>::parse_terminated).ok()?;
    Some(paths.into_iter().partition(|path| {
        path.segments
            .last()
            .is_some_and(|last| last.ident == "Deserialize" || last.ident == "ToolSchema")
    }))
}

/// Rule: the user does not derive what `#[tool]` implements itself.
fn check_no_own_derives(cx: &Ctxt, attrs: &[Attribute]) {
    for (own, _) in attrs.iter().filter_map(split_derives) {
        for path in own {
            let name = path.segments.last().map(|last| last.ident.to_string()).unwrap_or_default();
            cx.error_spanned_by(
                &path,
                format_args!("`#[tool]` implements `{name}` itself; remove it from this derive"),
            );
        }
    }
}

/// Rule: a tool has a description (the `description` key, else its doc comment), because it is
/// what the model reads to choose the tool.
fn check_description(
    cx: &Ctxt,
    input: &DeriveInput,
    args: &ToolArgs,
    container: Option<&Container<'_>>,
) -> String {
    let description = match &args.description {
        Some(lit) => lit.value().trim().to_owned(),
        // Without a container (the item has the wrong shape) the doc comment still counts.
        None => container
            .map_or_else(|| doc_text(&input.attrs), |container| container.description.clone())
            .unwrap_or_default(),
    };
    if description.is_empty() {
        let at = args.description.as_ref().map_or_else(|| input.ident.span(), Spanned::span);
        cx.error_at(at, format_args!(
            "tool `{}` has no description; the model reads it to choose the tool: add a doc comment (`/// What the tool does`) or `description = \"...\"`",
            input.ident
        ));
    }
    description
}

/// The user's struct, with `Deserialize` derived (closed to unknown fields) and this crate's
/// helper attributes removed. Derives `#[tool]` replaces are dropped (they are errors already),
/// so they do not conflict with its own.
fn emit_struct(input: &DeriveInput, krate: &Path, client: bool) -> TokenStream {
    let mut item = input.clone();
    if client {
        // A client tool's fields describe its arguments and are checked by deserialising
        // them; no code of the application reads them, and that is no mistake to warn about.
        item.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    }
    // Serde cannot derive for a union (an error already): its attributes go with the derive.
    let is_union = matches!(item.data, Data::Union(_));
    let strip = |attrs: &mut Vec<Attribute>| {
        attrs.retain(|attr| {
            let ours = attr.path().is_ident("schema");
            let serde_on_union = is_union && attr.path().is_ident("serde");
            !ours && !serde_on_union
        });
    };
    strip(&mut item.attrs);
    item.attrs = std::mem::take(&mut item.attrs)
        .into_iter()
        .filter_map(|attr| match split_derives(&attr) {
            Some((own, _)) if own.is_empty() => Some(attr),
            Some((_, others)) if others.is_empty() => None,
            Some((_, others)) => {
                Some(syn::parse_quote_spanned!(attr.span()=> #[derive(#(#others),*)]))
            }
            None => Some(attr),
        })
        .collect();
    match &mut item.data {
        Data::Struct(data) => data.fields.iter_mut().for_each(|field| strip(&mut field.attrs)),
        Data::Enum(data) => {
            for variant in &mut data.variants {
                strip(&mut variant.attrs);
                variant.fields.iter_mut().for_each(|field| strip(&mut field.attrs));
            }
        }
        Data::Union(data) => data.fields.named.iter_mut().for_each(|field| strip(&mut field.attrs)),
    }
    let serde_path = format!("{}::__private::serde", quote!(#krate)).replace(' ', "");
    let p = private(krate);
    // Enums and unions are errors already; an enum still gets `Deserialize` so the user's
    // `impl Tool` does not fail on it too (a union gets a stub, see `deserialize_stub`).
    let derive = match &item.data {
        Data::Struct(_) => {
            let deny = (!serde_attr::has_flag(&input.attrs, "deny_unknown_fields"))
                .then(|| quote!(#[serde(deny_unknown_fields)]));
            Some(quote!(#[derive(#p::serde::Deserialize)] #[serde(crate = #serde_path)] #deny))
        }
        Data::Enum(_) => {
            Some(quote!(#[derive(#p::serde::Deserialize)] #[serde(crate = #serde_path)]))
        }
        Data::Union(_) => None,
    };
    quote!(#derive #item)
}

/// A stand-in `Deserialize` for a union under `#[tool]` (an error; serde derives none), so the
/// user's `impl Tool` does not fail on it too. Never called: the build fails.
fn deserialize_stub(input: &DeriveInput, krate: &Path) -> Option<TokenStream> {
    if !matches!(input.data, Data::Union(_)) {
        return None;
    }
    let p = private(krate);
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    generics.params.insert(0, syn::parse_quote!('de));
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let (_, ty_generics, _) = input.generics.split_for_impl();
    Some(quote! {
        #[automatically_derived]
        impl #impl_generics #p::serde::Deserialize<'de> for #ident #ty_generics #where_clause {
            fn deserialize<D: #p::serde::Deserializer<'de>>(_: D) -> ::core::result::Result<Self, D::Error> {
                ::core::result::Result::Err(<D::Error as #p::serde::de::Error>::custom("not a tool"))
            }
        }
    })
}

/// `impl ToolDefinition`, with the spec as a `static`, and the assertions that need the
/// `Tool` impl: the `redact` and `redact_details` allowlists fit the output's shape.
fn definition_impl(
    input: &DeriveInput,
    args: &ToolArgs,
    required: &Required<'_>,
    krate: &Path,
    description: &str,
    examples: &[TokenStream],
) -> TokenStream {
    let p = private(krate);
    let ident = &input.ident;
    let name = required.name.value();
    let effect = required.effect.variant();
    let requires_connection = args.requires_connection;
    let client = args.client.is_some();
    let tolerate_case = args.tolerate_case;
    let callers = args.callers.unwrap_or(crate::tool_attr::Callers::Direct).variant();
    let asynchronous = args.asynchronous;
    let client_impl = args.client.as_ref().map(|output| {
        // The tool's behaviour is its client's: the runner ends each call waiting for the
        // result the client supplies, checked against `output`'s schema and redacted like a
        // `run`'s. `run` exists for the trait alone.
        quote_spanned! {output.span()=>
            #[automatically_derived]
            impl #p::Tool for #ident {
                type Output = #output;
                fn run(
                    self,
                    _: &#p::ToolInvocationContext,
                    _: &#p::ToolCapabilities,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<#output, #p::ToolError>,
                > + ::core::marker::Send {
                    #p::client_tool_run::<#output>()
                }
            }
        }
    });
    let output = quote_spanned!(ident.span()=> output_schemas::<#ident>().0);
    let details = quote_spanned!(ident.span()=> output_schemas::<#ident>().1);
    let output_check = quote_spanned!(ident.span()=> output_schemas::<#ident>().2);
    let capabilities = args
        .capabilities
        .iter()
        .map(|ty| quote_spanned!(ty.span()=> #p::CapabilityRef::of::<#ty>()));
    let redaction = redaction_value(&p, Some(required.redact));
    let details_redaction =
        redaction_value(&p, args.redact_details.as_ref().map(|(_, redact)| redact));
    let redact_checks = output_redact_checks(&p, ident, required.redact, &output);
    let details_checks = details_redact_checks(&p, ident, args, &details);
    let depth_message = "this tool's arguments nest objects more than 10 levels deep (the arguments object is level 1); OpenAI's strict mode accepts at most 10, so no strict request could carry this tool: flatten the arguments";
    let depth_check = quote_spanned! {ident.span()=>
        const _: () = ::core::assert!(
            #p::object_depth(<#ident as #p::ToolSchema>::SCHEMA) <= #p::MAX_STRICT_DEPTH,
            #depth_message
        );
    };
    let connection_message = "a property of this tool's arguments is a connection id; connections travel in the invocation context, never in arguments";
    quote! {
        // Reads the output and details schemas through one `T: Tool` bound, so a missing `Tool`
        // impl is reported once, and an `Output` that breaks the trait's bounds once, at the
        // user's `type Output`, and not again here.
        const fn output_schemas<T: #p::Tool>() -> (
            ::core::option::Option<&'static #p::Schema>,
            ::core::option::Option<&'static #p::Schema>,
            ::core::option::Option<#p::OutputCheck>,
        ) {
            (
                <T::Output as #p::IntoToolOutput>::OUTPUT_SCHEMA,
                <T::Output as #p::IntoToolOutput>::DETAILS_SCHEMA,
                <T::Output as #p::IntoToolOutput>::OUTPUT_CHECK,
            )
        }
        #[automatically_derived]
        impl #p::ToolDefinition for #ident {
            fn spec() -> &'static #p::ToolSpec {
                const PARTS: #p::StaticSpecParts = #p::StaticSpecParts {
                    name: #name,
                    description: #description,
                    effect: #p::ToolEffect::#effect,
                    input_schema: <#ident as #p::ToolSchema>::SCHEMA,
                    output_schema: #output,
                    output_check: #output_check,
                    redaction: #redaction,
                    details_schema: #details,
                    details_redaction: #details_redaction,
                    requires_connection: #requires_connection,
                    client: #client,
                    tolerate_case: #tolerate_case,
                    callers: #p::Callers::#callers,
                    asynchronous: #asynchronous,
                    capabilities: &[#(#capabilities),*],
                    examples: &[#(#examples),*],
                };
                static SPEC: #p::ToolSpec = #p::ToolSpec::__from_static(PARTS);
                &SPEC
            }
        }
        #client_impl
        #redact_checks
        #details_checks
        const _: () = ::core::assert!(
            !#p::contains_connection_id(<#ident as #p::ToolSchema>::SCHEMA),
            #connection_message
        );
        #depth_check
    }
}

/// The `Redaction` an allowlist builds; keeping nothing when there is none.
fn redaction_value(p: &TokenStream, redact: Option<&Redact>) -> TokenStream {
    match redact {
        Some(Redact::All(span)) => quote_spanned!(*span=> #p::StaticRedaction::All),
        Some(Redact::Paths(paths)) => quote!(#p::StaticRedaction::Paths(&[#(#paths),*])),
        None => quote!(#p::StaticRedaction::Paths(&[])),
    }
}

/// Rule: a list of `redact` paths needs an output with fields (an object, or an array of
/// objects), and each path names one of them. A string, number, `bool` or unit enum output is
/// kept whole (`redact = all`) or not at all (`redact = []`): there is no silent default.
fn output_redact_checks(
    p: &TokenStream,
    ident: &syn::Ident,
    redact: &Redact,
    output: &TokenStream,
) -> TokenStream {
    let paths = redact.paths();
    let Some(first) = paths.first() else { return TokenStream::new() };
    let no_fields = format!(
        "`redact` lists fields, but this tool's output (`<{ident} as Tool>::Output`) has none: it is a string, a number, a bool, a unit enum, an array of those, or a `Content` without a structured value; write `redact = all` to let the whole output through or `redact = []` to let nothing through"
    );
    let each = paths.iter().map(|lit| {
        let message = format!(
            "`redact` entry `{}` is not a field of this tool's output (`<{ident} as Tool>::Output`); name a field as serialised, with dots for nested ones (`\"hits.title\"`)",
            lit.value()
        );
        quote_spanned! {lit.span()=>
            const _: () = ::core::assert!(
                !#p::has_fields(#output) || #p::has_output_path(#output, #lit),
                #message
            );
        }
    });
    let fields = quote_spanned! {first.span()=>
        const _: () = ::core::assert!(#p::has_fields(#output), #no_fields);
    };
    quote!(#(#each)* #fields)
}

/// Rule: `redact_details` is given exactly when the output has details (a `Content<T, D>` with
/// `D` other than `()`), and its paths name fields of the details like `redact` does for the
/// output.
fn details_redact_checks(
    p: &TokenStream,
    ident: &syn::Ident,
    args: &ToolArgs,
    details: &TokenStream,
) -> TokenStream {
    let Some((key, redact)) = &args.redact_details else {
        let missing = format!(
            "missing tool attribute `redact_details`: this tool's output (`<{ident} as Tool>::Output`) has details; add `redact_details = [\"field\"]` listing the detail fields the application may receive, `redact_details = all` to pass them whole, or `redact_details = []` to drop them"
        );
        return quote! {
            const _: () = ::core::assert!(#details.is_none(), #missing);
        };
    };
    let unused = format!(
        "`redact_details` is given, but this tool's output (`<{ident} as Tool>::Output`) has no details; remove it, or return details with `Content::details`"
    );
    let no_fields = format!(
        "`redact_details` lists fields, but the details of this tool's output (`<{ident} as Tool>::Output`) have none; write `redact_details = all` to pass them whole or `redact_details = []` to drop them"
    );
    let each = redact.paths().iter().map(|lit| {
        let message = format!(
            "`redact_details` entry `{}` is not a field of this tool's details; name a field as serialised, with dots for nested ones",
            lit.value()
        );
        quote_spanned! {lit.span()=>
            const _: () = ::core::assert!(
                #details.is_none() || !#p::has_fields(#details) || #p::has_output_path(#details, #lit),
                #message
            );
        }
    });
    let fields = redact.paths().first().map(|first| {
        quote_spanned! {first.span()=>
            const _: () = ::core::assert!(#details.is_none() || #p::has_fields(#details), #no_fields);
        }
    });
    quote_spanned! {key.span()=>
        const _: () = ::core::assert!(#details.is_some(), #unused);
        #(#each)*
        #fields
    }
}
