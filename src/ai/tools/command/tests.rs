//! Tests of the tool as a whole: its schema and registration, the shape of
//! its results, and the property that no random command line escapes.

use super::*;
use crate::ai::tools::{REGISTRY, names};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::PathBuf;

#[test]
fn schema_is_the_original_shape() {
    let tool = RunCommand::new();
    assert_eq!(tool.name(), "run_command");
    assert_eq!(tool.toolboxes(), &[Toolbox::Dir]);
    assert!(!tool.ends_loop());
    let schema = tool.input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["command"]));
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["command"]);
    assert_eq!(properties["command"]["type"], "string");
    assert!(properties["command"]["description"].is_string());
    let keys: Vec<_> = schema.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["type", "properties", "required"]);
}

#[test]
fn description_states_the_glob_and_shell_rules() {
    let d = RunCommand::new().description();
    for needle in [
        "no shell",
        "globs",
        "expanded inside the target",
        "15 seconds",
        "64 KiB",
    ] {
        assert!(d.contains(needle), "{needle}");
    }
    for program in spec::WHITELIST {
        assert!(d.contains(program), "{program}");
    }
}

#[test]
fn registered_once_for_the_dir_loop() {
    assert_eq!(
        REGISTRY
            .iter()
            .filter(|t| t.name() == "run_command")
            .count(),
        1
    );
    assert!(names(Toolbox::Dir).contains(&"run_command"));
    assert!(!names(Toolbox::Survey).contains(&"run_command"));
}

fn exited(code: i32) -> exec::Ending {
    use std::os::unix::process::ExitStatusExt;
    exec::Ending::Exited(std::process::ExitStatus::from_raw(code << 8))
}

fn execution(ending: exec::Ending, stdout: &str, stderr: &str, cut: bool) -> exec::Execution {
    exec::Execution {
        ending,
        stdout: stdout.as_bytes().to_vec(),
        stdout_cut: cut,
        stderr: stderr.as_bytes().to_vec(),
    }
}

const LIMITS: exec::Limits = exec::Limits {
    timeout: DEFAULT_TIMEOUT,
    output_cap: OUTPUT_CAP,
};

#[test]
fn render_follows_the_original_shape() {
    let ok = |e| match render(e, LIMITS, &[]) {
        Ok(rendered) => rendered.plain(),
        Err(error) => error,
    };
    // (exit code, stdout, stderr) and what the model reads.
    for (code, stdout, stderr, shown) in [
        (0, "  a\nb\n\n", "", "a\nb"),
        (0, "", "", "(no output)"),
        (1, "", "", "(no output)"),
        // stderr is shown only when the program failed.
        (0, "x\n", "warn\n", "x"),
        (2, "x\n", " bad thing \n", "x\n\n(stderr: bad thing)"),
        (2, "", "bad", "(stderr: bad)"),
    ] {
        assert_eq!(
            ok(execution(exited(code), stdout, stderr, false)),
            ToolOutput::ok(shown),
            "exit {code}, stdout {stdout:?}, stderr {stderr:?}"
        );
    }
    let timed_out = ok(execution(exec::Ending::TimedOut, "partial", "", false));
    assert!(timed_out.is_error);
    assert!(timed_out.content.contains("timed out after 15 seconds"));
}

#[test]
fn render_marks_cut_output_and_appends_notes() {
    let out = render(
        execution(exited(0), "data", "", true),
        LIMITS,
        &["a note".to_string()],
    )
    .unwrap()
    .plain();
    assert!(!out.is_error);
    assert!(out.content.starts_with("data\n[output cut at 64 KiB"));
    assert!(out.content.ends_with("\n(note: a note)"));
    let empty = render(execution(exited(0), "", "", false), LIMITS, &["n".into()])
        .unwrap()
        .plain();
    assert_eq!(empty.content, "(no output)\n(note: n)");
    // A cut drops the partial last line, so a secret split by the cap is
    // never shown in part.
    let cut = render(
        execution(exited(0), "one\ntwo\nghp_abc", "", true),
        LIMITS,
        &[],
    )
    .unwrap()
    .plain();
    assert!(
        cut.content.starts_with("one\ntwo\n[output cut"),
        "{}",
        cut.content
    );
}

