//! Small models' sloppy tool calls, survived: an input sent as a JSON
//! string holding the object is read as that object (and the run's notes
//! say so), a call to a tool that does not exist gets an error naming the
//! tools, and a loop whose calls stay malformed ends with a partial entry
//! instead of spending every turn it has.

use crate::support;

use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{Pass, tool_use};
use support::entries::cache_entries;
use support::mock::Reply;
use support::output::stderr;

/// A tree of a dozen directories, each with a file or two.
fn tree() -> TestEnv {
    let env = TestEnv::new();
    for d in 0..4 {
        env.file(&format!("pkg{d}/lib.rs"), "pub fn f() -> u32 { 1 }\n");
        env.file(&format!("pkg{d}/util/mod.rs"), "pub fn g() {}\n");
        env.file(&format!("pkg{d}/util/more/data.txt"), "numbers\n");
    }
    env
}

fn report(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("one JSON report")
}

#[test]
fn three_malformed_calls_in_a_row_end_the_loop_with_a_partial_entry() {
    let env = tree().with_agent(|agent| {
        agent.dir_script("pkg1", |_| {
            Reply::blocks(vec![tool_use("read_everything", json!({"path": "."}))])
        })
    });
    let out = env.run_ok(&["--json"]);
    let err = stderr(&out);
    // Three turns, not the dozen the loop was given.
    let turns = env.requests_of(&Pass::Dir("pkg1".into())).len();
    assert_eq!(turns, 3, "{err}");
    assert!(err.contains("3 malformed tool calls in a row"), "{err}");
    let entries = cache_entries(env.cache());
    let entry = entries
        .dirs
        .values()
        .find(|e| e["relative_path"] == "pkg1")
        .expect("pkg1 has an entry");
    assert_eq!(entry["partial"], true, "{entry}");
    assert!(
        entry["partial_reason"]
            .as_str()
            .is_some_and(|r| r.contains("malformed")),
        "{entry}"
    );
    // The other directories were read as usual, and the report printed.
    assert!(report(&out)["directories"].is_array());
}
