//! The generic rule's check: is `name = value` a literal assigned to a
//! secret's name?
//!
//! - The name must say that its value is a secret (`DB_PASSWORD`, `apiKey`,
//!   `client_secret`, `_authToken`): not describe one (`token_url`,
//!   `password_file`, `secret_name`), nor merely hold the letters
//!   (`bypass`, `tokenizer`, `passes`), nor be a path in code
//!   (`Error::Token => …`, a match arm).
//! - The value must be a literal of 8 or more characters. Words and
//!   passphrases count: a password made of words is still a password.
//! - What is clearly not a value is left alone: a template or variable
//!   reference (`${X}`, `{{x}}`, `%(x)s`, `<password>`, `$X`), a call or an
//!   expression (`input()`, `os.environ[…]`, `self.token`), and in code a
//!   type or a variable (`token: TokenStream,`, `let t = next_token;`).
//!
//! Quoted values are literals. Unquoted ones are literals in configuration
//! (`.env`, INI, YAML, command lines) and references in code, and the line
//! tells which: `NAME=value` with no spaces is an environment or command-line
//! setting, and an identifier followed by more code, or spelled like a type
//! or a variable, is a reference.
//!
//! Whether a redacted value is flagged `concern` or `info` (an example,
//! a placeholder, a word) is [`password_looks_real`]'s answer.

use super::check::{Found, Verdict};
use super::entropy::{is_template, looks_random, password_looks_real, percent_decode, wordiness};

/// Characters a literal needs before it is redacted: shorter values are
/// rarely credentials and often flags, units or words.
pub(crate) const MIN_LITERAL_CHARS: usize = 8;

/// Name parts that say the value describes a secret rather than being one:
/// `token_url`, `password_file`, `secret_name`, `token_type`, `secret_hash`,
/// `token_limit`.
const DESCRIPTIVE_SUFFIXES: &[&str] = &[
    "url", "uri", "endpoint", "file", "path", "dir", "name", "type", "kind", "len", "length",
    "size", "count", "field", "env", "var", "prefix", "header", "pattern", "regex", "format",
    "ttl", "expiry", "expires", "timeout", "label", "hint", "policy", "provider", "store",
    "source", "version", "mode", "id", "hash", "digest", "checksum", "sha", "sha1", "sha256",
    "md5", "limit", "max", "min", "budget", "pos", "start", "end", "offset", "index", "idx",
    "span", "range",
];

/// Unquoted words that are language values or type names, not literals
/// (alone, or listed as choices: `true/false`).
const KEYWORDS: &[&str] = &[
    "true",
    "false",
    "yes",
    "no",
    "on",
    "off",
    "null",
    "none",
    "nil",
    "undefined",
    "required",
    "optional",
    "nullable",
    "readonly",
    "disabled",
    "enabled",
    "private",
    "protected",
    "internal",
    "string",
    "boolean",
    "integer",
];

/// Words that start a declaration in code (`let x = y`, `const x = y`).
const DECLARATIONS: &[&str] = &[
    "let", "const", "var", "val", "static", "auto", "my", "local", "def", "final", "pub",
];

/// Words that make an unquoted identifier the name of a secret rather than
/// one (`db_password`, `apiKey`).
const SECRET_WORDS: &[&str] = &[
    "pass",
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "key",
    "apikey",
];

/// Words of a secret's name that are too short to be told from the middle
/// of another word (`bypass`, `compass`): they must start a word of the name.
const SHORT_WORDS: &[&str] = &["pass", "pwd"];

/// The generic rule's check (see the module doc).
pub(crate) fn generic_assignment(value: &str, found: &Found<'_>) -> Verdict {
    if !name_is_a_secrets(found) || !is_literal(value, found) {
        return Verdict::Pass;
    }
    Verdict::real_if(password_looks_real(&percent_decode(value)))
}

