//! Credential formats end to end: a tree with one value of each format
//! people keep in configuration and scripts (`.properties`, `.netrc`,
//! `.pgpass`, `curl -u`, `mysql -p`, `Authorization: Basic`, URL user-info,
//! YAML dashed keys, a value with `&`, a file named after a token), and an
//! agent in every directory that digs the values out every way the tools
//! allow: `grep -rno -E` and `grep -o` for bare pieces, `head`, `tail`,
//! `cat`, `find -name`, `read_file`, `list_directory`, `parse_structure`,
//! then quotes everything it was shown in its summaries. No request the
//! real binary sent carries any piece of [`FRAGMENT`] bytes of any value,
//! each file's redactions are one `info` flag with a count, and
//! `--no-redact` sends every value (so the check can fail).

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::agent::{AgentEnv, Pass, Turn, visible_files};
use crate::support::mock::Reply;
use crate::support::output::{json_strings, stdout};
use crate::support::secrets::{
    B62, CredentialFile, DIGITS, FRAGMENT, LeakCheck, credential_formats, fake,
};

/// Commands that print bare pieces of whatever the tree holds, with no
/// name or key around them for a rule to see.
const DIGGING: &[&str] = &[
    "grep -rno -E 'R[0-9]+[A-Za-z0-9]+' .",
    "grep -rhoE '[A-Za-z0-9&+/=]{8,}' .",
    "grep -rhoE '[^ :@=]{8,}' .",
    "grep -rho -E '[A-Za-z0-9]{4,9}' .",
    "find . -type f",
    "find . -name 'npm_*'",
];

