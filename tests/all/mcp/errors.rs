//! What goes wrong in a call comes back as a tool error carrying
//! luminos's one line (the command line's own, where it has one); only an
//! unknown tool is a protocol error.

use std::os::unix::fs::PermissionsExt;

use rmcp::model::ErrorCode;

use super::*;

#[test]
fn bad_targets_and_arguments_are_tool_errors_in_one_line() {
    let env = TestEnv::with_small_project();
    env.file("notes.txt", "x\n");
    let mcp = Mcp::without_key(&env);
    let missing = env.path("nope");
    let file = env.path("notes.txt");

    assert_eq!(
        mcp.failure("overview", json!({})),
        "overview: bad arguments: missing field `target`"
    );
    for tool in ["overview", "flags", "investigate"] {
        assert_eq!(
            mcp.failure(tool, json!({"target": missing})),
            format!(
                "'{}' is not a directory or does not exist.",
                missing.display()
            ),
            "{tool}"
        );
        assert_eq!(
            mcp.failure(tool, json!({"target": file})),
            format!(
                "'{}' is a file; luminos investigates a directory (the one that holds it, say)",
                file.display()
            ),
            "{tool}"
        );
    }
    assert_eq!(
        mcp.failure("directory", json!({"target": missing, "path": "."})),
        format!(
            "'{}' is not a directory or does not exist.",
            missing.display()
        )
    );
    assert!(
        mcp.failure("directory", args(&env, json!({})))
            .starts_with("directory: bad arguments: missing field `path`")
    );
    assert!(
        mcp.failure("flags", args(&env, json!({"severity": "high"})))
            .starts_with("flags: bad arguments: unknown variant `high`")
    );
    assert!(
        mcp.failure("overview", args(&env, json!({"verbose": true})))
            .starts_with("overview: bad arguments: unknown field `verbose`")
    );
    // Never investigated.
    let never = format!(
        "'{}' has not been investigated yet: investigate it first",
        env.target().display()
    );
    assert_eq!(mcp.failure("overview", args(&env, json!({}))), never);
    assert_eq!(
        mcp.failure("directory", args(&env, json!({"path": "src"}))),
        never
    );
    // investigate: no key in the server's environment, a budget --budget
    // refuses.
    let no_key = mcp.failure("investigate", args(&env, json!({})));
    assert!(
        no_key.starts_with("luminos needs an Anthropic API key"),
        "{no_key}"
    );
    let keyed = Mcp::of(&env);
    assert_eq!(
        keyed.failure("investigate", args(&env, json!({"budget": 0}))),
        "invalid value '0' for '--budget <USD>': a dollar amount above zero, such as 5, or none"
    );
    assert!(
        keyed
            .failure("investigate", args(&env, json!({"budget": "lots"})))
            .starts_with("invalid value 'lots' for '--budget <USD>'")
    );

    // An unknown tool is the one protocol error.
    let err = mcp.call_raw("summarize", json!({})).unwrap_err();
    match err {
        ServiceError::McpError(data) => {
            assert_eq!(data.code, ErrorCode::INVALID_PARAMS);
            assert_eq!(data.message, "unknown tool 'summarize'");
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

/// `directory` paths that name no directory of the investigation.
#[test]
fn directory_paths_outside_the_investigation_are_refused() {
    let env = investigated();
    env.dir(".hidden/inner");
    let mcp = Mcp::without_key(&env);
    let said = |path: &str| mcp.failure("directory", args(&env, json!({"path": path})));
    assert_eq!(
        said("nope"),
        format!("'nope' is not a directory of '{}'", env.target().display())
    );
    assert_eq!(
        said("src/main.rs"),
        "'src/main.rs' is a file, not a directory: the answer for 'src' holds its summary"
    );
    assert_eq!(
        said(".hidden"),
        "'.hidden' is outside the investigation's scope (hidden, ignored or excluded)"
    );
    for outside in ["..", "../cache", "/etc"] {
        assert_eq!(
            said(outside),
            format!(
                "'{outside}' is not inside the target '{}'",
                env.target().display()
            )
        );
    }
}

/// A target the server cannot list (mode 000, the server running as nobody
/// where the tests run as root): the command line's line.
#[test]
fn an_unreadable_target_is_refused_in_one_line() {
    let env = TestEnv::with_small_project();
    let mut cmd = env.bare_cmd();
    if !env.run_unprivileged(&mut cmd) {
        println!("SKIPPED: running as root and the binary is not reachable by nobody");
        return;
    }
    let mcp = Mcp::start(cmd);
    let set_mode =
        |mode| std::fs::set_permissions(env.target(), std::fs::Permissions::from_mode(mode));
    set_mode(0o000).unwrap();
    let overview = mcp.failure("overview", args(&env, json!({})));
    let investigate = mcp.failure("investigate", args(&env, json!({})));
    let ask = mcp.failure("ask", args(&env, json!({"question": "What is it?"})));
    set_mode(0o755).unwrap();
    let expected = format!(
        "cannot read the directory '{}': Permission denied (os error 13)",
        env.target().display()
    );
    assert_eq!(overview, expected);
    assert_eq!(investigate, expected);
    assert_eq!(ask, expected);
}

/// Summaries written with `--no-redact` may quote secrets: they are not
/// handed out, and the call says why; a question is answered without them,
/// and says so.
#[test]
fn an_investigation_made_without_redaction_is_not_handed_out() {
    let env = TestEnv::with_small_project().with_mock();
    env.run_ok(&["--no-redact"]);
    let mcp = Mcp::without_key(&env);
    for tool in ["overview", "flags"] {
        assert_eq!(
            mcp.failure(tool, args(&env, json!({}))),
            format!(
                "the cached investigation of '{}' was made with --no-redact and its summaries \
                 may quote secrets, so luminos does not hand it out; investigate it again \
                 without --no-redact",
                env.target().display()
            )
        );
    }
    let answer = Mcp::of(&env).answer("ask", args(&env, json!({"question": "What is it?"})));
    assert!(
        answer["note"]
            .as_str()
            .unwrap()
            .starts_with("the cached investigation was made with --no-redact"),
        "{answer}"
    );
    let asked = env.requests_of(&crate::support::agent::Pass::Ask);
    assert!(
        !asked[0].system_text().contains("Scripted brief"),
        "{}",
        asked[0].system_text()
    );
}
