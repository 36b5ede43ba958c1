//! `#[serde(rename_all = "...")]`, reproducing the names serde gives fields and variants.

/// A `rename_all` rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    pub(crate) const NAMES: &'static [&'static str] = &[
        "lowercase",
        "UPPERCASE",
        "PascalCase",
        "camelCase",
        "snake_case",
        "SCREAMING_SNAKE_CASE",
        "kebab-case",
        "SCREAMING-KEBAB-CASE",
    ];

    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            _ => return None,
        })
    }

    /// The serialised name of a field written in `snake_case`.
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            Self::Lower | Self::Snake => field.to_owned(),
            Self::Upper | Self::ScreamingSnake => field.to_ascii_uppercase(),
            Self::Pascal => {
                let mut out = String::with_capacity(field.len());
                let mut capitalize = true;
                for c in field.chars() {
                    if c == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(c.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            Self::Camel => lower_first(&Self::Pascal.apply_to_field(field)),
            Self::Kebab => field.replace('_', "-"),
            Self::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// The serialised name of a variant written in `PascalCase`.
    pub(crate) fn apply_to_variant(self, variant: &str) -> String {
        match self {
            Self::Pascal => variant.to_owned(),
            Self::Lower => variant.to_ascii_lowercase(),
            Self::Upper => variant.to_ascii_uppercase(),
            Self::Camel => lower_first(variant),
            Self::Snake => {
                let mut out = String::with_capacity(variant.len() + 4);
                for (i, c) in variant.char_indices() {
                    if i > 0 && c.is_uppercase() {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                }
                out
            }
            Self::ScreamingSnake => Self::Snake.apply_to_variant(variant).to_ascii_uppercase(),
            Self::Kebab => Self::Snake.apply_to_variant(variant).replace('_', "-"),
            Self::ScreamingKebab => {
                Self::ScreamingSnake.apply_to_variant(variant).replace('_', "-")
            }
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule;

    #[test]
    fn fields_and_variants() {
        let cases = [
            (RenameRule::Camel, "connection_id", "connectionId"),
            (RenameRule::Pascal, "epoch_ms", "EpochMs"),
            (RenameRule::ScreamingKebab, "epoch_ms", "EPOCH-MS"),
            (RenameRule::Kebab, "epoch_ms", "epoch-ms"),
        ];
        for (rule, field, expected) in cases {
            assert_eq!(rule.apply_to_field(field), expected);
        }
        assert_eq!(RenameRule::Snake.apply_to_variant("MostRelevant"), "most_relevant");
        assert_eq!(RenameRule::Camel.apply_to_variant("MostRelevant"), "mostRelevant");
        assert_eq!(RenameRule::ScreamingKebab.apply_to_variant("MostRelevant"), "MOST-RELEVANT");
    }
}
