//! The word lists extraction judges candidates by. Kept apart so the
//! rules in `mod.rs` read without them; each list says why it exists.

/// Extensions that make a name a file name even before the tree is known.
/// The tree's own extensions are added to these ([`super::Vocabulary::new`]).
#[rustfmt::skip]
pub(super) const KNOWN_EXTENSIONS: &[&str] = &[
    "7z", "a", "adoc", "astro", "bash", "bat", "bin", "bz2", "c", "cabal", "cc", "cer", "cfg",
    "cjs", "class", "clj", "cljs", "cmake", "cmd", "conf", "config", "cpp", "crt", "cs", "csproj",
    "css", "csv", "cts", "cxx", "dart", "db", "deb", "der", "diff", "dll", "dmg", "dockerfile",
    "dylib", "ejs", "el", "elm", "eot", "erb", "erl", "ex", "exe", "exs", "fish", "fs", "fsx",
    "gemspec", "gif", "go", "gradle", "graphql", "gql", "gz", "h", "haml", "hbs", "hcl", "hh",
    "hpp", "hrl", "hs", "htm", "html", "hxx", "ico", "ini", "ipynb", "iso", "jar", "java",
    "jinja", "jks", "jl", "jpeg", "jpg", "js", "json", "json5", "jsonc", "jsx", "key", "kt",
    "kts", "less", "lock", "log", "lua", "m", "markdown", "md", "mjs", "mk", "ml", "mli", "mm",
    "mov", "mp3", "mp4", "mts", "nim", "nix", "o", "ogg", "otf", "p12", "patch", "pdf", "pem",
    "pfx", "php", "pl", "plist", "pm", "png", "proto", "ps1", "pub", "py", "pyc", "pyi", "pyx",
    "r", "rake", "rb", "rpm", "rs", "rst", "sass", "scala", "scss", "sh", "snap", "so", "sol",
    "sql", "sqlite", "svelte", "svg", "swift", "tar", "tex", "tf", "tfvars", "tgz", "tmpl",
    "toml", "tpl", "ts", "tsv", "tsx", "ttf", "txt", "vb", "vue", "wasm", "wav", "webm", "webp",
    "whl", "woff", "woff2", "xml", "xz", "yaml", "yml", "zig", "zip", "zsh",
];

/// Dotfiles whose name is also an extension somewhere (`prod.env`), so the
/// extension rule must not swallow them.
#[rustfmt::skip]
pub(super) const DOTFILES: &[&str] = &[
    "env", "config", "lock",
];

/// Product names spelled like JavaScript files. They are paths only when
/// the tree really has a file of that name.
#[rustfmt::skip]
pub(super) const JS_PRODUCTS: &[&str] = &[
    "alpine", "angular", "backbone", "chart", "d3", "ember", "express", "knockout", "meteor",
    "moment", "nest", "next", "node", "nuxt", "p5", "preact", "react", "solid", "three", "vue",
];

/// Top-level domains that mark `host.tld/...` as a URL without its scheme.
#[rustfmt::skip]
pub(super) const DOMAINS: &[&str] = &[
    "ai", "app", "au", "ca", "cn", "co", "com", "de", "dev", "edu", "eu", "fr", "gg", "gov",
    "info", "io", "jp", "me", "net", "org", "ru", "sh", "so", "tv", "uk", "us", "xyz",
];

/// Words that introduce a declaration in a code span (`class App`).
#[rustfmt::skip]
pub(super) const DECLARATION_KEYWORDS: &[&str] = &[
    "class", "def", "enum", "fn", "func", "function", "impl", "interface", "mod", "namespace",
    "struct", "trait", "type",
];

/// Modifiers that may precede a declaration keyword.
#[rustfmt::skip]
pub(super) const MODIFIERS: &[&str] = &[
    "pub(crate)", "pub(super)", "pub", "export", "default", "async", "static", "public",
    "private", "protected", "abstract",
];

/// Leading segments that say where a symbol is, not what it is
/// (`crate::scan::scan`, `self.load()`).
#[rustfmt::skip]
pub(super) const RELATIVE_ROOTS: &[&str] = &[
    "crate", "self", "super", "Self", "this", "cls",
];
