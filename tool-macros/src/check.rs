//! Rules that span several fields, one function each.

use std::collections::BTreeMap;

use syn::visit::Visit;

use crate::ast::{Body, Container, Field};
use crate::ctxt::Ctxt;

/// Runs every container rule.
pub(crate) fn check_container(cx: &Ctxt, container: &Container<'_>) {
    check_connection_id(cx, container);
    check_unique_names(cx, container);
    check_not_recursive(cx, container);
}

/// Rule: no property is a connection id, however spelt (`tool_rules::is_connection_id`, the
/// rule the runtime applies too), under its name or under one of its `#[serde(alias)]` keys:
/// connections travel in the invocation context, never in arguments or results.
fn check_connection_id(cx: &Ctxt, container: &Container<'_>) {
    if let Body::Struct(fields) = &container.body {
        for field in fields {
            let aliases = field.serde.aliases.iter().map(|alias| (alias.value(), alias.span()));
            for (name, span) in
                std::iter::once((field.name.clone(), field.name_span)).chain(aliases)
            {
                if tool_rules::is_connection_id(&name) {
                    cx.error_at(
                        span,
                        format_args!(
                            "property `{name}` is a connection id: connections travel in the invocation context (`ctx.connection_id()`), never in a tool's arguments or results; remove the field and add `requires_connection` to the tool"
                        ),
                    );
                }
            }
        }
    }
}

/// Rule: no two properties (or enum values) serialise under the same name, and no
/// `#[serde(alias)]` of a property is another property's name or alias (serde would read the
/// key as whichever field comes first, which the schema cannot say).
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
    if let Body::Struct(fields) = &container.body {
        check_unique_aliases(cx, fields);
    }
}

/// The alias half of `check_unique_names`: every key a property is read under (its name, its
/// aliases) belongs to that property alone. An alias repeating its own field's name is
/// harmless and left alone.
fn check_unique_aliases(cx: &Ctxt, fields: &[Field<'_>]) {
    // Each key read as a property, with the index of the field it belongs to.
    let mut owners: BTreeMap<String, usize> =
        fields.iter().enumerate().map(|(index, field)| (field.name.clone(), index)).collect();
    for (index, field) in fields.iter().enumerate() {
        for alias in &field.serde.aliases {
            let key = alias.value();
            match owners.get(&key) {
                Some(&owner) if owner != index => {
                    let other = &fields[owner];
                    let what = if other.name == key {
                        format!("the name of the property `{key}`")
                    } else {
                        format!("an alias of the property `{}` too", other.name)
                    };
                    cx.error_at(
                        alias.span(),
                        format_args!(
                            "alias `{key}` of the property `{}` is {what}: serde would read `{key}` as whichever field comes first; remove the alias or rename one of the fields",
                            field.name
                        ),
                    );
                }
                Some(_) => {}
                None => {
                    owners.insert(key, index);
                }
            }
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
