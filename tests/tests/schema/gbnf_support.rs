//! A small GBNF recogniser for the grammar suites: parses llama.cpp's grammar format (rules,
//! alternation, grouping, string literals, character classes with ranges and negation,
//! `?`/`*`/`+` and `{m}`/`{m,}`/`{m,n}` repetition) and decides whether `root` matches a
//! whole input. Matching computes, for an expression and a start position, every position a
//! match can end at (memoised per rule and position), so ambiguity never costs a wrong
//! answer. Written here for the tests; the oracle suite checks the same grammars with
//! parsers written elsewhere.

#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone)]
enum Expr {
    Literal(Vec<char>),
    Class { negated: bool, ranges: Vec<(char, char)> },
    Rule(String),
    Seq(Vec<Expr>),
    Alt(Vec<Expr>),
    Repeat(Box<Expr>, usize, Option<usize>),
}

/// A parsed grammar.
#[derive(Debug)]
pub struct Gbnf {
    rules: HashMap<String, Expr>,
    memo: RefCell<HashMap<(String, usize), BTreeSet<usize>>>,
}

struct Parser<'a> {
    text: &'a [char],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.text.get(self.at).copied()
    }

    fn error<T>(&self, what: &str) -> Result<T, String> {
        let line =
            self.text[..self.at.min(self.text.len())].iter().filter(|&&c| c == '\n').count() + 1;
        Err(format!("{what} at line {line} (offset {})", self.at))
    }

    /// Skips spaces and tabs, and newlines too when `newlines` (inside parentheses), and
    /// `#` comments.
    fn space(&mut self, newlines: bool) {
        while let Some(c) = self.peek() {
            if c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r')) {
                self.at += 1;
            } else if c == '#' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.at += 1;
                }
            } else {
                break;
            }
        }
    }

    fn name(&mut self) -> Result<String, String> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '-') {
            self.at += 1;
        }
        if start == self.at {
            return self.error("expected a rule name");
        }
        Ok(self.text[start..self.at].iter().collect())
    }

    fn hex(&mut self, digits: usize) -> Result<char, String> {
        let text: String = self.text.get(self.at..self.at + digits).unwrap_or(&[]).iter().collect();
        let value = u32::from_str_radix(&text, 16).or_else(|_| self.error("bad hex escape"))?;
        self.at += digits;
        char::from_u32(value).map_or_else(|| self.error("escape is not a scalar value"), Ok)
    }

    /// One character of a literal or class, escapes decoded.
    fn char(&mut self) -> Result<char, String> {
        let Some(c) = self.peek() else { return self.error("unexpected end") };
        self.at += 1;
        if c != '\\' {
            return Ok(c);
        }
        let Some(e) = self.peek() else { return self.error("unexpected end after `\\`") };
        self.at += 1;
        Ok(match e {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'x' => self.hex(2)?,
            'u' => self.hex(4)?,
            'U' => self.hex(8)?,
            '\\' | '"' | '[' | ']' | '-' | '^' => e,
            _ => return self.error("unknown escape"),
        })
    }

    fn number(&mut self) -> Result<usize, String> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let text: String = self.text[start..self.at].iter().collect();
        text.parse().or_else(|_| self.error("expected a count"))
    }

    fn alternatives(&mut self, nested: bool) -> Result<Expr, String> {
        let mut alternatives = vec![self.sequence(nested)?];
        while self.peek() == Some('|') {
            self.at += 1;
            self.space(true);
            alternatives.push(self.sequence(nested)?);
        }
        Ok(if alternatives.len() == 1 {
            alternatives.pop().unwrap()
        } else {
            Expr::Alt(alternatives)
        })
    }

    fn sequence(&mut self, nested: bool) -> Result<Expr, String> {
        let mut items: Vec<Expr> = Vec::new();
        while let Some(c) = self.peek() {
            let item = match c {
                '"' => {
                    self.at += 1;
                    let mut chars = Vec::new();
                    while self.peek() != Some('"') {
                        chars.push(self.char()?);
                    }
                    self.at += 1;
                    Expr::Literal(chars)
                }
                '[' => {
                    self.at += 1;
                    let negated = self.peek() == Some('^');
                    if negated {
                        self.at += 1;
                    }
                    let mut ranges = Vec::new();
                    while self.peek() != Some(']') {
                        let low = self.char()?;
                        let high = if self.peek() == Some('-')
                            && self.text.get(self.at + 1) != Some(&']')
                        {
                            self.at += 1;
                            self.char()?
                        } else {
                            low
                        };
                        ranges.push((low, high));
                    }
                    self.at += 1;
                    Expr::Class { negated, ranges }
                }
                '(' => {
                    self.at += 1;
                    self.space(true);
                    let inner = self.alternatives(true)?;
                    if self.peek() != Some(')') {
                        return self.error("expected `)`");
                    }
                    self.at += 1;
                    inner
                }
                '?' | '*' | '+' | '{' => {
                    let Some(last) = items.pop() else { return self.error("nothing to repeat") };
                    self.at += 1;
                    let (min, max) = match c {
                        '?' => (0, Some(1)),
                        '*' => (0, None),
                        '+' => (1, None),
                        _ => {
                            self.space(nested);
                            let min = self.number()?;
                            self.space(nested);
                            let max = if self.peek() == Some(',') {
                                self.at += 1;
                                self.space(nested);
                                if self.peek() == Some('}') { None } else { Some(self.number()?) }
                            } else {
                                Some(min)
                            };
                            self.space(nested);
                            if self.peek() != Some('}') {
                                return self.error("expected `}`");
                            }
                            self.at += 1;
                            (min, max)
                        }
                    };
                    Expr::Repeat(Box::new(last), min, max)
                }
                c if c.is_ascii_alphanumeric() || c == '-' => {
                    let start = self.at;
                    let name = self.name()?;
                    // A name followed by `::=` starts the next rule.
                    let mut look = Parser { text: self.text, at: self.at };
                    look.space(true);
                    if look.text.get(look.at..look.at + 3) == Some(&[':', ':', '=']) {
                        self.at = start;
                        break;
                    }
                    Expr::Rule(name)
                }
                _ => break,
            };
            items.push(item);
            self.space(nested);
        }
        Ok(if items.len() == 1 { items.pop().unwrap() } else { Expr::Seq(items) })
    }
}