/// Whether the assigned name says its value is a secret.
fn name_is_a_secrets(found: &Found<'_>) -> bool {
    let text = found.text;
    let word_at = found.range("word").start;
    let word = found.group("word");
    let suffix = found.group("suffix");
    // The identifier the word is part of, up to the word.
    let ident_start = text[..word_at]
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    // A path in code (`Error::Token => …`), or an enum variant's match arm
    // (`ExporterSecret => "EXPORTER_SECRET"`): a name, not an assignment.
    if text[..ident_start].ends_with("::") {
        return false;
    }
    let ident = &text[ident_start..found.range("suffix").end];
    let pascal = ident.starts_with(|c: char| c.is_ascii_uppercase())
        && ident.contains(|c: char| c.is_ascii_lowercase());
    if pascal && found.group("sep").contains("=>") {
        return false;
    }
    let before = &text[ident_start..word_at];
    if SHORT_WORDS.contains(&word.to_ascii_lowercase().as_str())
        && let Some(prev) = before.chars().next_back()
    {
        let camel = prev.is_ascii_lowercase() && word.starts_with(|c: char| c.is_ascii_uppercase());
        if prev.is_ascii_alphabetic() && !camel {
            return false;
        }
    }
    // The word must end a word of the name: `tokenizer`, `passes` and
    // `passenger` go on; `token_url`, `tokenUrl`, `token2`, `secretkey` do not.
    let word_ends_lower = word.ends_with(|c: char| c.is_ascii_lowercase());
    let ends_a_word = match suffix.chars().next() {
        None => true,
        Some('_' | '-' | '.') => true,
        Some(c) if c.is_ascii_digit() => true,
        Some(c) if c.is_ascii_uppercase() && word_ends_lower => true,
        Some(_) => suffix.to_ascii_lowercase().starts_with("key"),
    };
    ends_a_word && !suffix_is_descriptive(suffix)
}

fn suffix_is_descriptive(suffix: &str) -> bool {
    suffix
        .split(|c: char| !c.is_ascii_alphanumeric())
        .flat_map(split_camel)
        .any(|word| DESCRIPTIVE_SUFFIXES.contains(&word.to_ascii_lowercase().as_str()))
}

/// `tokenUrl` → `token`, `Url`; `KEY_NAME` stays whole (split elsewhere).
fn split_camel(s: &str) -> impl Iterator<Item = &str> {
    let bytes = s.as_bytes();
    let mut cuts = vec![0];
    for i in 1..bytes.len() {
        if bytes[i].is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase() {
            cuts.push(i);
        }
    }
    cuts.push(bytes.len());
    cuts.windows(2)
        .map(|w| &s[w[0]..w[1]])
        .collect::<Vec<_>>()
        .into_iter()
}

/// Whether the assigned `value` (quotes trimmed) is a literal worth
/// redacting rather than a reference, a template or code.
fn is_literal(value: &str, found: &Found<'_>) -> bool {
    if value.chars().count() < MIN_LITERAL_CHARS
        || is_template(value)
        || value.contains("[REDACTED")
        || value.contains("://")
        || value.contains(|c: char| c.is_control())
    {
        // `[REDACTED` keeps redaction idempotent; a URL names where a
        // secret is (a password in it has its own rule).
        return false;
    }
    let raw = found.group("s");
    if raw.starts_with(['"', '\'', '`', '\\']) {
        return true;
    }
    let sep = found.group("sep");
    // `key:value` with no space is a URL's user:password, a Rust path or a
    // CSS property, not a YAML mapping (which needs the space).
    if sep == ":" || reads_as_code(value) {
        return false;
    }
    if sep == "=" {
        // `NAME=value`, `--password=value`: a setting, literal unless it is
        // a path (`PWD=/home/me`) or a comparison (`token==x`).
        return !(value.starts_with(['/', '='])
            || value.starts_with("./")
            || value.starts_with("~/"));
    }
    if is_number_literal(value) {
        return false;
    }
    let keywords = value
        .split(['/', '|'])
        .all(|word| KEYWORDS.contains(&word.to_ascii_lowercase().as_str()));
    if starts_like_code(value) || keywords {
        return false;
    }
    !(is_identifier(value) && names_something(value, found))
}

