//! The `wire` command: the example catalog's tool definitions as each provider wants them, and
//! any provider response (whole or streamed) decoded into tool calls.
//!
//! ```text
//! wire encode --provider <P> [--strict] [--json-schema]
//! wire decode --provider <P> < response
//! ```
//!
//! `<P>` is `openai-chat`, `openai-responses`, `anthropic`, `gemini` or `ollama`. `decode`
//! reads a response body from stdin exactly as the provider sent it, streamed (SSE, NDJSON)
//! or not, and prints one JSON object: `tool_calls` (each with `id`, `name`, `arguments` and,
//! when the arguments are unusable, `arguments: null` and an `error`), `text`, `finish`,
//! `provider_finish` and `problems`. Bad input gets a message on stderr and a non-zero exit.
//!
//! [`run`] holds the whole command so it can be tested without a process.
//!
//! ```
//! use std::process::ExitCode;
//!
//! let body = br#"{"type": "message", "role": "assistant", "content": [
//!     {"type": "tool_use", "id": "toolu_1", "name": "docs__search", "input": {"query": "wire"}}],
//!     "stop_reason": "tool_use"}"#;
//! let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
//! let args = ["decode", "--provider", "anthropic"].map(String::from);
//! let code = examples::wire::run(args, &mut &body[..], &mut stdout, &mut stderr);
//! assert_eq!(code, ExitCode::SUCCESS);
//! let printed: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
//! assert_eq!(printed["tool_calls"][0]["arguments"]["query"], "wire");
//! assert_eq!(printed["finish"], "tool_calls");
//! ```

use std::fmt;
use std::io::{Read, Write};
use std::process::ExitCode;

use tool_runtime::adapters::{
    Adapter, DecodeError, Decoded, EncodeError, Gemini, GeminiParameters, Problem, Provider,
};
use tool_runtime::schema::parse_json;

/// How to call the command.
pub const USAGE: &str = "usage:
  wire encode --provider <P> [--strict] [--json-schema]
  wire decode --provider <P> < response

<P>: openai-chat, openai-responses, anthropic, gemini, ollama
--strict       strict definitions (openai-chat, openai-responses, anthropic)
--json-schema  gemini only: `parametersJsonSchema` instead of `parameters`";

/// What went wrong, as the command reports it.
#[derive(Debug)]
enum WireError {
    /// No command, or an unknown one.
    Command(Option<String>),
    /// An argument the command does not take.
    Argument(String),
    /// `--provider` missing or without a value.
    MissingProvider,
    /// `--provider` with a name that is not a provider.
    Provider(String),
    /// `--json-schema` for a provider other than Gemini.
    JsonSchemaNotGemini(Provider),
    /// stdin could not be read.
    Read(std::io::Error),
    /// stdin was empty.
    Empty,
    /// The definitions could not be encoded.
    Encode(EncodeError),
    /// The body is JSON but not a response of the provider.
    Decode(Provider, DecodeError),
    /// The body is neither JSON nor the provider's stream.
    NotAStream(Provider),
    /// Writing the output failed.
    Write(std::io::Error),
}

impl WireError {
    fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::Command(_)
                | Self::Argument(_)
                | Self::MissingProvider
                | Self::Provider(_)
                | Self::JsonSchemaNotGemini(_)
        )
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Command(None) => f.write_str("missing command; expected `encode` or `decode`"),
            Self::Command(Some(command)) => {
                write!(f, "unknown command `{command}`; expected `encode` or `decode`")
            }
            Self::Argument(argument) => write!(f, "unexpected argument `{argument}`"),
            Self::MissingProvider => f.write_str("missing `--provider <P>`"),
            Self::Provider(name) => write!(
                f,
                "unknown provider `{name}`; expected one of `openai-chat`, `openai-responses`, `anthropic`, `gemini`, `ollama`"
            ),
            Self::JsonSchemaNotGemini(provider) => {
                write!(f, "`--json-schema` applies to `gemini` only, not `{provider}`")
            }
            Self::Read(error) => write!(f, "cannot read stdin: {error}"),
            Self::Empty => f.write_str("stdin is empty; pipe a response body into `wire decode`"),
            Self::Encode(error) => write!(f, "cannot encode the example tools: {error}"),
            Self::Decode(provider, error) => {
                write!(f, "stdin is not a response from {}: {error}", provider.label())
            }
            Self::NotAStream(provider) => {
                write!(f, "stdin is neither a response body nor a stream from {}", provider.label())
            }
            Self::Write(error) => write!(f, "cannot write the output: {error}"),
        }
    }
}