#[test]
fn decode_drops_a_character_split_by_the_cut() {
    let bytes = "aé".as_bytes();
    assert_eq!(decode(&bytes[..2], true), "a");
    assert_eq!(decode(&bytes[..2], false), "a\u{FFFD}");
    assert_eq!(decode(b"a\xffb", true), "a\u{FFFD}b");
}

// ---------------------------------------------------------------------------
// The property: no random command line gets past the checker with shell
// syntax, a write/exec find action, or a path outside the target; and what
// does get past, run for real, changes nothing and shows nothing from outside.
// ---------------------------------------------------------------------------

const SENTINEL: &str = "SENTINEL-OUTSIDE-7f3a";
const HIDDEN_NAME: &str = "hidden-name-q7";

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    target: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let t = root.join("t");
    std::fs::create_dir_all(t.join("src/sub")).unwrap();
    std::fs::write(t.join("README"), "hello\nTODO one\n").unwrap();
    std::fs::write(t.join("src/a.rs"), "fn a() {} // TODO\n").unwrap();
    std::fs::write(t.join("src/sub/b.py"), "def b(): pass\n").unwrap();
    std::fs::write(t.join("pat.txt"), "TODO\n").unwrap();
    std::fs::write(t.join("-rf"), "dash\n").unwrap();
    std::fs::create_dir(root.join("out")).unwrap();
    std::fs::write(root.join("out/secret"), format!("{SENTINEL}\n")).unwrap();
    std::fs::write(root.join("out").join(HIDDEN_NAME), SENTINEL).unwrap();
    symlink(root.join("out/secret"), t.join("link-out")).unwrap();
    symlink(root.join("out"), t.join("dir-out")).unwrap();
    crate::testing::mkfifo(&t.join("fifo"));
    Fixture {
        _dir: dir,
        root,
        target: t,
    }
}

/// Every entry under `root` with its type, size and modification time.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u32, u64, i64, i64)> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            let m = e.path().symlink_metadata().unwrap();
            (
                e.path().to_path_buf(),
                (m.mode(), m.len(), m.mtime(), m.mtime_nsec()),
            )
        })
        .collect()
}

/// Words each program accepts in ordinary use, so that generated lines get
/// far enough to be checked in depth.
fn benign(program: &str) -> Vec<&'static str> {
    match program {
        "grep" => vec![
            "-n",
            "-r",
            "-l",
            "-c",
            "-i",
            "-h",
            "-H",
            "-e",
            "TODO",
            "x",
            "README",
            "src",
            "src/*",
            "*",
            "-f",
            "pat.txt",
            "--include=*.rs",
            "-m",
            "1",
            "--",
            "-3",
        ],
        "find" => vec![
            ".",
            "src",
            "-name",
            "'*.rs'",
            "-type",
            "f",
            "d",
            "-maxdepth",
            "1",
            "-print",
            "-o",
            "!",
            "\\(",
            "\\)",
            "-newer",
            "README",
            "-size",
            "-1k",
            "s*",
            "-H",
        ],
        "head" | "tail" => vec![
            "-n", "5", "-c", "10", "README", "src/a.rs", "*", "-q", "-v", "--", "-3", "+2",
        ],
        "wc" => vec!["-l", "-c", "-w", "README", "src/*", "*", "--", "src/a.rs"],
        "stat" => vec![
            "-c",
            "%n",
            "-L",
            "README",
            "src",
            "fifo",
            "*",
            "-t",
            "--printf=%s",
        ],
        "du" => vec![
            "-s",
            "-h",
            "-a",
            "-d",
            "1",
            "--max-depth=1",
            ".",
            "src",
            "*",
            "-b",
            "--exclude=*.py",
            "-X",
            "pat.txt",
        ],
        _ => vec![
            "-b",
            "-i",
            "-L",
            "README",
            "src",
            "*",
            "--mime-type",
            "src/*",
        ],
    }
}

