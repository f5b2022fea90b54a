//! Outline snapshots per language, the rules that matter most pinned as
//! plain assertions, and the garbage-in cases.

use std::time::Duration;

use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/structure/",
            $name
        ))
    };
}

fn outline(language: Language, source: &str) -> Structure {
    parse_source(language, source.as_bytes()).expect("parses")
}

// ---- snapshots -------------------------------------------------------------

/// One outline snapshot per language, of its sample file.
#[test]
fn outline_snapshots() {
    let samples: [(Language, &[u8], &str); 6] = [
        (Language::Python, fixture!("sample.py"), "python"),
        (Language::JavaScript, fixture!("sample.js"), "javascript"),
        (Language::Rust, fixture!("sample.rs"), "rust"),
        (Language::Go, fixture!("sample.go"), "go"),
        (Language::TypeScript, fixture!("sample.ts"), "typescript"),
        (Language::Tsx, fixture!("sample.tsx"), "tsx"),
    ];
    for (language, sample, name) in samples {
        // Indented here so that a change reads well in review; the model
        // gets the same JSON compact.
        let structure = parse_source(language, sample).unwrap();
        let json = serde_json::to_string_pretty(&structure).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&structure.to_json()).unwrap(),
            serde_json::from_str::<serde_json::Value>(&json).unwrap()
        );
        insta::assert_snapshot!(name, json);
    }
}

// ---- output shape ----------------------------------------------------------

#[test]
fn json_keys_are_in_the_original_order_and_compact() {
    let json = outline(Language::Go, "package main\n").to_json();
    assert_eq!(
        json,
        "{\"language\":\"go\",\"functions\":[],\"classes\":[],\"imports\":[],\
         \"line_count\":2,\"has_docstrings\":false,\"has_comments\":false,\
         \"comment_to_code_ratio\":0.0}"
    );
}

#[test]
fn line_count_is_newline_split_segments() {
    for (source, lines) in [
        ("", 1),
        ("x = 1", 1),
        ("x = 1\n", 2),
        ("\n\n\n", 4),
        // A lone \r is not a line break.
        ("a = 1\rb = 2\r\n", 2),
    ] {
        assert_eq!(
            outline(Language::Python, source).line_count,
            lines,
            "{source:?}"
        );
    }
}

#[test]
fn comment_lines_count_every_line_a_comment_touches() {
    // 3 comment lines (1 + 2) against 5 - 3 = 2 code lines.
    let s = outline(Language::Rust, "// one\n/* two\n three */\nfn f() {}\n");
    assert!(s.has_comments);
    assert_eq!(s.line_count, 5);
    assert_eq!(s.comment_to_code_ratio, 1.5);
    // More comment lines than lines leaves one code line, not zero or less.
    let s = outline(Language::JavaScript, "/*\n\n*/ /* x */ // y");
    assert_eq!(s.comment_to_code_ratio, 5.0);
}

#[test]
fn ratio_rounds_like_python_round() {
    // Expected values are what Python's round(x, 2) gives for each.
    for (x, rounded) in [
        (0.125, 0.12), // exact tie: to even
        (0.375, 0.38), // exact tie: to even
        (1.125, 1.12),
        (0.015, 0.01), // 0.01499999... in binary
        (0.005, 0.01), // 0.00500000000000000010... in binary
        (1.0 / 3.0, 0.33),
        (2.0 / 3.0, 0.67),
        (0.0, 0.0),
        (7.0, 7.0),
    ] {
        assert_eq!(round_to_hundredths(x), rounded, "round({x}, 2)");
    }
    // And end to end: 1 comment line against 8 code lines is 0.125 -> 0.12.
    let source = format!("# c\n{}", "x = 1\n".repeat(7));
    let s = outline(Language::Python, &source);
    assert_eq!((s.line_count, s.comment_to_code_ratio), (9, 0.12));
}

#[test]
fn extensions_map_to_languages_case_insensitively() {
    let spellings: [(Language, &[&str]); 6] = [
        (Language::Python, &[".py", "PY"]),
        (Language::JavaScript, &[".js", ".jsx", ".mjs"]),
        (Language::TypeScript, &[".ts"]),
        (Language::Tsx, &[".TSX", "tsx"]),
        (Language::Rust, &[".rs"]),
        (Language::Go, &[".go"]),
    ];
    for (language, extensions) in spellings {
        for ext in extensions {
            assert_eq!(Language::from_extension(ext), Some(language), "{ext}");
        }
    }
    for ext in ["", ".", ".c", ".cjs", ".d", ".pyi", ".txt"] {
        assert_eq!(Language::from_extension(ext), None, "{ext}");
    }
    for ext in SUPPORTED_EXTENSIONS {
        assert!(Language::from_extension(ext).is_some(), "{ext}");
    }
    assert!(SUPPORTED_EXTENSIONS.is_sorted());
}

