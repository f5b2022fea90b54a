//! The checker against a small real tree: what passes unchanged, what is
//! refused and with which reason, and how globs and missing paths behave.

use super::*;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

/// A target `t` with a few files, links in and out, a FIFO, and an outside
/// directory next to it.
fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    std::fs::create_dir_all(t.join("src/sub")).unwrap();
    for f in ["src/a.rs", "src/b.rs", "README", "patterns.txt", "-rf"] {
        std::fs::write(t.join(f), "x\n").unwrap();
    }
    std::fs::create_dir(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/secret"), "s\n").unwrap();
    symlink(dir.path().join("out/secret"), t.join("link-out")).unwrap();
    symlink(dir.path().join("out"), t.join("dir-out")).unwrap();
    symlink(t.join("src/a.rs"), t.join("link-in")).unwrap();
    symlink(t.join("nowhere"), t.join("dangling")).unwrap();
    crate::testing::mkfifo(&t.join("fifo"));
    let t = std::fs::canonicalize(t).unwrap();
    (dir, t)
}

fn argv(t: &Path, line: &str) -> Vec<String> {
    match check(t, line) {
        Ok(plan) => std::iter::once(plan.program.to_string())
            .chain(plan.args.into_iter().map(|a| a.text))
            .collect(),
        Err(refusal) => panic!("{line:?} refused: {refusal}"),
    }
}

/// `line` is refused in `t` with a refusal of the kind `kind` matches.
macro_rules! assert_refused {
    ($t:expr, $line:expr, $kind:pat) => {{
        let line: &str = $line;
        let refusal = refusal($t, line);
        assert!(matches!(refusal, $kind), "{line:?}: {refusal:?}");
    }};
}

fn refusal(t: &Path, line: &str) -> Refusal {
    match check(t, line) {
        Ok(plan) => panic!("{line:?} accepted: {plan:?}"),
        Err(refusal) => refusal,
    }
}

/// The name of a refusal's variant (`Path`, `RefusedOption`, ...), read off
/// its `Debug` form, so a table row can say which refusal a line must get.
fn kind(refusal: &Refusal) -> String {
    let debug = format!("{refusal:?}");
    let end = debug.find(['(', ' ']).unwrap_or(debug.len());
    debug[..end].to_string()
}

fn roles(t: &Path, line: &str) -> Vec<(String, ArgRole)> {
    check(t, line)
        .unwrap()
        .args
        .into_iter()
        .map(|a| (a.text, a.role))
        .collect()
}

/// Lines that pass, and the words they run as (program first): unchanged
/// unless a glob expanded.
const PASSES: &[(&str, &[&str])] = &[
    // Ordinary commands pass through.
    ("grep -rn TODO src", &["grep", "-rn", "TODO", "src"]),
    ("wc -l README src/a.rs", &["wc", "-l", "README", "src/a.rs"]),
    ("head -n 5 README", &["head", "-n", "5", "README"]),
    ("head -5 README", &["head", "-5", "README"]),
    ("tail -c +3 README", &["tail", "-c", "+3", "README"]),
    ("stat -c '%s %n' README", &["stat", "-c", "%s %n", "README"]),
    (
        "du -sh --max-depth=1 .",
        &["du", "-sh", "--max-depth=1", "."],
    ),
    ("file -b link-in", &["file", "-b", "link-in"]),
    (
        r"find . -maxdepth 2 \( -name '*.rs' -o -name '*.py' \) -type f",
        &[
            "find",
            ".",
            "-maxdepth",
            "2",
            "(",
            "-name",
            "*.rs",
            "-o",
            "-name",
            "*.py",
            ")",
            "-type",
            "f",
        ],
    ),
    // grep: context digits cluster with flags; quoted metacharacters in a
    // pattern are just bytes.
    ("grep -3n x README", &["grep", "-3n", "x", "README"]),
    (
        "grep -E 'a|b;c>d' README",
        &["grep", "-E", "a|b;c>d", "README"],
    ),
    // Option values that are paths inside the target, or not paths at all.
    (
        "grep -f patterns.txt README",
        &["grep", "-f", "patterns.txt", "README"],
    ),
    ("du -Xpatterns.txt .", &["du", "-Xpatterns.txt", "."]),
    (
        "find . -newermt 2024-01-01",
        &["find", ".", "-newermt", "2024-01-01"],
    ),
    (
        "grep -D skip -r x .",
        &["grep", "-D", "skip", "-r", "x", "."],
    ),
    // tail's -n takes the rest of its cluster as the value: "f" is a (bad)
    // line count here, not -f, exactly as tail itself reads it.
    ("tail -nf README", &["tail", "-nf", "README"]),
    // Special files may be looked at, not read.
    ("stat fifo", &["stat", "fifo"]),
    ("find fifo", &["find", "fifo"]),
    ("du fifo", &["du", "fifo"]),
    // Missing paths pass when they stay inside.
    ("head nope.txt", &["head", "nope.txt"]),
    ("head src/nope/deeper.txt", &["head", "src/nope/deeper.txt"]),
    // Options by their full names; a separate value may start with a dash.
    (
        "grep --color=never x README",
        &["grep", "--color=never", "x", "README"],
    ),
    ("head -n -2 README", &["head", "-n", "-2", "README"]),
    ("grep -e -rf README", &["grep", "-e", "-rf", "README"]),
    // Globs expand in path positions only.
    ("wc -l src/*.rs", &["wc", "-l", "src/a.rs", "src/b.rs"]),
    ("grep '*' src/*.rs", &["grep", "*", "src/a.rs", "src/b.rs"]),
    ("grep x* src/a.rs", &["grep", "x*", "src/a.rs"]),
    (
        "grep -r --include=*.rs x src",
        &["grep", "-r", "--include=*.rs", "x", "src"],
    ),
    ("find src -name *.rs", &["find", "src", "-name", "*.rs"]),
    ("find s* -type f", &["find", "src", "-type", "f"]),
    ("head 'src/*.rs'", &["head", "src/*.rs"]),
];

