//! GBNF grammars (llama.cpp's grammar format) for calls to tools, generated from their const
//! schemas, so a local model without native tool calling can be constrained to a well-formed
//! call.
//!
//! A model sampled under [`Grammar::for_tools`] writes exactly one JSON object of this shape
//! (the shape of an Ollama `function` object, `arguments` an object, not a string):
//!
//! ```json
//! {"name": "<tool name>", "arguments": { ... }}
//! ```
//!
//! `name` comes first and is one of the tools' names; `arguments` follows the tool's input
//! schema, its properties in the schema's order. Pass [`Grammar::as_str`] as llama.cpp's
//! `grammar` (the server's `/completion` field, `llama-cli --grammar`, llama-cpp-python's
//! `LlamaGrammar.from_string`), parse the text the model wrote, then hand `name` and
//! `arguments` to the runner, which validates them as it validates every call.
//!
//! # What the grammar enforces, and what only the validator does
//!
//! The grammar enforces: JSON syntax (strings with their escapes, no raw control characters,
//! no lone surrogates); every property's type; `null` only where the schema is nullable;
//! required properties present and optional ones optional; no property outside the schema;
//! enum values; string `minLength`/`maxLength` and array `minItems`/`maxItems` up to
//! [`MAX_EXPANDED_COUNT`]; the sign of an integer or number whose lower bound is `0` or more;
//! an integer's number of digits (no more than its widest bound has), and an integer pinned
//! to one value.
//!
//! Left to the validator, and listed by [`Grammar::unchecked`] for the schema at hand: string
//! `pattern`s, integer and number bounds beyond sign and digit count, lengths and item counts
//! above [`MAX_EXPANDED_COUNT`], and `uniqueItems`. The runner validates every call's
//! arguments against the full schema, so a call that slips through these is refused there
//! with the validator's usual errors.
//!
//! The grammar is also narrower than the schema in ways that never shut out a value, only a
//! way of writing it: properties come in the schema's order, under their names (not their
//! aliases); integers are written without fraction or exponent (`3`, never `3.0`); an integer
//! without a bound has at most 20 digits; a number's integer part has at most 21 digits and
//! its fraction at most 24 (write an exponent beyond that), its exponent at most 3 digits;
//! enum values and keys are written as `serde_json` writes them (no needless `\u` escapes);
//! whitespace is bounded, as llama.cpp recommends: at most one space, or one newline and 20
//! spaces or tabs of indentation, wherever JSON allows whitespace inside the call (none
//! before or after it). Every value that `serde_json` writes, compact or pretty up to ten levels
//! of indentation, matches.
//!
//! Rule names are derived from the tool name and the property path (lowercase letters, digits
//! and dashes, as GBNF requires), deterministically: the same specs give the same grammar,
//! byte for byte.
//!
//! ```
//! use tool_runtime::gbnf::{Grammar, Unchecked};
//! use tool_runtime::prelude::*;
//!
//! /// Search the documentation.
//! #[tool(name = "docs__search", effect = read_only, redact = ["titles"])]
//! struct Search {
//!     /// Words to look for.
//!     #[schema(length(min = 1, max = 32))]
//!     query: String,
//!     /// How many hits at most.
//!     #[schema(range(min = 1, max = 20))]
//!     limit: Option<u8>,
//! }
//!
//! #[derive(Serialize, ToolSchema)]
//! struct Hits { titles: Vec<String> }
//!
//! impl Tool for Search {
//!     type Output = Hits;
//!     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Hits, ToolError> {
//!         Ok(Hits { titles: Vec::new() })
//!     }
//! }
//!
//! let grammar = Grammar::for_tool(Search::spec())?;
//! let text = grammar.as_str();
//! assert!(text.starts_with("root ::= \"{\" ws \"\\\"name\\\"\" ws \":\" ws ( docs-search-call ) ws \"}\"\n"));
//! assert!(text.contains(r#"docs-search-args-query-kv ::= "\"query\"" ws ":" ws "\"" json-char{1,32} "\"" ws"#));
//! // `limit` is optional and nullable; its digits are bounded, its range is the validator's.
//! assert!(text.contains(r#"( ( "0" | [1-9] [0-9]{0,1} ) | "null" )"#));
//! assert_eq!(grammar.unchecked(), [Unchecked::IntegerRange { path: "docs__search/limit".into() }]);
//! # Ok::<(), tool_runtime::gbnf::GrammarError>(())
//! ```

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};

