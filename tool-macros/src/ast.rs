//! The parsed model of an item: what `#[derive(ToolSchema)]` and `#[tool]` read from the user's
//! code, with serde's renames applied.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Type};

use crate::ctxt::Ctxt;
use crate::docs::doc_text;
use crate::mode::Mode;
use crate::schema_attr::{self, FieldSchema};
use crate::serde_attr::{self, SerdeContainer, SerdeField};

pub(crate) struct Container<'a> {
    pub(crate) input: &'a DeriveInput,
    pub(crate) description: Option<String>,
    pub(crate) serde: SerdeContainer,
    pub(crate) body: Body<'a>,
}

pub(crate) enum Body<'a> {
    /// Named fields, skipped ones left out.
    Struct(Vec<Field<'a>>),
    /// A newtype (or `#[serde(transparent)]` struct): the schema of its one field.
    Newtype(Box<Field<'a>>),
    /// An enum whose variants carry no data, skipped ones left out.
    Enum(Vec<Variant>),
}

pub(crate) struct Field<'a> {
    pub(crate) ty: &'a Type,
    /// The serialised name (`rename`/`rename_all` applied).
    pub(crate) name: String,
    /// Where the name was written: the `rename` literal, else the field's identifier.
    pub(crate) name_span: Span,
    pub(crate) description: Option<String>,
    pub(crate) serde: SerdeField,
    pub(crate) schema: FieldSchema,
}

pub(crate) struct Variant {
    pub(crate) name: String,
    pub(crate) span: Span,
}

fn shape_error(mode: Mode, what: &str) -> String {
    match mode {
        Mode::Tool => format!(
            "`#[tool]` goes on a struct with named fields (the tool's arguments), not on {what}"
        ),
        Mode::Derive => format!("`ToolSchema` cannot be derived for {what}"),
    }
}

impl<'a> Container<'a> {
    /// Reads the item; `None` when its shape has no schema at all (the error is recorded).
    pub(crate) fn from_ast(cx: &Ctxt, input: &'a DeriveInput, mode: Mode) -> Option<Self> {
        let is_enum = matches!(input.data, Data::Enum(_));
        let serde = serde_attr::container(cx, &input.attrs, is_enum);
        let description = schema_attr::container(cx, &input.attrs, mode)
            .map(|lit| lit.value())
            .or_else(|| doc_text(&input.attrs));
        let body = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => {
                    let fields: Vec<Field<'a>> = named
                        .named
                        .iter()
                        .filter_map(|field| Field::from_ast(cx, field, &serde))
                        .collect();
                    if serde.transparent && mode == Mode::Derive && fields.len() == 1 {
                        Body::Newtype(Box::new(fields.into_iter().next()?))
                    } else {
                        if serde.transparent {
                            cx.error_spanned_by(&input.ident, match mode {
                                Mode::Tool => "a tool's arguments are an object: remove `#[serde(transparent)]`",
                                Mode::Derive => "`#[serde(transparent)]` needs exactly one field that is not skipped",
                            });
                        }
                        Body::Struct(fields)
                    }
                }
                Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 && mode == Mode::Derive => {
                    let field = Field::from_ast(cx, &unnamed.unnamed[0], &serde)?;
                    Body::Newtype(Box::new(field))
                }
                Fields::Unnamed(unnamed) => {
                    let what = if unnamed.unnamed.len() == 1 {
                        "a tuple struct; name its field: `struct Name { field: Type }`"
                    } else {
                        "a tuple struct: it serialises as a JSON array of mixed types, which the schema subset cannot describe; name the fields"
                    };
                    cx.error_spanned_by(&data.fields, shape_error(mode, what));
                    return None;
                }
                Fields::Unit => {
                    let what = match mode {
                        Mode::Tool => {
                            "a unit struct; a tool without arguments is written `struct Name {}`"
                        }
                        Mode::Derive => {
                            "a unit struct: serde reads it as `null`; use `struct Name {}` for an empty object"
                        }
                    };
                    cx.error_spanned_by(&input.ident, shape_error(mode, what));
                    return None;
                }
            },
            Data::Enum(data) => {
                if mode == Mode::Tool {
                    cx.error_spanned_by(data.enum_token, shape_error(mode, "an enum: the arguments are an object; put the enum in a field and derive `ToolSchema` on it"));
                    return None;
                }
                let mut variants = Vec::new();
                for variant in &data.variants {
                    let attrs = serde_attr::variant(cx, &variant.attrs);
                    if !matches!(variant.fields, Fields::Unit) {
                        if serde.rejected_repr {
                            continue;
                        }
                        cx.error_spanned_by(
                            &variant.fields,
                            format_args!(
                                "variant `{}` carries data: a data-carrying enum needs `oneOf`, which the schema subset forbids; use variants without data, or a struct with an enum field and optional fields",
                                variant.ident
                            ),
                        );
                        continue;
                    }
                    if attrs.skip {
                        continue;
                    }
                    let (name, span) = match attrs.rename {
                        Some(renamed) => renamed,
                        None => {
                            let raw = variant.ident.unraw().to_string();
                            let name = serde
                                .rename_all
                                .map_or_else(|| raw.clone(), |rule| rule.apply_to_variant(&raw));
                            (name, variant.ident.span())
                        }
                    };
                    variants.push(Variant { name, span });
                }
                if variants.is_empty() && !cx.has_errors() {
                    cx.error_spanned_by(&input.ident, "an enum without (unskipped) variants has no values: its `enum` would be empty");
                }
                Body::Enum(variants)
            }
            Data::Union(data) => {
                cx.error_spanned_by(
                    data.union_token,
                    shape_error(mode, "a union: use a struct with named fields"),
                );
                return None;
            }
        };
        Some(Self { input, description, serde, body })
    }
}

impl<'a> Field<'a> {
    /// `None` for a `#[serde(skip)]` field: it is in neither schema nor wire format.
    fn from_ast(cx: &Ctxt, field: &'a syn::Field, container: &SerdeContainer) -> Option<Self> {
        let serde = serde_attr::field(cx, &field.attrs);
        let schema = schema_attr::field(cx, &field.attrs);
        if serde.skip {
            return None;
        }
        let (name, name_span) = match (&serde.rename, &field.ident) {
            (Some((name, span)), _) => (name.clone(), *span),
            (None, Some(ident)) => {
                let raw = ident.unraw().to_string();
                let name = container
                    .rename_all
                    .map_or_else(|| raw.clone(), |rule| rule.apply_to_field(&raw));
                (name, ident.span())
            }
            (None, None) => (String::new(), field.ty.span()),
        };
        let description =
            schema.description.as_ref().map(syn::LitStr::value).or_else(|| doc_text(&field.attrs));
        Some(Self { ty: &field.ty, name, name_span, description, serde, schema })
    }

    /// Whether the property may be absent whatever its type (`default` on the field or the
    /// container); otherwise the type's `ToolSchema::OPTIONAL` decides.
    pub(crate) fn always_optional(&self, container: &SerdeContainer) -> bool {
        container.default || self.serde.default
    }
}
