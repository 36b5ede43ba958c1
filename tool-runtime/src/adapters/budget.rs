//! Request-wide limits, checked on the lowered schemas before anything is sent. Totals add up
//! tool by tool, so the error names the tool that crossed the line.
//!
//! The numbers are the providers' published ones (issue 15): OpenAI's structured-outputs
//! limits (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>)
//! and Anthropic's strict tool use limits
//! (<https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs>). What Anthropic's
//! strict grammar cannot carry (numeric bounds, string lengths, `minItems` above 1) is moved into
//! descriptions by lowering (`lower::anthropic_strict`) rather than counted here.

use serde_json::{Map, Value};

use super::Provider;
use super::error::{Budget, BudgetError};
use super::lower::is_nullable;

/// OpenAI strict mode: 5 000 object properties, 10 levels of object nesting, 120 000
/// characters of property names and enum values (schemas have no `const`: the subset spells it
/// as a one-value `enum`), 1 000 enum values (of any type; the `null` that lowering adds to an
/// optional one is not counted), 15 000 characters in one
/// string enum of more than 250 values.
#[derive(Debug)]
pub(crate) struct OpenAiStrictBudget {
    provider: Provider,
    properties: usize,
    characters: usize,
    enum_values: usize,
}

/// What one schema adds to the totals.
#[derive(Debug, Default)]
struct Tally {
    properties: usize,
    characters: usize,
    enum_values: usize,
    depth: usize,
    largest_big_enum: usize,
}

impl OpenAiStrictBudget {
    pub(crate) fn new(provider: Provider) -> Self {
        Self { provider, properties: 0, characters: 0, enum_values: 0 }
    }

    /// Adds one tool's lowered parameters.
    pub(crate) fn add(
        &mut self,
        tool: &str,
        schema: &Map<String, Value>,
    ) -> Result<(), BudgetError> {
        let mut tally = Tally::default();
        count(schema, 1, &mut tally);
        self.properties += tally.properties;
        self.characters += tally.characters;
        self.enum_values += tally.enum_values;
        let checks = [
            (Budget::Properties, self.properties, 5_000),
            (Budget::Nesting, tally.depth, 10),
            (Budget::NameCharacters, self.characters, 120_000),
            (Budget::EnumValues, self.enum_values, 1_000),
            (Budget::LargeEnumCharacters, tally.largest_big_enum, 15_000),
        ];
        check(self.provider, tool, &checks)
    }
}

/// Adds up `node`, an object at nesting level `depth` if it is one.
fn count(node: &Map<String, Value>, depth: usize, tally: &mut Tally) {
    if let Some(Value::Array(values)) = node.get("enum") {
        let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        let characters: usize = strings.iter().map(|value| value.chars().count()).sum();
        // Every value counts (integers, numbers, booleans too), the lowered `null` aside.
        tally.enum_values += values.iter().filter(|value| !value.is_null()).count();
        tally.characters += characters;
        if strings.len() > 250 {
            tally.largest_big_enum = tally.largest_big_enum.max(characters);
        }
    }
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        tally.depth = tally.depth.max(depth);
        for (name, child) in properties {
            tally.properties += 1;
            tally.characters += name.chars().count();
            if let Some(child) = child.as_object() {
                count(child, depth + 1, tally);
            }
        }
    }
    if let Some(items) = node.get("items").and_then(Value::as_object) {
        // Arrays add no level of object nesting.
        count(items, depth, tally);
    }
}

/// Anthropic strict tool use: 20 strict tools, 24 optional parameters and 16 parameters with a
/// union type per request.
#[derive(Debug, Default)]
pub(crate) struct AnthropicStrictBudget {
    tools: usize,
    optional: usize,
    unions: usize,
}

impl AnthropicStrictBudget {
    /// Adds one strict tool's lowered input schema.
    pub(crate) fn add(
        &mut self,
        tool: &str,
        schema: &Map<String, Value>,
    ) -> Result<(), BudgetError> {
        self.tools += 1;
        self.parameters(schema);
        let checks = [
            (Budget::StrictTools, self.tools, 20),
            (Budget::OptionalParameters, self.optional, 24),
            (Budget::UnionParameters, self.unions, 16),
        ];
        check(Provider::Anthropic, tool, &checks)
    }

    fn parameters(&mut self, node: &Map<String, Value>) {
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (name, child) in properties {
                let Some(child) = child.as_object() else { continue };
                if !required.contains(&name.as_str()) {
                    self.optional += 1;
                }
                if is_nullable(child) {
                    self.unions += 1;
                }
                self.parameters(child);
            }
        }
        if let Some(items) = node.get("items").and_then(Value::as_object) {
            self.parameters(items);
        }
    }
}

/// Gemini: 128 function declarations per request.
pub(crate) fn gemini_declarations(tools: &[&str]) -> Result<(), BudgetError> {
    match tools.get(128) {
        Some(tool) => check(Provider::Gemini, tool, &[(Budget::Declarations, tools.len(), 128)]),
        None => Ok(()),
    }
}

fn check(
    provider: Provider,
    tool: &str,
    checks: &[(Budget, usize, usize)],
) -> Result<(), BudgetError> {
    for &(budget, actual, limit) in checks {
        if actual > limit {
            return Err(BudgetError { provider, tool: tool.to_owned(), budget, limit, actual });
        }
    }
    Ok(())
}