use crate::schema::consts::is_satisfiable;
use crate::schema::{ArraySchema, IntegerSchema, NumberSchema, ObjectSchema, Schema, SchemaKind};
use crate::spec::{SpecSchema, ToolSpec};

/// The largest string length or item count the grammar spells out (`x{0,256}`); a larger
/// bound is left to the validator. llama.cpp expands a bounded repetition into one rule per
/// count, so this keeps grammars small.
pub const MAX_EXPANDED_COUNT: u64 = 256;

/// Digits of an integer without a bound on that side (`u64::MAX` has 20).
const UNBOUNDED_INTEGER_DIGITS: u32 = 20;

/// A GBNF grammar (llama.cpp's format) whose `root` matches a call to a tool, or to one of a
/// set of tools, or the arguments of one schema. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grammar {
    text: String,
    unchecked: Vec<Unchecked>,
}

/// A constraint of the schema that the grammar does not enforce: only the validator checks
/// it. `path` is the tool's name (when there is one) and the property path, `/` between
/// names and `[]` for an array's items (`docs__search/filters/tags[]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Unchecked {
    /// A string's `pattern`.
    Pattern {
        /// Where the string is.
        path: String,
    },
    /// An integer's `minimum`/`maximum`, beyond its sign and number of digits.
    IntegerRange {
        /// Where the integer is.
        path: String,
    },
    /// A number's bounds, beyond its sign.
    NumberRange {
        /// Where the number is.
        path: String,
    },
    /// A string length bound above [`MAX_EXPANDED_COUNT`].
    Length {
        /// Where the string is.
        path: String,
    },
    /// An item count bound above [`MAX_EXPANDED_COUNT`].
    Items {
        /// Where the array is.
        path: String,
    },
    /// `uniqueItems`.
    UniqueItems {
        /// Where the array is.
        path: String,
    },
}

/// Why no grammar could be made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrammarError {
    /// The tool's input schema arrived at run time as JSON (an imported MCP tool, a
    /// `DynamicTool`): grammars are generated from compile-time schemas only.
    RuntimeSchema {
        /// The tool.
        tool: String,
    },
    /// No value satisfies the schema at `path` (`minLength` above `maxLength`, an empty enum,
    /// ...), so no call could ever match. Only a hand-written schema can be so: `#[tool]` and
    /// `#[derive(ToolSchema)]` refuse impossible bounds at compile time.
    Unsatisfiable {
        /// Where, as in [`Unchecked`].
        path: String,
        /// What is impossible.
        reason: &'static str,
    },
    /// [`Grammar::for_tools`] was given no tools.
    NoTools,
    /// [`Grammar::for_tools`] was given two tools of one name.
    DuplicateTool {
        /// The name.
        tool: String,
    },
}

impl fmt::Display for GrammarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RuntimeSchema { tool } => write!(
                f,
                "tool `{tool}` has a schema received at run time; grammars are made from compile-time schemas only"
            ),
            Self::Unsatisfiable { path, reason } => {
                write!(f, "no value satisfies the schema at `{path}`: {reason}")
            }
            Self::NoTools => f.write_str("a grammar for a set of tools needs at least one tool"),
            Self::DuplicateTool { tool } => write!(f, "tool `{tool}` is given twice"),
        }
    }
}

impl std::error::Error for GrammarError {}

impl Grammar {
    /// A grammar whose root is a call to this tool: `{"name": "<name>", "arguments": {...}}`.
    ///
    /// # Errors
    ///
    /// [`GrammarError::RuntimeSchema`] for a tool whose schema is not a compile-time tree,
    /// [`GrammarError::Unsatisfiable`] for a schema no value satisfies.
    pub fn for_tool(spec: &ToolSpec) -> Result<Self, GrammarError> {
        Self::for_tools(&[spec])
    }

