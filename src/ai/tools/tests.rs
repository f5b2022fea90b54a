//! The registry's contract: names per scope, schemas equal to the
//! original's (apart from descriptions), dispatch and logging. Each tool's
//! behaviour is tested through the public API in tests/tools.rs.

use super::*;
use crate::cache::{CacheRoot, EntryKind};
use serde::Deserialize;
use serde_json::{Value, json};

/// The original's tool names per scope, in the order the model sees them.
const EXPECTED_NAMES: [(Toolbox, &[&str]); 6] = [
    (
        Toolbox::Dir,
        &[
            "read_file",
            "list_directory",
            "run_command",
            "parse_structure",
            "write_cache",
            "think",
            "checkpoint",
            "flag",
            "submit_report",
        ],
    ),
    (Toolbox::Synthesis, &["flag", "submit_report"]),
    (Toolbox::Survey, &["submit_survey"]),
    (Toolbox::Planning, &["submit_plan"]),
    // Ours: the conversations after an investigation.
    (
        Toolbox::Ask,
        &[
            "read_file",
            "list_directory",
            "run_command",
            "parse_structure",
            "read_cache",
            "submit_answer",
        ],
    ),
    (
        Toolbox::Refine,
        &[
            "read_file",
            "list_directory",
            "run_command",
            "parse_structure",
            "read_cache",
            "list_cache",
            "submit_report",
        ],
    ),
];

/// Pins the full per-scope lists, including `run_command` and
/// `parse_structure`, which live in command.rs and structure.rs.
#[test]
fn tool_names_per_toolbox_are_the_originals() {
    for (scope, expected) in EXPECTED_NAMES {
        assert_eq!(names(scope), expected, "{scope:?}");
    }
}

