//! The real `luminos` binary on temp trees: arguments, exit codes, the
//! terminal and JSON reports, `-o`, progress on stderr, and hostile input.

use crate::support;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;
use similar_asserts::assert_eq;
use support::TestEnv;
use support::agent::AgentEnv;
use support::output::{AI_KEYS, SCAN_KEYS, assert_contains_all, fields, keys, stderr, stdout};

fn sample(env: &TestEnv) {
    env.files(&[
        ("src/main.py", "print('hi')\n"),
        ("src/util.rs", "fn a() {}\nfn b() {}\n"),
        ("README", "hello\n"),
        ("node_modules/dep/index.js", "x\n"),
        (".secret/key", "k\n"),
    ]);
}

#[test]
fn a_missing_target_is_an_error() {
    let env = TestEnv::new().with_mock();
    let out = env.cmd().arg("does-not-exist").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "Error: 'does-not-exist' is not a directory or does not exist.\n"
    );
    assert!(out.stdout.is_empty());
}

/// A file as the target is refused in one line that says it is a file.
#[test]
fn a_file_is_not_a_target() {
    let env = TestEnv::new().with_mock();
    env.file("a.txt", "x");
    let arg = env.path("a.txt").to_string_lossy().into_owned();
    let out = env.cmd().arg(&arg).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "Error: '{arg}' is a file; luminos investigates a directory (the one that holds \
             it, say)\n"
        )
    );
    assert!(out.stdout.is_empty());
    assert_eq!(env.server.request_count(), 0);
}

