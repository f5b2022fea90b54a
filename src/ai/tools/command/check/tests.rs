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

fn roles(t: &Path, line: &str) -> Vec<(String, Role)> {
    check(t, line)
        .unwrap()
        .args
        .into_iter()
        .map(|a| (a.text, a.role))
        .collect()
}

#[test]
fn ordinary_commands_pass_through() {
    let (_d, t) = tree();
    assert_eq!(
        argv(&t, "grep -rn TODO src"),
        ["grep", "-rn", "TODO", "src"]
    );
    assert_eq!(
        argv(&t, "wc -l README src/a.rs"),
        ["wc", "-l", "README", "src/a.rs"]
    );
    assert_eq!(argv(&t, "head -n 5 README"), ["head", "-n", "5", "README"]);
    assert_eq!(argv(&t, "head -5 README"), ["head", "-5", "README"]);
    assert_eq!(
        argv(&t, "tail -c +3 README"),
        ["tail", "-c", "+3", "README"]
    );
    assert_eq!(
        argv(&t, "stat -c '%s %n' README"),
        ["stat", "-c", "%s %n", "README"]
    );
    assert_eq!(
        argv(&t, "du -sh --max-depth=1 ."),
        ["du", "-sh", "--max-depth=1", "."]
    );
    assert_eq!(argv(&t, "file -b link-in"), ["file", "-b", "link-in"]);
    assert_eq!(
        argv(
            &t,
            r"find . -maxdepth 2 \( -name '*.rs' -o -name '*.py' \) -type f"
        ),
        [
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
            "f"
        ]
    );
}

#[test]
fn the_program_is_a_bare_whitelisted_name() {
    let (_d, t) = tree();
    assert_eq!(check(&t, "/usr/bin/grep x README").unwrap().program, "grep");
    let plan = check(&t, "./grep x README").unwrap();
    assert_eq!(plan.program, "grep");
    assert!(plan.notes[0].contains("system's grep"));
    for line in [
        "rm -rf .",
        "sh -c id",
        "gr*p x .",
        "'' x",
        "python3 -c 1",
        "grepx",
    ] {
        assert_refused!(&t, line, Refusal::NotAllowed { .. });
    }
    assert_eq!(refusal(&t, ""), Refusal::Empty);
    assert_eq!(refusal(&t, "   "), Refusal::Empty);
}

