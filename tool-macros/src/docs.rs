//! Doc comments as descriptions.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of the `///` comments (`#[doc = "..."]`), one leading space per line removed,
/// trimmed; `None` when there is none.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if let Meta::NameValue(meta) = &attr.meta
            && meta.path.is_ident("doc")
            && let Expr::Lit(ExprLit { lit: Lit::Str(text), .. }) = &meta.value
        {
            let text = text.value();
            // A blank `///` line is an empty string: keep it, it separates paragraphs.
            if text.is_empty() {
                lines.push(String::new());
            }
            for line in text.lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    let text = lines.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}