/// Two directories: exit 2 and one line that says luminos takes one and
/// what to do, with no word of subcommands (clap's own error took the
/// second directory for an unknown subcommand).
#[test]
fn two_targets_are_one_usage_line() {
    let env = TestEnv::new().with_mock();
    env.dir("a").dir("b");
    for extra in [&["--json"][..], &[]] {
        let out = env
            .cmd()
            .args(extra)
            .args(["target/a", "target/b"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert_eq!(
            err,
            "Error: luminos investigates one directory at a time, and was given 2: \
             'target/a', 'target/b'; run it once for each\n"
        );
        assert!(!err.contains("subcommand"), "{err}");
        assert!(out.stdout.is_empty());
    }
    // A directory named like a subcommand after the target is a second
    // target too.
    let out = env.cmd().args(["target/a", "mcp", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("was given 3: 'target/a', 'mcp', 'x'"));
    assert_eq!(env.server.request_count(), 0);
}

/// `luminos mcp` typed at a terminal says at once, on stderr, that an MCP
/// client starts it (it would otherwise wait in silence); stdout, the
/// protocol's, stays empty.
#[test]
fn mcp_on_a_terminal_says_a_client_starts_it() {
    use std::io::BufRead;
    let env = TestEnv::new();
    let (slave, master) = support::pty::pty(80);
    let mut child = env
        .cmd()
        .arg("mcp")
        .stdin(Stdio::from(slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    drop(master);
    assert!(
        first.starts_with("luminos mcp is a Model Context Protocol server: an MCP client"),
        "{first:?}"
    );
    assert!(first.contains("see the README"), "{first:?}");
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(out, "");
}

/// Started by a client (stdin a pipe), the server prints no hint.
#[test]
fn mcp_on_a_pipe_prints_no_hint() {
    let env = TestEnv::new();
    let out = env.cmd().arg("mcp").stdin(Stdio::null()).output().unwrap();
    assert!(!stderr(&out).contains("Model Context Protocol server"));
}

/// `luminos --help` names the variables luminos reads, where the cache
/// lives, and shows examples, after the flags.
#[test]
fn help_names_the_environment_the_cache_and_examples() {
    let env = TestEnv::new();
    let out = env.bare_cmd().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    let environment = help
        .find("\nENVIRONMENT:\n")
        .expect("an ENVIRONMENT section");
    let examples = help.find("\nEXAMPLES:\n").expect("an EXAMPLES section");
    assert!(help.find("--budget").unwrap() < environment);
    for named in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "LUMINOS_MODEL",
        "LUMINOS_CACHE_DIR",
        "/tmp/luminos",
    ] {
        assert!(
            help[environment..examples].contains(named),
            "{named}:\n{help}"
        );
    }
    assert!(help[examples..].contains("luminos ~/src/app"), "{help}");
}

/// A base URL copied with its `/v1` works, with a note that says luminos
/// drops it; every request reaches the API's own paths.
#[test]
fn a_base_url_ending_in_v1_works_with_a_note() {
    let env = TestEnv::with_small_project().with_mock();
    let out = env
        .cmd()
        .env("ANTHROPIC_BASE_URL", format!("{}/v1", env.server.url()))
        .arg("--json")
        .arg(env.target())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        err.lines().next().unwrap(),
        format!(
            "Note: ANTHROPIC_BASE_URL ends in /v1, which luminos adds itself; using {}",
            env.server.url()
        )
    );
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["investigation"]["status"], "complete", "{err}");
    let requests = env.server.requests();
    assert!(!requests.is_empty());
    for request in requests {
        assert_eq!(request.path, "/v1/messages");
    }
}

/// A base URL without a scheme is a usage error, said in one line before
/// the scan: nothing on stdout and no request.
#[test]
fn a_base_url_without_a_scheme_is_a_usage_error() {
    let env = TestEnv::with_small_project().with_mock();
    let out = env
        .cmd()
        .env("ANTHROPIC_BASE_URL", "api.anthropic.com")
        .arg(env.target())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "Error: ANTHROPIC_BASE_URL is not an address luminos can use ('api.anthropic.com'): \
         it needs a scheme: https://api.anthropic.com or http://api.anthropic.com for a local \
         gateway\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(env.server.request_count(), 0);
}

#[test]
fn no_target_is_a_usage_error() {
    let env = TestEnv::new().with_mock();
    let out = env.cmd().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("TARGET"));
}

/// Every bad flag value is a usage error: exit 2, clap's one-line message
/// naming the flag, the value and what it takes, nothing on stdout and no
/// request. A negative number is a value to refuse, not an unknown flag.
#[test]
fn every_bad_flag_value_is_a_usage_error() {
    let env = TestEnv::new().with_mock();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--budget", "abc"],
            "error: invalid value 'abc' for '--budget <USD>': a dollar amount above zero, \
             such as 5, or none",
        ),
        (
            &["--max-cost", "0"],
            "error: invalid value '0' for '--max-cost <USD>': a dollar amount above zero, \
             such as 2.50",
        ),
        (
            &["--max-cost", "-5"],
            "error: invalid value '-5' for '--max-cost <USD>'",
        ),
        (
            &["--max-cost=-5"],
            "error: invalid value '-5' for '--max-cost <USD>'",
        ),
        (
            &["-j", "0"],
            "error: invalid value '0' for '--jobs <N>': 0 is not in 1..=64",
        ),
        (
            &["--batch", "--batch-size", "0"],
            "error: invalid value '0' for '--batch-size <N>': 0 is not in 1..=100000",
        ),
        (
            &["--max-retries", "1000000"],
            "error: invalid value '1000000' for '--max-retries <N>': 1000000 is not in 0..=20",
        ),
        (
            &["--max-retries", "-1"],
            "error: invalid value '-1' for '--max-retries <N>': -1 is not in 0..=20",
        ),
        (
            &["--model", ""],
            "error: invalid value '' for '--model <MODEL>': a model id",
        ),
        (
            &["--budget", "1e308"],
            "error: invalid value '1e308' for '--budget <USD>': at most 1000000 dollars \
             (--budget none sets no ceiling)",
        ),
    ];
    for (flags, first_line) in cases {
        let out = env.cmd().args(*flags).arg(env.target()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.lines().next().unwrap().starts_with(first_line),
            "{flags:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{flags:?}");
    }
    assert_eq!(env.server.request_count(), 0);
}

