//! What a run says on stderr when stderr is a pipe: a few lines per
//! directory (a `think`, a turn borrowed and a replanning round are the
//! full trace's; cached directories are one line in all), and the full
//! trace with `-v`.

use crate::support;

use serde_json::json;
use support::TestEnv;
use support::agent::{
    MockAgent, Pass, Turn, dir_entry_call, file_entry_call, tool_use, unit_members, visible_files,
};
use support::mock::{MockBlock, Reply};
use support::output::stderr;
use support::pty::pty;

/// Top-level directories of [`many_dirs`], each with [`SUBDIRS`] below it.
const TOPS: usize = 8;
const SUBDIRS: usize = 4;

/// A tree of 1 + 8 + 32 = 41 directories, three source files in each.
fn many_dirs() -> (TestEnv, usize) {
    let env = TestEnv::new();
    env.file("README.md", "# A fixture\n");
    // Three files in `dir`, named `<stem>0.rs`.. and holding `body(n)`.
    let three = |dir: &str, stem: &str, body: &dyn Fn(usize) -> String| {
        for file in 0..3 {
            env.file(&format!("{dir}/{stem}{file}.rs"), body(file));
        }
    };
    for top in 0..TOPS {
        three(&format!("pkg{top}"), "mod", &|file| {
            format!("pub fn f{file}() -> u32 {{ {file} }}\n")
        });
        for sub in 0..SUBDIRS {
            three(&format!("pkg{top}/part{sub}"), "item", &|file| {
                format!("pub struct Item{file};\n")
            });
        }
    }
    (env, 1 + TOPS * (1 + SUBDIRS))
}

/// A dir loop as a real model runs one: a `Step` line, a `think`, reads;
/// then the cache writes, a `checkpoint` and sometimes a flag; then the
/// report.
fn realistic_dir(turn: &Turn<'_>) -> Reply {
    let dir = turn.dir();
    let rel = dir
        .strip_prefix(turn.target)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let rel = if rel.is_empty() { ".".to_string() } else { rel };
    let mut dirs = vec![(rel.clone(), dir.clone())];
    for member in unit_members(turn.body) {
        dirs.push((member.clone(), turn.target.join(&member)));
    }
    match turn.turn {
        1 => {
            let mut blocks = vec![
                MockBlock::Text(format!(
                    "Step 1: read the sources of {rel} to see what it holds."
                )),
                tool_use(
                    "think",
                    json!({
                        "observation": format!("{rel} holds a few small Rust files."),
                        "hypothesis": format!("{rel} is a module of helpers that cost $0.05 to run."),
                        "next_action": "Read every file."
                    }),
                ),
            ];
            for (_, path) in &dirs {
                for (name, _) in visible_files(path) {
                    blocks.push(tool_use(
                        "read_file",
                        json!({"path": path.join(name).to_string_lossy()}),
                    ));
                }
            }
            Reply::blocks(blocks)
        }
        2 => {
            let mut blocks = vec![MockBlock::Text(
                "Step 2: record what each file does.".to_string(),
            )];
            for (owner, path) in &dirs {
                let files = visible_files(path);
                for (name, size) in &files {
                    let file = path.join(name);
                    let file_rel = file.strip_prefix(turn.target).unwrap().to_string_lossy();
                    blocks.push(file_entry_call(&file, &file_rel, *size, "A small item."));
                }
                blocks.push(dir_entry_call(
                    path,
                    owner,
                    files.len(),
                    &format!("Directory {owner} holds small items."),
                ));
                if let Some((name, _)) = files.first().filter(|_| owner.ends_with("part0")) {
                    let flagged = path.join(name);
                    blocks.push(tool_use(
                        "flag",
                        json!({
                            "path": flagged.strip_prefix(turn.target).unwrap().to_string_lossy(),
                            "finding": "An item with no tests.",
                            "severity": "concern"
                        }),
                    ));
                }
            }
            blocks.push(tool_use(
                "checkpoint",
                json!({"learned": "Every file is a small item.", "still_unknown": "Nothing.",
                       "next_phase": "Report."}),
            ));
            Reply::blocks(blocks)
        }
        _ => Reply::tool_use(
            "submit_report",
            json!({"summary": format!("Directory {rel} holds small items."), "completeness": 0.9}),
        ),
    }
}