#[test]
fn passing_lines_run_as_the_words_given() {
    let (_d, t) = tree();
    for (line, words) in PASSES {
        assert_eq!(argv(&t, line), *words, "{line:?}");
    }
}

/// Lines that are refused, and the [`Refusal`] variant each must get.
const REFUSED: &[(&str, &str)] = &[
    // The program is a bare whitelisted name.
    ("rm -rf .", "NotAllowed"),
    ("sh -c id", "NotAllowed"),
    ("gr*p x .", "NotAllowed"),
    ("'' x", "NotAllowed"),
    ("python3 -c 1", "NotAllowed"),
    ("grepx", "NotAllowed"),
    ("", "Empty"),
    ("   ", "Empty"),
    // With -e or -f the first operand is a path, and must be inside.
    ("grep -e x /etc/passwd", "Path"),
    ("grep -ex /etc/passwd", "Path"),
    ("grep --regexp=x /etc/passwd", "Path"),
    ("grep -f patterns.txt /etc/passwd", "Path"),
    // Option values that are paths are checked like operands, and a
    // pattern file must be a regular file.
    ("grep -f /etc/passwd README", "Path"),
    ("grep --file=../out/secret README", "Path"),
    ("grep -f link-out README", "Path"),
    ("grep --exclude-from=/etc/passwd -r x .", "Path"),
    ("du -X /etc/passwd .", "Path"),
    ("du --exclude-from=link-out .", "Path"),
    ("find . -newer /etc/passwd", "Path"),
    ("find . -samefile ../out/secret", "Path"),
    ("find . -neweram link-out", "Path"),
    ("grep -f fifo README", "NotRegularFile"),
    ("grep -f src README", "NotRegularFile"),
    ("grep -f nope README", "NotRegularFile"),
    // Options that read a list of names (or a magic file) are refused
    // outright.
    ("file -f patterns.txt", "RefusedOption"),
    ("file --files-from patterns.txt", "RefusedOption"),
    ("file -bf patterns.txt", "RefusedOption"),
    ("wc --files0-from=patterns.txt", "RefusedOption"),
    ("du --files0-from=patterns.txt", "RefusedOption"),
    ("find -files0-from patterns.txt", "RefusedOption"),
    ("find . -files0-from patterns.txt", "RefusedOption"),
    ("file -m patterns.txt README", "RefusedOption"),
    ("file --magic-file=patterns.txt README", "RefusedOption"),
    ("file -C -m x", "RefusedOption"),
    // Following links, following a file forever, reading devices.
    ("find -L .", "RefusedOption"),
    ("find -L", "RefusedOption"),
    ("find . -follow", "RefusedOption"),
    ("du -L .", "RefusedOption"),
    ("du --dereference .", "RefusedOption"),
    ("du -sL .", "RefusedOption"),
    ("grep -R x .", "RefusedOption"),
    ("grep -rR x .", "RefusedOption"),
    ("grep --dereference-recursive x .", "RefusedOption"),
    ("tail -f README", "RefusedOption"),
    ("tail -F README", "RefusedOption"),
    ("tail --follow README", "RefusedOption"),
    ("tail --follow=name README", "RefusedOption"),
    ("tail -fn 5 README", "RefusedOption"),
    ("tail --retry README", "RefusedOption"),
    ("tail --pid=1 README", "RefusedOption"),
    ("grep -D read -r x .", "BadValue"),
    ("grep --devices=read -r x .", "BadValue"),
    ("file -s README", "RefusedOption"),
    ("file -p README", "RefusedOption"),
    ("file -S README", "RefusedOption"),
    // A find expression must parse.
    ("find . -name x extra", "FindExpression"),
    ("find . -bogus", "FindExpression"),
    ("find . -name", "MissingValue"),
    // Reading special files (or stdin) is refused.
    ("head fifo", "SpecialFile"),
    ("tail fifo", "SpecialFile"),
    ("wc fifo", "SpecialFile"),
    ("grep x fifo", "SpecialFile"),
    ("file fifo", "SpecialFile"),
    ("head /dev/zero", "Path"),
    ("head -", "Stdin"),
    ("grep x -", "Stdin"),
    // Missing paths that leave the target, and dangling links.
    ("head ../nope", "Path"),
    ("head dir-out/nope", "Path"),
    ("head dir-out/../nope", "Path"),
    ("head dangling", "Unresolvable"),
    // Options are an allow-list of full names.
    ("grep --frobnicate x .", "UnknownOption"),
    ("head -Q README", "UnknownOption"),
    ("head -n", "MissingValue"),
    ("head --quiet=1 README", "UnexpectedValue"),
    ("tail ---presume-input-pipe README", "UnknownOption"),
    // Globs: no match, matches outside, or only matches that are refused
    // (then so is the command).
    ("head src/*.java", "NoGlobMatch"),
    ("head ../*", "Path"),
    ("head /etc/pass*", "Path"),
    ("head fif?", "GlobAllSkipped"),
    ("head dir-*", "GlobAllSkipped"),
    // Shell syntax is refused before anything else.
    ("grep x .; touch /tmp/x", "Split"),
    ("grep x . | head", "Split"),
    ("grep x . && touch y", "Split"),
    ("grep x . > out", "Split"),
    ("grep x < README", "Split"),
    ("grep `id` .", "Split"),
    ("grep $(id) .", "Split"),
    ("grep \"$(id)\" .", "Split"),
    ("grep x .\ntouch y", "Split"),
];

