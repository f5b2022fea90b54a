//! [`MockAgent`]: a scripted luminos agent for the mock Messages API.
//!
//! It answers every request the way a sensible model would, so the real
//! binary can run a whole investigation against the mock:
//! - it recognizes the pass from the tools offered (`submit_survey` →
//!   survey, `submit_plan` → planning, `submit_report` with a `brief` field →
//!   synthesis, anything else → a dir loop) and, in a dir loop, the directory
//!   from the system prompt;
//! - the survey and planning passes submit at once (a fixed survey, an empty
//!   plan) unless told otherwise;
//! - a dir loop caches a summary of every visible file in its directory with
//!   `write_cache` on its first turn, then calls `submit_report`;
//! - synthesis submits a brief and a detailed report naming every directory
//!   summary it was shown.
//!
//! Knobs override any of that per pass or per directory (silence, custom
//! inputs, flags, reported usage, arbitrary scripts).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use luminos::ai::api::Usage;
use serde_json::{Value, json};

use super::TestEnv;
use super::mock::{MockBlock, MockServer, RecordedRequest, Reply, ToolResultSeen, tool_results_of};

/// How the line of the dir prompt that names the directory's absolute path
/// begins (the first line that does is the one).
pub const DIR_MARKER: &str = "Directory: ";

/// Which pass a request belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Pass {
    Survey,
    Planning,
    /// A dir loop, by the directory's path relative to the target (`.` for
    /// the target itself).
    Dir(String),
    Synthesis,
}

impl Pass {
    /// Recognize the pass of a request body (`target` is canonical).
    pub fn of(body: &Value, target: &Path) -> Pass {
        let tools = tool_names(body);
        if tools.iter().any(|t| t == "submit_survey") {
            return Pass::Survey;
        }
        if tools.iter().any(|t| t == "submit_plan") {
            return Pass::Planning;
        }
        let synthesis = body["tools"].as_array().into_iter().flatten().any(|tool| {
            tool["name"] == "submit_report"
                && tool["input_schema"]["properties"].get("brief").is_some()
        });
        if synthesis {
            return Pass::Synthesis;
        }
        let dir = dir_of(body).unwrap_or_default();
        Pass::Dir(relative(target, &dir))
    }
}

/// The names of the tools a request offers, in order.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// The system prompt of a request (its text blocks joined).
pub fn system_text(body: &Value) -> String {
    text_of(&body["system"])
}

/// A message content or system field as text: a string as it is, a list
/// of blocks as their text blocks joined.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What the model is told before its first reply: the system prompt and
/// the first user message (where a dir loop's assignment is), joined.
pub fn prompt_text(body: &Value) -> String {
    let first = body["messages"]
        .as_array()
        .and_then(|messages| messages.first())
        .map(|message| text_of(&message["content"]))
        .unwrap_or_default();
    format!("{}\n{first}", system_text(body))
}

/// The absolute directory a dir-loop request is about.
pub fn dir_of(body: &Value) -> Option<PathBuf> {
    let prompt = prompt_text(body);
    let line = prompt.lines().find(|l| l.starts_with(DIR_MARKER))?;
    Some(PathBuf::from(line[DIR_MARKER.len()..].trim()))
}

/// The other directories of a dir-loop's unit (relative to the target, as
/// its first message lists them); empty for a single directory.
pub fn unit_members(body: &Value) -> Vec<String> {
    let prompt = prompt_text(body);
    let opening = format!(
        "<untrusted-data source=\"{}\"",
        luminos::ai::passes::dir_loop::UNIT_FRAME
    );
    let Some(at) = prompt.find(&opening) else {
        return Vec::new();
    };
    prompt[at..]
        .lines()
        .skip(1)
        .take_while(|line| *line != "</untrusted-data>")
        .map(str::to_string)
        .collect()
}

/// 1-based turn of the conversation this request continues.
pub fn turn_of(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map(|m| m.iter().filter(|msg| msg["role"] == "assistant").count())
        .unwrap_or(0)
        + 1
}

