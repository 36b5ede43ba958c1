//! `#[derive(ToolSchema)]`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::ast::Container;
use crate::check::check_container;
use crate::ctxt::Ctxt;
use crate::expand::{dummy_const, schema_impl, schema_stub};
use crate::mode::Mode;

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let krate = crate::schema_attr::crate_override(&input.attrs)
        .unwrap_or_else(|| syn::parse_quote!(::tool_runtime));
    let cx = Ctxt::new();
    let container = Container::from_ast(&cx, &input, Mode::Derive);
    if let Some(container) = &container {
        check_container(&cx, container);
    }
    match (cx.check(), container) {
        (Ok(()), Some(container)) => {
            dummy_const(schema_impl(&container, &krate, container.description.as_deref()))
        }
        (result, _) => {
            let errors = result.err().map(|error| error.to_compile_error());
            let stub = dummy_const(schema_stub(&input, &krate));
            quote!(#stub #errors)
        }
    }
}