#[test]
fn refused_lines_get_the_refusal_that_says_why() {
    let (_d, t) = tree();
    for (line, expected) in REFUSED {
        let refusal = refusal(&t, line);
        assert_eq!(kind(&refusal), *expected, "{line:?}: {refusal:?}");
    }
}

#[test]
fn the_program_is_the_systems_whatever_path_names_it() {
    let (_d, t) = tree();
    assert_eq!(check(&t, "/usr/bin/grep x README").unwrap().program, "grep");
    let plan = check(&t, "./grep x README").unwrap();
    assert_eq!(plan.program, "grep");
    assert!(plan.notes[0].contains("system's grep"));
}

/// Lines and the role each word after the program plays in them.
const ROLES: &[(&str, &[(&str, ArgRole)])] = &[
    // grep's pattern is the first operand unless an option gave one.
    (
        "grep /etc/passwd README",
        &[("/etc/passwd", ArgRole::Pattern), ("README", ArgRole::Path)],
    ),
    // Options after operands still count (getopt permutes).
    (
        "grep x README -n",
        &[
            ("x", ArgRole::Pattern),
            ("README", ArgRole::Path),
            ("-n", ArgRole::Option),
        ],
    ),
    (
        "grep -- -e README",
        &[
            ("--", ArgRole::Option),
            ("-e", ArgRole::Pattern),
            ("README", ArgRole::Path),
        ],
    ),
    // As the value of a find test, `-delete` is only a name pattern.
    (
        "find . -name -delete",
        &[
            (".", ArgRole::Path),
            ("-name", ArgRole::Expression),
            ("-delete", ArgRole::OptionValue),
        ],
    ),
];

