//! `luminos mcp`, driven by a real MCP client (the official Rust SDK's
//! client side) over the binary's stdin and stdout: the tool set, the
//! cache tools answering without the API, investigate and its progress
//! notifications, ask, the errors, and stdout carrying nothing but
//! protocol.

mod ask;
mod cache_tools;
mod errors;
mod investigate;
mod protocol;
mod python;

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam, Tool};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::agent::AgentEnv;

/// The client's side of the session: it keeps every progress notification
/// the server sends.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

/// `luminos mcp` running as a child, with an MCP session open on it.
pub struct Mcp {
    runtime: tokio::runtime::Runtime,
    session: Option<RunningService<RoleClient, Client>>,
    client: Client,
    stderr: Arc<Mutex<String>>,
}

impl Mcp {
    /// Start `luminos mcp` as `cmd` (an env's isolated command) and
    /// open a session.
    pub fn start(mut cmd: std::process::Command) -> Mcp {
        cmd.arg("mcp");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let client = Client::default();
        let stderr: Arc<Mutex<String>> = Arc::default();
        let session = runtime.block_on(async {
            let (transport, err) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn luminos mcp");
            // Drained, so a chatty server never blocks on a full pipe.
            if let Some(mut err) = err {
                let sink = stderr.clone();
                tokio::spawn(async move {
                    use tokio::io::AsyncReadExt;
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = err.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        sink.lock()
                            .unwrap()
                            .push_str(&String::from_utf8_lossy(&buf[..n]));
                    }
                });
            }
            client
                .clone()
                .serve(transport)
                .await
                .expect("the MCP session starts")
        });
        Mcp {
            runtime,
            session: Some(session),
            client,
            stderr,
        }
    }

    /// The server with this env's key, cache and mock.
    pub fn of(env: &TestEnv) -> Mcp {
        let mut cmd = env.bare_cmd();
        cmd.env("ANTHROPIC_API_KEY", "test-key");
        Mcp::start(cmd)
    }

    /// The server with this env's cache and no credential at all.
    pub fn without_key(env: &TestEnv) -> Mcp {
        Mcp::start(env.bare_cmd())
    }

    fn session(&self) -> &RunningService<RoleClient, Client> {
        self.session.as_ref().unwrap()
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Every tool the server lists.
    pub fn tools(&self) -> Vec<Tool> {
        self.runtime
            .block_on(self.session().list_all_tools())
            .unwrap()
    }

    /// Call `name` with `arguments` (a JSON object); a protocol error is an
    /// `Err`. (The client sends a progress token with every request.)
    pub fn call_raw(&self, name: &str, arguments: Value) -> Result<CallToolResult, ServiceError> {
        let params = CallToolRequestParams::new(name.to_string())
            .with_arguments(arguments.as_object().unwrap().clone());
        self.runtime.block_on(self.session().call_tool(params))
    }

    /// The structured answer of a call that must succeed.
    pub fn answer(&self, name: &str, arguments: Value) -> Value {
        let result = self.call_raw(name, arguments).unwrap();
        assert_eq!(
            result.is_error,
            Some(false),
            "{name} failed: {:?}\nstderr: {}",
            result.content,
            self.stderr()
        );
        let structured = result
            .structured_content
            .clone()
            .expect("structured content");
        // The same JSON as text, for clients that read only text.
        let text = text_of(&result);
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
        structured
    }

    /// The one line of a call that must fail as a tool error.
    pub fn failure(&self, name: &str, arguments: Value) -> String {
        let result = self.call_raw(name, arguments).unwrap();
        assert_eq!(result.is_error, Some(true), "{name}: {:?}", result.content);
        assert!(result.structured_content.is_none());
        let text = text_of(&result);
        assert!(!text.contains('\n'), "not one line: {text}");
        text
    }

    /// The progress notifications of a call that has returned, once the
    /// client has handled them all: it handles each notification in a
    /// task of its own, so the call's result can arrive before the last
    /// few are handled although the server sent them first. All are in
    /// when `last` is among them and the counts run 1..=n with no gap;
    /// waiting is bounded, so a notification that never comes fails the
    /// test's assertions rather than hanging it.
    pub fn progress_through(&self, last: &str) -> Vec<ProgressNotificationParam> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let notes = self.client.progress.lock().unwrap().clone();
            let highest = notes.iter().map(|n| n.progress).fold(0.0, f64::max);
            let complete = notes
                .iter()
                .any(|n| n.message.as_deref().is_some_and(|m| m.starts_with(last)))
                && highest == notes.len() as f64;
            if complete || std::time::Instant::now() > deadline {
                return notes;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            // Closing the session closes the server's stdin; it exits.
            let _ = self.runtime.block_on(session.cancel());
        }
    }
}

/// The text of a result's one text block.
fn text_of(result: &CallToolResult) -> String {
    let wire = serde_json::to_value(result).unwrap();
    assert_eq!(wire["content"].as_array().unwrap().len(), 1, "{wire}");
    wire["content"][0]["text"].as_str().unwrap().to_string()
}

/// `{"target": <the env's target>}` plus `extra`'s fields.
fn args(env: &TestEnv, extra: Value) -> Value {
    let mut args = json!({"target": env.target()});
    for (key, value) in extra.as_object().unwrap() {
        args[key] = value.clone();
    }
    args
}

/// The small project, investigated once by the binary against the mock,
/// with a concern raised in `src/core` and one at the root.
fn investigated() -> AgentEnv {
    let env = TestEnv::with_small_project().with_agent(|agent| {
        agent
            .flag(
                "src/core",
                "src/core/engine.rs",
                "concern",
                "run() ignores errors",
            )
            .flag(".", "Cargo.toml", "info", "no edition is set")
    });
    env.run_ok(&[]);
    assert!(env.server.request_count() > 0);
    env
}
