//! A small model's sloppy tool calls, survived over a whole run against a
//! server that answers as Ollama's layer does (which, unlike the Messages
//! API, takes back a call whose input it sent as a string as the object it
//! was run with).

use serde_json::Value;

use crate::support::TestEnv;
use crate::support::entries::cache_entries;
use crate::support::mock::{MockServer, tool_results_of};

/// Flags a local model is run with.
pub(crate) const LOCAL: [&str; 6] = [
    "--model",
    "qwen3-coder",
    "--price",
    "0,0",
    "--context-window",
    "65536",
];

#[test]
fn string_inputs_and_unknown_tools_leave_no_directory_without_an_entry() {
    let env = TestEnv::new();
    for d in 0..4 {
        env.file(&format!("pkg{d}/lib.rs"), "pub fn f() -> u32 { 1 }\n");
        env.file(&format!("pkg{d}/util/mod.rs"), "pub fn g() {}\n");
        env.file(&format!("pkg{d}/util/more/data.txt"), "numbers\n");
    }
    env.file("README.md", "# sloppy\n");
    let env = env.with_agent_on(MockServer::ollama(65_536), |agent| agent.sloppy(4, 5));
    let mut args = LOCAL.to_vec();
    args.push("--json");
    let out = env.run_ok(&args);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["investigation"]["status"], "complete",
        "{}",
        report["investigation"]
    );
    // Every directory of the tree has its entry, none of them partial.
    let entries = cache_entries(env.cache());
    let dirs = 1 + 4 * 3;
    assert_eq!(entries.dirs.len(), dirs);
    assert!(entries.dirs.values().all(|e| e["partial"] != true));
    // The notes say what was read leniently, and the window.
    let notes: Vec<&str> = report["investigation"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("sent its input as a JSON string")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("65,536 tokens, from --context-window")),
        "{notes:?}"
    );
    // Each call to a tool that does not exist was answered with the tools.
    let requests = env.server.requests();
    let unknown: Vec<String> = requests
        .iter()
        .flat_map(|r| tool_results_of(&r.body))
        .filter(|result| result.content.contains("there is no tool named"))
        .map(|result| result.content)
        .collect();
    assert!(!unknown.is_empty());
    assert!(
        unknown.iter().all(|text| text.contains("The tools are: ")),
        "{unknown:?}"
    );
    assert!(env.server.over_window().is_empty());
}