/// A budget no figure could show is refused before anything is said or
/// spent, for a question as for a run: one line, exit 2, no 309-digit
/// dollar figure anywhere.
#[test]
fn a_budget_past_any_figure_is_refused_in_one_line() {
    let env = TestEnv::new().with_mock();
    sample(&env);
    for args in [
        vec!["ask", "--budget", "1e308"],
        vec!["--budget", "1e308", "--estimate"],
    ] {
        let mut cmd = env.cmd();
        cmd.args(&args).arg(env.target());
        if args[0] == "ask" {
            cmd.arg("what is this?");
        }
        let out = cmd.output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("at most 1000000 dollars"), "{err}");
        assert!(!err.contains("0000000000000000"), "{err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(env.server.request_count(), 0);
}

/// Without a key the base scan still prints (status `skipped`), so
/// `luminos --json DIR | jq` works; the hint is on stderr only, once.
#[test]
fn without_a_key_it_prints_one_hint_and_the_scan() {
    let env = TestEnv::new().with_mock();
    sample(&env);
    let out = env
        .bare_cmd()
        .arg("--json")
        .arg(env.target())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["file_categories"].is_object());
    assert_eq!(
        report["investigation"],
        serde_json::json!({"status": "skipped",
            "note": "no API key (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN)"})
    );
    let err = stderr(&out);
    assert_eq!(err.matches("ANTHROPIC_API_KEY").count(), 1, "{err}");
    assert_eq!(env.server.request_count(), 0);
    assert!(!env.cache().exists(), "no investigation, no cache");
    let text = env.bare_cmd().arg(env.target()).output().unwrap();
    assert!(stdout(&text).contains("  Investigation skipped: no API key"));
}