/// The original's schemas with descriptions removed: property names, types,
/// items, required lists and enums.
fn original_schemas() -> Vec<(Toolbox, &'static str, Value)> {
    let s = || json!({"type": "string"});
    let cache_type = || json!({"type": "string", "enum": ["file", "dir"]});
    let dir_item = || {
        json!({"type": "object", "properties": {"path": s(), "reason": s()},
               "required": ["path", "reason"]})
    };
    let mut table = vec![
        (
            Toolbox::Dir,
            "read_file",
            // `hex` is ours, after the original's: the hex view of a binary
            // file, whose bytes are otherwise not sent.
            json!({"type": "object",
            "properties": {"path": s(), "max_bytes": {"type": "integer"}, "hex": {"type": "boolean"}},
            "required": ["path"]}),
        ),
        (
            Toolbox::Dir,
            "list_directory",
            json!({"type": "object",
            "properties": {"path": s(), "show_hidden": {"type": "boolean"}},
            "required": ["path"]}),
        ),
        (
            Toolbox::Dir,
            "run_command",
            json!({"type": "object",
            "properties": {"command": s()}, "required": ["command"]}),
        ),
        (
            Toolbox::Dir,
            "parse_structure",
            json!({"type": "object",
            "properties": {"path": s()}, "required": ["path"]}),
        ),
        (
            Toolbox::Dir,
            "write_cache",
            json!({"type": "object",
            "properties": {"cache_type": cache_type(), "path": s(), "data": {"type": "object"}},
            "required": ["cache_type", "path", "data"]}),
        ),
        (
            Toolbox::Dir,
            "think",
            json!({"type": "object",
            "properties": {"observation": s(), "hypothesis": s(), "next_action": s()},
            "required": ["observation", "hypothesis", "next_action"]}),
        ),
        (
            Toolbox::Dir,
            "checkpoint",
            json!({"type": "object",
            "properties": {"learned": s(), "still_unknown": s(), "next_phase": s()},
            "required": ["learned", "still_unknown", "next_phase"]}),
        ),
        (Toolbox::Dir, "flag", flag_schema()),
        (
            Toolbox::Dir,
            "submit_report",
            json!({"type": "object",
            "properties": {"summary": s(), "completeness": {"type": "number"}},
            "required": ["summary", "completeness"]}),
        ),
        (
            Toolbox::Synthesis,
            "read_cache",
            json!({"type": "object",
            "properties": {"cache_type": cache_type(), "path": s()},
            "required": ["cache_type", "path"]}),
        ),
        (
            Toolbox::Synthesis,
            "list_cache",
            json!({"type": "object",
            "properties": {"cache_type": cache_type()}, "required": ["cache_type"]}),
        ),
        (Toolbox::Synthesis, "flag", flag_schema()),
        (
            Toolbox::Synthesis,
            "submit_report",
            synthesis_report_schema(),
        ),
        (
            Toolbox::Survey,
            "submit_survey",
            json!({"type": "object",
            "properties": {
                "description": s(), "approach": s(),
                "relevant_tools": {"type": "array", "items": s()},
                "skip_tools": {"type": "array", "items": s()},
                "domain_notes": s(), "confidence": {"type": "number"}},
            "required": ["description", "approach", "relevant_tools", "skip_tools",
                         "domain_notes", "confidence"]}),
        ),
        (
            Toolbox::Planning,
            "submit_plan",
            json!({"type": "object",
            "properties": {
                "priority_dirs": {"type": "array", "items": {"type": "object",
                    "properties": {"path": s(), "reason": s(), "suggested_turns": {"type": "integer"}},
                    "required": ["path", "reason", "suggested_turns"]}},
                "shallow_dirs": {"type": "array", "items": dir_item()},
                "skip_dirs": {"type": "array", "items": dir_item()},
                "investigation_order": {"type": "string", "enum": ["leaf-first", "priority-first"]},
                "notes": s()},
            "required": ["priority_dirs", "shallow_dirs", "skip_dirs", "investigation_order", "notes"]}),
        ),
    ];
    // The tools `ask` and `--refine` share with the dir loop and the
    // synthesis take the same input there.
    let shared: Vec<(Toolbox, &'static str, Value)> = table
        .iter()
        .filter(|(toolbox, name, _)| {
            (*toolbox == Toolbox::Dir
                && [
                    "read_file",
                    "list_directory",
                    "run_command",
                    "parse_structure",
                ]
                .contains(name))
                || (*toolbox == Toolbox::Synthesis && ["read_cache", "list_cache"].contains(name))
        })
        .flat_map(|(_, name, schema)| {
            [Toolbox::Ask, Toolbox::Refine].map(|toolbox| (toolbox, *name, schema.clone()))
        })
        .collect();
    table.extend(shared);
    // Ours.
    table.push((
        Toolbox::Ask,
        "submit_answer",
        json!({"type": "object", "properties": {"answer": s()}, "required": ["answer"]}),
    ));
    // The refinement hands in what the synthesis does, then its flags.
    let (_, _, synthesis) = table
        .iter()
        .find(|(toolbox, name, _)| *toolbox == Toolbox::Synthesis && *name == "submit_report")
        .unwrap();
    let mut refined = synthesis.clone();
    let properties = refined["properties"].as_object_mut().unwrap();
    properties.insert(
        "flags_added".into(),
        json!({"type": "array", "items": flag_schema()}),
    );
    properties.insert(
        "flags_withdrawn".into(),
        json!({"type": "array", "items": s()}),
    );
    table.push((Toolbox::Refine, "submit_report", refined));
    table
}

/// The original's `brief` and `detailed`, then the optional domain
/// sections of its plan (Part 8), in the shapes the report reads
/// ([`crate::report::Sections`]), with ours (`commands`, what `AGENTS.md`
/// shows) among them. Only the original's two are required.
fn synthesis_report_schema() -> Value {
    let s = || json!({"type": "string"});
    let strings = || json!({"type": "array", "items": s()});
    let objects = |properties: Value, required: &[&str]| {
        json!({"type": "array", "items": {"type": "object", "properties": properties,
                                          "required": required}})
    };
    json!({"type": "object",
        "properties": {
            "brief": s(),
            "detailed": s(),
            "overall_purpose": s(),
            "architecture": s(),
            "components": objects(
                json!({"name": s(), "path": s(), "role": s(), "depends_on": strings()}),
                &["name", "role"]),
            "entry_points": objects(json!({"path": s(), "role": s()}), &["path", "role"]),
            "commands": objects(json!({"command": s(), "purpose": s(), "source": s()}),
                                &["command", "source"]),
            "tech_stack": strings(),
            "datasets": objects(json!({"name": s(), "path": s(), "description": s()}),
                                &["name", "description"]),
            "schema_summary": s(),
            "period_covered": s(),
            "themes": strings(),
            "data_quality": s(),
            "concerns": strings()},
        "required": ["brief", "detailed"]})
}

fn flag_schema() -> Value {
    json!({"type": "object",
        "properties": {"path": {"type": "string"}, "finding": {"type": "string"},
                       "severity": {"type": "string", "enum": ["info", "concern", "critical"]}},
        "required": ["path", "finding", "severity"]})
}

/// Remove every `"description": "<text>"` (a property *named* description,
/// whose value is an object, stays).
fn without_descriptions(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, value)| !(key.as_str() == "description" && value.is_string()))
                .map(|(key, value)| (key.clone(), without_descriptions(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
        other => other.clone(),
    }
}

#[test]
fn every_registered_schema_is_the_originals() {
    let table = original_schemas();
    for tool in REGISTRY {
        for scope in tool.spec().toolboxes {
            let (_, _, expected) = table
                .iter()
                .find(|(s, name, _)| s == scope && *name == tool.spec().name)
                .unwrap_or_else(|| {
                    panic!("{} in {scope:?} is not an original tool", tool.spec().name)
                });
            let ours = tool.spec().input_schema();
            assert_eq!(
                &without_descriptions(&ours),
                expected,
                "{}",
                tool.spec().name
            );
            // Property order is what the model sees; keep the original's.
            let keys = |v: &Value| -> Vec<String> {
                v["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect()
            };
            assert_eq!(keys(&ours), keys(expected), "{}", tool.spec().name);
        }
    }
}

#[test]
fn every_tool_and_property_has_a_description() {
    for tool in REGISTRY {
        assert!(tool.spec().description.len() > 20, "{}", tool.spec().name);
        let schema = tool.spec().input_schema();
        for (name, property) in schema["properties"].as_object().unwrap() {
            if tool.spec().name == "read_cache" || tool.spec().name == "list_cache" {
                // The original's cache_type here has no description either.
                if name == "cache_type" {
                    continue;
                }
            }
            // A note's fields are named for what goes in them.
            if ["think", "checkpoint"].contains(&tool.spec().name) {
                continue;
            }
            assert!(
                property["description"].is_string(),
                "{}.{name}",
                tool.spec().name
            );
        }
    }
}

#[test]
fn definitions_follow_names() {
    for (scope, _) in EXPECTED_NAMES {
        let defs = definitions(scope);
        let def_names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(def_names, names(scope));
        assert!(defs.iter().all(|d| d.cache_control.is_none()));
    }
}

#[test]
fn only_the_submit_tools_end_a_loop() {
    for tool in REGISTRY {
        let ends = tool.spec().name.starts_with("submit_");
        assert_eq!(tool.ends_loop(), ends, "{}", tool.spec().name);
    }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    target: std::path::PathBuf,
    cache: Cache,
    redactor: Redactor,
    progress: Progress,
}

impl Fixture {
    fn new() -> Fixture {
        let (tmp, target) = crate::testing::temp_target(&[("a.txt", "héllo")]);
        let (_, cache) = crate::testing::open_cache(tmp.path(), &target);
        Fixture {
            _tmp: tmp,
            target,
            cache,
            redactor: Redactor::disabled(),
            progress: Progress::silent(),
        }
    }

    fn ctx(&self) -> ToolContext<'_> {
        ToolContext {
            turn: 4,
            ..ToolContext::new(&self.cache, &self.redactor, &self.progress, "sub")
        }
    }

    fn log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.cache.dir().join("investigation.log"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

#[test]
fn dispatch_runs_logs_and_routes_by_scope() {
    let f = Fixture::new();
    let ctx = f.ctx();
    // A synthesis tool is unknown in the dir loop, and the reverse.
    assert!(matches!(
        dispatch(Toolbox::Dir, "read_cache", &json!({}), &ctx).unwrap(),
        Dispatch::Unknown
    ));
    assert!(matches!(
        dispatch(
            Toolbox::Synthesis,
            "read_file",
            &json!({"path": "a.txt"}),
            &ctx
        )
        .unwrap(),
        Dispatch::Unknown
    ));
    assert!(matches!(
        dispatch(Toolbox::Dir, "no_such_tool", &json!({}), &ctx).unwrap(),
        Dispatch::Unknown
    ));
    for (scope, name) in [
        (Toolbox::Dir, "submit_report"),
        (Toolbox::Synthesis, "submit_report"),
        (Toolbox::Survey, "submit_survey"),
        (Toolbox::Planning, "submit_plan"),
        (Toolbox::Ask, "submit_answer"),
        (Toolbox::Refine, "submit_report"),
    ] {
        assert!(matches!(
            dispatch(scope, name, &json!({}), &ctx).unwrap(),
            Dispatch::EndsLoop
        ));
    }
    assert!(
        f.log().is_empty(),
        "unknown and ending calls are not logged"
    );

    let Dispatch::Ran(out) =
        dispatch(Toolbox::Dir, "read_file", &json!({"path": "a.txt"}), &ctx).unwrap()
    else {
        panic!("read_file did not run");
    };
    assert!(!out.is_error && out.content.contains("héllo"));
    let data = json!({"summary": "s"});
    let Dispatch::Ran(bad) = dispatch(
        Toolbox::Dir,
        "write_cache",
        &json!({"cache_type": "file", "path": "a.txt", "data": data}),
        &ctx,
    )
    .unwrap() else {
        panic!("write_cache did not run");
    };
    assert!(bad.is_error);
    let Dispatch::Ran(flagged) = dispatch(
        Toolbox::Synthesis,
        "flag",
        &json!({"path": "general", "finding": "x", "severity": "info"}),
        &ctx,
    )
    .unwrap() else {
        panic!("flag did not run in synthesis");
    };
    assert_eq!(flagged, ToolOutput::ok("ok"));

    let log = f.log();
    assert_eq!(log.len(), 3);
    assert_eq!(log[0]["tool"], "read_file");
    assert_eq!(log[0]["directory"], "sub");
    assert_eq!(log[0]["turn"], 4);
    assert_eq!(log[0]["args"], json!({"path": "a.txt"}));
    assert_eq!(
        log[0]["result_length"],
        out.content.chars().count(),
        "length in characters, as the original's len(str)"
    );
    assert_ne!(out.content.chars().count(), out.content.len());
    assert_eq!(
        log[1]["args"],
        json!({"cache_type": "file", "path": "a.txt"})
    );
    assert_eq!(log[1]["result_length"], bad.content.chars().count());
    assert_eq!(log[2]["tool"], "flag");
}

#[test]
fn non_object_input_is_treated_as_no_arguments() {
    let f = Fixture::new();
    let Dispatch::Ran(out) =
        dispatch(Toolbox::Dir, "read_file", &json!("a.txt"), &f.ctx()).unwrap()
    else {
        panic!("read_file did not run");
    };
    assert!(out.is_error && out.content.contains("'path'"), "{out:?}");
}

/// The string argument `name` of `input`, read as a tool's input reads it.
fn text_arg(input: &Value, name: &str) -> input::Text {
    input.get(name).map_or(input::Text::Missing, |value| {
        input::Text::deserialize(value).unwrap()
    })
}

#[test]
fn argument_helpers() {
    let input = json!({"s": "x", "e": "", "n": 3, "z": null});
    let arg = |name: &str| text_arg(&input, name);
    assert_eq!(arg("s").optional("s"), Ok(Some("x")));
    assert_eq!(arg("z").optional("z"), Ok(None));
    assert_eq!(arg("missing").optional("missing"), Ok(None));
    assert!(arg("n").optional("n").unwrap_err().is_error);
    assert_eq!(arg("s").required("s"), Ok("x"));
    assert!(arg("e").required("e").unwrap_err().content.contains("'e'"));
    assert!(arg("missing").required("missing").is_err());
    assert!(unknown_tool_message("bash\n", &[]).contains("'bash\\n'"));
}

#[test]
fn a_files_redactions_are_one_flag_once_per_investigation() {
    use crate::redact::{Hit, RuleSeverity};
    let f = Fixture::new();
    let hits = [
        Hit {
            rule: "aws-access-key-id",
            line: 2,
            severity: RuleSeverity::Critical,
            known: false,
        },
        Hit {
            rule: "generic-secret",
            line: 5,
            severity: RuleSeverity::Concern,
            known: false,
        },
    ];
    f.ctx().record_redactions(".env", &hits);
    // The same file read again, and in a later run over the same cache.
    f.ctx().record_redactions(".env", &hits);
    let reopened = Cache::open(
        &CacheRoot::open(f.cache.dir().parent().unwrap()).unwrap(),
        f.cache.id(),
        &f.target,
    )
    .unwrap();
    let ctx = ToolContext {
        cache: &reopened,
        ..f.ctx()
    };
    ctx.record_redactions(".env", &hits);
    // Another file with the same secrets is another notice.
    ctx.record_redactions("config/.env", &hits);
    let flags = f.cache.read_flags();
    assert_eq!(flags.len(), 2, "{flags:?}");
    assert_eq!(flags[0].path, ".env");
    assert_eq!(flags[0].severity, crate::report::Severity::Info);
    assert!(
        flags[0]
            .finding
            .starts_with("2 values that look like credentials were redacted")
    );
    assert_eq!(flags[1].path, "config/.env");
}

#[test]
fn a_disabled_redactor_passes_text_through_without_flags() {
    let f = Fixture::new();
    let text = "AKIAABCDEFGHIJKLMNOP";
    assert_eq!(f.ctx().redact(".env", text), text);
    assert_eq!(f.ctx().redact_unflagged(text), text);
    assert!(f.cache.read_flags().is_empty());
}

#[test]
fn a_dir_entry_the_agent_writes_carries_its_stamps_in_the_same_write() {
    let f = Fixture::new();
    std::fs::create_dir(f.target.join("sub")).unwrap();
    let sub = f.target.join("sub");
    let stamp = crate::cache::DirStamp {
        fingerprint: "f1".into(),
        ..crate::cache::DirStamp::default()
    };
    let stamps = vec![(sub.clone(), stamp)];
    let ctx = ToolContext {
        home: Some(&sub),
        stamps: &stamps,
        ..f.ctx()
    };
    let write = |kind: &str, path: &str| {
        let data = match kind {
            "dir" => json!({"summary": "s", "cached_at": "2026-11-24T00:00:00Z",
                "child_count": 0, "dominant_category": "source"}),
            _ => json!({"summary": "s", "cached_at": "2026-11-24T00:00:00Z",
                "size_bytes": 1, "category": "text"}),
        };
        let input = json!({"cache_type": kind, "path": path, "data": data});
        let Dispatch::Ran(out) = dispatch(Toolbox::Dir, "write_cache", &input, &ctx).unwrap()
        else {
            panic!("write_cache did not run");
        };
        assert!(!out.is_error, "{out:?}");
    };
    write("dir", "sub");
    let entry = f
        .cache
        .read_entry(EntryKind::Dir, &sub.to_string_lossy())
        .unwrap();
    assert_eq!(entry["fingerprint"], "f1");
    assert_eq!(entry["summary"], "s");
    // File entries are the agent's alone.
    write("file", "a.txt");
    let file = f
        .cache
        .read_entry(EntryKind::File, &f.target.join("a.txt").to_string_lossy())
        .unwrap();
    assert!(file.get("fingerprint").is_none(), "{file}");
}