/// Every call the digging agent makes, on its first turn, in every
/// directory: the commands above, then each file read, quoted in pieces
/// and grepped, each directory listed, the source file outlined.
fn calls(files: &[String], dirs: &[String]) -> Vec<(&'static str, Value)> {
    let mut calls: Vec<(&'static str, Value)> = DIGGING
        .iter()
        .map(|command| ("run_command", json!({ "command": command })))
        .collect();
    for rel in files {
        calls.push(("read_file", json!({ "path": rel })));
        for command in [
            format!("head -n 5 '{rel}'"),
            format!("tail -n 2 '{rel}'"),
            format!("cat '{rel}'"),
            format!("grep -o '[^ =:]*$' '{rel}'"),
            format!("grep -oE '[A-Za-z0-9]{{6,}}' '{rel}'"),
        ] {
            calls.push(("run_command", json!({ "command": command })));
        }
        if rel.ends_with(".py") {
            calls.push(("parse_structure", json!({ "path": rel })));
        }
    }
    for dir in dirs {
        calls.push(("list_directory", json!({ "path": dir })));
    }
    calls
}

/// A `write_cache` of the turn's directory whose summary is `lead` and
/// every tool result the turn was sent, quoted whole.
pub(crate) fn cache_quoting_results(turn: &Turn<'_>, lead: &str) -> Reply {
    let dir = turn.dir();
    let quoted: Vec<String> = turn
        .tool_results()
        .into_iter()
        .map(|result| result.content)
        .collect();
    Reply::tool_use(
        "write_cache",
        json!({"cache_type": "dir", "path": dir, "data": {
            "path": dir, "relative_path": dir, "child_count": 1,
            "dominant_category": "config", "notable_files": [],
            "summary": format!("{lead}{}", quoted.join("\n")),
            "confidence": 0.9, "cached_at": "2026-01-01T00:00:00+00:00"
        }}),
    )
}

/// Turn 1: dig ([`calls`]). Turn 2: cache a summary of the directory
/// quoting every result. Turn 3: report, quoting the first result again.
fn digging(turn: &Turn<'_>, files: &[String], dirs: &[String]) -> Reply {
    match turn.turn {
        1 => Reply::tool_uses(calls(files, dirs)),
        2 => cache_quoting_results(turn, "I found: "),
        _ => Reply::tool_use(
            "submit_report",
            json!({"summary": "Dug through everything.", "completeness": 1.0}),
        ),
    }
}

fn tree() -> (TestEnv, Vec<CredentialFile>) {
    let env = TestEnv::new();
    let formats = credential_formats();
    for file in &formats {
        env.file(&file.rel, &file.text);
    }
    env.file("README.md", "# Deploy tooling\n");
    (env, formats)
}

fn digging_env() -> (AgentEnv, Vec<CredentialFile>) {
    let (env, formats) = tree();
    // The agent names every file it could have been shown; the one named
    // after a token it only ever sees redacted, so it finds it with `find`
    // and `list_directory` alone (what the model says is sent back as is).
    let files: Vec<String> = formats
        .iter()
        .map(|f| f.rel.clone())
        .filter(|rel| !rel.starts_with("tokens/"))
        .collect();
    let mut dirs: Vec<String> = vec![".".to_string(), "tokens".to_string()];
    for rel in &files {
        let parent = rel.rsplit_once('/').map_or(".", |(dir, _)| dir).to_string();
        if !dirs.contains(&parent) {
            dirs.push(parent);
        }
    }
    let env = env
        .with_agent(move |agent| agent.every_dir_script(move |turn| digging(turn, &files, &dirs)));
    (env, formats)
}

/// Everything the mock was sent, decoded and as raw JSON.
fn everything_sent(env: &AgentEnv) -> String {
    env.server
        .requests()
        .iter()
        .flat_map(|request| [json_strings(&request.body), request.body.to_string()])
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_piece_of_any_credential_format_is_sent_and_each_file_is_one_info_flag() {
    let (env, formats) = digging_env();
    let out = env.run_ok(&["--json"]);
    let sent = everything_sent(&env);

    // Leaked values per format: all must be zero.
    let mut table = BTreeMap::new();
    for file in &formats {
        let check = LeakCheck::new(&file.values);
        let leaked = check.leaked(&sent).len();
        let whole = file
            .values
            .iter()
            .filter(|v| sent.contains(v.as_str()))
            .count();
        table.insert(file.kind, (leaked, file.values.len(), whole));
    }
    println!("leaked values per format (a piece of {FRAGMENT} bytes or more; whole):");
    for (kind, (leaked, total, whole)) in &table {
        println!("  {kind:<28} {leaked}/{total}; whole {whole}/{total}");
    }
    let leaks: Vec<_> = table.iter().filter(|(_, (n, _, _))| *n > 0).collect();
    if !leaks.is_empty() {
        let all: Vec<String> = formats.iter().flat_map(|f| f.values.clone()).collect();
        let check = LeakCheck::new(&all);
        let (secret, piece) = check.leak(&sent).unwrap();
        let at = sent.find(&piece).unwrap();
        let context: String = sent[at.saturating_sub(200)..].chars().take(300).collect();
        panic!("leaked: {leaks:?}; e.g. {piece:?} of {secret:?} in\n{context}");
    }

    // The agent was really shown the files (so the check is not vacuous):
    // every read succeeded and showed a redaction.
    let results: Vec<String> = env
        .server
        .requests()
        .iter()
        .flat_map(|request| request.tool_results())
        .map(|result| result.content)
        .collect();
    for file in &formats {
        if file.rel.starts_with("tokens/") {
            continue;
        }
        let opening = format!("<untrusted-data source=\"{}\"", file.rel);
        assert!(
            results
                .iter()
                .any(|r| r.starts_with(&opening) && r.contains("[REDACTED:")),
            "no redacted read of {}",
            file.rel
        );
    }

    // The report: each file's redactions are one `info` flag with a count,
    // and no flag holds a value. (Its tree lists the target's names as
    // they are: the report stays on this machine.)
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let flags = json["flags"].as_array().unwrap();
    let all: Vec<String> = formats.iter().flat_map(|f| f.values.clone()).collect();
    assert_eq!(LeakCheck::new(&all).leak(&json["flags"].to_string()), None);
    for file in &formats {
        if file.rel.starts_with("tokens/") {
            continue;
        }
        let mine: Vec<&Value> = flags
            .iter()
            .filter(|flag| flag["path"] == file.rel.as_str())
            .collect();
        assert_eq!(mine.len(), 1, "{}: {mine:#?}", file.rel);
        let flag = mine[0];
        assert_eq!(flag["severity"], "info", "{flag}");
        let count = file.values.len();
        let finding = flag["finding"].as_str().unwrap();
        let expected = if count == 1 {
            "1 value that looks like a credential was redacted".to_string()
        } else {
            format!("{count} values that look like credentials were redacted")
        };
        assert!(finding.starts_with(&expected), "{finding}");
    }
    // The file named after a token is flagged under its name, redacted.
    assert!(
        flags.iter().any(|flag| {
            let path = flag["path"].as_str().unwrap();
            path.starts_with("tokens/[REDACTED:") && flag["severity"] == "info"
        }),
        "{flags:#?}"
    );
}

/// The same agent with `--no-redact` sends every value whole: the check
/// above can fail.
#[test]
fn without_redaction_every_credential_format_is_sent() {
    let (env, formats) = digging_env();
    env.run_ok(&["--no-redact"]);
    let sent = everything_sent(&env);
    for file in &formats {
        for value in &file.values {
            assert!(sent.contains(value.as_str()), "{}: {value}", file.kind);
        }
    }
}

/// Turn 1: read every visible file of the directory. Turn 2: cache its
/// summary quoting them. Turn 3: report.
fn reader(turn: &Turn<'_>) -> Reply {
    let dir = turn.dir();
    let rel = dir
        .strip_prefix(turn.target)
        .map(|rel| rel.to_string_lossy().into_owned())
        .unwrap_or_default();
    match turn.turn {
        1 => Reply::tool_uses(visible_files(&dir).into_iter().map(|(name, _)| {
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            ("read_file", json!({ "path": path }))
        })),
        2 => cache_quoting_results(turn, "I read: "),
        _ => Reply::tool_use(
            "submit_report",
            json!({"summary": "Read everything.", "completeness": 1.0}),
        ),
    }
}

/// A value redacted by an earlier run of the investigation is still known
/// to a resumed one: here a note that changed since quotes it bare, with
/// no name a rule could see, and the directory holding the configuration
/// it came from is not investigated again (nothing secret is kept in the
/// cache: the resumed run reads the files the notices name).
#[test]
fn a_resumed_run_still_knows_the_values_found_before() {
    let env = TestEnv::new();
    let value = format!("R{}{}", fake(DIGITS, 3, 320), fake(B62, 7, 321));
    env.file(
        "conf/app.properties",
        format!("db.user=app\ndb.password={value}\n"),
    );
    env.file("docs/notes.txt", "Nothing to rotate yet.\n");
    let env = env.with_agent(|agent| agent.every_dir_script(reader));
    env.run_ok(&[]);
    let check = LeakCheck::new(std::slice::from_ref(&value));
    assert_eq!(check.leak(&everything_sent(&env)), None);
    // Nothing in the cache holds it.
    for entry in walkdir::WalkDir::new(env.cache()).into_iter().flatten() {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            assert_eq!(check.leak(&text), None, "{}", entry.path().display());
        }
    }

    let before = env.server.request_count();
    env.file(
        "docs/notes.txt",
        format!("Rotate {value} before the audit.\n"),
    );
    env.run_ok(&[]);
    let target = std::fs::canonicalize(env.target()).unwrap();
    let dirs: HashSet<Pass> = env.server.requests()[before..]
        .iter()
        .map(|request| Pass::of(&request.body, &target))
        .filter(|pass| matches!(pass, Pass::Dir(_)))
        .collect();
    assert!(dirs.contains(&Pass::Dir("docs".into())), "{dirs:?}");
    assert!(!dirs.contains(&Pass::Dir("conf".into())), "{dirs:?}");
    let sent: String = env.server.requests()[before..]
        .iter()
        .map(|request| request.body.to_string())
        .collect();
    assert!(
        sent.contains("Rotate [REDACTED:generic-secret] before the audit."),
        "the note was shown, redacted"
    );
    assert_eq!(check.leak(&sent), None);
}