/// Dangerous words specific to each program.
fn risky_for(program: &str) -> Vec<&'static str> {
    match program {
        "grep" => vec![
            "-R",
            "--dereference-recursive",
            "-rR",
            "-f /etc/passwd",
            "--file=../out/secret",
            "-fdir-out/secret",
            "--exclude-from=/etc/passwd",
            "-D read",
            "-Dread",
            "--devices=read",
            "fifo",
            "--fil=../out/secret",
        ],
        "find" => vec![
            "-delete",
            "-exec rm '{}' \\;",
            "-execdir rm '{}' +",
            "-ok rm '{}' ';'",
            "-okdir x ';'",
            "-fprint x",
            "-fprint0 x",
            "-fprintf x %p",
            "-fls x",
            "-follow",
            "-L",
            "-files0-from README",
            "-newer ../out/secret",
            "-samefile link-out",
            "-neweraa /etc/passwd",
            "'-delete'",
        ],
        "head" | "tail" => vec!["-f", "-F", "--follow", "--retry", "fifo", "--pid=1", "-fn5"],
        "wc" => vec![
            "--files0-from=README",
            "fifo",
            "--files0-from=../out/secret",
        ],
        "du" => vec![
            "-L",
            "--dereference",
            "--files0-from=README",
            "-X /etc/passwd",
            "-sL",
            "--exclude-from=link-out",
        ],
        "stat" => vec!["/etc/passwd", "link-out", "dir-out/secret"],
        _ => vec![
            "-f README",
            "-m README",
            "-C",
            "-p",
            "-s",
            "-S",
            "fifo",
            "--files-from=README",
        ],
    }
}

/// Shell syntax and paths out of the target, for any program.
const RISKY_ANYWHERE: &[&str] = &[
    ";",
    "|",
    "&",
    "&&",
    "||",
    ">",
    ">>",
    "<",
    "`id`",
    "$(id)",
    "$HOME",
    "${x}",
    "\n",
    "(",
    ")",
    "{",
    "}",
    "~",
    "#",
    "'",
    "\"",
    "\\",
    "';'",
    "'|'",
    "\\;",
    "\"$(id)\"",
    "'$(id)'",
    "\"a|b\"",
    "x\\\n",
    "..",
    "../",
    "../out/secret",
    "../out",
    "/etc/passwd",
    "/",
    "/tmp",
    "link-out",
    "dir-out",
    "dir-out/secret",
    "src/../..",
    "-rf",
    "./-rf",
    "../*",
    "dir-*",
    "/etc/*",
    "dir-out/*",
    "-",
    "rm",
    "./grep",
    "sh -c id",
];

fn command_line() -> impl Strategy<Value = String> {
    prop::sample::select(spec::WHITELIST.to_vec())
        .prop_flat_map(|program| {
            let risky = prop_oneof![
                prop::sample::select(risky_for(program)),
                prop::sample::select(RISKY_ANYWHERE.to_vec()),
            ];
            (
                Just(program),
                prop::collection::vec(prop::sample::select(benign(program)), 0..7),
                prop::option::weighted(0.7, (risky, any::<prop::sample::Index>())),
                prop::option::weighted(0.15, "[a-z./*?'\"\\\\;|$-]{1,6}"),
            )
        })
        .prop_map(|(program, mut words, risky, noise)| {
            if let Some((word, at)) = risky {
                let at = at.index(words.len() + 1);
                words.insert(at, word);
            }
            let mut line = program.to_string();
            for word in words {
                line.push(' ');
                line.push_str(word);
            }
            if let Some(noise) = noise {
                line.push_str(&noise);
            }
            line
        })
}

/// An independent scan for characters a shell would act on: outside quotes
/// (`;|&<>()`{}$`), in double quotes (`` ` `` and `$(`), and control
/// characters anywhere.
fn has_shell_syntax(line: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    let (mut single, mut double, mut i) = (false, false, 0);
    while i < chars.len() {
        let c = chars[i];
        if c.is_control() && c != '\t' {
            return true;
        }
        if single {
            single = c != '\'';
        } else if double {
            match c {
                '"' => double = false,
                '\\' => i += 1,
                '`' => return true,
                '$' if chars.get(i + 1) == Some(&'(') => return true,
                _ => {}
            }
        } else {
            match c {
                '\'' => single = true,
                '"' => double = true,
                '\\' => i += 1,
                ';' | '|' | '&' | '<' | '>' | '(' | ')' | '`' | '$' | '{' | '}' => return true,
                _ => {}
            }
        }
        i += 1;
    }
    false
}

