//! Typed stubs for code mode (issue 27, item 4): the TypeScript declarations and Python stubs
//! of a catalog, pinned by snapshots, type-check with the official compilers: `tsc --strict`
//! (npm `typescript`, pinned) and `mypy --strict` (PyPI, pinned), each on a sample program that
//! calls the tools rightly, and on calls that must be refused (`@ts-expect-error`,
//! `# type: ignore[code]` with unused ignores reported), so a stub typed too loosely fails too.

use std::path::Path;
use std::process::Command;

use serde_json::json;
use tool_runtime::catalog::stubs::{self, StubError};
use tool_runtime::catalog::{ToolCatalog, visible_tools};
use tool_runtime::prelude::*;
use tool_runtime::runtime::DynamicTool;
use tool_tests::fixtures::ctx;
use tool_tests::python::{PinnedVenv, npm_package};

/// How a delivery travels.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Van,
    CargoBike,
}

/// One stop of a delivery.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Stop {
    /// The street, with `*/` and """ in its description.
    pub street: String,
    /// The floor; ground floor when absent or null.
    pub floor: Option<i8>,
}

/// A time window, in hours.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Window {
    pub from: u8,
    pub to: u8,
}

/// When a delivery arrives.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Eta {
    pub hour: u8,
    pub minute: u8,
}

/// The plan.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Plan {
    /// When it arrives.
    pub eta: Eta,
    /// How many stops were planned.
    pub stops_planned: u32,
    /// What it costs us (redacted: never shown).
    pub internal_cost: f64,
    /// A tracking number.
    pub tracking: i64,
}

/// Plan a delivery of an order.
///
/// The plan is binding.
#[tool(name = "shop__plan_delivery", effect = read_only, redact = ["eta.hour", "stops_planned", "tracking"])]
#[derive(Debug)]
pub struct PlanDelivery {
    /// The order.
    pub order: u64,
    /// The city.
    pub city: String,
    /// How it travels.
    pub mode: Mode,
    /// Where it stops.
    pub stops: Vec<Stop>,
    /// When it may arrive.
    pub window: Option<Window>,
}

impl Tool for PlanDelivery {
    type Output = Plan;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Plan, ToolError> {
        let eta = Eta { hour: self.window.map_or(9, |window| window.from), minute: 30 };
        let stops_planned = u32::try_from(self.stops.len()).unwrap_or(u32::MAX);
        let express = matches!(self.mode, Mode::CargoBike) && self.city.len() < 10;
        let tracking = i64::try_from(self.order).unwrap_or(-1);
        Ok(Plan { eta, stops_planned, internal_cost: if express { 2.5 } else { 1.0 }, tracking })
    }
}

/// Answer with "pong"
#[tool(name = "core__ping", effect = read_only, redact = all)]
pub struct Ping {}

impl Tool for Ping {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok("pong".into())
    }
}

/// A tool from outside: a `-` in its name, property names that are no identifiers (one of an
/// object, whose class is named after it), a NUL in a description, an enum nothing satisfies.
fn find_contact() -> DynamicTool {
    DynamicTool::builder(
        "crm__find-contact",
        "Find a contact by user id.",
        json!({
            "type": "object",
            "properties": {
                "user-id": {"type": "integer", "minimum": 0, "maximum": 18446744073709551615u64},
                "class": {"type": "string", "enum": ["vip", "regular"]},
                "labels": {"type": "array", "items": {"type": "string"}},
                "meta.data": {"type": "object", "description": "NUL \u{0} here.", "properties": {"z": {"type": "boolean"}}, "additionalProperties": false},
                "nothing": {"enum": []}
            },
            "required": ["user-id"],
            "additionalProperties": false
        }),
    )
    .allow_open_schema()
    .build(|_, _, _| async { Ok(json!({})) })
    .unwrap()
}

