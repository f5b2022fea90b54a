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

mod env;
mod pass;
mod replies;

pub use env::AgentEnv;
pub use pass::{Pass, dir_of, prompt_text, system_text, turn_of, unit_members};
pub use replies::{
    PAST_THE_CONTEXT_BUDGET, dir_entry_call, dir_summary, file_entry_call, file_summary, padded,
    tool_use, visible_files, worst_case_usage,
};

use pass::relative;
use replies::{default_answer, default_refinement, default_survey, default_synthesis, silent};

use super::TestEnv;
use super::mock::{MockBlock, MockServer, RecordedRequest, Reply, ToolResultSeen, tool_results_of};

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
    /// A dir loop that takes this many turns, one step a turn, as a
    /// careful model does: list the directory, read its files one by one
    /// (again from the first when it runs out), cache what they are, then
    /// report.
    Thorough(usize),
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
    ask: Behaviour,
    refine: Behaviour,
    dirs: HashMap<String, Behaviour>,
    /// What a dir loop with no behaviour of its own does.
    every_dir: Behaviour,
    usage: HashMap<Pass, Usage>,
    flags: HashMap<String, Vec<FlagCall>>,
    completeness: f64,
    /// Directory summaries are padded to this many characters.
    summary_chars: Option<usize>,
    /// Tool calls made sloppy, as small models make them (see
    /// [`MockAgent::sloppy`]).
    sloppy: Option<Sloppy>,
}

/// Every `string`-th tool call of the run sends its input as a JSON string,
/// every `unknown`-th calls a tool that does not exist (that one wins when
/// both fall on the same call).
#[derive(Clone)]
struct Sloppy {
    string: usize,
    unknown: usize,
    calls: Arc<std::sync::atomic::AtomicUsize>,
}

impl Sloppy {
    fn apply(&self, reply: Reply) -> Reply {
        reply.map_tool_uses(|name, input| {
            let n = 1 + self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n.is_multiple_of(self.unknown) {
                name.push_str("_v2");
            } else if n.is_multiple_of(self.string) {
                *input = Value::String(input.to_string());
            }
        })
    }
}

impl MockAgent {
    /// An agent for the target at `target` (canonicalized here).
    pub fn new(target: &Path) -> MockAgent {
        MockAgent {
            target: std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf()),
            survey: Behaviour::Default,
            planning: Behaviour::Default,
            synthesis: Behaviour::Default,
            ask: Behaviour::Default,
            refine: Behaviour::Default,
            dirs: HashMap::new(),
            every_dir: Behaviour::Default,
            usage: HashMap::new(),
            flags: HashMap::new(),
            completeness: 0.8,
            summary_chars: None,
            sloppy: None,
        }
    }

    /// The survey, planning or synthesis submits `input` on its first turn
    /// (synthesis: `brief` and `detailed`).
    pub fn submits(mut self, pass: Pass, input: Value) -> Self {
        *self.single_pass(pass) = Behaviour::Submit(input);
        self
    }

    /// The survey, planning or synthesis (each group of a synthesis in
    /// levels too) follows `script`.
    pub fn script(
        mut self,
        pass: Pass,
        script: impl Fn(&Turn<'_>) -> Reply + Send + Sync + 'static,
    ) -> Self {
        *self.single_pass(pass) = Behaviour::Custom(Arc::new(script));
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
            Pass::Ask => &mut self.ask,
            Pass::Refine => &mut self.refine,
            Pass::Dir(rel) => panic!("{rel} is a dir loop: use dir_script"),
        }
    }

    /// The survey, planning, synthesis, question or refinement follows
    /// `script` (`turn.turn` is 1-based within its conversation).
    pub fn pass_script(
        mut self,
        pass: Pass,
        script: impl Fn(&Turn<'_>) -> Reply + Send + Sync + 'static,
    ) -> Self {
        *self.single_pass(pass) = Behaviour::Custom(Arc::new(script));
        self
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

    /// Every dir loop without a script of its own takes `turns` turns (at
    /// least 3): see [`Behaviour::Thorough`].
    pub fn thorough_dirs(mut self, turns: usize) -> Self {
        self.every_dir = Behaviour::Thorough(turns.max(3));
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

    /// [`MockAgent::flag`] for each `(rel, path, severity, finding)`, in order.
    pub fn flags(self, flags: &[(&str, &str, &str, &str)]) -> Self {
        flags
            .iter()
            .fold(self, |agent, &(rel, path, severity, finding)| {
                agent.flag(rel, path, severity, finding)
            })
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

    /// Make the tool calls sloppy, as small models do: every `string`-th
    /// call of the run sends its input as a JSON string holding the object,
    /// every `unknown`-th calls a tool that does not exist (its name with
    /// `_v2` added).
    pub fn sloppy(mut self, string: usize, unknown: usize) -> Self {
        self.sloppy = Some(Sloppy {
            string,
            unknown,
            calls: Arc::default(),
        });
        self
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
            Pass::Ask => self.submit_pass(&self.ask, &turn, "submit_answer", default_answer),
            Pass::Refine => {
                self.submit_pass(&self.refine, &turn, "submit_report", default_refinement)
            }
            Pass::Dir(rel) => match self.dirs.get(rel).unwrap_or(&self.every_dir) {
                Behaviour::Silent => silent(&turn),
                Behaviour::Stalls if turn.turn == 1 => self.default_dir(&turn, rel),
                Behaviour::Stalls => silent(&turn),
                Behaviour::Custom(script) => script(&turn),
                Behaviour::Thorough(turns) => self.thorough_dir(&turn, rel, *turns),
                Behaviour::Default | Behaviour::Submit(_) => self.default_dir(&turn, rel),
            },
        };
        let reply = match &self.sloppy {
            Some(sloppy) => sloppy.apply(reply),
            None => reply,
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
            Behaviour::Default | Behaviour::Thorough(_) => Reply::tool_use(tool, default(turn)),
            Behaviour::Submit(input) => Reply::tool_use(tool, input.clone()),
            Behaviour::Silent | Behaviour::Stalls => silent(turn),
            Behaviour::Custom(script) => script(turn),
        }
    }

    /// One turn of a [`Behaviour::Thorough`] loop over `rel`.
    fn thorough_dir(&self, turn: &Turn<'_>, rel: &str, turns: usize) -> Reply {
        let dir = dir_of(turn.body).expect("a dir-loop prompt names its directory");
        let files = visible_files(&dir);
        let step = |text: String| MockBlock::Text(format!("Step {}: {text}", turn.turn));
        if turn.turn >= turns {
            return Reply::tool_use(
                "submit_report",
                json!({"summary": self.summary_of(rel, &files), "completeness": self.completeness}),
            );
        }
        if turn.turn == turns - 1 {
            let mut blocks = vec![step(format!("caching what the files of {rel} are."))];
            for (name, size) in &files {
                let path = dir.join(name);
                blocks.push(file_entry_call(
                    &path,
                    &relative(turn.target, &path),
                    *size,
                    &file_summary(rel, name),
                ));
            }
            return Reply::blocks(blocks);
        }
        let call = match (turn.turn, files.len()) {
            (1, _) | (_, 0) => tool_use("list_directory", json!({"path": dir.to_string_lossy()})),
            (n, count) => {
                let (name, _) = &files[(n - 2) % count];
                tool_use(
                    "read_file",
                    json!({"path": dir.join(name).to_string_lossy()}),
                )
            }
        };
        Reply::blocks(vec![step(format!("looking at {rel}.")), call])
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
                blocks.push(dir_entry_call(
                    &turn.target.join(member),
                    member,
                    member_files.len(),
                    &self.summary_of(member, member_files),
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
