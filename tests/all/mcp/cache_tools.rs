//! The tool set, and `overview`, `directory` and `flags` answering from the
//! cache: the report's own verdict, flags and directories, no API request,
//! no key, nothing written, and what changed since said.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use super::*;

/// Every file under `dir` with its size and modification time: what a
/// reader that writes nothing leaves as it was.
fn snapshot(dir: &Path) -> BTreeMap<String, (u64, SystemTime)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| {
            let meta = entry.metadata().unwrap();
            (
                entry.path().to_string_lossy().into_owned(),
                (meta.len(), meta.modified().unwrap()),
            )
        })
        .collect()
}

/// The tools are pinned, each takes a target, only `investigate` is said
/// to write, and it and `ask` (the two that call the API) to reach beyond
/// the machine.
#[test]
fn the_tool_set_is_pinned() {
    let env = TestEnv::new();
    let mcp = Mcp::without_key(&env);
    let tools = mcp.tools();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        ["investigate", "overview", "directory", "flags", "ask"]
    );
    for tool in &tools {
        let schema = serde_json::to_value(&*tool.input_schema).unwrap();
        assert!(
            schema["required"]
                .as_array()
                .unwrap()
                .contains(&json!("target")),
            "{schema}"
        );
        assert!(tool.description.as_ref().is_some_and(|d| d.len() > 80));
        let hints = tool.annotations.as_ref().unwrap();
        let investigates = tool.name == "investigate";
        let calls_the_api = investigates || tool.name == "ask";
        assert_eq!(hints.read_only_hint, Some(!investigates), "{}", tool.name);
        assert_eq!(hints.open_world_hint, Some(calls_the_api), "{}", tool.name);
    }
}

/// On a tree the binary investigated: the overview is the report's verdict
/// and flags, the directory its row, the flags filtered by severity; and
/// none of it makes a request, needs a key or writes a byte.
#[test]
fn the_cache_tools_answer_from_the_cache_alone() {
    let env = investigated();
    // The binary's own report of the same cache (an unchanged tree: no
    // request either).
    let report: Value = serde_json::from_slice(&env.run_ok(&["--json"]).stdout).unwrap();
    let requests = env.server.request_count();
    let cache = snapshot(env.cache());

    let mcp = Mcp::without_key(&env);
    let overview = mcp.answer("overview", args(&env, json!({})));
    assert_eq!(overview["brief"], report["ai_brief"]);
    assert_eq!(overview["analysis"], report["ai_detailed"]);
    assert!(!overview["brief"].as_str().unwrap().is_empty());
    assert_eq!(overview["flags"], report["flags"]);
    assert_eq!(overview["investigation"]["status"], "complete");
    assert!(overview["investigation"]["id"].is_string());
    assert_eq!(
        overview["tree"],
        json!({"changed_since_investigated": false})
    );
    assert_eq!(
        overview["coverage"],
        json!({"directories": 4, "investigated": 4, "folded": 0, "mechanical": 0,
               "without_summary": 0})
    );
    let target = std::fs::canonicalize(env.target()).unwrap();
    assert_eq!(overview["target"], json!(target));

    let core = mcp.answer("directory", args(&env, json!({"path": "src/core"})));
    let row = report["directories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|dir| dir["path"] == "src/core")
        .unwrap();
    assert_eq!(core["summary"], row["summary"]);
    assert_eq!(core["files"], row["files"]);
    assert_eq!(core["coverage"], "investigated");
    assert_eq!(core["changed_since_investigated"], false);
    let files: Vec<&str> = core["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["src/core/engine.rs", "src/core/model.rs"]);
    assert_eq!(core["flags"][0]["finding"], "run() ignores errors");
    assert_eq!(core["flags"][0]["verified"], true);
    // The root, by any spelling, lists where to go next.
    for root in [".", "", "./", &target.to_string_lossy()] {
        let top = mcp.answer("directory", args(&env, json!({"path": root})));
        assert_eq!(top["path"], ".");
        let below: Vec<&str> = top["subdirectories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|dir| dir["path"].as_str().unwrap())
            .collect();
        assert_eq!(below, ["docs", "src"]);
    }

    let all = mcp.answer("flags", args(&env, json!({})));
    assert_eq!(all["flags"], report["flags"]);
    assert_eq!(
        all["counts"],
        json!({"critical": 0, "concern": 1, "info": 1})
    );
    let concerns = mcp.answer("flags", args(&env, json!({"severity": "concern"})));
    let found: Vec<&str> = concerns["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flag| flag["finding"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["run() ignores errors"]);

    assert_eq!(
        env.server.request_count(),
        requests,
        "a cache tool called the API"
    );
    let after = snapshot(env.cache());
    let touched: Vec<&String> = after
        .iter()
        .filter(|(path, seen)| cache.get(*path) != Some(*seen))
        .map(|(path, _)| path)
        .chain(cache.keys().filter(|path| !after.contains_key(*path)))
        .collect();
    assert!(
        touched.is_empty(),
        "a cache tool wrote to the cache: {touched:?}"
    );
}

/// Files edited and a directory removed after the investigation: the
/// answers name what moved, and the directory that did not move says so.
#[test]
fn a_tree_that_changed_since_is_said_so() {
    let env = investigated();
    env.file(
        "src/core/engine.rs",
        "pub fn run() -> Result<(), ()> { Ok(()) }\n",
    );
    std::fs::remove_dir_all(env.path("docs")).unwrap();
    let mcp = Mcp::without_key(&env);

    let overview = mcp.answer("overview", args(&env, json!({})));
    let tree = &overview["tree"];
    assert_eq!(tree["changed_since_investigated"], true);
    // The root lost a directory: its own contents changed too.
    assert_eq!(tree["directories_changed"], json!([".", "src/core"]));
    assert_eq!(tree["directories_removed"], json!(["docs"]));
    let note = tree["note"].as_str().unwrap();
    assert!(
        note.contains("2 directories changed, 1 directory removed"),
        "{note}"
    );
    assert!(note.contains("investigate"), "{note}");

    let core = mcp.answer("directory", args(&env, json!({"path": "src/core"})));
    assert_eq!(core["changed_since_investigated"], true);
    assert_eq!(core["tree"]["changed_since_investigated"], true);
    let src = mcp.answer("directory", args(&env, json!({"path": "src"})));
    assert_eq!(src["changed_since_investigated"], false);
    let flags = mcp.answer("flags", args(&env, json!({})));
    assert_eq!(flags["tree"]["directories_removed"], json!(["docs"]));
}
