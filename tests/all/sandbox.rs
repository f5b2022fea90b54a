//! `run_command` against a real target with a sentinel tree around it.
//!
//! The first half is the escape table: every row is something the original
//! implementation (first word checked, then `sh -c`) would have run, and every
//! row must be refused with the file system untouched and nothing from outside
//! the target in the answer. The second half shows the tool still doing useful
//! work, and its limits (timeout, output cap) holding.
//!
//! The tool is driven through `RunCommand::execute`, which is everything
//! `Tool::run` does apart from reading the `command` field and the final
//! presentation of the output.

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use luminos::ai::tools::ToolOutput;
use luminos::ai::tools::command::RunCommand;

use crate::support::fs::mkfifo;
use crate::support::snapshot::{Stamp, snapshot};

const SENTINEL: &str = "SENTINEL-OUTSIDE-CONTENT-91c2";
const HIDDEN_NAME: &str = "only-outside-name-5d1e";
const PLANTED: &str = "PLANTED-BINARY-RAN";

/// A temp dir holding the target `t/`, an `outside/` directory and a sibling
/// `t-evil/` (to catch prefix comparisons), plus links, a FIFO, name lists
/// and a planted `grep` inside the target.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    target: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = crate::support::fs::temp_dir("luminos-sandbox-test-");
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let t = root.join("t");
        let outside = root.join("outside");
        std::fs::create_dir_all(t.join("src/sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(root.join("t-evil")).unwrap();

        std::fs::write(outside.join("secret.txt"), format!("{SENTINEL}\n")).unwrap();
        std::fs::write(outside.join(HIDDEN_NAME), SENTINEL).unwrap();
        std::fs::write(root.join("t-evil/secret"), SENTINEL).unwrap();

        let write = |rel: &str, body: &str| std::fs::write(t.join(rel), body).unwrap();
        write("README", "luminos fixture\nTODO: one\nlast line\n");
        write("src/a.rs", "fn a() {}\n// TODO: two\n");
        write("src/b.rs", "fn b() {}\n");
        write("src/sub/c.py", "def c():\n    pass\n");
        write("pat.txt", "TODO\n");
        // Lists of names pointing outside, for the list-from-file options.
        write("names.txt", "../outside/secret.txt\n");
        write("names0", "../outside/secret.txt\0");
        symlink(outside.join("secret.txt"), t.join("link-out")).unwrap();
        symlink(&outside, t.join("dir-out")).unwrap();
        symlink("/etc/passwd", t.join("passwd-link")).unwrap();
        mkfifo(&t.join("fifo"));
        // A `grep` in the target that would leave a mark if it ever ran.
        let planted = t.join("grep");
        std::fs::write(
            &planted,
            format!(
                "#!/bin/sh\ntouch '{}/pwned'\necho {PLANTED}\n",
                root.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
        let target = std::fs::canonicalize(t).unwrap();
        Fixture {
            _dir: dir,
            root,
            target,
        }
    }

    fn run(&self, command: &str) -> ToolOutput {
        RunCommand::new().execute(&self.target, command)
    }

    /// The output of `command`, which must succeed and show nothing from
    /// outside the target.
    fn ok(&self, command: &str) -> String {
        let out = self.run(command);
        assert!(!out.is_error, "{command}: {}", out.content);
        assert_no_leak(command, &out.content);
        out.content
    }

    /// Every entry under the fixture root with mode, size and mtime.
    fn snapshot(&self) -> BTreeMap<PathBuf, Stamp> {
        snapshot(&self.root)
    }
}

/// Assert that nothing in `content` came from outside the target or from the
/// planted binary.
fn assert_no_leak(command: &str, content: &str) {
    for leak in [SENTINEL, HIDDEN_NAME, PLANTED, "root:x:0:0"] {
        assert!(
            !content.contains(leak),
            "{command:?} leaked {leak:?}: {content}"
        );
    }
}

/// `out`, the answer to `command`, is an error (`Error: ...`) that mentions
/// `why`.
#[track_caller]
fn assert_error_mentions(command: &str, out: &ToolOutput, why: &str) {
    assert!(out.is_error, "{command:?} is not an error: {}", out.content);
    assert!(
        out.content.starts_with("Error: "),
        "{command:?}: {}",
        out.content
    );
    assert!(
        out.content.contains(why),
        "{command:?}: expected {why:?} in {}",
        out.content
    );
}

/// `(command, a word the refusal must mention)`. `{root}` is the fixture root
/// and `{tmp}` a path under /tmp that must never appear.
const ESCAPES: &[(&str, &str)] = &[
    // Traversal: `..`, absolute paths, links out, prefix siblings.
    ("head ../outside/secret.txt", "outside the target"),
    ("head /etc/passwd", "outside the target"),
    ("head link-out", "outside the target"),
    ("head passwd-link", "outside the target"),
    ("head dir-out/secret.txt", "outside the target"),
    ("head src/../../outside/secret.txt", "outside the target"),
    ("head {root}/outside/secret.txt", "outside the target"),
    ("wc -c ../t-evil/secret", "outside the target"),
    ("head ../*/secret.txt", "outside the target"),
    ("head ~/.profile", "home-directory"),
    // Shell injection in each form.
    ("grep x .; touch {tmp}", "';'"),
    ("grep -r x . | tee {tmp}", "'|'"),
    ("grep x README & touch {tmp}", "'&'"),
    ("grep x README && touch {tmp}", "'&'"),
    ("grep `touch {tmp}` README", "'`'"),
    ("grep $(touch {tmp}) README", "'$('"),
    ("grep \"$(touch {tmp})\" README", "'$('"),
    ("grep x README > {tmp}", "'>'"),
    ("grep x < ../outside/secret.txt", "'<'"),
    ("grep x README\ntouch {tmp}", "control character"),
    ("grep $HOME README", "'$'"),
    // Destructive or executing find.
    ("find . -delete", "-delete"),
    ("find . -name '*.rs' -delete", "-delete"),
    ("find . -exec rm -rf '{}' +", "-exec"),
    ("find . -type f -execdir rm '{}' \\;", "-execdir"),
    ("find . -ok rm '{}' \\;", "-ok"),
    ("find . -okdir rm '{}' \\;", "-okdir"),
    ("find . -fprint {tmp}", "-fprint"),
    ("find . -fprint0 {tmp}", "-fprint0"),
    ("find . -fprintf {tmp} %p", "-fprintf"),
    ("find . -fls {tmp}", "-fls"),
    // Outside paths in every whitelisted program.
    ("wc -l ../outside/secret.txt", "outside the target"),
    ("file ../outside/secret.txt", "outside the target"),
    ("grep -r SENTINEL ..", "outside the target"),
    ("grep -rl SENTINEL dir-out", "outside the target"),
    ("head -n 1 /etc/passwd", "outside the target"),
    ("tail ../outside/secret.txt", "outside the target"),
    ("stat ../outside/secret.txt", "outside the target"),
    ("du -a ../outside", "outside the target"),
    ("find ../outside", "outside the target"),
    ("find / -name passwd", "outside the target"),
    ("find . -newer ../outside/secret.txt", "outside the target"),
    ("find . -samefile link-out", "outside the target"),
    // Options that read names or patterns from a file.
    ("file -f names.txt", "names of the files"),
    ("wc --files0-from=names0", "names of the files"),
    ("du --files0-from=names0", "names of the files"),
    ("find -files0-from names0", "names of the files"),
    ("grep -f ../outside/secret.txt README", "outside the target"),
    ("grep --file=link-out README", "outside the target"),
    (
        "grep --exclude-from=/etc/passwd -r x .",
        "outside the target",
    ),
    ("du -X ../outside/secret.txt .", "outside the target"),
    ("file -m ../outside/secret.txt README", "magic"),
    // Following links out of the tree, or forever.
    ("find -L . -name secret.txt", "symbolic links"),
    ("find . -follow -name secret.txt", "symbolic links"),
    ("grep -R SENTINEL .", "symbolic links"),
    ("grep --dereference-recursive SENTINEL .", "symbolic links"),
    ("du -L -a .", "symbolic links"),
    ("du --dereference -a .", "symbolic links"),
    ("tail -f README", "never ends"),
    ("tail --follow=name README", "never ends"),
    // FIFOs: refused at once, never opened.
    ("head fifo", "FIFO"),
    ("wc fifo", "FIFO"),
    ("grep x fifo", "FIFO"),
    ("tail -n 1 fifo", "FIFO"),
    ("file fifo", "FIFO"),
    ("grep -D read -r x .", "skip"),
    // Not on the whitelist at all.
    ("rm -rf .", "not allowed"),
    ("sh -c 'touch {tmp}'", "not allowed"),
    ("python3 -c 'print(1)'", "not allowed"),
];

#[test]
fn every_escape_attempt_is_refused_with_nothing_changed_or_leaked() {
    let fx = Fixture::new();
    let tmp_mark = std::env::temp_dir().join(format!("luminos-escape-{}", std::process::id()));
    let before = fx.snapshot();
    assert!(ESCAPES.len() >= 25);
    for (template, why) in ESCAPES {
        let command = template
            .replace("{root}", &fx.root.display().to_string())
            .replace("{tmp}", &tmp_mark.display().to_string());
        let started = Instant::now();
        let out = fx.run(&command);
        let took = started.elapsed();
        assert_error_mentions(&command, &out, why);
        assert_no_leak(&command, &out.content);
        // A refusal never runs anything, so it cannot wait on a FIFO. The
        // bound is a hang guard, far above any real cost.
        assert!(took < Duration::from_secs(5), "{command:?} took {took:?}");
        assert_eq!(fx.snapshot(), before, "{command:?} changed the tree");
        assert!(
            !tmp_mark.exists(),
            "{command:?} created {}",
            tmp_mark.display()
        );
        assert!(
            !fx.root.join("pwned").exists(),
            "{command:?} ran the planted grep"
        );
    }
}

/// The program is always the system's: a `grep` planted in the target never
/// runs, however it is named.
#[test]
fn a_planted_binary_never_runs() {
    let fx = Fixture::new();
    for command in [
        "./grep TODO README",
        "grep TODO README",
        "src/../grep TODO README",
    ] {
        let out = fx.ok(command);
        assert!(out.starts_with("TODO: one"), "{command}: {out}");
        assert!(
            !fx.root.join("pwned").exists(),
            "{command} ran the planted grep"
        );
    }
    assert!(
        fx.run("./grep TODO README")
            .content
            .contains("system's grep")
    );
}

/// Files named like options (`-delete`, `--files0-from=...`) that a glob
/// matches are passed as `./name`, so they stay file names.
#[test]
fn glob_matches_named_like_options_stay_file_names() {
    let fx = Fixture::new();
    std::fs::write(fx.target.join("-delete"), "d\n").unwrap();
    std::fs::write(fx.target.join("--files0-from=names0"), "n\n").unwrap();
    let before = fx.snapshot();
    for command in [
        "find * -maxdepth 0 -type f",
        "wc -l *",
        "head -n 1 *",
        "grep -c x *",
    ] {
        let out = fx.ok(command);
        assert!(out.contains("./-delete"), "{command}: {out}");
        assert_eq!(fx.snapshot(), before, "{command} changed the tree");
    }
}

#[test]
fn each_program_works_inside_the_target() {
    let fx = Fixture::new();
    let ok = |command: &str| fx.ok(command);
    for (command, expected) in [
        ("wc -l src/*.rs", "2 src/a.rs\n 1 src/b.rs\n 3 total"),
        ("file README", "README: ASCII text"),
        ("file -b src", "directory"),
        ("grep -rn TODO src", "src/a.rs:2:// TODO: two"),
        ("grep -c 'TODO|fn' -E src/a.rs", "2"),
        ("head -n 1 README", "luminos fixture"),
        ("head -1 README", "luminos fixture"),
        ("tail -n 1 README", "last line"),
        ("stat -c '%s %n' README", "36 README"),
        ("stat -c %F fifo", "fifo"),
        ("du -b src/b.rs", "10\tsrc/b.rs"),
    ] {
        assert_eq!(ok(command), expected, "{command}");
    }
    let mut found: Vec<String> = ok("find . -name '*.rs' -type f")
        .lines()
        .map(String::from)
        .collect();
    found.sort();
    assert_eq!(found, ["./src/a.rs", "./src/b.rs"]);
    assert_eq!(
        ok(r"find src -maxdepth 1 \( -name '*.py' -o -name b.rs \)"),
        "src/b.rs"
    );
    // Recursion skips the FIFO instead of blocking on it, and does not
    // follow the links out.
    let mut matches: Vec<String> = ok("grep -rl TODO .").lines().map(String::from).collect();
    matches.sort();
    assert_eq!(matches, ["./README", "./pat.txt", "./src/a.rs"]);
}

#[test]
fn result_shape_matches_the_reference() {
    let fx = Fixture::new();
    // No match: grep exits 1 with nothing on stderr.
    assert_eq!(
        fx.run("grep nothing-like-this README"),
        ToolOutput::ok("(no output)")
    );
    // A failure carries its stderr.
    assert_eq!(
        fx.run("head nope.txt"),
        ToolOutput::ok(
            "(stderr: head: cannot open 'nope.txt' for reading: No such file or directory)"
        )
    );
    // Partial success: output first, then the note.
    let out = fx.run("wc -l README nope.txt");
    assert!(out.content.starts_with("3 README\n"), "{}", out.content);
    assert!(
        out.content
            .ends_with("(stderr: wc: nope.txt: No such file or directory)")
    );
}

#[test]
fn output_is_cut_at_the_cap_with_a_note() {
    let fx = Fixture::new();
    let line = "x".repeat(99) + "\n";
    std::fs::write(fx.target.join("big.txt"), line.repeat(2000)).unwrap();
    let out = fx.run("head -c 150000 big.txt");
    assert!(!out.is_error);
    let (body, note) = out.content.split_once("\n[output cut at 64 KiB").unwrap();
    // The cut keeps whole lines only: 655 of the 100-byte lines fit in 64 KiB.
    assert_eq!(body.len(), 655 * 100 - 1);
    assert!(body.lines().all(|l| l.len() == 99));
    assert!(note.contains("Narrow it"), "{note}");
    // Under the cap nothing is cut.
    let out = fx.run("head -c 60000 big.txt");
    assert!(!out.content.contains("[output cut"));
    // A smaller cap is honoured the same way.
    let small = RunCommand::with_limits(Duration::from_secs(15), 1000);
    let out = small.execute(&fx.target, "find .");
    assert!(!out.content.contains("[output cut"), "find . is short here");
    let out = small.execute(&fx.target, "head -c 5000 big.txt");
    assert!(out.content.starts_with(&"x".repeat(99)));
    assert!(out.content.contains("[output cut at 1000 bytes"));
}

/// Processes (other than zombies) whose working directory is `dir`.
#[cfg(target_os = "linux")]
fn processes_in(dir: &Path) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    !s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
                .unwrap_or(false)
        })
        .collect()
}

/// A grep with back-references over a 200-character line takes far longer
/// than any sane timeout; with a short one the call returns a timeout error
/// and leaves no process behind in the target.
#[test]
fn timeout_stops_the_command_and_its_group() {
    let fx = Fixture::new();
    std::fs::write(fx.target.join("slow.txt"), "a".repeat(200) + "b\n").unwrap();
    let tool = RunCommand::with_limits(Duration::from_millis(300), 64 * 1024);
    let started = Instant::now();
    let command = r"grep -E '^(a*)(a*)(a*)\3\2\1\1$' slow.txt";
    let out = tool.execute(&fx.target, command);
    let took = started.elapsed();
    assert_error_mentions(command, &out, "timed out after 0.3 seconds");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    #[cfg(target_os = "linux")]
    assert_eq!(processes_in(&fx.target), Vec::<u32>::new());
}