#[test]
fn each_word_gets_its_role() {
    let (_d, t) = tree();
    for (line, expected) in ROLES {
        let expected: Vec<(String, ArgRole)> =
            expected.iter().map(|(w, r)| (w.to_string(), *r)).collect();
        assert_eq!(roles(&t, line), expected, "{line:?}");
    }
}

#[test]
fn outside_paths_are_refused_for_every_program() {
    let (_d, t) = tree();
    for program in ["wc", "file", "grep x", "head", "tail", "stat", "du", "find"] {
        for path in [
            "/etc/passwd",
            "../out/secret",
            "link-out",
            "dir-out",
            "dir-out/secret",
            "src/../../out",
        ] {
            let line = format!("{program} {path}");
            assert_refused!(&t, &line, Refusal::Path(_));
        }
    }
    let abs_inside = format!("head {}", t.join("README").display());
    assert_eq!(argv(&t, &abs_inside).len(), 2);
}

#[test]
fn find_write_and_exec_actions_are_refused() {
    let (_d, t) = tree();
    for action in [
        "-delete",
        r"-exec rm '{}' \;",
        r"-execdir rm '{}' +",
        r"-ok rm '{}' ';'",
        r"-okdir x \;",
        "-fprint x",
        "-fprint0 x",
        "-fprintf x %p",
        "-fls x",
    ] {
        let line = format!("find . -name x {action}");
        assert_refused!(&t, &line, Refusal::RefusedOption { .. });
        let quoted = format!("find . '{}'", action.split(' ').next().unwrap());
        assert_refused!(&t, &quoted, Refusal::RefusedOption { .. });
    }
}

#[test]
fn an_unknown_long_option_gets_a_hint_only_when_unambiguous() {
    let (_d, t) = tree();
    for (line, expected) in [
        ("grep --fil=patterns.txt README", None),
        ("grep --fixed x README", Some("fixed-strings")),
        ("wc --files0=x", Some("files0-from")),
    ] {
        match refusal(&t, line) {
            Refusal::UnknownOption { hint, .. } => {
                assert_eq!(hint.as_deref(), expected, "{line:?}")
            }
            other => panic!("{line:?}: {other:?}"),
        }
    }
}

#[test]
fn glob_matches_are_checked_and_guarded() {
    let (_d, t) = tree();
    // The file named `-rf` comes back as `./-rf`; the FIFO, the dangling link
    // and the links out are left out, with a note.
    let plan = check(&t, "head *").unwrap();
    let args = plan.argv();
    assert!(args.contains(&"./-rf"), "{args:?}");
    assert!(args.contains(&"README"));
    for refused in ["fifo", "link-out", "dir-out", "dangling", "-rf"] {
        assert!(!args.contains(&refused), "{refused} in {args:?}");
    }
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("fifo") && n.contains("link-out"))
    );
    let find = check(&t, "find * -maxdepth 0").unwrap();
    assert!(find.argv().contains(&"./-rf"));
    assert!(!find.argv().contains(&"dir-out"));
}

#[test]
fn an_overlong_line_is_refused_before_it_is_read() {
    let (_d, t) = tree();
    assert_eq!(
        refusal(&t, &"a".repeat(MAX_COMMAND_BYTES + 1)),
        Refusal::TooLong
    );
}

#[test]
fn refusal_messages_say_what_and_why() {
    let (_d, t) = tree();
    let msg = refusal(&t, "find . -delete").to_string();
    assert!(
        msg.starts_with("Error: ") && msg.contains("-delete") && msg.contains("deletes"),
        "{msg}"
    );
    let msg = refusal(&t, "rm x").to_string();
    assert!(
        msg.contains("du, file, find, grep, head, stat, tail, wc"),
        "{msg}"
    );
    let msg = refusal(&t, "head fifo").to_string();
    assert!(msg.contains("FIFO"), "{msg}");
    let msg = refusal(&t, "grep x . | head").to_string();
    assert!(
        msg.contains("pipe") && msg.contains("single quotes"),
        "{msg}"
    );
}