impl Gbnf {
    /// Parses a grammar; every referenced rule must be defined and `root` must exist.
    pub fn parse(text: &str) -> Result<Self, String> {
        let chars: Vec<char> = text.chars().collect();
        let mut parser = Parser { text: &chars, at: 0 };
        let mut rules = HashMap::new();
        parser.space(true);
        while parser.peek().is_some() {
            let name = parser.name()?;
            parser.space(false);
            if parser.text.get(parser.at..parser.at + 3) != Some(&[':', ':', '=']) {
                return parser.error("expected `::=`");
            }
            parser.at += 3;
            parser.space(true);
            let body = parser.alternatives(false)?;
            if rules.insert(name.clone(), body).is_some() {
                return Err(format!("rule `{name}` defined twice"));
            }
            match parser.peek() {
                None | Some('\n' | '\r') => parser.space(true),
                Some(other) => return parser.error(&format!("unexpected `{other}`")),
            }
        }
        let grammar = Self { rules, memo: RefCell::default() };
        for body in grammar.rules.values() {
            grammar.check_refs(body)?;
        }
        if !grammar.rules.contains_key("root") {
            return Err("no `root` rule".into());
        }
        Ok(grammar)
    }

    fn check_refs(&self, expr: &Expr) -> Result<(), String> {
        match expr {
            Expr::Rule(name) if !self.rules.contains_key(name) => {
                Err(format!("undefined rule `{name}`"))
            }
            Expr::Seq(items) | Expr::Alt(items) => {
                items.iter().try_for_each(|item| self.check_refs(item))
            }
            Expr::Repeat(inner, ..) => self.check_refs(inner),
            _ => Ok(()),
        }
    }

    /// The rule names, sorted.
    pub fn rule_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.rules.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Whether `root` matches all of `input`.
    pub fn accepts(&self, input: &str) -> bool {
        let input: Vec<char> = input.chars().collect();
        self.memo.borrow_mut().clear();
        self.ends(&Expr::Rule("root".into()), 0, &input).contains(&input.len())
    }

    fn ends(&self, expr: &Expr, at: usize, input: &[char]) -> BTreeSet<usize> {
        match expr {
            Expr::Literal(chars) => {
                let end = at + chars.len();
                if input.get(at..end) == Some(chars.as_slice()) {
                    BTreeSet::from([end])
                } else {
                    BTreeSet::new()
                }
            }
            Expr::Class { negated, ranges } => match input.get(at) {
                Some(&c) if ranges.iter().any(|&(low, high)| low <= c && c <= high) != *negated => {
                    BTreeSet::from([at + 1])
                }
                _ => BTreeSet::new(),
            },
            Expr::Rule(name) => {
                let key = (name.clone(), at);
                if let Some(found) = self.memo.borrow().get(&key) {
                    return found.clone();
                }
                let found = self.ends(&self.rules[name], at, input);
                self.memo.borrow_mut().insert(key, found.clone());
                found
            }
            Expr::Seq(items) => {
                let mut positions = BTreeSet::from([at]);
                for item in items {
                    positions =
                        positions.into_iter().flat_map(|p| self.ends(item, p, input)).collect();
                    if positions.is_empty() {
                        break;
                    }
                }
                positions
            }
            Expr::Alt(items) => items.iter().flat_map(|item| self.ends(item, at, input)).collect(),
            Expr::Repeat(inner, min, max) => {
                let mut out = BTreeSet::new();
                let mut frontier = BTreeSet::from([at]);
                let mut seen = BTreeSet::new();
                let mut count = 0;
                loop {
                    if count >= *min {
                        out.extend(frontier.iter().copied());
                    }
                    if max.is_some_and(|max| count >= max) || frontier.is_empty() {
                        break;
                    }
                    let next: BTreeSet<usize> =
                        frontier.iter().flat_map(|&p| self.ends(inner, p, input)).collect();
                    // Past the minimum, a position already reached adds nothing new.
                    frontier = if count >= *min {
                        next.into_iter().filter(|p| seen.insert(*p)).collect()
                    } else {
                        next
                    };
                    count += 1;
                }
                out
            }
        }
    }
}