// ---- caps ------------------------------------------------------------------

#[test]
fn functions_are_capped_at_50_in_document_order() {
    let source: String = (0..60)
        .map(|i| format!("def f{i}(x):\n    pass\n"))
        .collect();
    let s = outline(Language::Python, &source);
    assert_eq!(s.functions.len(), MAX_FUNCTIONS);
    assert_eq!(s.functions.first().unwrap(), "f0(x)");
    assert_eq!(s.functions.last().unwrap(), "f49(x)");
}

#[test]
fn classes_methods_and_imports_are_capped() {
    let methods: String = (0..25)
        .map(|i| format!("    def m{i}(self): pass\n"))
        .collect();
    let classes: String = (0..35).map(|i| format!("class C{i}:\n{methods}")).collect();
    let imports: String = (0..40).map(|i| format!("import m{i}\n")).collect();
    let s = outline(Language::Python, &format!("{imports}{classes}"));
    assert_eq!(s.classes.len(), MAX_CLASSES);
    assert_eq!(s.classes[29].name, "C29");
    assert!(s.classes.iter().all(|c| c.methods.len() == MAX_METHODS));
    assert_eq!(s.classes[0].methods[19], "m19(self)");
    assert_eq!(s.imports.len(), MAX_IMPORTS);
    assert_eq!(s.imports[29], "import m29");
    // Methods are functions too in Python, so those hit their own cap.
    assert_eq!(s.functions.len(), MAX_FUNCTIONS);
}

#[test]
fn caps_apply_to_every_language() {
    let js: String = (0..60).map(|i| format!("function f{i}() {{}}\n")).collect();
    assert_eq!(outline(Language::JavaScript, &js).functions.len(), 50);
    let rs: String = (0..40).map(|i| format!("struct S{i};\n")).collect();
    assert_eq!(outline(Language::Rust, &rs).classes.len(), 30);
    let go: String = "package p\n".to_string()
        + &(0..40)
            .map(|i| format!("import \"m{i}\"\n"))
            .collect::<String>();
    assert_eq!(outline(Language::Go, &go).imports.len(), 30);
    let ts_methods: String = (0..25).map(|i| format!("  m{i}(): void;\n")).collect();
    let ts = format!("interface I {{\n{ts_methods}}}\n");
    assert_eq!(
        outline(Language::TypeScript, &ts).classes[0].methods.len(),
        20
    );
}

// ---- per-language rules ----------------------------------------------------

#[test]
fn python_docstrings_are_any_leading_string_statement() {
    assert!(!outline(Language::Python, "x = 'not a docstring'\n").has_docstrings);
    assert!(outline(Language::Python, "def f():\n    '''doc'''\n").has_docstrings);
    assert!(outline(Language::Python, "'bare string'\n").has_docstrings);
    assert!(!outline(Language::Python, "# only a comment\n").has_docstrings);
}

#[test]
fn javascript_lists_each_function_once() {
    let s = outline(
        Language::JavaScript,
        "function a(x) {}\nconst b = function (y) {};\nconst c = function named(z) {};\n\
         const d = w => w;\nconst e = (p, q) => p;\nfunction* gen() {}\n",
    );
    assert_eq!(
        s.functions,
        [
            "a(x)",
            "(anonymous)(y)",
            "named(z)",
            "(anonymous)(w)",
            "(anonymous)(p, q)",
            "gen()"
        ]
    );
}

/// Every anonymous function the original lists as `(anonymous)` (under
/// today's grammar it finds them by their `function` keyword) is listed
/// here too, with its parameters: expressions passed as arguments, default
/// exports, immediately invoked ones, object properties and generators.
#[test]
fn javascript_lists_anonymous_functions_and_generators() {
    let s = outline(
        Language::JavaScript,
        "const g = function* (k) {};\nexport default function () {}\n\
         setTimeout(function () {}, 1);\n(function () {})();\n\
         const o = { n: function (t) {} };\nasync function* stream(src) {}\n",
    );
    assert_eq!(
        s.functions,
        [
            "(anonymous)(k)",
            "(anonymous)()",
            "(anonymous)()",
            "(anonymous)()",
            "(anonymous)(t)",
            "stream(src)"
        ]
    );
    // TypeScript shares the rule, with annotations.
    let ts = outline(
        Language::TypeScript,
        "function* ids(n: number): Generator<number> {}\nconst f = function* () {};\n",
    );
    assert_eq!(
        ts.functions,
        ["ids(n: number): Generator<number>", "(anonymous)()"]
    );
}

