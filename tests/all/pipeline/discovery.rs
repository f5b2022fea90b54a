//! The investigation visits exactly the directories the scan kept: ignore
//! rules at every level, negations, `-a` and `--no-ignore`.

use super::*;

#[test]
fn discovery_follows_the_scans_scope() {
    let env = project();
    env.files(&[
        (".gitignore", "out/\n"),
        ("out/bundle.js", "x\n"),
        ("node_modules/pkg/index.js", "x\n"),
        ("fixtures/a.txt", "a\n"),
        (".config/settings.toml", "a = 1\n"),
    ]);
    let env = env.with_mock();
    run(&env, &["-x", "fixtures"]);
    let dirs: Vec<Pass> = pass_runs(&env)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| matches!(p, Pass::Dir(_)))
        .collect();
    assert_eq!(dirs, [dir("src/core"), dir("docs"), dir("src"), dir(".")]);

    // With -a and --no-ignore, hidden and ignored directories come back; the
    // skip list (node_modules) and -x still apply.
    let before = env.server.request_count();
    run(&env, &["--fresh", "-a", "--no-ignore", "-x", "fixtures"]);
    let dirs: Vec<Pass> = env
        .passes()
        .into_iter()
        .skip(before)
        .map(|(p, _)| p)
        .filter(|p| matches!(p, Pass::Dir(_)))
        .fold(Vec::new(), |mut acc, p| {
            if acc.last() != Some(&p) {
                acc.push(p);
            }
            acc
        });
    assert_eq!(
        dirs,
        [
            dir("src/core"),
            dir(".config"),
            dir("docs"),
            dir("out"),
            dir("src"),
            dir(".")
        ]
    );
}

/// Ignore rules at several levels, a negation in a nested file that takes
/// back a parent's rule, and each of `-a` and `--no-ignore` alone: the
/// investigation visits exactly the directories the scan kept.
#[test]
fn discovery_applies_nested_rules_negations_and_each_flag_alone() {
    let env = TestEnv::new();
    env.files(&[
        (".gitignore", "gen/\n*.log\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/.gitignore", "!gen/\ncache/\n"),
        ("src/gen/out.rs", "// generated, but taken back\n"),
        ("src/cache/blob.rs", "// ignored by src/.gitignore\n"),
        ("lib/gen/x.rs", "// ignored by the root rule\n"),
        ("lib/lib.rs", "pub fn f() {}\n"),
        ("lib/debug.log", "noise\n"),
        (".tools/run.sh", "echo\n"),
        (
            ".tools/gen/t.rs",
            "// hidden, and ignored by the root rule\n",
        ),
    ]);
    let env = env.with_mock();

    let cases: [(&[&str], &[&str]); 4] = [
        (&[], &["src/gen", "lib", "src", "."]),
        (&["-a"], &["src/gen", ".tools", "lib", "src", "."]),
        (
            &["--no-ignore"],
            &["lib/gen", "src/cache", "src/gen", "lib", "src", "."],
        ),
        (
            &["-a", "--no-ignore"],
            &[
                ".tools/gen",
                "lib/gen",
                "src/cache",
                "src/gen",
                ".tools",
                "lib",
                "src",
                ".",
            ],
        ),
    ];
    for (flags, expected) in cases {
        let before = env.server.request_count();
        let mut args = vec!["--fresh", "--json"];
        args.extend_from_slice(flags);
        let out = run(&env, &args);
        assert_eq!(dirs_investigated(&env, before), expected, "{flags:?}");
        // lib's prompt lists only what the scan kept, and says what it left
        // out.
        let lib = env.server.requests()[before..]
            .iter()
            .find(|r| Pass::of(&r.body, &canonical(&env)) == dir("lib"))
            .unwrap()
            .prompt_text();
        if flags.contains(&"--no-ignore") {
            assert!(lib.contains("  debug.log  (6 bytes)"), "{lib}");
            assert!(!lib.contains("left out by ignore files"), "{lib}");
        } else {
            assert!(!lib.contains("debug.log") && !lib.contains("gen/"), "{lib}");
            assert!(
                lib.contains("  lib.rs  (14 bytes)  [text/plain]\n  (2 more entries left out by ignore files or --exclude)\n</untrusted-data>"),
                "{lib}"
            );
        }
        // The JSON report says which rules were in effect and what they took.
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let ignore = &report["ignore"];
        if flags.contains(&"--no-ignore") {
            assert_eq!(
                *ignore,
                json!({"enabled": false, "rule_files": [], "files_removed": 0, "dirs_removed": 0}),
                "{flags:?}"
            );
        } else {
            assert_eq!(ignore["enabled"], true);
            assert_eq!(
                ignore["rule_files"],
                json!([".gitignore", "src/.gitignore"])
            );
            // lib/gen and src/cache (and with -a, .tools/gen), the files in
            // them, and lib/debug.log.
            let hidden_too = flags.contains(&"-a");
            assert_eq!(
                ignore["dirs_removed"],
                if hidden_too { 3 } else { 2 },
                "{flags:?}"
            );
            assert_eq!(
                ignore["files_removed"],
                if hidden_too { 4 } else { 3 },
                "{flags:?}"
            );
        }
    }
}