/// A tool of odd shapes: nested objects whose class names would meet (`a_b` and `aB`),
/// descriptions with comment and string terminators and a lone carriage return, an enum of
/// mixed types, a union of types.
fn odd() -> DynamicTool {
    DynamicTool::builder(
        "notes__odd",
        "Odd one: ends */ here, \"\"\" there,\rand a line after a lone CR, then \"a quote\"",
        json!({
            "type": "object",
            "properties": {
                "a_b": {"type": "object", "description": "First.\r# not code", "properties": {"x": {"type": "string"}}, "required": ["x"], "additionalProperties": false},
                "aB": {"type": "object", "properties": {"y": {"type": "integer"}}, "required": ["y"], "additionalProperties": false},
                "mixed": {"enum": [1, "one", true, null]},
                "either": {"type": ["integer", "null"]}
            },
            "required": ["a_b", "aB"],
            "additionalProperties": false
        }),
    )
    .build(|_, _, _| async { Ok(json!({})) })
    .unwrap()
}

fn catalog() -> ToolCatalog {
    ToolCatalog::builder()
        .register::<PlanDelivery>()
        .register::<Ping>()
        .register_dynamic(odd())
        .register_dynamic(find_contact())
        .build()
        .unwrap()
}

fn declarations() -> (String, String) {
    let catalog = catalog();
    let policy = ToolPolicy::allowing(["shop__*", "core__*", "crm__*", "notes__*"]);
    let visible = visible_tools(&catalog, &policy, &ctx());
    assert_eq!(visible.len(), 4);
    (stubs::typescript(visible.specs()).unwrap(), stubs::python(visible.specs()).unwrap())
}

/// Writes `files` into a fresh directory `stubs-<name>` under the target directory, runs
/// `checker` there, and fails showing what it printed unless it accepted them.
fn accepted_by(checker: &mut Command, name: &str, files: [(&str, &str); 2]) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("stubs-{name}"));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let output = checker.current_dir(&dir).output().expect("the checker runs");
    assert!(
        output.status.success(),
        "{name}: the checker refused the stubs:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_declarations_are_pinned() {
    let (typescript, python) = declarations();
    insta::assert_snapshot!("typescript", typescript);
    insta::assert_snapshot!("python", python);
}

const TYPESCRIPT: &str = "typescript@5.9.3";

const USE_TS: &str = r#"import { core__ping, crm__find_contact, notes__odd, shop__plan_delivery } from "./tools";
import type { Int64, UInt64 } from "./tools";

export async function main(): Promise<void> {
  const order: UInt64 = 18446744073709551615;
  const plan = await shop__plan_delivery({
    order,
    city: "Lisbon",
    mode: "cargo_bike",
    stops: [{ street: "Rua Augusta", floor: null }, { street: "Rua Nova" }],
    window: { from: 9, to: 12 },
  });
  const hour: number = plan.eta.hour;
  const planned: number = plan.stops_planned;
  const tracking: Int64 = plan.tracking;
  // @ts-expect-error redacted: code never gets it
  plan.internal_cost;
  // @ts-expect-error redacted: only the hour of the ETA is kept
  plan.eta.minute;
  // @ts-expect-error a mode the tool does not know
  await shop__plan_delivery({ order: 1, city: "Porto", mode: "rocket", stops: [] });
  // @ts-expect-error the city is required
  await shop__plan_delivery({ order: 1, mode: "van", stops: [] });
  // @ts-expect-error no property the schema does not have
  await shop__plan_delivery({ order: 1, city: "Porto", mode: "van", stops: [], color: "red" });
  const found: unknown = await crm__find_contact({ "user-id": 7, class: "vip", labels: ["b"] });
  // @ts-expect-error labels are strings
  await crm__find_contact({ "user-id": 7, labels: [1] });
  const pong: string = await core__ping({});
  await notes__odd({ a_b: { x: "x" }, aB: { y: 1 }, mixed: "one", either: null });
  // @ts-expect-error the nested objects keep their own shapes
  await notes__odd({ a_b: { y: 1 }, aB: { x: "x" } });
  console.log(hour, planned, tracking, found, pong);
}
"#;