fn relative(target: &Path, dir: &Path) -> String {
    match dir.strip_prefix(target) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => dir.to_string_lossy().into_owned(),
    }
}

/// What the scripted agent knows when it answers.
pub struct Turn<'a> {
    /// 1-based turn within this conversation.
    pub turn: usize,
    pub body: &'a Value,
    /// The canonical target.
    pub target: &'a Path,
}

impl Turn<'_> {
    /// The results of the tool calls of the previous turn, in call order.
    pub fn tool_results(&self) -> Vec<ToolResultSeen> {
        tool_results_of(self.body)
    }

    /// The absolute directory of a dir-loop turn.
    pub fn dir(&self) -> PathBuf {
        dir_of(self.body).expect("a dir-loop prompt names its directory")
    }
}

/// A custom script for one pass or directory.
pub type Script = Arc<dyn Fn(&Turn<'_>) -> Reply + Send + Sync>;

#[derive(Clone)]
enum Behaviour {
    /// The plausible default.
    Default,
    /// Reply with text only, never calling a tool.
    Silent,
    /// Cache the files on turn 1 as the default does, then fall silent.
    Stalls,
    /// Submit this input on the first turn (survey, planning, synthesis).
    Submit(Value),
    Custom(Script),
}

/// A flag a dir loop raises on its first turn.
#[derive(Debug, Clone)]
struct FlagCall {
    path: String,
    severity: String,
    finding: String,
}

/// The scripted agent. Cheap to clone; build it with the knobs, then hand
/// [`MockAgent::reply`] to the mock server.
#[derive(Clone)]
pub struct MockAgent {
    target: PathBuf,
    survey: Behaviour,
    planning: Behaviour,
    synthesis: Behaviour,
    dirs: HashMap<String, Behaviour>,
    /// What a dir loop with no behaviour of its own does.
    every_dir: Behaviour,
    usage: HashMap<Pass, Usage>,
    flags: HashMap<String, Vec<FlagCall>>,
    completeness: f64,
    /// Directory summaries are padded to this many characters.
    summary_chars: Option<usize>,
}

impl MockAgent {
    /// An agent for the target at `target` (canonicalized here).
    pub fn new(target: &Path) -> MockAgent {
        MockAgent {
            target: std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf()),
            survey: Behaviour::Default,
            planning: Behaviour::Default,
            synthesis: Behaviour::Default,
            dirs: HashMap::new(),
            every_dir: Behaviour::Default,
            usage: HashMap::new(),
            flags: HashMap::new(),
            completeness: 0.8,
            summary_chars: None,
        }
    }

    /// The survey, planning or synthesis submits `input` on its first turn
    /// (synthesis: `brief` and `detailed`).
    pub fn submits(mut self, pass: Pass, input: Value) -> Self {
        *self.single_pass(pass) = Behaviour::Submit(input);
        self
    }

    /// The survey, planning or synthesis never calls a tool (so it runs out
    /// of turns).
    pub fn silent(mut self, pass: Pass) -> Self {
        *self.single_pass(pass) = Behaviour::Silent;
        self
    }

    /// The behaviour of a pass that runs once per investigation.
    fn single_pass(&mut self, pass: Pass) -> &mut Behaviour {
        match pass {
            Pass::Survey => &mut self.survey,
            Pass::Planning => &mut self.planning,
            Pass::Synthesis => &mut self.synthesis,
            Pass::Dir(rel) => panic!("{rel} is a dir loop: use dir_script"),
        }
    }

    /// The dir loop of `rel` caches its files, then never calls a tool again.
    pub fn stalling_dir(mut self, rel: &str) -> Self {
        self.dirs.insert(rel.to_string(), Behaviour::Stalls);
        self
    }

    /// The dir loop of `rel` follows `script`.
    pub fn dir_script(
        mut self,
        rel: &str,
        script: impl Fn(&Turn<'_>) -> Reply + Send + Sync + 'static,
    ) -> Self {
        self.dirs
            .insert(rel.to_string(), Behaviour::Custom(Arc::new(script)));
        self
    }

    /// Every dir loop without a script of its own follows `script`.
    pub fn every_dir_script(
        mut self,
        script: impl Fn(&Turn<'_>) -> Reply + Send + Sync + 'static,
    ) -> Self {
        self.every_dir = Behaviour::Custom(Arc::new(script));
        self
    }

    /// Every reply in `pass` reports `usage`.
    pub fn usage(mut self, pass: Pass, usage: Usage) -> Self {
        self.usage.insert(pass, usage);
        self
    }

    /// The dir loop of `rel` flags `path` on its first turn.
    pub fn flag(mut self, rel: &str, path: &str, severity: &str, finding: &str) -> Self {
        self.flags
            .entry(rel.to_string())
            .or_default()
            .push(FlagCall {
                path: path.to_string(),
                severity: severity.to_string(),
                finding: finding.to_string(),
            });
        self
    }

    /// Directory summaries (reports and unit entries) run to `chars`
    /// characters, as a real agent's do (about 1,200).
    pub fn summary_chars(mut self, chars: usize) -> Self {
        self.summary_chars = Some(chars);
        self
    }

    fn summary_of(&self, rel: &str, files: &[(String, u64)]) -> String {
        let summary = dir_summary(rel, files);
        match self.summary_chars {
            Some(chars) => padded(&summary, chars),
            None => summary,
        }
    }

    /// The canonical target.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Answer one request body.
    pub fn reply(&self, body: &Value) -> Reply {
        let pass = Pass::of(body, &self.target);
        let turn = Turn {
            turn: turn_of(body),
            body,
            target: &self.target,
        };
        let reply = match &pass {
            Pass::Survey => self.submit_pass(&self.survey, &turn, "submit_survey", default_survey),
            Pass::Planning => self.submit_pass(&self.planning, &turn, "submit_plan", |_| {
                json!({"priority_dirs": [], "shallow_dirs": [], "skip_dirs": [],
                       "investigation_order": "leaf-first", "notes": ""})
            }),
            Pass::Synthesis => {
                self.submit_pass(&self.synthesis, &turn, "submit_report", default_synthesis)
            }
            Pass::Dir(rel) => match self.dirs.get(rel).unwrap_or(&self.every_dir) {
                Behaviour::Silent => silent(&turn),
                Behaviour::Stalls if turn.turn == 1 => self.default_dir(&turn, rel),
                Behaviour::Stalls => silent(&turn),
                Behaviour::Custom(script) => script(&turn),
                Behaviour::Default | Behaviour::Submit(_) => self.default_dir(&turn, rel),
            },
        };
        match self.usage.get(&pass) {
            Some(usage) => reply.with_usage(*usage),
            None => reply,
        }
    }

    fn submit_pass(
        &self,
        behaviour: &Behaviour,
        turn: &Turn<'_>,
        tool: &str,
        default: impl Fn(&Turn<'_>) -> Value,
    ) -> Reply {
        match behaviour {
            Behaviour::Default => Reply::tool_use(tool, default(turn)),
            Behaviour::Submit(input) => Reply::tool_use(tool, input.clone()),
            Behaviour::Silent | Behaviour::Stalls => silent(turn),
            Behaviour::Custom(script) => script(turn),
        }
    }

    /// Turn 1: cache every visible file (of every directory of a unit),
    /// write a dir entry for each folded directory of a unit, and raise the
    /// configured flags; then `submit_report`.
    fn default_dir(&self, turn: &Turn<'_>, rel: &str) -> Reply {
        let dir = dir_of(turn.body).expect("a dir-loop prompt names its directory");
        let members = unit_members(turn.body);
        let files = visible_files(&dir);
        let flags = self.flags.get(rel).cloned().unwrap_or_default();
        let member_files: Vec<(String, Vec<(String, u64)>)> = members
            .iter()
            .map(|member| (member.clone(), visible_files(&turn.target.join(member))))
            .collect();
        let has_work = !files.is_empty() || !flags.is_empty() || !members.is_empty();
        if turn.turn == 1 && has_work {
            let mut blocks = vec![MockBlock::Text(format!(
                "Step 1: reading the files of {rel}."
            ))];
            let all_files = std::iter::once((rel.to_string(), dir.clone(), files.clone())).chain(
                member_files.iter().map(|(member, files)| {
                    (member.clone(), turn.target.join(member), files.clone())
                }),
            );
            for (owner, owner_dir, owner_files) in all_files {
                for (name, size) in &owner_files {
                    let path = owner_dir.join(name);
                    blocks.push(file_entry_call(
                        &path,
                        &relative(turn.target, &path),
                        *size,
                        &file_summary(&owner, name),
                    ));
                }
            }
            for (member, member_files) in &member_files {
                let path = turn.target.join(member);
                blocks.push(tool_use(
                    "write_cache",
                    json!({
                        "cache_type": "dir",
                        "path": path.to_string_lossy(),
                        "data": {
                            "path": path.to_string_lossy(),
                            "relative_path": member,
                            "child_count": member_files.len(),
                            "summary": self.summary_of(member, member_files),
                            "dominant_category": "source",
                            "confidence": 0.8,
                            "cached_at": "2026-01-01T00:00:00+00:00"
                        }
                    }),
                ));
            }
            for flag in &flags {
                blocks.push(tool_use(
                    "flag",
                    json!({"path": flag.path, "finding": flag.finding, "severity": flag.severity}),
                ));
            }
            return Reply::blocks(blocks);
        }
        Reply::tool_use(
            "submit_report",
            json!({"summary": self.summary_of(rel, &files), "completeness": self.completeness}),
        )
    }
}

/// A reply's usage whose context (151,000 tokens, mostly read from the
/// prompt cache) is past the default 140,000-token context budget.
pub const PAST_THE_CONTEXT_BUDGET: Usage = Usage {
    input_tokens: 1_000,
    output_tokens: 50,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 150_000,
};

/// A call of the tool `name` with `input`.
pub fn tool_use(name: &str, input: Value) -> MockBlock {
    MockBlock::ToolUse {
        id: None,
        name: name.to_string(),
        input,
    }
}

/// The `write_cache` call of a plausible file entry: the file at `path`
/// (`rel` from the target), `size_bytes` long, described by `summary`.
pub fn file_entry_call(path: &Path, rel: &str, size_bytes: u64, summary: &str) -> MockBlock {
    tool_use(
        "write_cache",
        json!({
            "cache_type": "file",
            "path": path.to_string_lossy(),
            "data": {
                "path": path.to_string_lossy(),
                "relative_path": rel,
                "size_bytes": size_bytes,
                "category": "source",
                "summary": summary,
                "confidence": 0.9,
                "cached_at": "2026-01-01T00:00:00+00:00"
            }
        }),
    )
}

fn silent(turn: &Turn<'_>) -> Reply {
    Reply::text(format!("Thinking it over (turn {}).", turn.turn))
}

/// The summary the default agent caches for `name` in directory `rel`.
pub fn file_summary(rel: &str, name: &str) -> String {
    format!("File {name} of directory {rel}.")
}

/// `text` made `chars` characters long with plausible filler sentences.
pub fn padded(text: &str, chars: usize) -> String {
    const FILLER: &str = " Its files were read closely; the summaries of each describe what they \
        do, how they fit together and what deserves a second look.";
    let mut out = text.to_string();
    while out.chars().count() < chars {
        out.push_str(FILLER);
    }
    out.chars().take(chars.max(text.chars().count())).collect()
}

/// The summary the default agent reports for directory `rel`.
pub fn dir_summary(rel: &str, files: &[(String, u64)]) -> String {
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    format!(
        "Directory {rel} holds {} files [{}].",
        files.len(),
        names.join(", ")
    )
}

/// `(name, size)` of the visible regular files directly in `dir`, by name.
pub fn visible_files(dir: &Path) -> Vec<(String, u64)> {
    let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| {
                    let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                    (e.file_name().to_string_lossy().into_owned(), size)
                })
                .filter(|(name, _)| !name.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn default_survey(_turn: &Turn<'_>) -> Value {
    json!({
        "description": "A scripted test target",
        "approach": "Read every file.",
        "relevant_tools": ["read_file"],
        "skip_tools": [],
        "domain_notes": "",
        "confidence": 0.9
    })
}

/// The brief names how many directory sections synthesis was shown; the
/// detailed report lists their headings.
fn default_synthesis(turn: &Turn<'_>) -> Value {
    let system = system_text(turn.body);
    let sections: Vec<&str> = system
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .collect();
    json!({
        "brief": format!("Scripted brief over {} directory summaries.", sections.len()),
        "detailed": format!("Scripted detailed report covering: {}.", sections.join(" ")),
    })
}

/// A [`TestEnv`] whose commands talk to a live mock server answering as a
/// [`MockAgent`]. Derefs to the `TestEnv`.
pub struct AgentEnv {
    env: TestEnv,
    pub server: MockServer,
}

impl TestEnv {
    /// Run this env's commands against a new mock server that answers as
    /// the default [`MockAgent`] for this target.
    pub fn with_mock(self) -> AgentEnv {
        self.with_agent(|agent| agent)
    }

    /// Like [`TestEnv::with_mock`], with the agent adjusted by `build`.
    pub fn with_agent(self, build: impl FnOnce(MockAgent) -> MockAgent) -> AgentEnv {
        let server = MockServer::start();
        let env = self.with_base_url(server.url());
        let agent = build(MockAgent::new(env.target()));
        server.respond_with(move |request| agent.reply(&request.body));
        AgentEnv { env, server }
    }
}

impl AgentEnv {
    /// Replace the agent (for a later run of the same env).
    pub fn set_agent(&self, build: impl FnOnce(MockAgent) -> MockAgent) {
        let agent = build(MockAgent::new(self.env.target()));
        self.server
            .respond_with(move |request| agent.reply(&request.body));
    }

    /// Every request so far, with the pass it belonged to.
    pub fn passes(&self) -> Vec<(Pass, RecordedRequest)> {
        let target = std::fs::canonicalize(self.env.target()).unwrap();
        self.server
            .requests()
            .into_iter()
            .map(|request| (Pass::of(&request.body, &target), request))
            .collect()
    }

    /// The requests of one pass, in order.
    pub fn requests_of(&self, pass: &Pass) -> Vec<RecordedRequest> {
        self.passes()
            .into_iter()
            .filter(|(p, _)| p == pass)
            .map(|(_, request)| request)
            .collect()
    }

    /// Spawn `luminos [extra] TARGET` (stdout and stderr piped) and press
    /// Ctrl-C once the mock has seen `requests` requests in all, failing if
    /// that takes longer than `within`; returns the interrupted child.
    pub fn interrupt_after(
        &self,
        extra: &[&str],
        requests: usize,
        within: std::time::Duration,
    ) -> std::process::Child {
        use std::process::Stdio;
        let child = self
            .std_cmd()
            .env("ANTHROPIC_API_KEY", "test-key")
            .args(extra)
            .arg(self.target())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while self.server.request_count() < requests {
            assert!(started.elapsed() < within, "the run never got going");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // SAFETY: kill(2) on our own child's pid, which is not reaped yet.
        let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(rc, 0);
        child
    }
}

impl std::ops::Deref for AgentEnv {
    type Target = TestEnv;

    fn deref(&self) -> &TestEnv {
        &self.env
    }
}
