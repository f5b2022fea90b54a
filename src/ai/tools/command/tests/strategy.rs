//! The generator of random command lines for the property in
//! [`super::escapes`]: words each program accepts, risky words, and lines
//! mixing them.

use super::*;

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

pub(super) fn command_line() -> impl Strategy<Value = String> {
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
