//! stdout is the protocol: driven by hand, line by line, through a whole
//! session with an investigation and a question in it, every line the
//! server writes is a JSON-RPC message, and closing stdin ends the server
//! cleanly.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::*;

/// `luminos mcp` as `cmd` (an env's command), its stdin to write to and
/// its stdout's lines as they come.
fn by_hand(
    mut cmd: std::process::Command,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    mpsc::Receiver<String>,
) {
    let mut child = cmd
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, stdin, lines)
}

/// Send `message` as one line.
fn send(stdin: &mut std::process::ChildStdin, message: Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

/// Lines from `lines` until the response with `id`, failing after `within`.
fn until_response(lines: &mpsc::Receiver<String>, id: i64, within: Duration) -> Vec<String> {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no response {id}; got {seen:#?}"));
        let done = serde_json::from_str::<Value>(&line).is_ok_and(|m| m["id"] == id);
        seen.push(line);
        if done {
            return seen;
        }
    }
}

#[test]
fn stdout_carries_nothing_but_protocol_and_closing_stdin_ends_the_server() {
    let env = TestEnv::with_small_project().with_mock();
    let mut cmd = env.bare_cmd();
    cmd.env("ANTHROPIC_API_KEY", "test-key");
    let (mut child, mut stdin, lines) = by_hand(cmd);
    let target = env.target().to_string_lossy().into_owned();
    let mut written = Vec::new();
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "by-hand", "version": "1"}}}),
    );
    written.extend(until_response(&lines, 1, Duration::from_secs(30)));
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    // Each call with a progress token but the last two: how many
    // notifications came while it ran.
    let mut notified = Vec::new();
    for (id, name, arguments, token) in [
        (2, "investigate", json!({"target": target}), true),
        (3, "overview", json!({"target": target}), true),
        (
            4,
            "directory",
            json!({"target": target, "path": "src"}),
            true,
        ),
        (5, "flags", json!({"target": target}), true),
        (6, "overview", json!({"target": "/nonexistent/x"}), true),
        (7, "investigate", json!({"target": target}), false),
        (
            8,
            "ask",
            json!({"target": target, "question": "What is it?"}),
            false,
        ),
    ] {
        let mut params = json!({"name": name, "arguments": arguments});
        if token {
            params["_meta"] = json!({"progressToken": format!("t{id}")});
        }
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
        );
        let seen = until_response(&lines, id, Duration::from_secs(120));
        notified.push(
            seen.iter()
                .filter(|line| line.contains("\"notifications/progress\""))
                .count(),
        );
        written.extend(seen);
    }
    drop(stdin);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the server outlived its stdin"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    written.extend(lines.try_iter());

    let mut notifications = 0;
    for line in &written {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|err| panic!("not JSON-RPC on stdout ({err}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        if message["method"] == "notifications/progress" {
            notifications += 1;
        } else {
            assert!(message.get("id").is_some(), "{line}");
        }
    }
    assert_eq!(notifications, notified.iter().sum::<usize>());
    // On the wire, in order: 1, 2, 3... under the call's token.
    let steps: Vec<f64> = written
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|message| message["method"] == "notifications/progress")
        .map(|message| {
            assert_eq!(message["params"]["progressToken"], "t2");
            message["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    let counted: Vec<f64> = (1..=steps.len()).map(|n| n as f64).collect();
    assert_eq!(steps, counted);
    // Only investigate reports progress, and only with a token.
    assert!(notified[0] > 5, "{notified:?}");
    assert_eq!(notified[1..], [0, 0, 0, 0, 0, 0], "{notified:?}");
    // Every call had an answer; the bad target's is a tool error.
    let results: Vec<Value> = written
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|message| message.get("result").is_some())
        .collect();
    assert_eq!(results.len(), 8);
    assert_eq!(results[5]["result"]["isError"], true);
    assert_eq!(results[6]["result"]["isError"], false);
    assert_eq!(results[7]["result"]["isError"], false);
    assert!(
        results[7]["result"]["structuredContent"]["answer"]
            .as_str()
            .unwrap()
            .starts_with("Scripted answer")
    );
    assert!(env.server.request_count() > 0);
}

/// Every line gets a JSON-RPC response: a line that is not JSON a parse
/// error (-32700) with `"id": null`, JSON that is no request an invalid
/// request (-32600) with its id or `null`, `tools/call` with params that
/// do not fit (`null`, none, a name that is not a string) invalid params
/// (-32602) with its id, before the handshake and after it; the session
/// goes on, and the server's own answers still come.
#[test]
fn every_line_gets_a_json_rpc_response() {
    let env = TestEnv::with_small_project();
    let (mut child, mut stdin, lines) = by_hand(env.bare_cmd());
    let next = |what: &str| -> Value {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no answer to {what}"));
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("{what}: {err}: {line}"))
    };
    let raw = |stdin: &mut std::process::ChildStdin, line: &str| {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    };
    raw(&mut stdin, "{not json");
    let parse = next("{not json");
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert!(parse.as_object().unwrap().contains_key("id"), "{parse}");
    assert_eq!(parse["id"], Value::Null, "{parse}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "by-hand", "version": "1"}}}),
    );
    assert!(next("initialize")["result"].is_object());
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    for (line, id, code) in [
        ("{not json", Value::Null, -32700),
        ("[1, 2]", Value::Null, -32600),
        (r#"{"jsonrpc":"2.0","id":6}"#, json!(6), -32600),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":null}"#,
            json!(2),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#,
            json!(3),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}"#,
            json!(4),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"no/such"}"#,
            json!(5),
            -32601,
        ),
    ] {
        raw(&mut stdin, line);
        let answer = next(line);
        assert_eq!(answer["jsonrpc"], "2.0", "{line}: {answer}");
        assert_eq!(answer["id"], id, "{line}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
    }
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
    );
    let tools = next("tools/list");
    assert_eq!(tools["id"], 9);
    assert!(tools["result"]["tools"].as_array().unwrap().len() >= 5);
    drop(stdin);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the server outlived its stdin"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
