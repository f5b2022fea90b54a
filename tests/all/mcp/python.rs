//! The official Python MCP client (PyPI `mcp`, 2.x) against `luminos mcp`:
//! `tests/mcp_client.py` lists the tools and calls overview, directory and
//! flags on a fixture investigated here against the mock. Ignored: CI has
//! no Python with `mcp`. Run it with
//! `cargo test --test all -- --ignored python_client` (the interpreter is
//! `LUMINOS_TEST_PYTHON`, else `python3`).

use std::process::Command;

use super::*;

#[test]
#[ignore = "needs python3 with the mcp package (pip install mcp)"]
fn python_client_lists_the_tools_and_reads_the_cache() {
    let python = std::env::var("LUMINOS_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let env = investigated();
    let requests = env.server.request_count();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let out = Command::new(&python)
        .arg(script)
        .arg("--luminos")
        .arg(crate::support::tree::luminos_bin())
        .arg("--target")
        .arg(env.target())
        .arg("--cache")
        .arg(env.cache())
        .output()
        .unwrap_or_else(|err| panic!("cannot run {python}: {err}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the Python client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.ends_with("ok\n"), "{stdout}");
    assert!(stdout.contains("[concern] src/core/engine.rs: run() ignores errors"));
    assert_eq!(env.server.request_count(), requests);
}
