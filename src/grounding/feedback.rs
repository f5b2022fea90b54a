//! [`LoopCheck`]: grounding inside a directory loop, so the agent hears
//! about a path that does not exist while it can still correct it.
//!
//! The engine shows it each call of the loop before the call takes effect
//! ([`LoopCheck::review`]); it looks at `flag` and `submit_report`, and
//! knows nothing of the engine that asks. Only paths are checked
//! here (against the target, the loop's directories and unique names, as
//! in the report); symbols need outlines and are left to the report. A
//! unit's loop covers several directories: a path is missing only when it
//! resolves against none of them.
//!
//! How often the agent is told — once per citation per loop, and a report
//! is held back at most once per loop:
//! - `flag` whose `path` or `finding` names a path not in the tree, not yet
//!   reported in this loop: the flag is held, not recorded, and the result
//!   names the missing paths. A later `flag` call in the loop with the same
//!   finding and severity replaces it (the agent corrected the path); the
//!   same call repeated, or a call whose missing paths were already
//!   reported, is recorded as it is. Held flags nobody replaced are
//!   recorded when the loop ends ([`LoopCheck::take_held_flags`]), so no
//!   finding is ever lost; the report then marks them unverified.
//! - `submit_report` whose summary names such paths: the first time in the
//!   loop, the report is held back and the loop goes on, so the agent can
//!   submit a corrected one; any later `submit_report` is accepted as it is.
//!   If the loop ends before a second one (turns, budget, API failure), the
//!   held report is used ([`LoopCheck::take_held_report`]).
//!
//! It also keeps the paths those calls cite that do exist
//! ([`LoopCheck::take_leads`]): the loop's leads, which the run's
//! replanning follows into directories left to the scan.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::Value;

use super::extract::{Cited, extract, path_field};
use super::resolve::{Resolution, resolve};
use super::scope::Scope;
use crate::ai::tools::ToolOutput;
use crate::ai::tools::notes::FlagInput;
use crate::report::{Flag, Severity};
use crate::text::escape_line;

/// One directory loop's grounding state.
pub(crate) struct LoopCheck {
    scope: Arc<Scope>,
    /// The loop's directories, target-relative (`.` for the target): its
    /// directory first, then those folded into its unit.
    dirs: Vec<String>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Missing paths already reported to the agent.
    reported: HashSet<String>,
    /// A report was already held back once.
    report_held_once: bool,
    held_report: Option<Value>,
    held_flags: Vec<Flag>,
    /// Paths cited in flags and reports that exist, target-relative, in
    /// the order first cited.
    leads: Vec<String>,
}