    /// A grammar whose root is a call to any one of these tools (an alternation, in the order
    /// given), each call shaped as in [`Grammar::for_tool`].
    ///
    /// ```
    /// use tool_runtime::gbnf::{Grammar, GrammarError};
    ///
    /// assert_eq!(Grammar::for_tools(&[]), Err(GrammarError::NoTools));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Grammar::for_tool`], and [`GrammarError::NoTools`] for an empty set,
    /// [`GrammarError::DuplicateTool`] for a name given twice.
    pub fn for_tools(specs: &[&ToolSpec]) -> Result<Self, GrammarError> {
        if specs.is_empty() {
            return Err(GrammarError::NoTools);
        }
        let mut builder = Builder::default();
        let mut seen = BTreeSet::new();
        let mut calls = Vec::with_capacity(specs.len());
        for spec in specs {
            let tool = spec.name();
            if !seen.insert(tool) {
                return Err(GrammarError::DuplicateTool { tool: tool.to_owned() });
            }
            let SpecSchema::Static(schema) = spec.input_schema() else {
                return Err(GrammarError::RuntimeSchema { tool: tool.to_owned() });
            };
            let base = sanitize(tool);
            let call = builder.reserve(&format!("{base}-call"));
            let slot = builder.slot(&call);
            let args = builder.value(schema, &format!("{base}-args"), tool, true)?;
            builder.fill(
                slot,
                format!(
                    "{} ws \",\" ws {} ws \":\" ws {args}",
                    literal(&json_text(tool)),
                    literal("\"arguments\""),
                ),
            );
            calls.push(call);
        }
        let root = format!(
            "\"{{\" ws {} ws \":\" ws ( {} ) ws \"}}\"",
            literal("\"name\""),
            calls.join(" | ")
        );
        Ok(builder.finish(&root))
    }

    /// A grammar whose root is a value of this schema alone (no call around it): for a
    /// prompt that already names the tool, or a schema outside any tool.
    ///
    /// ```
    /// use tool_runtime::gbnf::Grammar;
    /// use tool_runtime::prelude::*;
    ///
    /// let grammar = Grammar::for_schema(<Option<bool> as ToolSchema>::SCHEMA)?;
    /// assert_eq!(grammar.as_str(), "root ::= ( ( \"true\" | \"false\" ) | \"null\" )\n");
    /// # Ok::<(), tool_runtime::gbnf::GrammarError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`GrammarError::Unsatisfiable`] for a schema no value satisfies.
    pub fn for_schema(schema: &'static Schema) -> Result<Self, GrammarError> {
        let mut builder = Builder::default();
        let root = builder.value(schema, "value", "", false)?;
        Ok(builder.finish(&root))
    }

    /// The grammar text: `root` first, then the rules it uses, one per line.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// What the schema asks for and the grammar leaves to the validator, in the order met.
    #[must_use]
    pub fn unchecked(&self) -> &[Unchecked] {
        &self.unchecked
    }
}