/// find words that take one value, listed independently of the checker.
const FIND_TAKES_VALUE: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-perm",
    "-size",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-inum",
    "-links",
    "-amin",
    "-atime",
    "-cmin",
    "-ctime",
    "-mmin",
    "-mtime",
    "-used",
    "-maxdepth",
    "-mindepth",
    "-regextype",
    "-fstype",
    "-context",
    "-printf",
    "-newer",
    "-anewer",
    "-cnewer",
    "-samefile",
];
const FIND_FORBIDDEN: &[&str] = &[
    "-exec",
    "-execdir",
    "-ok",
    "-okdir",
    "-delete",
    "-fprint",
    "-fprint0",
    "-fprintf",
    "-fls",
    "-follow",
    "-L",
    "-files0-from",
];

fn find_action_in(args: &[&str]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        if FIND_FORBIDDEN.contains(&args[i]) {
            return Some(args[i].to_string());
        }
        i += if FIND_TAKES_VALUE.contains(&args[i]) {
            2
        } else {
            1
        };
    }
    None
}

/// Whether `raw`, as a path the program would open from `target`, stays
/// inside: through links when it exists, lexically when it does not.
fn stays_inside(target: &Path, raw: &str) -> bool {
    let joined = target.join(raw);
    match std::fs::canonicalize(&joined) {
        Ok(real) => real.starts_with(target),
        Err(_) => crate::config::normalize_lexically(&joined).starts_with(target),
    }
}

#[test]
fn no_random_command_escapes() {
    let fx = fixture();
    let target = fx.target.clone();
    let before = snapshot(&fx.root);
    let tool = RunCommand::with_limits(Duration::from_secs(2), OUTPUT_CAP);
    let mut runner = TestRunner::new(Config {
        cases: 1024,
        failure_persistence: None,
        // A failing case runs commands on every shrink step; keep that short.
        max_shrink_iters: 32,
        ..Config::default()
    });
    runner
        .run(&command_line(), |line| {
            let Ok(plan) = check(&target, &line) else {
                return Ok(());
            };
            prop_assert!(!has_shell_syntax(&line), "shell syntax accepted: {line:?}");
            prop_assert!(spec::WHITELIST.contains(&plan.program));
            let args = plan.argv();
            if plan.program == "find" {
                prop_assert_eq!(find_action_in(&args), None, "{:?}", line);
            }
            for arg in &plan.args {
                if arg.role == check::Role::Path {
                    prop_assert!(stays_inside(&target, &arg.text), "{line:?}: {}", arg.text);
                }
            }
            // Run it for real: nothing changes, nothing from outside shows.
            let out = tool.execute(&target, &line);
            prop_assert!(
                !out.content.contains(SENTINEL),
                "{line:?} leaked: {}",
                out.content
            );
            prop_assert!(
                !out.content.contains(HIDDEN_NAME),
                "{line:?} listed outside"
            );
            prop_assert!(
                !out.content.contains("root:x:0"),
                "{line:?} read /etc/passwd"
            );
            prop_assert!(
                !out.content.contains("timed out"),
                "{line:?} hung: {}",
                out.content
            );
            prop_assert_eq!(&snapshot(&fx.root), &before, "{:?} changed the tree", line);
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_oracles_themselves_catch_what_they_look_for() {
    // Guard against a property that can never fail.
    assert!(has_shell_syntax("grep x .; id"));
    assert!(has_shell_syntax("grep \"$(id)\" ."));
    assert!(!has_shell_syntax("grep 'a;b' ."));
    assert_eq!(find_action_in(&[".", "-delete"]), Some("-delete".into()));
    assert_eq!(find_action_in(&[".", "-name", "-delete"]), None);
    let fx = fixture();
    assert!(!stays_inside(&fx.target, "link-out"));
    assert!(!stays_inside(&fx.target, "../out"));
    assert!(stays_inside(&fx.target, "src/nope"));
}