fn realistic(agent: MockAgent) -> MockAgent {
    agent.every_dir_script(realistic_dir)
}

/// stderr lines per directory, to two decimals.
fn per_dir(lines: usize, dirs: usize) -> f64 {
    (lines as f64 / dirs as f64 * 100.0).round() / 100.0
}

/// Lines of `text` that contain `needle`.
fn count(text: &str, needle: &str) -> usize {
    text.lines().filter(|line| line.contains(needle)).count()
}

/// A first run says at most 3 lines per directory: each loop's start and
/// one line per flag (a `think` is for `-v`); a rerun with every summary cached says
/// so in one line, and `-v` names each cached directory again.
#[test]
fn a_run_on_a_pipe_says_a_few_lines_per_directory() {
    let (env, dirs) = many_dirs();
    let env = env.with_agent(realistic);
    let out = env.run_ok(&[]);
    let err = stderr(&out);
    let lines = err.lines().count();
    eprintln!(
        "stderr: {lines} lines for {dirs} directories ({} per directory)",
        per_dir(lines, dirs)
    );
    assert!(
        lines <= 3 * dirs,
        "{lines} lines for {dirs} directories:\n{err}"
    );
    // Every loop thought once: that is the full trace's, not a line here.
    assert_eq!(count(&err, "think"), 0, "{err}");
    // A flag is one line, its finding included.
    assert_eq!(count(&err, "FLAG ["), TOPS, "{err}");
    assert!(
        err.contains(
            "[AI] [pkg3/part0] FLAG [CONCERN] pkg3/part0/item0.rs: An item with no tests."
        ),
        "{err}"
    );
    // The trace is for -v: no tool call, no words of the model, no note
    // block.
    for trace in ["-> ", "Step 1:", "THINK", "CHECKPOINT", "observation:"] {
        assert_eq!(count(&err, trace), 0, "{trace:?} in\n{err}");
    }

    let again = stderr(&env.run_ok(&[]));
    assert!(
        again.contains("[AI] Directories to investigate: 0 (41 cached)"),
        "{again}"
    );
    assert_eq!(count(&again, "Skipping (cached)"), 0, "{again}");
    assert!(again.lines().count() < 30, "{again}");
    let named = stderr(&env.run_ok(&["-v"]));
    assert_eq!(count(&named, "[AI] Skipping (cached): "), dirs, "{named}");
}

/// `-v` brings back the whole trace: the model's words, every tool call,
/// each note field by field, and each flag's finding on a line of its own.
#[test]
fn verbose_prints_the_full_trace() {
    let env = TestEnv::with_small_project().with_agent(realistic);
    let err = stderr(&env.run_ok(&["--verbose"]));
    for line in [
        "[AI] [src/core] Step 1: read the sources of src/core to see what it holds.",
        "[AI] [src/core] -> read_file(path=",
        "[AI] [src/core] -> write_cache(cache_type=\"file\"",
        "[AI] [src/core] THINK",
        "[AI] [src/core]   hypothesis:  src/core is a module of helpers",
        "[AI] [src/core] CHECKPOINT",
        "[AI] [src/core]   learned:       Every file is a small item.",
        "[AI]   -> submit_report(brief=",
    ] {
        assert!(err.contains(line), "{line:?} not in\n{err}");
    }
    assert_eq!(count(&err, "] think: "), 0, "{err}");
}

