//! Property names in their other spelling. A tool or catalog that tolerates case
//! ([`ToolSpec::tolerates_case`](crate::spec::ToolSpec::tolerates_case)) takes `userId` for a
//! property named `user_id`, and `user_id` for one named `userId`, at the top level of its
//! arguments: models trained on one convention slip into the other. The runner respells such
//! keys before validation, so the schema, the validator and deserialisation still agree on
//! exactly one name per property; what a model sees does not change.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::spec::SpecSchema;

/// The other spelling of a property name: camelCase for a snake_case name with at least two
/// words (`user_id` -> `userId`), snake_case for a camelCase one (`userId` -> `user_id`). `None`
/// for a name with one spelling only (`query`), one in neither form (`User_Id`, `_private`,
/// `kebab-case`), and one whose other spelling would not lead back to it.
pub(crate) fn other_spelling(name: &str) -> Option<String> {
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if name.is_empty()
        || !name.chars().all(valid)
        || !name.starts_with(|c: char| c.is_ascii_lowercase())
    {
        return None;
    }
    let has_upper = name.chars().any(|c| c.is_ascii_uppercase());
    let other = match (name.contains('_'), has_upper) {
        (true, false) => camel(name)?,
        // An acronym (`userID`) has no one snake spelling: `user_id` or `user_i_d`.
        (false, true)
            if name.as_bytes().windows(2).any(|pair| pair.iter().all(u8::is_ascii_uppercase)) =>
        {
            return None;
        }
        (false, true) => snake(name),
        _ => return None,
    };
    // Only names that round-trip: `user__id` or `userID` have no one other spelling.
    let back = if other.contains('_') { camel(&other) } else { Some(snake(&other)) };
    (back.as_deref() == Some(name)).then_some(other)
}

/// `user_id` -> `userId`; `None` for an empty word (`user__id`, `user_`).
fn camel(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    for (index, word) in name.split('_').enumerate() {
        let mut chars = word.chars();
        let first = chars.next()?;
        if index == 0 {
            out.push(first);
        } else {
            out.push(first.to_ascii_uppercase());
        }
        out.extend(chars);
    }
    Some(out)
}

/// `userId` -> `user_id`.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The properties of an object schema: each name with the keys it is read under (its name and
/// its aliases).
fn properties(schema: &SpecSchema) -> Vec<(&str, Vec<&str>)> {
    match schema {
        SpecSchema::Static(schema) => schema
            .properties()
            .unwrap_or_default()
            .iter()
            .map(|property| {
                let mut keys = vec![property.name];
                keys.extend(property.aliases);
                (property.name, keys)
            })
            .collect(),
        SpecSchema::Json(schema) => match schema.get("properties") {
            Some(Value::Object(properties)) => {
                properties.keys().map(|name| (name.as_str(), vec![name.as_str()])).collect()
            }
            _ => Vec::new(),
        },
    }
}

/// Renames each top-level key of `args` that the schema does not take but that is the other
/// spelling of one of its properties to that property's name. Returns whether a key was
/// renamed. A spelling two properties share (`user_id` beside `userId`), or one that is already
/// another property's key, renames nothing.
///
/// # Errors
///
/// A property given under both spellings (or a spelling and an alias): the message names
/// both, as for a property given under its name and its alias.
pub(crate) fn respell(schema: &SpecSchema, args: &mut Map<String, Value>) -> Result<bool, String> {
    let properties = properties(schema);
    let taken: HashSet<&str> =
        properties.iter().flat_map(|(_, keys)| keys.iter().copied()).collect();
    if args.keys().all(|key| taken.contains(key.as_str())) {
        return Ok(false);
    }
    let mut spellings: HashMap<String, Option<usize>> = HashMap::new();
    for (index, (name, _)) in properties.iter().enumerate() {
        if let Some(other) = other_spelling(name).filter(|other| !taken.contains(other.as_str())) {
            spellings.entry(other).and_modify(|slot| *slot = None).or_insert(Some(index));
        }
    }
    let renames: Vec<(String, usize)> =
        args.keys().filter_map(|key| Some((key.clone(), (*spellings.get(key)?)?))).collect();
    for (key, index) in &renames {
        let (name, keys) = &properties[*index];
        if let Some(given) = keys.iter().find(|given| args.contains_key(**given)) {
            return Err(format!(
                "`/{key}`: the property `{name}` is given twice, as `{given}` and as `{key}`; give it once"
            ));
        }
        if let Some(value) = args.remove(key) {
            args.insert((*name).to_owned(), value);
        }
    }
    Ok(!renames.is_empty())
}

#[cfg(test)]
mod tests {
    use super::other_spelling;

    #[test]
    fn each_name_has_at_most_one_other_spelling_and_it_leads_back() {
        let cases = [
            ("user_id", Some("userId")),
            ("userId", Some("user_id")),
            ("max_results", Some("maxResults")),
            ("max_results_2", None),
            ("query", None),
            ("User_Id", None),
            ("user__id", None),
            ("user_", None),
            ("_private", None),
            ("userID", None),
            ("kebab-case", None),
            ("", None),
        ];
        for (name, other) in cases {
            assert_eq!(other_spelling(name).as_deref(), other, "{name}");
        }
    }
}