#[test]
fn grep_pattern_is_the_first_operand_unless_given_by_option() {
    let (_d, t) = tree();
    assert_eq!(
        roles(&t, "grep /etc/passwd README"),
        [
            ("/etc/passwd".into(), Role::Pattern),
            ("README".into(), Role::Path)
        ]
    );
    // Options after operands still count (getopt permutes).
    assert_eq!(
        roles(&t, "grep x README -n"),
        [
            ("x".into(), Role::Pattern),
            ("README".into(), Role::Path),
            ("-n".into(), Role::Option)
        ]
    );
    // With -e the first operand is a path, and must be inside.
    assert_refused!(&t, "grep -e x /etc/passwd", Refusal::Path(_));
    assert_refused!(&t, "grep -ex /etc/passwd", Refusal::Path(_));
    assert_refused!(&t, "grep --regexp=x /etc/passwd", Refusal::Path(_));
    assert_refused!(&t, "grep -f patterns.txt /etc/passwd", Refusal::Path(_));
    assert_eq!(
        roles(&t, "grep -- -e README"),
        [
            ("--".into(), Role::Option),
            ("-e".into(), Role::Pattern),
            ("README".into(), Role::Path)
        ]
    );
    // Context digits cluster with flags.
    assert_eq!(
        argv(&t, "grep -3n x README"),
        ["grep", "-3n", "x", "README"]
    );
    // Quoted metacharacters in a pattern are just bytes.
    assert_eq!(
        argv(&t, "grep -E 'a|b;c>d' README"),
        ["grep", "-E", "a|b;c>d", "README"]
    );
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
fn option_values_that_are_paths_are_checked() {
    let (_d, t) = tree();
    for line in [
        "grep -f /etc/passwd README",
        "grep --file=../out/secret README",
        "grep -f link-out README",
        "grep --exclude-from=/etc/passwd -r x .",
        "du -X /etc/passwd .",
        "du --exclude-from=link-out .",
        "find . -newer /etc/passwd",
        "find . -samefile ../out/secret",
        "find . -neweram link-out",
    ] {
        assert_refused!(&t, line, Refusal::Path(_));
    }
    assert_refused!(&t, "grep -f fifo README", Refusal::NotRegularFile { .. });
    assert_refused!(&t, "grep -f src README", Refusal::NotRegularFile { .. });
    assert_refused!(&t, "grep -f nope README", Refusal::NotRegularFile { .. });
    assert_eq!(argv(&t, "grep -f patterns.txt README").len(), 4);
    assert_eq!(argv(&t, "du -Xpatterns.txt .").len(), 3);
    assert_eq!(argv(&t, "find . -newermt 2024-01-01").len(), 4);
}

#[test]
fn name_list_options_are_refused_outright() {
    let (_d, t) = tree();
    for line in [
        "file -f patterns.txt",
        "file --files-from patterns.txt",
        "file -bf patterns.txt",
        "wc --files0-from=patterns.txt",
        "du --files0-from=patterns.txt",
        "find -files0-from patterns.txt",
        "find . -files0-from patterns.txt",
        "file -m patterns.txt README",
        "file --magic-file=patterns.txt README",
        "file -C -m x",
    ] {
        assert_refused!(
            &t,
            line,
            Refusal::RefusedOption { .. } | Refusal::FindExpression { .. }
        );
    }
}

#[test]
fn link_following_and_endless_options_are_refused() {
    let (_d, t) = tree();
    for line in [
        "find -L .",
        "find -L",
        "find . -follow",
        "du -L .",
        "du --dereference .",
        "du -sL .",
        "grep -R x .",
        "grep -rR x .",
        "grep --dereference-recursive x .",
        "tail -f README",
        "tail -F README",
        "tail --follow README",
        "tail --follow=name README",
        "tail -fn 5 README",
        "tail --retry README",
        "tail --pid=1 README",
        "grep -D read -r x .",
        "grep --devices=read -r x .",
        "file -s README",
        "file -p README",
        "file -S README",
    ] {
        assert_refused!(
            &t,
            line,
            Refusal::RefusedOption { .. } | Refusal::BadValue { .. }
        );
    }
    // -n takes the rest of its cluster as the value: "f" is a (bad) line
    // count here, not -f, exactly as tail itself reads it.
    assert_eq!(argv(&t, "tail -nf README"), ["tail", "-nf", "README"]);
    assert_eq!(argv(&t, "grep -D skip -r x .").len(), 6);
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
    // As the value of a test, `-delete` is only a name pattern.
    assert_eq!(
        roles(&t, "find . -name -delete"),
        [
            (".".into(), Role::Path),
            ("-name".into(), Role::Expression),
            ("-delete".into(), Role::OptionValue)
        ]
    );
    assert_refused!(&t, "find . -name x extra", Refusal::FindExpression { .. });
    assert_refused!(&t, "find . -bogus", Refusal::FindExpression { .. });
    assert_refused!(&t, "find . -name", Refusal::MissingValue { .. });
}

#[test]
fn reading_special_files_is_refused_but_looking_is_not() {
    let (_d, t) = tree();
    for line in [
        "head fifo",
        "tail fifo",
        "wc fifo",
        "grep x fifo",
        "file fifo",
        "head /dev/zero",
    ] {
        assert_refused!(&t, line, Refusal::SpecialFile { .. } | Refusal::Path(_));
    }
    assert_eq!(argv(&t, "stat fifo").len(), 2);
    assert_eq!(argv(&t, "find fifo").len(), 2);
    assert_eq!(argv(&t, "du fifo").len(), 2);
    assert_eq!(refusal(&t, "head -"), Refusal::Stdin);
    assert_eq!(refusal(&t, "grep x -"), Refusal::Stdin);
}

#[test]
fn missing_paths_pass_only_when_they_stay_inside() {
    let (_d, t) = tree();
    assert_eq!(argv(&t, "head nope.txt"), ["head", "nope.txt"]);
    assert_eq!(argv(&t, "head src/nope/deeper.txt").len(), 2);
    assert_refused!(&t, "head ../nope", Refusal::Path(_));
    assert_refused!(&t, "head dir-out/nope", Refusal::Path(_));
    assert_refused!(&t, "head dir-out/../nope", Refusal::Path(_));
    assert_refused!(&t, "head dangling", Refusal::Unresolvable { .. });
}

#[test]
fn options_are_an_allow_list_of_full_names() {
    let (_d, t) = tree();
    assert_refused!(&t, "grep --frobnicate x .", Refusal::UnknownOption { .. });
    assert_refused!(&t, "head -Q README", Refusal::UnknownOption { .. });
    // An ambiguous abbreviation gets no hint; a unique one does.
    match refusal(&t, "grep --fil=patterns.txt README") {
        Refusal::UnknownOption { hint, .. } => assert_eq!(hint, None),
        other => panic!("{other:?}"),
    }
    match refusal(&t, "grep --fixed x README") {
        Refusal::UnknownOption { hint, .. } => assert_eq!(hint.as_deref(), Some("fixed-strings")),
        other => panic!("{other:?}"),
    }
    match refusal(&t, "wc --files0=x") {
        Refusal::UnknownOption { hint, .. } => assert_eq!(hint.as_deref(), Some("files0-from")),
        other => panic!("{other:?}"),
    }
    assert_refused!(&t, "head -n", Refusal::MissingValue { .. });
    assert_refused!(&t, "head --quiet=1 README", Refusal::UnexpectedValue { .. });
    assert_refused!(
        &t,
        "tail ---presume-input-pipe README",
        Refusal::UnknownOption { .. }
    );
    assert_eq!(argv(&t, "grep --color=never x README").len(), 4);
    // A separate value may start with a dash.
    assert_eq!(
        argv(&t, "head -n -2 README"),
        ["head", "-n", "-2", "README"]
    );
    assert_eq!(
        argv(&t, "grep -e -rf README"),
        ["grep", "-e", "-rf", "README"]
    );
}

#[test]
fn globs_expand_in_path_positions_only() {
    let (_d, t) = tree();
    assert_eq!(
        argv(&t, "wc -l src/*.rs"),
        ["wc", "-l", "src/a.rs", "src/b.rs"]
    );
    assert_eq!(
        argv(&t, "grep '*' src/*.rs"),
        ["grep", "*", "src/a.rs", "src/b.rs"]
    );
    assert_eq!(argv(&t, "grep x* src/a.rs"), ["grep", "x*", "src/a.rs"]);
    assert_eq!(
        argv(&t, "grep -r --include=*.rs x src"),
        ["grep", "-r", "--include=*.rs", "x", "src"]
    );
    assert_eq!(
        argv(&t, "find src -name *.rs"),
        ["find", "src", "-name", "*.rs"]
    );
    assert_eq!(argv(&t, "find s* -type f"), ["find", "src", "-type", "f"]);
    assert_eq!(argv(&t, "head 'src/*.rs'"), ["head", "src/*.rs"]);
    assert_refused!(&t, "head src/*.java", Refusal::NoGlobMatch { .. });
    assert_refused!(&t, "head ../*", Refusal::Path(_));
    assert_refused!(&t, "head /etc/pass*", Refusal::Path(_));
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
    // When every match is refused, so is the command.
    assert_refused!(&t, "head fif?", Refusal::GlobAllSkipped { .. });
    assert_refused!(&t, "head dir-*", Refusal::GlobAllSkipped { .. });
}

#[test]
fn shell_syntax_is_refused_before_anything_else() {
    let (_d, t) = tree();
    for line in [
        "grep x .; touch /tmp/x",
        "grep x . | head",
        "grep x . && touch y",
        "grep x . > out",
        "grep x < README",
        "grep `id` .",
        "grep $(id) .",
        "grep \"$(id)\" .",
        "grep x .\ntouch y",
    ] {
        assert_refused!(&t, line, Refusal::Split(_));
    }
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