#[test]
fn rust_items_without_a_type_name_fall_back_to_their_text() {
    let s = outline(
        Language::Rust,
        "impl<T: Clone + Send + Sync + 'static> Wrapper<T> where T: Default { fn get(&self) -> T { todo!() } }",
    );
    assert_eq!(
        s.classes[0].name,
        "impl<T: Clone + Send + Sync + 'static> Wrapper<T> where T: D"
    );
    assert_eq!(s.classes[0].name.chars().count(), 60);
    assert_eq!(s.functions, ["get(&self) -> T"]);
}

#[test]
fn fallback_names_are_cut_at_characters_not_bytes() {
    let s = outline(
        Language::Go,
        "package p\ntype Ärger = struct{ ünïcödé, ñ, ß, ø, å, é, ü, ö, ä, æ, œ, þ, ð int }\n",
    );
    let name = &s.classes[0].name;
    assert!(name.starts_with("type Ärger = "));
    assert_eq!(name.chars().count(), 60);
}

// ---- garbage in ------------------------------------------------------------

#[test]
fn binary_and_invalid_utf8_never_panic() {
    let mut noise = Vec::with_capacity(8 * 1024);
    let mut rng = fastrand::Rng::with_seed(7);
    noise.resize_with(8 * 1024, || rng.u8(..));
    let mut invalid_names =
        b"def f(a=\"\xff\xfe\"):\n    pass\nclass \xc3(\xe2\x82):\n    def m\x80(self): pass\n"
            .to_vec();
    invalid_names.extend_from_slice(b"import \xf0\x9f\n");
    for language in [
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Rust,
        Language::Go,
    ] {
        for input in [&noise[..], &invalid_names[..], b"\0\0\0", b""] {
            let s = parse_source(language, input).expect("parses");
            assert_eq!(s.line_count, count_newlines(input) + 1);
            let json = s.to_json();
            serde_json::from_str::<serde_json::Value>(&json).expect("valid JSON");
        }
    }
    let s = parse_source(Language::Python, &invalid_names).unwrap();
    assert_eq!(s.functions[0], "f(a=\"\u{fffd}\u{fffd}\")");
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    const DEPTH: usize = 10_000;
    let cases = [
        (
            Language::Python,
            format!("x = {}1{}\n", "[".repeat(DEPTH), "]".repeat(DEPTH)),
        ),
        (
            Language::JavaScript,
            format!(
                "{}function f(a) {{}}{}",
                "(".repeat(DEPTH),
                ")".repeat(DEPTH)
            ),
        ),
        (
            Language::Rust,
            format!("fn f() {}{}", "{".repeat(DEPTH), "}".repeat(DEPTH)),
        ),
        (
            Language::Go,
            format!(
                "package p\nvar x = {}1{}",
                "(".repeat(DEPTH),
                ")".repeat(DEPTH)
            ),
        ),
        (Language::TypeScript, "[".repeat(DEPTH)),
    ];
    // Run on a small stack so a recursive walk would fail here, not just in
    // production on a deeper file.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            for (language, source) in cases {
                parse_source(language, source.as_bytes()).expect("parses");
            }
        })
        .unwrap();
    handle.join().expect("no stack overflow");
}

#[test]
fn deeply_nested_functions_are_all_found() {
    let depth = 2_000;
    let source = (0..depth)
        .map(|i| format!("function f{i}(a) {{"))
        .collect::<String>()
        + &"}".repeat(depth);
    let s = outline(Language::JavaScript, &source);
    assert_eq!(s.functions.len(), MAX_FUNCTIONS);
    assert_eq!(s.functions[49], "f49(a)");
}

#[test]
fn a_parse_over_budget_is_an_error_not_a_hang() {
    let source = "function f(a, b) { return a + b; }\n".repeat(10_000);
    let err =
        parse_source_within(Language::JavaScript, source.as_bytes(), Duration::ZERO).unwrap_err();
    assert_eq!(err, ParseError::TimedOut(Duration::ZERO));
    assert!(parse_source(Language::JavaScript, source.as_bytes()).is_ok());
}

#[test]
fn map_source_text_reaches_every_string_from_the_file() {
    let mut s = outline(
        Language::TypeScript,
        "import a from 'a';\nfunction f() {}\nclass C { m() {} }\n",
    );
    s.map_source_text(|t| format!("<{t}>"));
    assert_eq!(s.imports, ["<import a from 'a';>"]);
    assert_eq!(s.functions, ["<f()>"]);
    assert_eq!(
        s.classes,
        [Class {
            name: "<C>".into(),
            methods: vec!["<m()>".into()]
        }]
    );
    assert_eq!(s.language, "typescript");
}