/// `--scan-only` runs the scan alone even with a key: no request, no cache.
#[test]
fn scan_only_skips_the_investigation_with_a_key_set() {
    let env = TestEnv::new().with_mock();
    sample(&env);
    let out = env.output(&["--scan-only", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["investigation"]["status"], "skipped");
    assert_eq!(report["investigation"]["note"], "--scan-only");
    assert_eq!(env.server.request_count(), 0);
    assert!(!env.cache().exists());
    assert!(!stderr(&out).contains("ANTHROPIC_API_KEY"));
    // It is not an estimate.
    let both = env.output(&["--scan-only", "--estimate"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn the_terminal_report_and_plain_progress() {
    let env = TestEnv::new().with_mock();
    sample(&env);
    let out = env.cmd().arg("target").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report = stdout(&out);
    let target = env.target().to_string_lossy().into_owned();
    assert!(report.starts_with(&format!(
        "{0}\n  LUMINOS — File System Intelligence Report\n  Target: {target}\n{0}\n",
        "=".repeat(60)
    )));
    assert_contains_all(
        &report,
        &[
            ">> DIRECTORY TREE",
            ">> FILE TYPE INTELLIGENCE",
            ">> CODE DETECTION",
            ">> RECENTLY MODIFIED FILES",
            ">> DISK USAGE — TOP DIRECTORIES",
        ],
    );
    assert!(report.contains("\ntarget/\n├── src/\n"), "{report}");
    assert!(report.contains("└── README  (6 B)\n"), "{report}");
    // README is prose, not source.
    assert!(report.contains("  Languages detected: JavaScript, Python, Rust"));
    assert!(report.ends_with(&format!("  End of report.\n{}\n", "=".repeat(60))));
    assert!(!report.contains("[scan]"));
    // No ignore files: nothing beyond the original's lines.
    assert!(!report.contains("Ignored"));

    // On a pipe each step of the scan is one line.
    let err = stderr(&out);
    assert!(!err.contains('\r'));
    let phases: Vec<&str> = err.lines().filter(|l| l.contains("[scan]")).collect();
    assert_eq!(
        phases,
        [
            "  [scan] Building directory tree (depth=3)... done",
            "  [scan] Classifying files... done",
            "  [scan] Counting lines... done",
            "  [scan] Checking for large files... done",
            "  [scan] Finding recently modified files...",
            "  [scan] Calculating disk usage...",
            "  [scan] Base scan complete.",
        ]
    );
}

/// Large files are named by their path relative to the target, so two of
/// one name are told apart; the JSON keeps its absolute `path` and `name`.
#[test]
fn large_files_are_shown_by_their_path_under_the_target() {
    let env = TestEnv::new().with_mock();
    let long = "let x = 1;\n".repeat(1001);
    env.file("net/stream.rs", &long)
        .file("net/http/stream.rs", &long);
    let out = env.cmd().arg(env.target()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report = stdout(&out);
    assert!(
        report.contains(
            "  Unusually large files:\n    ! net/http/stream.rs  (lines: 1001)\n    \
             ! net/stream.rs  (lines: 1001)\n"
        ),
        "{report}"
    );
    let out = env.cmd().arg("--json").arg(env.target()).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names = fields(&json["large_files"], "name");
    assert_eq!(names, ["stream.rs", "stream.rs"]);
    assert!(
        json["large_files"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with('/')
    );
}

#[test]
fn json_has_every_key_and_paths_are_absolute_not_canonical() {
    let env = TestEnv::new().with_mock();
    sample(&env);
    std::os::unix::fs::symlink(env.target(), env.root().join("alias")).unwrap();
    // Relative, through a symlink and a `..`: the report keeps the symlink.
    let out = env
        .cmd()
        .args(["--json", "alias/../alias"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = keys(&json);
    for key in SCAN_KEYS.iter().chain(&AI_KEYS) {
        assert!(keys.contains(key), "missing {key}");
    }
    let alias = env.root().join("alias").to_string_lossy().into_owned();
    assert_eq!(json["tree"]["path"], Value::String(alias.clone()));
    assert_eq!(json["tree"]["name"], "alias");
    let first = &json["classified_files"][0];
    assert_eq!(first["path"], Value::String(format!("{alias}/README")));
    assert_eq!(first["description"], "ASCII text");
    assert_eq!(json["survey_signals"]["total_files"], 4);
    assert_eq!(json["lines_of_code"]["Rust"], 2);
    assert!(json["recent_files"][0]["modified"].is_f64());
    assert_eq!(
        json["disk_usage"].as_array().unwrap().last().unwrap()["path"],
        Value::String(alias)
    );
    assert_eq!(json["ignore"]["enabled"], true);
}

/// `luminos target -o <root>/<rel>` on the sample tree: the env (which
/// holds the file), the output file's path and what the run did.
fn report_to_file(rel: &str) -> (AgentEnv, PathBuf, std::process::Output) {
    let env = TestEnv::new().with_mock();
    sample(&env);
    let file = env.root().join(rel);
    let out = env.cmd().arg("target").arg("-o").arg(&file).output();
    (env, file, out.unwrap())
}

#[test]
fn output_file_gets_the_report_and_stdout_says_so() {
    let (env, file, out) = report_to_file("report.txt");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        format!("Report written to {}\n", file.display())
    );
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.starts_with(&"=".repeat(60)));
    assert!(written.ends_with(&format!("  End of report.\n{}\n", "=".repeat(60))));

    let json_file = env.root().join("report.json");
    support::output::assert_success(
        env.cmd()
            .args(["target", "--json", "-o"])
            .arg(&json_file)
            .output()
            .unwrap(),
        "luminos",
    );
    let written = std::fs::read_to_string(&json_file).unwrap();
    assert!(written.ends_with("}\n"));
    serde_json::from_str::<Value>(&written).unwrap();
}

#[test]
fn an_unwritable_output_file_is_an_error() {
    let (_env, file, out) = report_to_file("no/such/dir/report.txt");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    // Said before the scan, in one line.
    assert_eq!(
        stderr(&out).trim(),
        format!(
            "Error: cannot write the report to '{}': the directory '{}' does not exist",
            file.display(),
            file.parent().unwrap().display()
        )
    );
}

#[test]
fn excludes_are_announced_and_applied() {
    let env = TestEnv::new().with_mock();
    sample(&env);
    env.file("build/out.o", "x");
    let out = env
        .cmd()
        .args(["target", "-x", "node_modules", "--exclude", "build"])
        .output()
        .unwrap();
    let err = stderr(&out);
    // After the budget, the first thing said.
    assert_eq!(
        err.lines().nth(1),
        Some("  [scan] Excluding: node_modules, build")
    );
    let report = stdout(&out);
    assert!(!report.contains("node_modules"));
    assert!(!report.contains("build"));
}

#[test]
fn depth_and_hidden_flags() {
    let env = TestEnv::new().with_mock();
    sample(&env);
    let out = env.cmd().args(["target", "-d", "0"]).output().unwrap();
    let report = stdout(&out);
    // Directories first, the largest first.
    assert!(
        report.contains("├── src/  ...\n├── node_modules/  ...  [skipped: on the skip list]\n"),
        "{report}"
    );
    assert!(!report.contains(".secret"));
    let out = env
        .cmd()
        .args(["target", "-a", "-d", "1"])
        .output()
        .unwrap();
    let report = stdout(&out);
    assert!(report.contains("├── .secret/\n│   └── key  (2 B)\n"));
}

#[test]
fn ignore_rules_show_in_the_report_and_no_ignore_restores_everything() {
    let env = TestEnv::new().with_mock();
    sample(&env);
    env.file(".gitignore", "node_modules/\n*.log\n")
        .file("run.log", "x\n");
    let out = env.cmd().arg("target").output().unwrap();
    let report = stdout(&out);
    assert!(
        report.contains("  Ignored by .gitignore: 2 files, 1 directory (--no-ignore to include)\n"),
        "{report}"
    );
    // Only disk usage names it: it takes space, and says it was ignored.
    let named: Vec<&str> = report
        .lines()
        .filter(|l| l.contains("node_modules"))
        .collect();
    assert!(named.iter().all(|l| l.ends_with("  (ignored)")), "{report}");
    assert!(
        named
            .iter()
            .any(|l| l.ends_with(" node_modules/  (ignored)")),
        "{report}"
    );
    let out = env.cmd().args(["target", "--no-ignore"]).output().unwrap();
    let report = stdout(&out);
    assert!(report.contains("node_modules/"));
    assert!(report.contains("run.log"));
    assert!(!report.contains("Ignored"));
}

#[test]
fn nested_ignore_rules_are_named_and_counted_and_follow_a() {
    let env = TestEnv::new().with_mock();
    env.files(&[
        (".gitignore", "gen/\n*.log\n"),
        ("src/.gitignore", "!gen/\ncache/\n"),
        ("src/gen/out.rs", "x\n"),
        ("src/cache/blob.rs", "x\n"),
        ("lib/gen/x.rs", "x\n"),
        ("lib/debug.log", "x\n"),
        (".tools/gen/t.rs", "x\n"),
    ]);
    let report = stdout(&env.cmd().arg("target").output().unwrap());
    assert!(
        report.contains(
            "  Ignored by .gitignore, src/.gitignore: 3 files, 2 directories (--no-ignore to include)\n"
        ),
        "{report}"
    );
    assert!(
        report.contains("── gen/") && !report.contains("── cache/"),
        "{report}"
    );
    // With -a the hidden directory is scanned, and its ignored part counted.
    let report = stdout(&env.cmd().args(["target", "-a"]).output().unwrap());
    assert!(
        report.contains(
            "  Ignored by .gitignore, src/.gitignore: 4 files, 3 directories (--no-ignore to include)\n"
        ),
        "{report}"
    );
    assert!(report.contains(".tools/"), "{report}");
}

#[test]
fn hostile_file_names_cannot_drive_the_terminal() {
    let env = TestEnv::new().with_mock();
    env.file("evil\x1b[2J\x1b]0;pwned\x07name.py", "x\n")
        .file("two\nlines.py", "x\n");
    let out = env.cmd().arg("target").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report = stdout(&out);
    assert!(!report.contains('\x1b'));
    assert!(!report.contains('\x07'));
    assert!(report.contains("evil\\x1b[2J\\x1b]0;pwned\\x07name.py"));
    assert!(report.contains("two\\nlines.py"));
    assert!(!report.contains("two\nlines"));
    // The JSON keeps the real names.
    let out = env.cmd().args(["target", "--json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names = fields(&json["classified_files"], "name");
    assert!(names.contains(&"two\nlines.py"));
}

#[test]
fn special_files_do_not_hang_the_scan() {
    let env = TestEnv::new().with_mock();
    sample(&env);
    let fifo = env.path("pipe");
    support::fs::mkfifo(&fifo);
    env.symlink("pipe", "pipe_link")
        .symlink("loop_b", "loop_a")
        .symlink("loop_a", "loop_b")
        .symlink(".", "self")
        .symlink("/dev/zero", "zeros");
    let _socket = std::os::unix::net::UnixListener::bind(env.path("sock")).unwrap();
    let mut cmd = env.cmd();
    cmd.args(["target", "--json"]);
    let out = support::watch::output_within(cmd, std::time::Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["survey_signals"]["total_files"], 4);
}

#[test]
fn a_closed_stdout_pipe_exits_quietly() {
    let env = TestEnv::new().with_mock();
    for i in 0..300 {
        env.file(&format!("d{}/file{i}.py", i % 7), "x\n");
    }
    let mut child = Command::new(support::tree::luminos_bin())
        .arg("--json")
        .arg(env.target())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", env.server.url())
        .env("LUMINOS_CACHE_DIR", env.cache())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("Error"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Run the binary as an unprivileged user when the tests run as root, so
/// that permission bits mean something.
fn unprivileged(env: &AgentEnv) -> Command {
    let mut cmd = Command::new(support::tree::luminos_bin());
    // The cache root must belong to the user running luminos, so it is
    // created by that user inside a shared directory.
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", env.server.url())
        .env("LUMINOS_CACHE_DIR", env.cache().join("own"));
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        use std::os::unix::process::CommandExt;
        cmd.uid(65534).gid(65534);
        for dir in [env.root(), env.target()] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(env.cache()).unwrap();
        std::fs::set_permissions(env.cache(), std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    cmd
}

#[test]
fn unreadable_directories_and_files_are_reported_not_fatal() {
    let env = TestEnv::new().with_mock();
    env.files(&[
        ("locked/inner/a.txt", "hi\n"),
        ("ok/b.py", "x\n"),
        ("secret.py", "s\n"),
        ("secretblob", "s\n"),
    ]);
    // The binary must be reachable by the unprivileged user.
    let bin = support::tree::luminos_bin();
    if std::fs::metadata(&bin).unwrap().permissions().mode() & 0o001 == 0 {
        eprintln!("the test binary is not executable by others; skipping");
        return;
    }
    std::fs::set_permissions(env.path("ok"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(env.path("ok/b.py"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(env.path("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(
        env.path("secret.py"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::set_permissions(
        env.path("secretblob"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let mut cmd = unprivileged(&env);
    let out = cmd.arg(env.target()).output().unwrap();
    let _ = std::fs::set_permissions(env.path("locked"), std::fs::Permissions::from_mode(0o755));
    let report = stdout(&out);
    if stderr(&out).contains("Permission denied") && report.is_empty() {
        eprintln!("cannot run as an unprivileged user here; skipping");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        report.contains("├── locked/  [permission denied]\n"),
        "{report}"
    );
    assert!(report.contains("  Languages detected: Python\n"));
    // secret.py cannot be read: it is classified but counts no lines.
    assert!(report.contains("    Python                      1 lines\n"));
    assert!(report.contains("secret.py"));
}

#[test]
fn clear_cache_removes_the_cache_root_and_nothing_else() {
    let env = TestEnv::new();
    let id = "0b6f5c2e-3d4a-4f7e-9a1b-2c3d4e5f6a7b";
    std::fs::create_dir_all(env.cache().join(id).join("dirs")).unwrap();
    std::fs::create_dir_all(env.cache().join("locks")).unwrap();
    std::fs::write(env.cache().join("investigations.json"), "{}").unwrap();
    std::fs::set_permissions(env.cache(), std::fs::Permissions::from_mode(0o700)).unwrap();

    let out = env.cmd().arg("--clear-cache").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).contains("Removed the luminos cache"));
    assert!(!env.cache().exists());
    assert!(env.target().exists() && env.root().exists());

    // Nothing to remove is not an error.
    let out = env.cmd().arg("--clear-cache").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("nothing to remove"));
}

/// `--clear-cache TARGET` removes that target's investigation only, saying
/// what its runs cost; without a TARGET the whole cache goes, with how many
/// investigations it held and what their runs cost.
#[test]
fn clear_cache_with_a_target_keeps_the_others_and_says_what_went() {
    let env = TestEnv::with_small_project().with_mock();
    let other = env.root().join("other");
    std::fs::create_dir_all(other.join("src")).unwrap();
    std::fs::write(other.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let cost = |out: &std::process::Output| {
        let report: Value = serde_json::from_str(&stdout(out)).unwrap();
        report["investigation"]["cost_usd"].as_f64().unwrap()
    };
    let first = cost(&env.run_ok(&["--json"]));
    let second = {
        let out = env.cmd().arg("--json").arg(&other).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        cost(&out)
    };
    assert!(first > 0.0 && second > 0.0);

    let out = env.run_ok(&["--clear-cache", "--scan-only"]);
    let err = stderr(&out);
    assert_eq!(
        err.lines().next().unwrap(),
        format!(
            "Removed the cached investigation of '{}' (it cost ${first:.2} as its runs \
             recorded); the cache's other investigations are kept.",
            env.target().display()
        ),
        "{err}"
    );
    // The other target's investigation is still there: a rerun is free.
    let requests = env.server.request_count();
    let out = env.cmd().arg(&other).output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        env.server.request_count(),
        requests,
        "the other was cleared"
    );
    let out = env.run_ok(&["--clear-cache", "--scan-only"]);
    assert!(stderr(&out).starts_with("There is no cached investigation of '"));

    let out = env.cmd().arg("--clear-cache").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stderr(&out),
        format!(
            "Removed the luminos cache at {}: 1 investigation, which cost ${second:.2} as \
             their runs recorded.\n",
            env.cache().display()
        )
    );
}

#[test]
fn clear_cache_refuses_a_directory_luminos_did_not_make() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.cache()).unwrap();
    std::fs::write(env.cache().join("thesis.tex"), "years of work").unwrap();
    // A directory of other things is not the cache: luminos's would be
    // `luminos/` inside it, and there is none.
    let out = env.cmd().arg("--clear-cache").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert_eq!(
        err.trim(),
        format!(
            "There is no luminos cache at {}; nothing to remove.",
            env.cache().join("luminos").display()
        )
    );
    assert!(env.cache().join("thesis.tex").exists());

    // A cache with something else in it is not removed.
    std::fs::remove_file(env.cache().join("thesis.tex")).unwrap();
    std::fs::create_dir(env.cache().join("locks")).unwrap();
    std::fs::write(env.cache().join("thesis.tex"), "years of work").unwrap();
    let out = env.cmd().arg("--clear-cache").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.starts_with("Error: refusing to remove"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(env.cache().join("thesis.tex").exists());
}