impl LoopCheck {
    /// The check of a loop over `dirs` (target-relative; its directory
    /// first, then the other directories of its unit).
    pub(crate) fn new(scope: Arc<Scope>, dirs: &[String]) -> LoopCheck {
        LoopCheck {
            scope,
            dirs: if dirs.is_empty() {
                vec![".".to_string()]
            } else {
                dirs.to_vec()
            },
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The paths `text` names that are not in the tree, as written (without
    /// line suffixes), distinct, in order; those it names that are go to
    /// `leads` (target-relative).
    fn missing_paths(&self, text: &str, field: bool, leads: &mut Vec<String>) -> Vec<String> {
        let vocabulary = self.scope.vocabulary();
        let citations = if field {
            path_field(text, vocabulary)
        } else {
            extract(text, vocabulary)
        };
        let mut missing: Vec<String> = Vec::new();
        for citation in citations {
            let Cited::Path(path) = &citation.cited else {
                continue;
            };
            let resolved: Vec<Resolution> = self
                .dirs
                .iter()
                .map(|dir| resolve(&self.scope, path, dir))
                .collect();
            if resolved.iter().all(|r| *r == Resolution::Missing) {
                if !missing.contains(&path.shown()) {
                    missing.push(path.shown());
                }
                continue;
            }
            let found = resolved.into_iter().find_map(|r| match r {
                Resolution::Found { path, .. } => Some(path),
                Resolution::Ambiguous(_) | Resolution::Missing | Resolution::Outside => None,
            });
            if let Some(found) = found
                && !leads.contains(&found)
            {
                leads.push(found);
            }
        }
        missing
    }

    /// The answer to a `flag` call, or `None` to let it be recorded.
    /// A field that is not a string reads as absent (the tool itself
    /// refuses it).
    pub(crate) fn review_flag(&self, input: &FlagInput) -> Option<String> {
        let path = input
            .path
            .as_str()
            .filter(|p| !p.is_empty())
            .unwrap_or("general");
        let finding = input.finding.as_str().unwrap_or("");
        let Some(severity) = Severity::named(input.severity.as_str().unwrap_or("info")) else {
            // The tool itself refuses it.
            return None;
        };
        let mut state = self.state();
        // A call with the held flag's finding is its correction (or, with
        // the same path, the agent standing by it): the held one goes.
        state
            .held_flags
            .retain(|held| !(held.finding.trim() == finding.trim() && held.severity == severity));
        let mut leads = std::mem::take(&mut state.leads);
        let mut missing = self.missing_paths(path, true, &mut leads);
        for other in self.missing_paths(finding, false, &mut leads) {
            if !missing.contains(&other) {
                missing.push(other);
            }
        }
        state.leads = leads;
        missing.retain(|p| !state.reported.contains(p));
        if missing.is_empty() {
            return None;
        }
        state.reported.extend(missing.iter().cloned());
        state.held_flags.push(Flag::new(path, finding, severity));
        Some(format!(
            "Not recorded yet: this tree has no {}. Paths are checked against the scan's file \
             list, relative to the target and to {}. If you meant another path, call flag again \
             with the same finding and the path as it exists: that call replaces this one. \
             Repeat this call unchanged to record it as it is; if you do neither, it is recorded \
             as it is when this directory's investigation ends, and the report marks it as not \
             found.",
            quoted(&missing),
            self.shown_dir()
        ))
    }

    /// The answer to a `submit_report` call, or `None` to accept it.
    pub(crate) fn review_report(&self, input: &Value) -> Option<String> {
        let mut state = self.state();
        let summary = input.get("summary").and_then(Value::as_str).unwrap_or("");
        let mut leads = std::mem::take(&mut state.leads);
        let mut missing = self.missing_paths(summary, false, &mut leads);
        state.leads = leads;
        if state.report_held_once {
            return None;
        }
        missing.retain(|p| !state.reported.contains(p));
        if missing.is_empty() {
            return None;
        }
        state.report_held_once = true;
        state.reported.extend(missing.iter().cloned());
        state.held_report = Some(input.clone());
        Some(format!(
            "Not accepted yet: your summary names {}, which this tree does not have. Paths are \
             checked against the scan's file list, relative to the target and to {}. Correct or \
             remove them and call submit_report again. This check is made once: the next \
             submit_report is accepted as it is.",
            quoted(&missing),
            self.shown_dir()
        ))
    }

    fn shown_dir(&self) -> String {
        let shown: Vec<String> = self
            .dirs
            .iter()
            .map(|dir| {
                if dir == "." {
                    "the target".to_string()
                } else {
                    format!("'{}'", escape_line(dir))
                }
            })
            .collect();
        match shown.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => "the target".to_string(),
        }
    }

    /// The flags held and never replaced; the loop records them as it ends.
    pub(crate) fn take_held_flags(&self) -> Vec<Flag> {
        std::mem::take(&mut self.state().held_flags)
    }

    /// The existing paths the loop's flags and reports cited,
    /// target-relative, first cited first.
    pub(crate) fn take_leads(&self) -> Vec<String> {
        std::mem::take(&mut self.state().leads)
    }

    /// The report held back, if the loop ended without another.
    pub(crate) fn take_held_report(&self) -> Option<Value> {
        self.state().held_report.take()
    }
}

/// `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`, each escaped to one line.
fn quoted(paths: &[String]) -> String {
    let quoted: Vec<String> = paths
        .iter()
        .map(|p| format!("'{}'", escape_line(p)))
        .collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl LoopCheck {
    /// The loop's call of `tool` with `input`, before it takes effect:
    /// `Some(output)` answers it instead of running it (a loop-ending call
    /// then does not end the loop); `None` lets it run.
    pub(crate) fn review(&self, tool: &str, input: &Value) -> Option<ToolOutput> {
        let answer = match tool {
            // Read as `flag` reads it (anything but an object is no
            // arguments).
            "flag" => self.review_flag(&FlagInput::deserialize(input).unwrap_or_default()),
            "submit_report" => self.review_report(input),
            _ => None,
        };
        answer.map(ToolOutput::error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(dir: &str) -> LoopCheck {
        let scope = Scope::new(
            ["src/main.rs", "src/core/engine.rs", "README.md"].map(String::from),
            vec![],
            None,
        );
        LoopCheck::new(Arc::new(scope), &[dir.to_string()])
    }

    fn flag(path: &str, finding: &str, severity: &str) -> FlagInput {
        FlagInput::deserialize(json!({"path": path, "finding": finding, "severity": severity}))
            .unwrap()
    }

    #[test]
    fn a_flag_on_a_real_path_is_recorded_at_once() {
        let check = check("src");
        assert_eq!(check.review_flag(&flag("main.rs", "ok", "critical")), None);
        assert_eq!(
            check.review_flag(&flag("src/core/engine.rs:4", "ok", "info")),
            None
        );
        assert_eq!(
            check.review_flag(&flag("general", "see engine.rs", "info")),
            None
        );
        assert!(check.take_held_flags().is_empty());
    }

    #[test]
    fn a_units_loop_resolves_against_each_of_its_directories() {
        let scope = Arc::new(Scope::new(
            ["src/main.rs", "src/core/engine.rs", "README.md"].map(String::from),
            vec![],
            None,
        ));
        // Written from `src/core`, a directory folded into `src`'s unit.
        let cited = flag("../main.rs", "Starts here.", "info");
        let alone = LoopCheck::new(scope.clone(), &["src".to_string()]);
        let answer = alone.review_flag(&cited).expect("missing from src");
        assert!(
            answer.contains("relative to the target and to 'src'."),
            "{answer}"
        );
        let unit = LoopCheck::new(scope, &["src".to_string(), "src/core".to_string()]);
        assert_eq!(unit.review_flag(&cited), None);
        let answer = unit
            .review_flag(&flag("gone.rs", "Missing.", "info"))
            .expect("missing from both");
        assert!(
            answer.contains("relative to the target and to 'src' and 'src/core'."),
            "{answer}"
        );
    }

    #[test]
    fn a_flag_on_a_missing_path_is_held_and_its_correction_replaces_it() {
        let check = check("src");
        let answer = check
            .review_flag(&flag("src/backdoor.rs", "Opens a shell.", "critical"))
            .expect("held");
        assert!(answer.contains("'src/backdoor.rs'"), "{answer}");
        assert!(
            answer.contains("relative to the target and to 'src'"),
            "{answer}"
        );
        assert_eq!(
            check.review_flag(&flag("main.rs", "Opens a shell.", "critical")),
            None
        );
        assert!(
            check.take_held_flags().is_empty(),
            "the correction replaced it"
        );
    }

    #[test]
    fn a_held_flag_is_recorded_when_the_loop_ends() {
        let check = check(".");
        for (path, finding, severity) in [
            ("turbo.rs", "Fast.", "concern"),
            ("src/x.rs", "Other.", "info"),
        ] {
            let answer = check.review_flag(&flag(path, finding, severity));
            assert!(answer.is_some(), "{path} is held back");
        }
        let held = check.take_held_flags();
        assert_eq!(
            held,
            [
                Flag::new("turbo.rs", "Fast.", "concern"),
                Flag::new("src/x.rs", "Other.", "info")
            ]
        );
    }

    #[test]
    fn each_missing_path_is_reported_once_per_loop() {
        let check = check(".");
        let first = check.review_flag(&flag("turbo.rs", "Fast.", "concern"));
        assert!(first.is_some(), "held back the first time");
        // The same call again: the agent stands by it.
        assert_eq!(
            check.review_flag(&flag("turbo.rs", "Fast.", "concern")),
            None
        );
        assert!(check.take_held_flags().is_empty());
        // Another flag on the same missing path is not held again.
        assert_eq!(check.review_flag(&flag("turbo.rs", "Other.", "info")), None);
        // ...but a new missing path in a finding is.
        let answer = check
            .review_flag(&flag("general", "Also see `src/gone.py:3`.", "info"))
            .expect("held");
        assert!(answer.contains("'src/gone.py'"), "{answer}");
        let answer = check
            .review_flag(&flag("x.rs", "See y.rs, then x.rs.", "info"))
            .expect("held");
        assert!(answer.contains("no 'x.rs' or 'y.rs'."), "{answer}");
    }

    #[test]
    fn a_report_is_held_back_once() {
        let check = check("src");
        let report = json!({"summary": "Holds main.rs and turbo.rs.", "completeness": 0.9});
        let answer = check.review_report(&report).expect("held back");
        assert!(
            answer.contains("'turbo.rs'") && !answer.contains("main.rs'"),
            "{answer}"
        );
        assert_eq!(check.review_report(&report), None, "the second is accepted");
        assert_eq!(check.take_held_report(), Some(report));
    }

    #[test]
    fn a_grounded_report_is_accepted_at_once() {
        let check = check("src");
        let report = json!({"summary": "Holds `main.rs` and core/engine.rs, see README.md."});
        assert_eq!(check.review_report(&report), None);
        assert_eq!(check.take_held_report(), None);
    }

    #[test]
    fn only_flags_and_reports_are_reviewed_and_as_errors() {
        let check = check(".");
        assert!(
            check
                .review("read_file", &json!({"path": "nope.rs"}))
                .is_none()
        );
        let output = check
            .review("submit_report", &json!({"summary": "see nope.rs"}))
            .unwrap();
        assert!(output.is_error);
    }

    #[test]
    fn lists_read_naturally() {
        let list =
            |items: &[&str]| quoted(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(list(&["a"]), "'a'");
        assert_eq!(list(&["a", "b"]), "'a' or 'b'");
        assert_eq!(list(&["a", "b", "c"]), "'a', 'b' or 'c'");
    }
}
