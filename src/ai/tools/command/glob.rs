//! Expanding unquoted globs (`*`, `?`, `[...]`) in file operands, the way
//! bash does with its default options, but only ever inside the target.
//!
//! Without a shell nobody else would expand `grep TODO src/*.rs`, and the
//! model writes globs all the time, so we do it here:
//!
//! - a `*` or `?` never matches a leading `.` (no dotglob), `/` always
//!   separates components, quoted characters match only themselves;
//! - the literal directory before the first glob must resolve inside the
//!   target, and no directory reached through a link that leaves the target
//!   is ever listed;
//! - matches come back sorted bytewise (as with `LC_ALL=C`), spelled the way
//!   the pattern was (relative stays relative);
//! - a match that begins with `-`, `!`, `(`, `)` or `,` gets a `./` prefix so a
//!   file named `-delete` or `--files0-from=x` can never turn into an option
//!   or a find operator (the classic wildcard injection).
//!
//! What to do with an empty result is the caller's call. Each match is still
//! checked by the caller like any operand.

use std::path::{Path, PathBuf};

use super::argv::Word;
use crate::ai::tools::sandbox::{self, SandboxError};

/// At most this many matches from one pattern.
pub(crate) const MAX_MATCHES: usize = 1000;
/// At most this many directory entries looked at for one pattern.
const MAX_VISITED: usize = 50_000;

/// Why a glob could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GlobError {
    /// The literal part before the first glob leaves the target.
    Outside(SandboxError),
    /// Too many matches or entries to look at.
    TooBroad,
}

/// One character of a pattern with whether it was quoted.
type Pc = (char, bool);

/// A path reached so far: how the match is spelt for the caller, and where
/// it is.
type Reached = (String, PathBuf);

/// Expand `word` relative to `target` (canonical). May return no matches.
pub(crate) fn expand(target: &Path, word: &Word) -> Result<Vec<String>, GlobError> {
    let chars: Vec<Pc> = word.chars().collect();
    let absolute = chars.first().map(|&(c, _)| c) == Some('/');
    let components: Vec<&[Pc]> = chars.split(|&(c, _)| c == '/').collect();
    // For an absolute pattern the first component is the empty one before `/`.
    let first_glob = components
        .iter()
        .position(|comp| has_glob(comp))
        .unwrap_or(components.len());
    let Some(base) = literal_base(target, &components[..first_glob], absolute)? else {
        return Ok(Vec::new());
    };
    let mut visited = 0usize;
    let mut candidates = vec![base];
    for (index, component) in components.iter().enumerate().skip(first_glob) {
        let last = index + 1 == components.len();
        candidates = step(target, &candidates, component, last, &mut visited)?;
    }
    Ok(spelt_matches(candidates))
}

/// Where the walk starts: the literal components before the first glob,
/// spelt as written and resolved inside the target. `None` when that
/// directory does not exist (no matches); an error when it leaves the
/// target.
fn literal_base(
    target: &Path,
    literal: &[&[Pc]],
    absolute: bool,
) -> Result<Option<Reached>, GlobError> {
    let prefix: Vec<String> = literal.iter().map(|c| text(c)).collect();
    let prefix_display = prefix.join("/");
    let base_raw = match (absolute, prefix_display.is_empty()) {
        (true, _) if prefix_display.is_empty() => "/".to_string(),
        (true, _) | (false, false) => prefix_display.clone(),
        (false, true) => ".".to_string(),
    };
    let base = match sandbox::resolve(target, &base_raw) {
        Ok(path) => path,
        Err(SandboxError::Missing { .. }) => return Ok(None),
        Err(err) => return Err(GlobError::Outside(err)),
    };
    Ok(Some((prefix_display, base)))
}

/// What one more `component` of the pattern reaches from each of
/// `candidates`: only directories, unless it is the `last` component.
/// `visited` counts the directory entries looked at across the whole walk.
fn step(
    target: &Path,
    candidates: &[Reached],
    component: &[Pc],
    last: bool,
    visited: &mut usize,
) -> Result<Vec<Reached>, GlobError> {
    let mut next = Vec::new();
    for (display, path) in candidates {
        if component.is_empty() {
            // `a//b` or a trailing `/`: keep only directories.
            if path.is_dir() {
                next.push((format!("{display}/"), path.clone()));
            }
            continue;
        }
        if !has_glob(component) {
            let child = path.join(text(component));
            if last || child.is_dir() {
                next.push((join(display, &text(component)), child));
            }
            continue;
        }
        let pattern = tokens(component);
        for name in listable_entries(target, path, visited)? {
            if matches_name(&pattern, &name) {
                let child = path.join(&name);
                if last || child.is_dir() {
                    next.push((join(display, &name), child));
                }
            }
        }
        if next.len() > MAX_MATCHES {
            return Err(GlobError::TooBroad);
        }
    }
    Ok(next)
}