#[test]
fn the_typescript_declarations_type_check_with_tsc_strict() {
    let (typescript, _) = declarations();
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let compiler = npm_package(target, "stubs-typescript-5.9.3", TYPESCRIPT, "the stubs test");
    let mut tsc = Command::new("node");
    tsc.arg(compiler.join("node_modules/typescript/bin/tsc"))
        .args(["--noEmit", "--strict", "--target", "es2022", "--module", "esnext"])
        .args(["--moduleResolution", "bundler", "--lib", "es2022,dom"])
        .arg("use.ts");
    accepted_by(&mut tsc, "ts", [("tools.d.ts", &typescript), ("use.ts", USE_TS)]);
}

const USE_PY: &str = r#"from tools import Int64, core__ping, crm__find_contact, notes__odd, shop__plan_delivery


async def main() -> None:
    plan = await shop__plan_delivery(
        order=18446744073709551615,
        city="Lisbon",
        mode="cargo_bike",
        stops=[{"street": "Rua Augusta", "floor": None}, {"street": "Rua Nova"}],
        window={"from": 9, "to": 12},
    )
    hour: int = plan["eta"]["hour"]
    planned: int = plan["stops_planned"]
    tracking: Int64 = plan["tracking"]
    plan["internal_cost"]  # type: ignore[typeddict-item]
    plan["eta"]["minute"]  # type: ignore[typeddict-item]
    await shop__plan_delivery(order=1, city="Porto", mode="rocket", stops=[])  # type: ignore[arg-type]
    await shop__plan_delivery(order=1, mode="van", stops=[])  # type: ignore[call-arg]
    await shop__plan_delivery(order=1, city="Porto", mode="van", stops=[], color="red")  # type: ignore[call-arg]
    found = await crm__find_contact({"user-id": 7, "class": "vip", "labels": ["b"]})
    await crm__find_contact({"user-id": 7, "labels": [1]})  # type: ignore[list-item]
    pong: str = await core__ping()
    await notes__odd(a_b={"x": "x"}, aB={"y": 1}, mixed="one", either=None)
    await notes__odd(a_b={"y": 1}, aB={"x": "x"})  # type: ignore[typeddict-item, typeddict-unknown-key]
    print(hour, planned, tracking, found, pong)
"#;

#[test]
fn the_python_stubs_pass_mypy_strict() {
    let (_, python) = declarations();
    let mypy = PinnedVenv {
        name: "mypy",
        pins: &["mypy==1.18.2"],
        pip_args: &[],
        build_env: &[],
        needed_by: "the stubs test",
        what: "mypy",
    }
    .python(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let mut checker = Command::new(mypy);
    checker
        .args(["-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.11"])
        .args(["tools.pyi", "use.py"]);
    accepted_by(&mut checker, "py", [("tools.pyi", &python), ("use.py", USE_PY)]);
}

/// Two tools whose names differ only in `-` and `_` would be declared as one function.
#[test]
fn tools_that_would_share_a_name_are_refused() {
    let tool = |name: &str| {
        DynamicTool::builder(
            name,
            "x",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
        .build(|_, _, _| async { Ok(json!({})) })
        .unwrap()
    };
    let catalog = ToolCatalog::builder()
        .register_dynamic(tool("crm__find-contact"))
        .register_dynamic(tool("crm__find_contact"))
        .build()
        .unwrap();
    let visible = visible_tools(&catalog, &ToolPolicy::allowing(["crm__*"]), &ctx());
    let clash = stubs::typescript(visible.specs()).unwrap_err();
    assert_eq!(
        clash,
        StubError::NameClash {
            identifier: "crm__find_contact".into(),
            first: "crm__find-contact".into(),
            second: "crm__find_contact".into(),
        }
    );
    assert_eq!(
        clash.to_string(),
        "the tools `crm__find-contact` and `crm__find_contact` would both be declared as \
         `crm__find_contact`"
    );
}