impl fmt::Display for Grammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Shared rules, written after the schema's own, in this order, when used.
const SHARED: &[(&str, &str)] = &[
    ("ws", r#"( " " | "\n" [ \t]{0,20} )?"#),
    ("json-string", r#""\"" json-char* "\"""#),
    (
        "json-char",
        r#"[^"\\\x00-\x1f] | "\\" ( ["\\/bfnrt] | "u" json-hex-scalar ) | "\\u" [dD] [89abAB] json-hex json-hex "\\u" [dD] [c-fC-F] json-hex json-hex"#,
    ),
    (
        "json-hex-scalar",
        "[0-9a-cA-Ce-fE-F] json-hex json-hex json-hex | [dD] [0-7] json-hex json-hex",
    ),
    ("json-hex", "[0-9a-fA-F]"),
    ("json-number", r#""-"? json-unsigned"#),
    (
        "json-unsigned",
        r#"( "0" | [1-9] [0-9]{0,20} ) ( "." [0-9]{1,24} )? ( [eE] [-+]? [0-9]{1,3} )?"#,
    ),
];

#[derive(Default)]
struct Builder {
    rules: Vec<(String, String)>,
    used: BTreeSet<String>,
    unchecked: Vec<Unchecked>,
}

impl Builder {
    /// A free rule name made from `base`: `base` itself, or `base-2`, `base-3`, ...
    fn reserve(&mut self, base: &str) -> String {
        let base = sanitize(base);
        let mut name = base.clone();
        let mut n = 2;
        while SHARED.iter().any(|(shared, _)| *shared == name)
            || name == "root"
            || !self.used.insert(name.clone())
        {
            name = format!("{base}-{n}");
            n += 1;
        }
        name
    }

    fn define(&mut self, name: String, body: String) {
        self.rules.push((name, body));
    }

    /// Places the rule `name` here, its body given later by [`Builder::fill`]: a rule comes
    /// before the rules it uses.
    fn slot(&mut self, name: &str) -> usize {
        self.rules.push((name.to_owned(), String::new()));
        self.rules.len() - 1
    }

    fn fill(&mut self, slot: usize, body: String) {
        self.rules[slot].1 = body;
    }

    fn finish(self, root: &str) -> Grammar {
        let mut text = format!("root ::= {root}\n");
        for (name, body) in &self.rules {
            let _ = writeln!(text, "{name} ::= {body}");
        }
        // A shared rule refers only to the ones after it, so one pass in order finds every
        // rule needed.
        let mut needed = vec![false; SHARED.len()];
        for (at, (name, _)) in SHARED.iter().enumerate() {
            let by_shared = SHARED[..at]
                .iter()
                .zip(&needed)
                .any(|((_, body), &needed)| needed && mentions(body, name));
            needed[at] = by_shared || mentions(&text, name);
        }
        for ((name, body), needed) in SHARED.iter().zip(needed) {
            if needed {
                let _ = writeln!(text, "{name} ::= {body}");
            }
        }
        Grammar { text, unchecked: self.unchecked }
    }

    /// The expression matching a value of `schema`; objects and arrays get rules named from
    /// `base`. `path` names the value in errors and [`Unchecked`] entries.
    fn value(
        &mut self,
        schema: &'static Schema,
        base: &str,
        path: &str,
        named: bool,
    ) -> Result<String, GrammarError> {
        if !is_satisfiable(schema) {
            return Err(GrammarError::Unsatisfiable {
                path: path.to_owned(),
                reason: "its bounds leave no value",
            });
        }
        let inner = match schema.kind {
            SchemaKind::Boolean => r#"( "true" | "false" )"#.to_owned(),
            SchemaKind::Integer(int) => self.integer(int, path),
            SchemaKind::Number(number) => self.number(number, path),
            SchemaKind::String(string) => {
                if string.pattern.is_some() {
                    self.unchecked.push(Unchecked::Pattern { path: path.to_owned() });
                }
                self.string(string.min_length, string.max_length, path)
            }
            SchemaKind::Enum(values) => {
                let values: Vec<String> =
                    values.iter().map(|value| literal(&json_text(value))).collect();
                format!("( {} )", values.join(" | "))
            }
            SchemaKind::Array(array) => self.array(array, base, path)?,
            SchemaKind::Object(object) => self.object(object, base, path)?,
        };
        let expr = if schema.nullable { format!("( {inner} | \"null\" )") } else { inner };
        if named && !is_name(&expr) {
            let name = self.reserve(base);
            self.define(name.clone(), expr);
            return Ok(name);
        }
        Ok(expr)
    }

    fn integer(&mut self, int: IntegerSchema, path: &str) -> String {
        let (min, max) = (int.minimum, int.maximum);
        if let (Some(min), Some(max)) = (min, max)
            && min == max
        {
            return literal(&min.to_string());
        }
        let digits = |bound: Option<i128>| {
            bound.map_or(UNBOUNDED_INTEGER_DIGITS, |bound| {
                bound.unsigned_abs().checked_ilog10().unwrap_or(0) + 1
            })
        };
        let width = digits(min).max(digits(max));
        let tail = if width > 1 { format!(" [0-9]{{0,{}}}", width - 1) } else { String::new() };
        let magnitude = format!("[1-9]{tail}");
        let exact = |bound: Option<i128>, edge: i128| bound.is_none_or(|bound| bound == edge);
        let all_of_width = 10i128.checked_pow(width).map_or(i128::MAX, |power| power - 1);
        let (expr, exact) = match (min, max) {
            (_, Some(max)) if max < 0 => {
                (format!("\"-\" {magnitude}"), exact(min, -all_of_width) && max == -1)
            }
            (Some(min), _) if min >= 0 => {
                (format!("( \"0\" | {magnitude} )"), min == 0 && exact(max, all_of_width))
            }
            _ => (
                format!("\"-\"? ( \"0\" | {magnitude} )"),
                exact(min, -all_of_width) && exact(max, all_of_width),
            ),
        };
        if !exact {
            self.unchecked.push(Unchecked::IntegerRange { path: path.to_owned() });
        }
        expr
    }

    fn number(&mut self, number: NumberSchema, path: &str) -> String {
        let bounds =
            [number.minimum, number.maximum, number.exclusive_minimum, number.exclusive_maximum];
        let nonnegative = [number.minimum, number.exclusive_minimum]
            .into_iter()
            .any(|bound| bound.is_some_and(|bound| bound >= 0.0));
        // Only `minimum: 0` is said by the sign alone (`-0` is `0`, and the grammar cannot
        // write it); any other bound is the validator's.
        let said = number.minimum == Some(0.0)
            && number.maximum.is_none()
            && number.exclusive_minimum.is_none()
            && number.exclusive_maximum.is_none();
        if bounds.iter().any(Option::is_some) && !said {
            self.unchecked.push(Unchecked::NumberRange { path: path.to_owned() });
        }
        if nonnegative { "json-unsigned".to_owned() } else { "json-number".to_owned() }
    }

    fn string(&mut self, min: Option<u64>, max: Option<u64>, path: &str) -> String {
        let min = min.unwrap_or(0);
        let count = self.count(min, max, path, |path| Unchecked::Length { path });
        match count {
            Count::Any => "json-string".to_owned(),
            count => format!("\"\\\"\" json-char{} \"\\\"\"", count.suffix()),
        }
    }

    /// The repetition that says `min..=max` where it is cheap, a looser one (recorded) where not.
    fn count(
        &mut self,
        min: u64,
        max: Option<u64>,
        path: &str,
        unchecked: impl FnOnce(String) -> Unchecked,
    ) -> Count {
        let loose = min > MAX_EXPANDED_COUNT || max.is_some_and(|max| max > MAX_EXPANDED_COUNT);
        if loose {
            self.unchecked.push(unchecked(path.to_owned()));
        }
        let min = min.min(MAX_EXPANDED_COUNT);
        match max.filter(|&max| max <= MAX_EXPANDED_COUNT) {
            Some(max) if max == min => Count::Exactly(min),
            Some(max) => Count::Between(min, max),
            None if min == 0 => Count::Any,
            None => Count::AtLeast(min),
        }
    }

    fn array(
        &mut self,
        array: ArraySchema,
        base: &str,
        path: &str,
    ) -> Result<String, GrammarError> {
        let min = array.min_items.unwrap_or(0);
        let name = self.reserve(base);
        let slot = self.slot(&name);
        let item_path = format!("{path}[]");
        let count = self.count(min, array.max_items, path, |path| Unchecked::Items { path });
        if array.unique_items {
            self.unchecked.push(Unchecked::UniqueItems { path: path.to_owned() });
        }
        if count == Count::Exactly(0) {
            self.fill(slot, "\"[\" ws \"]\"".to_owned());
            return Ok(name);
        }
        let item = self.value(array.items, &format!("{base}-item"), &item_path, true)?;
        let more = |count: Count| match count {
            Count::Exactly(0) | Count::Between(0, 0) => String::new(),
            count => format!(" ( \",\" ws {item} ws ){}", count.suffix()),
        };
        let body = match count {
            Count::Any => format!("\"[\" ws ( {item} ws{} )? \"]\"", more(Count::Any)),
            Count::Between(0, max) => {
                format!("\"[\" ws ( {item} ws{} )? \"]\"", more(Count::Between(0, max - 1)))
            }
            Count::Exactly(n) => format!("\"[\" ws {item} ws{} \"]\"", more(Count::Exactly(n - 1))),
            Count::Between(min, max) => {
                format!("\"[\" ws {item} ws{} \"]\"", more(Count::Between(min - 1, max - 1)))
            }
            Count::AtLeast(min) => {
                format!("\"[\" ws {item} ws{} \"]\"", more(Count::AtLeast(min - 1)))
            }
        };
        self.fill(slot, body);
        Ok(name)
    }

    fn object(
        &mut self,
        object: ObjectSchema,
        base: &str,
        path: &str,
    ) -> Result<String, GrammarError> {
        let name = self.reserve(base);
        let slot = self.slot(&name);
        let mut members = Vec::with_capacity(object.properties.len());
        for property in object.properties {
            let member = self.reserve(&format!("{base}-{}-kv", property.name));
            let member_slot = self.slot(&member);
            let property_path = if path.is_empty() {
                property.name.to_owned()
            } else {
                format!("{path}/{}", property.name)
            };
            let value = self.value(
                property.schema,
                &format!("{base}-{}", property.name),
                &property_path,
                false,
            )?;
            self.fill(
                member_slot,
                format!("{} ws \":\" ws {value} ws", literal(&json_text(property.name))),
            );
            members.push((member, property.required));
        }
        // One alternative per property that can come first (every one before it is
        // optional), then the ones after it, each after a comma, optional or not.
        let mut alternatives = Vec::new();
        for (first, (member, _)) in members.iter().enumerate() {
            let mut alternative = member.clone();
            for (later, required) in &members[first + 1..] {
                if *required {
                    let _ = write!(alternative, " \",\" ws {later}");
                } else {
                    let _ = write!(alternative, " ( \",\" ws {later} )?");
                }
            }
            alternatives.push(alternative);
            if members[first].1 {
                break;
            }
        }
        let body = if alternatives.is_empty() {
            "\"{\" ws \"}\"".to_owned()
        } else {
            let optional = members.iter().all(|(_, required)| !required);
            let group = format!("( {} )", alternatives.join(" | "));
            format!("\"{{\" ws {group}{} \"}}\"", if optional { "?" } else { "" })
        };
        self.fill(slot, body);
        Ok(name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    Any,
    AtLeast(u64),
    Exactly(u64),
    Between(u64, u64),
}

impl Count {
    fn suffix(self) -> String {
        match self {
            Self::Any | Self::AtLeast(0) => "*".to_owned(),
            Self::AtLeast(1) => "+".to_owned(),
            Self::AtLeast(min) => format!("{{{min},}}"),
            Self::Exactly(n) => format!("{{{n}}}"),
            Self::Between(0, 1) => "?".to_owned(),
            Self::Between(min, max) => format!("{{{min},{max}}}"),
        }
    }
}

/// Whether `name` is used as a rule reference in `text` (a whole word).
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '-';
        let before = text[..at].chars().next_back().is_none_or(|c| !word(c));
        let after = text[at + name.len()..].chars().next().is_none_or(|c| !word(c));
        before && after
    })
}

/// Whether `expr` is already a single rule name.
fn is_name(expr: &str) -> bool {
    !expr.is_empty() && expr.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// A GBNF rule name from any text: lowercase ASCII letters and digits, every other run of
/// characters one dash.
fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() { "x".to_owned() } else { out }
}

/// `text` as `serde_json` writes a JSON string.
fn json_text(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// A GBNF string literal matching exactly `text`.
fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_gbnf_identifiers() {
        assert_eq!(sanitize("core__get_time"), "core-get-time");
        assert_eq!(sanitize("__"), "x");
        assert_eq!(sanitize("Été-1"), "t-1");
    }

    #[test]
    fn literals_escape_what_gbnf_needs() {
        assert_eq!(literal(&json_text("a\"b\\c")), r#""\"a\\\"b\\\\c\"""#);
        assert_eq!(literal("\u{1}"), r#""\x01""#);
    }

    #[test]
    fn reserved_names_are_never_taken() {
        let mut builder = Builder::default();
        assert_eq!(builder.reserve("ws"), "ws-2");
        assert_eq!(builder.reserve("root"), "root-2");
        assert_eq!(builder.reserve("a"), "a");
        assert_eq!(builder.reserve("a"), "a-2");
    }

    #[test]
    fn integer_digits_follow_the_widest_bound() {
        let mut builder = Builder::default();
        let u8_like = IntegerSchema { minimum: Some(0), maximum: Some(255) };
        assert_eq!(builder.integer(u8_like, "x"), r#"( "0" | [1-9] [0-9]{0,2} )"#);
        let digit = IntegerSchema { minimum: Some(0), maximum: Some(9) };
        assert_eq!(builder.integer(digit, "y"), r#"( "0" | [1-9] )"#);
        assert_eq!(builder.unchecked, [Unchecked::IntegerRange { path: "x".into() }]);
        let negative = IntegerSchema { minimum: Some(-99), maximum: Some(-1) };
        assert_eq!(builder.integer(negative, "z"), r#""-" [1-9] [0-9]{0,1}"#);
        assert_eq!(builder.unchecked.len(), 1);
    }
}