/// The matches that exist, each guarded against reading as an option,
/// sorted bytewise and listed once.
fn spelt_matches(candidates: Vec<Reached>) -> Vec<String> {
    let mut matches: Vec<String> = candidates
        .into_iter()
        .filter(|(_, path)| path.symlink_metadata().is_ok())
        .map(|(display, _)| guard_leading(display))
        .collect();
    matches.sort();
    matches.dedup();
    matches
}

fn text(component: &[Pc]) -> String {
    component.iter().map(|&(c, _)| c).collect()
}

fn join(display: &str, name: &str) -> String {
    if display.is_empty() {
        name.to_string()
    } else if display.ends_with('/') {
        format!("{display}{name}")
    } else {
        format!("{display}/{name}")
    }
}

fn has_glob(component: &[Pc]) -> bool {
    component
        .iter()
        .any(|&(c, q)| !q && matches!(c, '*' | '?' | '['))
}

/// A match that a program could read as an option or a find operator.
fn guard_leading(display: String) -> String {
    match display.chars().next() {
        Some('-' | '!' | '(' | ')' | ',') => format!("./{display}"),
        _ => display,
    }
}

/// The UTF-8 names in `dir`, which is listed only when it resolves inside
/// the target (a link out of the target is never followed).
fn listable_entries(
    target: &Path,
    dir: &Path,
    visited: &mut usize,
) -> Result<Vec<String>, GlobError> {
    let inside = dir
        .to_str()
        .is_some_and(|raw| sandbox::resolve(target, raw).is_ok());
    if !inside || !dir.is_dir() {
        return Ok(Vec::new());
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        *visited += 1;
        if *visited > MAX_VISITED {
            return Err(GlobError::TooBroad);
        }
        // Names that are not UTF-8 cannot be matched against a text pattern
        // or passed on as text; find can still reach them.
        if let Ok(name) = entry.file_name().into_string() {
            names.push(name);
        }
    }
    Ok(names)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(char),
    Any,
    Star,
    Class {
        negated: bool,
        items: Vec<(char, char)>,
    },
}

fn tokens(component: &[Pc]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < component.len() {
        let (c, quoted) = component[i];
        match (c, quoted) {
            ('*', false) => out.push(Token::Star),
            ('?', false) => out.push(Token::Any),
            ('[', false) => match class(&component[i + 1..]) {
                Some((token, used)) => {
                    out.push(token);
                    i += used;
                }
                None => out.push(Token::Literal('[')),
            },
            _ => out.push(Token::Literal(c)),
        }
        i += 1;
    }
    out
}

/// Parse a bracket expression after its `[`; returns the token and how many
/// pattern characters it used (including the closing `]`), or `None` when
/// there is no closing `]` (then `[` is literal, as in bash).
fn class(rest: &[Pc]) -> Option<(Token, usize)> {
    let mut i = 0;
    let negated = matches!(rest.first(), Some(&('!' | '^', false)));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    while i < rest.len() {
        let (c, quoted) = rest[i];
        if c == ']' && !quoted && !first {
            return Some((Token::Class { negated, items }, i + 1));
        }
        first = false;
        let is_range = matches!(rest.get(i + 1), Some(&('-', false)))
            && rest.get(i + 2).is_some_and(|&(end, q)| q || end != ']');
        if is_range {
            items.push((c, rest[i + 2].0));
            i += 3;
        } else {
            items.push((c, c));
            i += 1;
        }
    }
    None
}

fn matches_token(token: &Token, c: char) -> bool {
    match token {
        Token::Literal(l) => *l == c,
        Token::Any => true,
        Token::Star => true,
        Token::Class { negated, items } => {
            items.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
        }
    }
}

/// Whether `name` matches the pattern, with bash's rule that wildcards never
/// match a leading dot.
fn matches_name(pattern: &[Token], name: &str) -> bool {
    let name: Vec<char> = name.chars().collect();
    if name.first() == Some(&'.') && pattern.first() != Some(&Token::Literal('.')) {
        return false;
    }
    wildcard_match(pattern, &name)
}