#[test]
fn the_recogniser_reads_llama_cpp_syntax() {
    let grammar = Gbnf::parse(
        "root ::= \"a\" b{2,3} ( c | \"-\" )? [^x-z]*\nb ::= [0-9] # digit\nc ::= \"\\x41\" | [\\]]\n",
    )
    .unwrap();
    assert!(grammar.accepts("a12"));
    assert!(grammar.accepts("a123A"));
    assert!(grammar.accepts("a12]qq"));
    assert!(!grammar.accepts("a1"));
    assert!(!grammar.accepts("a1x"));
    assert!(!grammar.accepts("a12y"));
    assert!(Gbnf::parse("root ::= missing\n").is_err());
    assert!(Gbnf::parse("root ::= \"a\" )\n").is_err());
}

// ---------------------------------------------------------------------------------------------
// Calls as text
// ---------------------------------------------------------------------------------------------

use serde_json::Value;
use tool_runtime::schema::Schema;

/// A call as the grammar's root describes it.
pub fn call(name: &str, arguments: &Value) -> Value {
    serde_json::json!({"name": name, "arguments": arguments})
}

/// `value` written compactly, pretty with two spaces, pretty with tabs, and with bare newlines.
pub fn writings(value: &Value) -> Vec<String> {
    use serde::Serialize;
    let pretty = |indent: &[u8]| {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(indent);
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        value.serialize(&mut serializer).expect("a value serialises");
        String::from_utf8(out).expect("JSON is UTF-8")
    };
    vec![value.to_string(), pretty(b"  "), pretty(b"\t"), pretty(b"")]
}

/// Calls that must not match: an unknown argument, a missing required one (when there is
/// one), arguments that are not an object, an unknown tool name, text after the call.
pub fn wrong_calls(name: &str, arguments: &Value, schema: &Schema) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut extra = arguments.clone();
    extra
        .as_object_mut()
        .expect("arguments are an object")
        .insert("zz_unknown".into(), Value::from(1));
    wrong.push(call(name, &extra).to_string());
    if let Some(required) = schema
        .properties()
        .and_then(|properties| properties.iter().find(|property| property.required))
    {
        let mut missing = arguments.clone();
        missing.as_object_mut().expect("arguments are an object").remove(required.name);
        wrong.push(call(name, &missing).to_string());
    }
    wrong.push(call(name, &Value::Array(Vec::new())).to_string());
    wrong.push(call(&format!("{name}_x"), arguments).to_string());
    wrong.push(format!("{} x", call(name, arguments)));
    wrong.push(format!(" {}", call(name, arguments)));
    wrong
}

// ---------------------------------------------------------------------------------------------
// A tool with every kind of schema node
// ---------------------------------------------------------------------------------------------

use std::collections::BTreeSet as Set;

use examples::search::SearchDocs;
use examples::tickets::{CloseTicket, CreateTicket};
use examples::time::GetCurrentTime;
use tool_runtime::prelude::*;
use tool_runtime::spec::ToolSpec;

/// The tools whose grammars the suites check: the examples', and [`PlanDelivery`]'s.
pub fn specs() -> Vec<&'static ToolSpec> {
    vec![
        GetCurrentTime::spec(),
        SearchDocs::spec(),
        CreateTicket::spec(),
        CloseTicket::spec(),
        PlanDelivery::spec(),
    ]
}

/// How a delivery travels.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Van,
    CargoBike,
    OnFoot,
}

/// One stop of a delivery.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Stop {
    /// The street, with `"quotes"` and \ backslashes allowed.
    pub street: String,
    /// The floor; ground floor when absent or null.
    pub floor: Option<i8>,
}

/// A time window, in hours.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Window {
    #[schema(range(min = 0, max = 23))]
    pub from: u8,
    #[schema(range(min = 0, max = 23))]
    pub to: u8,
}

/// Plan a delivery.
#[tool(name = "demo__plan_delivery", effect = read_only, redact = all)]
#[derive(Debug)]
pub struct PlanDelivery {
    /// The city.
    #[schema(length(min = 2, max = 12))]
    pub city: String,
    /// A note for the driver.
    pub note: Option<String>,
    /// Whether it is urgent.
    pub express: bool,
    /// Hours to shift the plan by.
    #[schema(range(min = -5, max = 5))]
    pub shift: i8,
    /// The price offered.
    #[schema(range(min = 0.0, max = 1000.0))]
    pub price: f64,
    /// Weight, when known.
    pub weight_kg: Option<f64>,
    /// How it travels.
    pub mode: Mode,
    /// Where it stops.
    #[schema(items(min = 1, max = 3))]
    pub stops: Vec<Stop>,
    /// When it may arrive.
    pub window: Option<Window>,
    /// Free labels.
    pub tags: Set<String>,
    /// How many parcels.
    #[serde(default)]
    pub parcels: u32,
    /// Two preferred hours.
    pub slots: [u8; 2],
}

impl Tool for PlanDelivery {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(self.city)
    }
}