/// On a terminal 60 columns wide the live board fits the width with every
/// figure whole, and Ctrl-C takes it off the screen before the last word.
#[test]
fn on_a_60_column_terminal_the_live_line_fits_and_ctrl_c_clears_it() {
    use std::io::Read;
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let env = TestEnv::with_small_project().with_agent(|agent| {
        agent.every_dir_script(|_| {
            Reply::tool_use(
                "submit_report",
                json!({"summary": "A directory.", "completeness": 0.9}),
            )
        })
    });
    // The survey and the plan are answered; the first loop's request is
    // held until the run is interrupted.
    env.server.hold_from(2);
    let (slave, master) = pty(60);
    let mut cmd = env.bare_cmd();
    cmd.env("ANTHROPIC_API_KEY", "test-key")
        .args(["--jobs", "1"])
        .arg(env.target())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave));
    let mut child = cmd.spawn().unwrap();
    // The parent's copy of the terminal side goes, so reading ends when
    // luminos exits.
    drop(cmd);
    let (chunks, screen_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut screen = std::fs::File::from(master);
        let mut buf = [0u8; 4096];
        while let Ok(n) = screen.read(&mut buf) {
            if n == 0 || chunks.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    // Ctrl-C while the first loop waits on its answer, once the board is
    // up (it is redrawn only when its text changes, so it may have been
    // drawn before the request arrived).
    let deadline = Duration::from_secs(60);
    let waiting = env.server.wait_until(deadline, |requests| {
        let target = std::fs::canonicalize(env.target()).unwrap();
        requests
            .iter()
            .any(|r| matches!(Pass::of(&r.body, &target), Pass::Dir(_)))
    });
    assert!(waiting, "no dir loop");
    let mut bytes = Vec::new();
    while let Ok(chunk) = screen_rx.try_recv() {
        bytes.extend(chunk);
    }
    let until = Instant::now() + deadline;
    while !String::from_utf8_lossy(&bytes).contains(" dirs") {
        let left = until.saturating_duration_since(Instant::now());
        let chunk = screen_rx.recv_timeout(left);
        bytes.extend(chunk.expect("no board drawn while the loop waits"));
    }
    // SAFETY: kill(2) on our own child, not reaped yet.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let status = child.wait().unwrap();
    bytes.extend(screen_rx.iter().flatten());
    env.server.release();
    let screen = String::from_utf8_lossy(&bytes).into_owned();
    assert_eq!(status.code(), Some(130), "{screen:?}");

    // Permanent lines are printed as they are, never padded to the width.
    assert!(
        screen.contains("  [AI] Directories to investigate: 4\r\n"),
        "{screen:?}"
    );
    // Each drawing of the board is erased with a carriage return and
    // clear-line, fits 59 columns, and shows its figures whole.
    const CLEAR: &str = "\r\x1b[2K";
    let boards: Vec<&str> = screen
        .split("\r\n")
        .flat_map(|line| line.split(CLEAR))
        .filter(|drawn| drawn.contains(" dirs"))
        .collect();
    assert!(!boards.is_empty(), "no live board in {screen:?}");
    // The spend is shown of the budget, whole, at every width.
    assert!(
        boards.iter().all(|board| board.contains(" of $5.00")),
        "{boards:?}"
    );
    for board in &boards {
        assert!(board.chars().count() < 60, "{board:?}");
        assert!(!board.ends_with(' '), "padded: {board:?}");
        let dollars = board
            .split('$')
            .nth(1)
            .expect("the spend")
            .split(' ')
            .next();
        let dollars = dollars.unwrap();
        assert!(
            dollars.len() >= 4 && dollars.parse::<f64>().is_ok(),
            "a cut figure in {board:?}"
        );
        assert!(
            screen.contains(&format!("{board}{CLEAR}")),
            "not erased: {board:?}"
        );
    }
    // Ctrl-C: the live line is erased before the last word.
    assert!(
        screen.contains(&format!("{CLEAR}Interrupted after ")),
        "{screen:?}"
    );
    let after = &screen[screen.find("Interrupted after ").unwrap()..];
    assert!(
        !after.contains(" dirs |"),
        "drawn again after Ctrl-C: {after:?}"
    );
}

/// Ctrl-C during the base scan: the scan's live counter is erased, the run
/// says it was interrupted and exits 130 (it is not killed by the signal),
/// with nothing on stdout; on a terminal and on a pipe alike.
#[test]
fn ctrl_c_during_the_scan_erases_the_counter_and_exits_130() {
    const CLEAR: &str = "\r\x1b[2K";
    const SAID: &str = "Interrupted during the scan";
    let env = TestEnv::new();
    // The Ctrl-C goes out as soon as the scan's first line shows; should
    // the scan still beat it, the tree grows and the run is tried again.
    let mut files = 0;
    for wanted in [3_000, 12_000, 48_000] {
        for i in files..wanted {
            env.file(
                &format!("pkg{}/part{}/item{i}.rs", i % 40, i / 400),
                format!("pub struct Item{i};\n"),
            );
        }
        files = wanted;
        let (Some(screen), Some(piped)) = (interrupt_scan(&env, true), interrupt_scan(&env, false))
        else {
            continue;
        };
        // On the terminal the live counter was up; it is erased before the
        // last word, and nothing is drawn after it.
        let at = screen.find(SAID).expect("said on the terminal");
        assert!(
            screen[..at].ends_with(CLEAR) || screen[..at].ends_with('\n'),
            "the counter was left on screen: {screen:?}"
        );
        assert!(!screen[at..].contains("[scan]"), "{screen:?}");
        // On a pipe: plain lines, the same last word.
        assert!(!piped.contains('\r'), "{piped:?}");
        assert!(
            piped.ends_with(&format!("{SAID}; nothing was spent.\n")),
            "{piped:?}"
        );
        return;
    }
    panic!("the scan of {files} files always ended before Ctrl-C reached it");
}

/// Run `luminos --scan-only` on `env`'s target with stderr on a terminal
/// or a pipe, press Ctrl-C once the scan has begun, and return what stderr
/// showed, insisting on status 130 and an empty stdout; `None` when the
/// scan ended before the signal came.
fn interrupt_scan(env: &TestEnv, on_terminal: bool) -> Option<String> {
    use std::io::Read;
    use std::process::Stdio;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    let mut cmd = env.bare_cmd();
    cmd.arg("--scan-only")
        .arg(env.target())
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let (mut child, mut screen): (_, Box<dyn Read + Send>) = if on_terminal {
        let (slave, master) = pty(100);
        let child = cmd.stderr(Stdio::from(slave)).spawn().unwrap();
        // The parent's copy of the terminal side goes with `cmd`, so
        // reading ends when luminos exits.
        (child, Box::new(std::fs::File::from(master)))
    } else {
        let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        (child, Box::new(stderr))
    };
    drop(cmd);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = screen.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let started = Instant::now();
    while !String::from_utf8_lossy(&seen.lock().unwrap()).contains("Building directory tree") {
        assert!(started.elapsed() < Duration::from_secs(60), "no scan line");
        std::thread::sleep(Duration::from_millis(1));
    }
    // SAFETY: kill(2) on our own child, not reaped yet.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let shown = String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
    if shown.contains("Base scan complete.") {
        return None;
    }
    assert_eq!(status.code(), Some(130), "{status:?}: {shown:?}");
    assert!(stdout.is_empty(), "{}", String::from_utf8_lossy(&stdout));
    Some(shown)
}

/// The fixture of a first run: 12 directories, one of which has an agent
/// that never submits its report (it reads, then stalls until its turns
/// run out). On a pipe that is at most 3 stderr lines per directory.
#[test]
fn a_stubborn_directory_keeps_stderr_to_a_few_lines_per_directory() {
    let env = TestEnv::new();
    env.file("README.md", "# Twelve\n");
    for top in ["api", "core", "docs", "stubborn"] {
        for sub in ["", "/a", "/b"] {
            env.file(&format!("{top}{sub}/mod.rs"), "pub fn f() {}\n");
        }
    }
    let env = env.with_agent(|agent| realistic(agent).stalling_dir("stubborn"));
    let dirs = 13;
    let out = env.run_ok(&[]);
    let err = stderr(&out);
    let lines = err.lines().count();
    eprintln!("{err}");
    eprintln!(
        "stderr: {lines} lines for {dirs} directories ({} per directory)",
        per_dir(lines, dirs)
    );
    assert!(lines <= 3 * dirs, "{lines} lines:\n{err}");
    assert!(count(&err, "[stubborn]") <= 3, "{err}");
    for trace in ["think", "Borrowed a turn", "Replanning", "Total tokens"] {
        assert_eq!(count(&err, trace), 0, "{trace:?} in\n{err}");
    }
    // The run does not call complete what a loop left unfinished: it says
    // how many directories were fully read and names the one that was not.
    assert!(!err.contains("Investigation complete."), "{err}");
    assert!(
        err.contains(
            "[AI] Investigation partial: 12 of 13 directories fully read; not fully read: \
             stubborn (turn limit reached)"
        ),
        "{err}"
    );
}
