//! Rules that span several fields, one function each.

use std::collections::BTreeMap;

use syn::visit::Visit;

use crate::ast::{Body, Container};
use crate::ctxt::Ctxt;

/// Runs every container rule.
pub(crate) fn check_container(cx: &Ctxt, container: &Container<'_>) {
    check_connection_id(cx, container);
    check_unique_names(cx, container);
    check_not_recursive(cx, container);
}

/// Rule: no property is a connection id, however spelt (`tool_rules::is_connection_id`, the
/// rule the runtime applies too): connections travel in the invocation context, never in
/// arguments or results.
fn check_connection_id(cx: &Ctxt, container: &Container<'_>) {
    if let Body::Struct(fields) = &container.body {
        for field in fields.iter().filter(|field| tool_rules::is_connection_id(&field.name)) {
            cx.error_at(
                field.name_span,
                format_args!(
                    "property `{}` is a connection id: connections travel in the invocation context (`ctx.connection_id()`), never in a tool's arguments or results; remove the field and add `requires_connection` to the tool",
                    field.name
                ),
            );
        }
    }
}

/// Rule: no two properties (or enum values) serialise under the same name.
fn check_unique_names(cx: &Ctxt, container: &Container<'_>) {
    let names: Vec<(&str, proc_macro2::Span)> = match &container.body {
        Body::Struct(fields) => {
            fields.iter().map(|field| (field.name.as_str(), field.name_span)).collect()
        }
        Body::Enum(variants) => {
            variants.iter().map(|variant| (variant.name.as_str(), variant.span)).collect()
        }
        Body::Newtype(_) => return,
    };
    let mut seen = BTreeMap::new();
    for (name, span) in names {
        if seen.insert(name, span).is_some() {
            cx.error_at(
                span,
                format_args!("`{name}` is serialised twice in this type; rename one of them"),
            );
        }
    }
}

/// Rule: a type does not contain itself; its schema would need `$ref`, which the subset forbids.
/// (Recursion through other types is caught by the compiler as a cycle in the schema constants.)
fn check_not_recursive(cx: &Ctxt, container: &Container<'_>) {
    struct Finds<'i> {
        ident: &'i syn::Ident,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Finds<'_> {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            if path.is_ident(self.ident) || path.is_ident("Self") {
                self.found = true;
            }
            syn::visit::visit_path(self, path);
        }
    }
    let fields: Vec<_> = match &container.body {
        Body::Struct(fields) => fields.iter().collect(),
        Body::Newtype(field) => vec![field],
        Body::Enum(_) => return,
    };
    for field in fields {
        let mut finds = Finds { ident: &container.input.ident, found: false };
        finds.visit_type(field.ty);
        if finds.found {
            cx.error_spanned_by(
                field.ty,
                format_args!(
                    "`{}` contains itself: a recursive type's schema needs `$ref`, which the schema subset forbids; bound the depth with separate types",
                    container.input.ident
                ),
            );
        }
    }
}