/// Whether an unquoted identifier `value` is a reference: followed by more
/// code on its line, spelled like a type (`TokenStream`) or a camelCase
/// variable, a snake_case variable in an `=` assignment
/// (`token = next_token`), or the name of another secret
/// (`from_secret: db_password`). A random-looking one never is: code does
/// not name things `Xk7pKkjAyHK0xhQm` (an HTTP header's value does).
fn names_something(value: &str, found: &Found<'_>) -> bool {
    if looks_random(value) && !is_constant_name(value) {
        return false;
    }
    let after = found.text[found.range("s").end..]
        .split('\n')
        .next()
        .unwrap_or("")
        .trim();
    let at_end = after.is_empty() || after.starts_with('#') || after.starts_with("//");
    // `let private_key = provider` (a method chain goes on below) declares
    // a variable in code; INI and YAML have no such words.
    let line_start = found.text[..found.range("word").start]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let declared = found.text[line_start..]
        .trim_start()
        .split_once(' ')
        .is_some_and(|(first, _)| DECLARATIONS.contains(&first));
    let bytes = value.as_bytes();
    let camel = bytes
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    // Type and variable names do not carry a year or a PIN
    // (`CopperFalcon1987` is a password in YAML, not a type).
    let long_number = value
        .split(|c: char| !c.is_ascii_digit())
        .any(|digits| digits.len() >= 4);
    let pascal =
        bytes[0].is_ascii_uppercase() && bytes.iter().any(u8::is_ascii_lowercase) && !long_number;
    let camel = camel && !long_number;
    let names_a_secret = value
        .split('_')
        .flat_map(split_camel)
        .any(|w| SECRET_WORDS.contains(&w.to_ascii_lowercase().as_str()));
    !at_end
        || declared
        || camel
        || pascal
        || names_a_secret
        || (value.contains('_') && found.group("sep").contains('='))
}

/// A number as Rust writes it with its type suffix: `131080u32`,
/// `1_000_000usize`, `0xFFu8` (Windows bindings' constants). Without the
/// suffix a number is left to the rule: `pin: 84736291` in YAML and
/// `private_key: 0x4c08…` are values.
fn is_number_literal(v: &str) -> bool {
    let Some(digits) = [
        "usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8",
        "f64", "f32",
    ]
    .iter()
    .find_map(|suffix| v.strip_suffix(suffix)) else {
        return false;
    };
    let (digits, hex) = match digits.strip_prefix("0x") {
        Some(rest) => (rest, true),
        None => (digits, false),
    };
    !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit() || hex)
        && digits.bytes().all(|b| {
            b == b'_'
                || if hex {
                    b.is_ascii_hexdigit()
                } else {
                    b.is_ascii_digit()
                }
        })
}

/// A constant's name: capitals and digits in two or more parts joined by
/// `_`, one of them a word (`D3D10_STENCIL_OP`, `TOKEN_ACCESS_MASK`). Its
/// digits can make it look random; it is still a name.
fn is_constant_name(v: &str) -> bool {
    let parts: Vec<&str> = v.split('_').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        })
        && parts.iter().any(|p| {
            p.len() >= 3 && p.bytes().all(|b| b.is_ascii_uppercase()) && wordiness(p) >= 0.5
        })
}

/// `[A-Za-z_$][A-Za-z0-9_$]*`.
fn is_identifier(v: &str) -> bool {
    v.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'$')
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
}

/// Operators, references, paths and comparisons: `== x`, `&str`, `*ptr`,
/// `::Variant`, `/etc/secret`, `./file`, `-1`.
fn starts_like_code(v: &str) -> bool {
    v.starts_with([
        '=', '>', '&', '*', '!', ':', '/', '.', '~', '-', '+', '|', '?', '@', '#', '(', '[',
    ])
}

/// An unquoted value in code: a call, an index, a generic type, a closure's
/// parameter list, a range, a path such as `super::Foundation::` (cut at a
/// space, as Windows bindings write their parameter types), or a dotted
/// path such as `os.environ` or `self.config.token`.
fn reads_as_code(v: &str) -> bool {
    if v.contains(['(', ')', '[', ']', '{', '}', '<', '>', '|'])
        || v.contains("..")
        || v.contains("::")
    {
        return true;
    }
    let is_ident = |p: &str| {
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !p.as_bytes()[0].is_ascii_digit()
    };
    let parts: Vec<&str> = v.split(['.']).flat_map(|p| p.split("::")).collect();
    parts.len() > 1 && parts.iter().all(|p| is_ident(p))
}
