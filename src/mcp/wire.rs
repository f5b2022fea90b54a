//! The stdio wire between the client and rmcp, so that every request gets
//! a JSON-RPC response.
//!
//! rmcp answers what it can parse, and some bad input it cannot: a line
//! that is not JSON got no reply at all (a client waiting on it hangs), an
//! invalid request got an error without `"id"`, and a known method whose
//! params do not fit (`tools/call` with `params: null`) got -32601, method
//! not found. A user sees all of that as luminos. So every line from the
//! client is screened here first ([`screen`]):
//! - not JSON: -32700, parse error, `"id": null`;
//! - JSON that is no JSON-RPC message rmcp reads: -32600, invalid request,
//!   with the line's `id` when it has a usable one, else `null`;
//! - a request for a method rmcp knows (`tools/call`, `initialize`, ...)
//!   whose params it cannot read: -32602, invalid params, with its `id`;
//! - anything else goes on to rmcp, which answers it.
//!
//! The lines rmcp writes and the errors written here share one writer, a
//! line at a time, so stdout stays one JSON-RPC message per line.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};

/// The methods rmcp reads into a request type of its own: one of these it
/// could not read had params that do not fit. (rmcp 3.11's client
/// requests; a unit test pins that each is typed.)
const TYPED_METHODS: &[&str] = &[
    "ping",
    "initialize",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "subscriptions/listen",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
    "resources/directory/read",
];

/// Room in the pipes between the wire and rmcp.
const PIPE_BYTES: usize = 256 * 1024;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub(super) enum Screened {
    /// A message rmcp can read: pass it on.
    Forward,
    /// Answer with this error response (one line of JSON).
    Reply(Value),
    /// Blank: nothing to read, nothing to answer.
    Skip,
}

/// A JSON-RPC error response.
fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Judge one line from the client (see the module docs).
pub(super) fn screen(line: &str) -> Screened {
    let line = line.trim();
    if line.is_empty() {
        return Screened::Skip;
    }
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Screened::Reply(error(
            Value::Null,
            -32700,
            "Parse error: the line is not JSON",
        ));
    };
    // The id, when it is one JSON-RPC allows (a string or a number).
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Err(_) => Screened::Reply(error(
            id,
            -32600,
            "Invalid request: not a JSON-RPC 2.0 request, notification or response",
        )),
        Ok(JsonRpcMessage::Request(request))
            if matches!(request.request, ClientRequest::CustomRequest(_))
                && method
                    .as_deref()
                    .is_some_and(|m| TYPED_METHODS.contains(&m)) =>
        {
            let method = method.unwrap_or_default();
            Screened::Reply(error(id, -32602, &format!("Invalid params for {method}")))
        }
        Ok(_) => Screened::Forward,
    }
}

/// The wire: the pair rmcp serves on, and the tasks that carry lines
/// between it and the real stdin and stdout.
pub(super) struct Wire {
    /// rmcp's end: it reads the client's screened lines and writes its
    /// answers here.
    pub(super) rmcp: (DuplexStream, DuplexStream),
    /// Ends once stdout has every line written before both sides closed.
    pub(super) written: JoinHandle<()>,
}

/// Carry `input` (the client's lines) through [`screen`] to rmcp, and
/// rmcp's lines and the screen's errors to `output`.
pub(super) fn wire(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> Wire {
    let (mut to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (lines, mut outgoing) = mpsc::unbounded_channel::<String>();
    let errors = lines.clone();
    tokio::spawn(async move {
        let mut input = BufReader::new(input).lines();
        while let Ok(Some(line)) = input.next_line().await {
            match screen(&line) {
                Screened::Forward => {
                    let sent = async {
                        to_rmcp.write_all(line.as_bytes()).await?;
                        to_rmcp.write_all(b"\n").await
                    };
                    if sent.await.is_err() {
                        break;
                    }
                }
                Screened::Reply(reply) => {
                    if errors.send(reply.to_string()).is_err() {
                        break;
                    }
                }
                Screened::Skip => {}
            }
        }
        // The client closed stdin: rmcp reads the end and ends the session.
        let _ = to_rmcp.shutdown().await;
    });
    tokio::spawn(async move {
        let mut answers = BufReader::new(from_rmcp).lines();
        while let Ok(Some(line)) = answers.next_line().await {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let written = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = outgoing.recv().await {
            let wrote = async {
                output.write_all(line.as_bytes()).await?;
                output.write_all(b"\n").await?;
                output.flush().await
            };
            if wrote.await.is_err() {
                break;
            }
        }
    });
    Wire {
        rmcp: (rmcp_reads, rmcp_writes),
        written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match screen(line) {
            Screened::Reply(reply) => reply,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn bad_lines_get_their_error_and_good_ones_go_on() {
        let parse = reply("{not json");
        assert_eq!(parse["id"], Value::Null);
        assert_eq!(parse["error"]["code"], -32700);
        assert!(parse.as_object().unwrap().contains_key("id"));
        for (line, id) in [
            (r#"[1,2]"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":6}"#, json!(6)),
            (r#"{"id":"x","method":"tools/list"}"#, json!("x")),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                Value::Null,
            ),
        ] {
            let invalid = reply(line);
            assert_eq!(invalid["error"]["code"], -32600, "{line}");
            assert_eq!(invalid["id"], id, "{line}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":null}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":null}"#,
        ] {
            let params = reply(line);
            assert_eq!(params["error"]["code"], -32602, "{line}");
            assert_eq!(params["id"], 2, "{line}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"overview","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ] {
            assert_eq!(screen(line), Screened::Forward, "{line}");
        }
        assert_eq!(screen("   "), Screened::Skip);
    }

    /// Each typed method with params that do fit is read as its own
    /// request, not rmcp's catch-all: the list names methods rmcp knows.
    #[test]
    fn the_typed_methods_are_rmcps() {
        for method in [
            "ping",
            "initialize",
            "tools/call",
            "tools/list",
            "resources/list",
        ] {
            assert!(TYPED_METHODS.contains(&method));
        }
        let fits = [
            ("ping", json!({})),
            ("tools/list", json!({})),
            ("tools/call", json!({"name": "overview"})),
            (
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "c", "version": "1"}}),
            ),
        ];
        for (method, params) in fits {
            let line = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
            let message: ClientJsonRpcMessage = serde_json::from_value(line).unwrap();
            let JsonRpcMessage::Request(request) = message else {
                panic!("{method} is not a request");
            };
            assert!(
                !matches!(request.request, ClientRequest::CustomRequest(_)),
                "{method}"
            );
        }
    }
}