/// Classic linear wildcard matching: on a mismatch, let the last `*` swallow
/// one more character.
fn wildcard_match(pattern: &[Token], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut resume: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(Token::Star) => {
                resume = Some((p, n));
                p += 1;
            }
            Some(token) if matches_token(token, name[n]) => {
                p += 1;
                n += 1;
            }
            _ => match resume {
                Some((star, at)) => {
                    p = star + 1;
                    n = at + 1;
                    resume = Some((star, at + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|t| *t == Token::Star)
}

#[cfg(test)]
mod tests {
    use super::super::argv::split;
    use super::*;
    use std::path::PathBuf;

    fn m(pattern: &str, name: &str) -> bool {
        let word = &split(pattern).unwrap()[0];
        let pcs: Vec<Pc> = word.chars().collect();
        matches_name(&tokens(&pcs), name)
    }

    #[test]
    fn wildcard_matching() {
        assert!(m("*.rs", "main.rs"));
        assert!(!m("*.rs", "main.rsx"));
        assert!(m("a*b*c", "aXbYbZc"));
        assert!(m("?.txt", "a.txt"));
        assert!(!m("?.txt", "ab.txt"));
        assert!(m("[abc]x", "bx"));
        assert!(!m("[!abc]x", "bx"));
        assert!(m("[^abc]x", "dx"));
        assert!(m("[a-c]", "b"));
        assert!(m("[]]", "]"));
        assert!(m("x[", "x["));
        assert!(m("*", ""));
    }

    #[test]
    fn quoted_wildcards_are_literal() {
        assert!(m("'*'.rs", "*.rs"));
        assert!(!m("'*'.rs", "a.rs"));
        assert!(m(r"\?", "?"));
        assert!(!m(r"\?", "a"));
    }

    #[test]
    fn dot_files_need_a_literal_dot() {
        assert!(!m("*", ".env"));
        assert!(!m("?env", ".env"));
        assert!(m(".*", ".env"));
        assert!(m(".e*", ".env"));
    }

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        std::fs::create_dir_all(target.join("src/sub")).unwrap();
        for f in [
            "src/b.rs",
            "src/a.rs",
            "src/c.py",
            "src/sub/d.rs",
            ".hidden",
            "-delete",
        ] {
            std::fs::write(target.join(f), "x").unwrap();
        }
        std::fs::create_dir(dir.path().join("out")).unwrap();
        std::fs::write(dir.path().join("out/secret.rs"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("out"), target.join("link-out")).unwrap();
        let target = std::fs::canonicalize(target).unwrap();
        (dir, target)
    }

    fn ex(target: &Path, pattern: &str) -> Result<Vec<String>, GlobError> {
        expand(target, &split(pattern).unwrap()[0])
    }

    #[test]
    fn expands_sorted_inside_the_target() {
        let (_d, t) = tree();
        assert_eq!(ex(&t, "src/*.rs").unwrap(), ["src/a.rs", "src/b.rs"]);
        assert_eq!(ex(&t, "src/*/*.rs").unwrap(), ["src/sub/d.rs"]);
        assert_eq!(ex(&t, "./src/?.py").unwrap(), ["./src/c.py"]);
        assert_eq!(ex(&t, "*/").unwrap(), ["link-out/", "src/"]);
        assert!(ex(&t, "src/*.java").unwrap().is_empty());
        assert!(ex(&t, "nope/*").unwrap().is_empty());
        let abs = format!("{}/src/[ab].rs", t.display());
        assert_eq!(
            ex(&t, &abs).unwrap(),
            [
                format!("{}/src/a.rs", t.display()),
                format!("{}/src/b.rs", t.display())
            ]
        );
    }

    #[test]
    fn option_like_matches_are_guarded() {
        let (_d, t) = tree();
        assert_eq!(ex(&t, "-*").unwrap(), ["./-delete"]);
        assert!(ex(&t, "*").unwrap().contains(&"./-delete".to_string()));
    }

    #[test]
    fn never_lists_outside() {
        let (_d, t) = tree();
        assert!(matches!(ex(&t, "../*"), Err(GlobError::Outside(_))));
        assert!(matches!(ex(&t, "/etc/*"), Err(GlobError::Outside(_))));
        assert!(matches!(ex(&t, "/*"), Err(GlobError::Outside(_))));
        assert!(matches!(ex(&t, "link-out/*"), Err(GlobError::Outside(_))));
        // Reached through a glob, the outside directory is skipped, not listed.
        assert!(
            ex(&t, "*/*.rs")
                .unwrap()
                .iter()
                .all(|m| !m.contains("secret"))
        );
    }
}