/// The parsed command line.
#[derive(Debug)]
struct Command {
    encode: bool,
    provider: Provider,
    strict: bool,
    json_schema: bool,
}

fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, WireError> {
    let mut args = args.into_iter();
    let encode = match args.next().as_deref() {
        Some("encode") => true,
        Some("decode") => false,
        other => return Err(WireError::Command(other.map(str::to_owned))),
    };
    let (mut provider, mut strict, mut json_schema) = (None, false, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--provider" | "-p" => {
                let name = args.next().ok_or(WireError::MissingProvider)?;
                provider = Some(name.parse().map_err(|_| WireError::Provider(name))?);
            }
            "--strict" if encode => strict = true,
            "--json-schema" if encode => json_schema = true,
            _ => match arg.strip_prefix("--provider=") {
                Some(name) => {
                    provider =
                        Some(name.parse().map_err(|_| WireError::Provider(name.to_owned()))?);
                }
                None => return Err(WireError::Argument(arg)),
            },
        }
    }
    let provider = provider.ok_or(WireError::MissingProvider)?;
    if json_schema && provider != Provider::Gemini {
        return Err(WireError::JsonSchemaNotGemini(provider));
    }
    Ok(Command { encode, provider, strict, json_schema })
}

/// Runs `wire` with `args` (without the program name), reading stdin from `stdin` and writing
/// to `stdout` and `stderr`. Exit codes: 0 on success, 1 for input that cannot be decoded,
/// 2 for a bad command line.
pub fn run(
    args: impl IntoIterator<Item = String>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> ExitCode {
    let result = parse(args).and_then(|command| {
        if command.encode {
            encode(&command, stdout, stderr)
        } else {
            decode(&command, stdin, stdout, stderr)
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(stderr, "error: {error}");
            if error.is_usage() {
                let _ = writeln!(stderr, "\n{USAGE}");
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn adapter(command: &Command) -> Box<dyn Adapter> {
    if command.json_schema {
        return Box::new(Gemini::new().parameters(GeminiParameters::JsonSchema));
    }
    command.provider.adapter(command.strict)
}

fn encode(
    command: &Command,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<(), WireError> {
    if command.strict && !command.provider.has_strict_mode() {
        let _ = writeln!(
            stderr,
            "note: {} has no strict mode; `--strict` changes nothing",
            command.provider.label()
        );
    }
    let tools = adapter(command).tools(&examples_specs()).map_err(WireError::Encode)?;
    print(stdout, &tools)
}

fn decode(
    command: &Command,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<(), WireError> {
    let mut body = Vec::new();
    stdin.read_to_end(&mut body).map_err(WireError::Read)?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(WireError::Empty);
    }
    let adapter = adapter(command);
    let decoded = decode_body(adapter.as_ref(), &body)?;
    for problem in &decoded.problems {
        let _ = writeln!(stderr, "note: {problem}");
    }
    print(stdout, &decoded)
}

/// A body that is one JSON value is a whole response; anything else is a stream.
fn decode_body(adapter: &dyn Adapter, body: &[u8]) -> Result<Decoded, WireError> {
    let provider = adapter.provider();
    if parse_json(body).is_ok() {
        return adapter.decode(body).map_err(|error| WireError::Decode(provider, error));
    }
    let mut session = adapter.stream();
    session.feed(body);
    let decoded = session.finish();
    if decoded.problems.iter().any(|problem| matches!(problem, Problem::NothingRecognised)) {
        return Err(WireError::NotAStream(provider));
    }
    Ok(decoded)
}

fn examples_specs() -> Vec<&'static tool_runtime::spec::ToolSpec> {
    crate::specs().to_vec()
}

fn print(stdout: &mut dyn Write, value: &impl serde::Serialize) -> Result<(), WireError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|error| WireError::Write(std::io::Error::other(error)))?;
    writeln!(stdout, "{text}").map_err(WireError::Write)
}
