//! `#[tool(...)]`: the struct is re-emitted with `Deserialize` derived, and gets `ToolSchema`,
//! `ToolDefinition` and the `const` assertions that check it against its `Tool` impl.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, DeriveInput, Path, Token};

use crate::ast::{Container, Mode};
use crate::check::check_container;
use crate::ctxt::Ctxt;
use crate::expand::{dummy_const, private, schema_impl, schema_stub};
use crate::serde_attr;
use crate::tool_attr::{self, ToolArgs};

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input.clone()) {
        Ok(input) => input,
        // Not a struct, enum or union: hand the item back untouched with the error.
        Err(_) => {
            let error = syn::Error::new_spanned(&input, "`#[tool]` goes on a struct with named fields (the tool's arguments)").to_compile_error();
            return quote!(#input #error);
        }
    };
    let cx = Ctxt::new();
    let args = tool_attr::parse(&cx, args, input.ident.span());
    let krate = args.krate.clone().unwrap_or_else(|| syn::parse_quote!(::tool_runtime));
    check_not_generic(&cx, &input);
    check_no_own_derives(&cx, &input.attrs);
    let container = Container::from_ast(&cx, &input, Mode::Tool);
    if let Some(container) = &container {
        check_container(&cx, container);
    }
    let description = check_description(&cx, &input, &args, container.as_ref());
    let item = emit_struct(&input, &krate);
    match (cx.check(), container) {
        (Ok(()), Some(container)) => {
            let schema = schema_impl(&container, &krate, None);
            let definition = definition_impl(&input, &args, &krate, &description);
            let body = dummy_const(quote!(#schema #definition));
            quote!(#item #body)
        }
        (result, _) => {
            let errors = result.err().map(|error| error.to_compile_error());
            let p = private(&krate);
            let ident = &input.ident;
            let schema = schema_stub(&input, &krate);
            let stub = dummy_const(quote! {
                #schema
                #[automatically_derived]
                impl #p::ToolDefinition for #ident {
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

/// Rule: the user does not derive what `#[tool]` implements itself.
fn check_no_own_derives(cx: &Ctxt, attrs: &[Attribute]) {
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("derive")) {
        let Ok(paths) = attr.parse_args_with(Punctuated::<Path, Token![,]>::parse_terminated) else {
            continue;
        };
        for path in paths {
            let Some(last) = path.segments.last() else { continue };
            if last.ident == "Deserialize" || last.ident == "ToolSchema" {
                cx.error_spanned_by(
                    &path,
                    format_args!("`#[tool]` implements `{}` itself; remove it from this derive", last.ident),
                );
            }
        }
    }
}

/// Rule: a tool has a description (the `description` key, else its doc comment), because it is
/// what the model reads to choose the tool.
fn check_description(cx: &Ctxt, input: &DeriveInput, args: &ToolArgs, container: Option<&Container<'_>>) -> String {
    let description = match &args.description {
        Some(lit) => lit.value().trim().to_owned(),
        None => container.and_then(|container| container.description.clone()).unwrap_or_default(),
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
/// helper attributes removed.
fn emit_struct(input: &DeriveInput, krate: &Path) -> TokenStream {
    let mut item = input.clone();
    let strip = |attrs: &mut Vec<Attribute>| attrs.retain(|attr| !attr.path().is_ident("schema"));
    strip(&mut item.attrs);
    if let syn::Data::Struct(data) = &mut item.data {
        for field in &mut data.fields {
            strip(&mut field.attrs);
        }
    }
    let serde_path = format!("{}::__private::serde", quote!(#krate)).replace(' ', "");
    let p = private(krate);
    let deny = (!serde_attr::has_flag(&input.attrs, "deny_unknown_fields")).then(|| quote!(#[serde(deny_unknown_fields)]));
    let syn::DeriveInput { attrs, vis, ident, generics, data, .. } = &item;
    let body = match data {
        syn::Data::Struct(data) => {
            let fields = &data.fields;
            let semi = data.semi_token;
            quote!(struct #ident #generics #fields #semi)
        }
        // Other shapes are errors already; emit them as written.
        syn::Data::Enum(data) => {
            let variants = &data.variants;
            quote!(enum #ident #generics { #variants })
        }
        syn::Data::Union(data) => {
            let fields = &data.fields;
            quote!(union #ident #generics #fields)
        }
    };
    let derive = matches!(data, syn::Data::Struct(_)).then(|| quote! {
        #[derive(#p::serde::Deserialize)]
        #[serde(crate = #serde_path)]
        #deny
    });
    quote! {
        #derive
        #(#attrs)*
        #vis #body
    }
}

/// `impl ToolDefinition`, with the spec as a `static`, and the assertions that need the
/// `Tool` impl: every `redact` path names a field of the output.
fn definition_impl(input: &DeriveInput, args: &ToolArgs, krate: &Path, description: &str) -> TokenStream {
    let p = private(krate);
    let ident = &input.ident;
    let name = args.name.as_ref().map(syn::LitStr::value).unwrap_or_default();
    let effect = match args.effect.as_ref().map(ToString::to_string).as_deref() {
        Some("read_only") => quote!(ReadOnly),
        Some("state_change") => quote!(StateChange),
        _ => quote!(ExternalSideEffect),
    };
    let paths = args.redact.clone().unwrap_or_default();
    let requires_connection = args.requires_connection;
    let output = quote_spanned!(ident.span()=> <<#ident as #p::Tool>::Output as #p::ToolSchema>::SCHEMA);
    let capabilities = args.capabilities.iter().map(|ty| quote_spanned!(ty.span()=> #p::CapabilityRef::of::<#ty>()));
    let redact_checks = paths.iter().map(|lit| {
        let message = format!("`redact` entry `{}` names no field of this tool's output type", lit.value());
        quote_spanned!(lit.span()=> const _: () = ::core::assert!(#p::has_path(#output, #lit), #message);)
    });
    let connection_message = "a property of this tool's arguments is a connection id; connections travel in the invocation context, never in arguments";
    quote! {
        #[automatically_derived]
        impl #p::ToolDefinition for #ident {
            fn spec() -> &'static #p::ToolSpec {
                const PARTS: #p::StaticSpecParts = #p::StaticSpecParts {
                    name: #name,
                    description: #description,
                    effect: #p::ToolEffect::#effect,
                    input_schema: <#ident as #p::ToolSchema>::SCHEMA,
                    output_schema: #output,
                    redaction: &[#(#paths),*],
                    requires_connection: #requires_connection,
                    capabilities: &[#(#capabilities),*],
                };
                static SPEC: #p::ToolSpec = #p::ToolSpec::__from_static(PARTS);
                &SPEC
            }
        }
        #(#redact_checks)*
        const _: () = ::core::assert!(
            !#p::contains_connection_id(<#ident as #p::ToolSchema>::SCHEMA),
            #connection_message
        );
    }
}
