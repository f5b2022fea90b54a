//! The rule table: every kind of secret luminos redacts, in one place.
//!
//! Key formats are public facts; the patterns and the checks that keep them
//! quiet on ordinary code are ours. Each rule is a regex plus an `accept`
//! check run on the candidate value. When a pattern has a capture group named
//! `s`, only that group is redacted (the key name, scheme or host around it
//! stays); otherwise the whole match is.
//!
//! Rules that must ignore case (key names such as `DB_Password`) are written
//! in lowercase and run over an ASCII-lowercased copy of the text
//! ([`Rule::lowercase`]): `regex` cannot use its SIMD literal search for a
//! case-insensitive alternation of words, and measured twelve times slower
//! with `(?i)`. Lowercasing ASCII keeps every byte offset, so the spans and
//! the values handed to `accept` still come from the original text.
//!
//! Word boundaries are ASCII (`(?-u:\b)`): a Unicode `\b` makes `regex`
//! leave its fast DFA for a slow engine on any text that is not pure ASCII.
//!
//! Order matters only for ties: when two rules claim exactly the same span,
//! the earlier one names it. So the specific formats come first and the
//! heuristic rules last, and `anthropic-api-key` precedes `openai-api-key`.

use regex::Captures;

use super::RuleSeverity;
use super::entropy::{
    has_placeholder_marker, is_template, looks_like_password, looks_random, percent_decode,
    plausible_key_body,
};

/// One kind of secret.
pub struct Rule {
    /// Short kebab-case name, shown as `[REDACTED:<name>]` and in flags.
    pub name: &'static str,
    /// Flag severity of a hit.
    pub severity: RuleSeverity,
    /// What the rule finds, for documentation.
    pub summary: &'static str,
    /// The pattern (Rust `regex` syntax).
    pub pattern: &'static str,
    /// Whether `pattern` is lowercase and runs over the lowercased text,
    /// which makes the rule case-insensitive.
    pub lowercase: bool,
    /// Second look at a match: `secret` is the span to redact (quotes
    /// trimmed, original case), `found` the match's groups.
    pub(crate) accept: fn(secret: &str, found: &Found<'_>) -> bool,
}

/// A match's groups, read from the original text whichever copy was searched.
pub(crate) struct Found<'t> {
    pub(crate) text: &'t str,
    pub(crate) caps: &'t Captures<'t>,
}

impl Found<'_> {
    /// Group `name` in the original text, or `""` if it did not take part.
    fn group(&self, name: &str) -> &str {
        self.caps.name(name).map_or("", |m| &self.text[m.range()])
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("name", &self.name)
            .field("severity", &self.severity)
            .finish_non_exhaustive()
    }
}

use RuleSeverity::{Concern, Critical};

/// Every rule, in tie-break order.
pub static RULES: &[Rule] = &[
    Rule {
        name: "private-key",
        severity: Critical,
        summary: "PEM/OpenSSH/PGP private key blocks, BEGIN through END (or to the end of a cut-off block)",
        // Either a complete block, or, when the END line is missing (a file
        // read cut short), the run of base64 lines after BEGIN.
        pattern: r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE[ ]KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\s\x22'\\,:.-]*?-----END[ A-Z0-9]{0,40}PRIVATE[ ]KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)",
        lowercase: false,
        accept: private_key_has_body,
    },
    Rule {
        name: "aws-access-key-id",
        severity: Critical,
        summary: "AWS access key ids (AKIA…, ASIA…, ABIA…, ACCA… + 16)",
        pattern: r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)",
        lowercase: false,
        accept: aws_key_id_plausible,
    },
    Rule {
        name: "aws-secret-access-key",
        severity: Critical,
        summary: "AWS secret access keys assigned to an aws_secret_access_key-like name",
        pattern: r#"(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)\\?["']?[ \t]*(?::=|=>|=|:)[ \t]*\\?["']?(?P<s>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        lowercase: true,
        accept: |s, _| plausible_key_body(s),
    },
    Rule {
        name: "github-token",
        severity: Critical,
        summary: "GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
        pattern: r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{60,251})(?-u:\b)",
        lowercase: false,
        accept: |s, _| plausible_key_body(after_prefix(s, "_")),
    },
    Rule {
        name: "gitlab-token",
        severity: Critical,
        summary: "GitLab tokens (glpat-, and the gldt-, glrt-, glptt-, glft-, glsoat- families)",
        pattern: r"(?-u:\b)gl(?:pat|dt|rt|ptt|ft|soat|agent|imt|cbt)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9]+)*",
        lowercase: false,
        accept: |s, _| plausible_key_body(after_prefix(s, "-")),
    },
    Rule {
        name: "slack-token",
        severity: Critical,
        summary: "Slack tokens (xoxa-, xoxb-, xoxp-, xoxr-, xoxs-)",
        pattern: r"(?-u:\b)xox[abprs]-(?:[0-9A-Za-z]+-){1,5}[0-9A-Za-z]{8,}",
        lowercase: false,
        accept: slack_token_plausible,
    },
    Rule {
        name: "slack-webhook",
        severity: Critical,
        summary: "Slack incoming webhook URLs (the path after hooks.slack.com/services/)",
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+-]{20,})",
        lowercase: false,
        accept: |s, _| plausible_key_body(s),
    },
    Rule {
        name: "stripe-live-key",
        severity: Critical,
        summary: "Stripe live secret and restricted keys (sk_live_, rk_live_); publishable pk_live_ keys are public by design",
        pattern: r"(?-u:\b)[sr]k_live_[A-Za-z0-9]{20,247}(?-u:\b)",
        lowercase: false,
        accept: |s, _| plausible_key_body(&s[8..]),
    },
    Rule {
        name: "google-api-key",
        severity: Critical,
        summary: "Google API keys (AIza + 35)",
        pattern: r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        lowercase: false,
        accept: |s, _| plausible_key_body(&s[4..]),
    },
    Rule {
        name: "anthropic-api-key",
        severity: Critical,
        summary: "Anthropic API keys (sk-ant-…)",
        pattern: r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{32,}",
        lowercase: false,
        accept: |s, _| plausible_key_body(&s[7..]),
    },
    Rule {
        name: "openai-api-key",
        severity: Critical,
        summary: "OpenAI API keys (sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…)",
        pattern: r"(?-u:\b)sk-[A-Za-z0-9_-]{32,}",
        lowercase: false,
        accept: openai_key_plausible,
    },
    Rule {
        name: "jwt",
        severity: Critical,
        summary: "JSON Web Tokens (three base64url segments, header eyJ…)",
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        lowercase: false,
        accept: |_, _| true,
    },
    Rule {
        name: "url-credentials",
        severity: Concern,
        summary: "passwords in URLs (scheme://user:password@host); scheme, user and host are kept",
        pattern: r"://(?P<user>[^\s:/?#@\x22'<>\[\]{}\\]+):(?P<s>[^\s/?#@\x22'<>\[\]{}\\]+)@[A-Za-z0-9\[]",
        lowercase: false,
        accept: url_password_plausible,
    },
    Rule {
        name: "bearer-token",
        severity: Critical,
        summary: "random-looking values after `Authorization: Bearer`",
        pattern: r"(?-u:\b)bearer[ \t]+(?P<s>[A-Za-z0-9._~+/-]{20,}=*)",
        lowercase: true,
        accept: |s, _| looks_random(s),
    },
    Rule {
        name: "generic-secret",
        severity: Concern,
        summary: "long or random-looking values assigned to names holding password, passwd, passphrase, pass, pwd, secret, token, api_key, access_key or private_key",
        pattern: r#"(?:password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)(?P<suffix>[A-Za-z0-9_.-]*)\\?["']?(?P<sep>[ \t]*(?::=|=>|=|:)[ \t]*)(?P<s>\\"[^"\\\n]+\\"|"[^"\n]+"|'[^'\n]+'|`[^`\n]+`|[^\s"'`,;&\\]+)"#,
        lowercase: true,
        accept: generic_value_is_secret,
    },
];

/// The part of `s` after the first `sep`, or all of it.
fn after_prefix<'a>(s: &'a str, sep: &str) -> &'a str {
    s.split_once(sep).map_or(s, |(_, rest)| rest)
}

/// A key block must carry key material, not just the BEGIN line that
/// PEM-parsing code and documentation quote on their own.
fn private_key_has_body(s: &str, _: &Found<'_>) -> bool {
    // Skip "-----BEGIN", then the marker's closing dashes.
    let after_begin = s[10..].find("-----").map_or("", |i| &s[10 + i + 5..]);
    let body = after_begin.split("-----END").next().unwrap_or("");
    let base64_chars = body
        .bytes()
        .filter(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
        .count();
    base64_chars >= 64
}

/// AWS's documentation key id (`…EXAMPLE`) and similar samples are not keys.
fn aws_key_id_plausible(s: &str, _: &Found<'_>) -> bool {
    !has_placeholder_marker(s) && super::entropy::shannon_entropy(&s[4..]) >= 2.5
}

/// Real Slack tokens carry long numeric workspace and user ids.
fn slack_token_plausible(s: &str, _: &Found<'_>) -> bool {
    let digits = s.bytes().filter(u8::is_ascii_digit).count();
    digits >= 6 && !has_placeholder_marker(&s[5..])
}

/// OpenAI keys are long random base62 (with `-`/`_` in the newer formats),
/// so they mix cases and digits; kebab-case identifiers after `sk-` do not.
/// `sk-ant-` is Anthropic's and never OpenAI's.
fn openai_key_plausible(s: &str, _: &Found<'_>) -> bool {
    if s.starts_with("sk-ant-") {
        return false;
    }
    let body = &s[3..];
    let has = |f: fn(&u8) -> bool| body.bytes().any(|b| f(&b));
    has(u8::is_ascii_lowercase)
        && has(u8::is_ascii_uppercase)
        && has(u8::is_ascii_digit)
        && plausible_key_body(body)
}

/// Passwords that documentation and URL test suites write (`user:pass@`,
/// `:${DB_PASSWORD}@`, `:<password>@`, `Aladdin:opensesame@`, `guest:guest@`)
/// are not secrets; a password someone chose is.
fn url_password_plausible(s: &str, found: &Found<'_>) -> bool {
    let user = found.group("user");
    let password = percent_decode(s);
    s != user && !is_template(s) && looks_like_password(&password)
}

/// Name parts that say the value describes a secret rather than being one:
/// `token_url`, `password_file`, `secret_name`, `token_type`, `secret_hash`.
/// (`max_tokens` needs none: its value is a number.)
const DESCRIPTIVE_SUFFIXES: &[&str] = &[
    "url", "uri", "endpoint", "file", "path", "dir", "name", "type", "kind", "len", "length",
    "size", "count", "field", "env", "var", "prefix", "header", "pattern", "regex", "format",
    "ttl", "expiry", "expires", "timeout", "label", "hint", "policy", "provider", "store",
    "source", "version", "mode", "id", "hash", "digest", "checksum", "sha", "sha1", "sha256",
    "md5",
];

/// The generic rule's check: the key's name must not be descriptive and the
/// value must read as a random credential, not as code, a reference or a
/// placeholder. See the unit tests for the shapes it rejects.
fn generic_value_is_secret(value: &str, found: &Found<'_>) -> bool {
    let suffix = found.group("suffix");
    if suffix_is_descriptive(suffix) {
        return false;
    }
    let raw = found.group("s");
    let quoted = raw.starts_with(['"', '\'', '`', '\\']);
    // `key:value` with no space is a URL's user:password, a Rust path or a
    // CSS property, not a YAML mapping (which needs the space).
    let sep = found.group("sep");
    if !quoted && sep == ":" {
        return false;
    }
    if is_template(value) || value.contains("://") {
        return false;
    }
    // Prose, markup and code in a string are not credentials: `"a b"`,
    // `"<b>{}</b>"`, and neither is anything holding control characters.
    let decoded = percent_decode(value);
    if decoded.contains(|c: char| c.is_whitespace() || c.is_control() || c == '<' || c == '>') {
        return false;
    }
    if starts_like_code(value) || (!quoted && reads_as_code(value)) {
        return false;
    }
    looks_random(&decoded)
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

/// Operators, references, paths and comparisons: `== x`, `&str`, `*ptr`,
/// `::Variant`, `/etc/secret`, `./file`, `-1`.
fn starts_like_code(v: &str) -> bool {
    v.starts_with([
        '=', '>', '&', '*', '!', ':', '/', '.', '~', '-', '+', '|', '?', '@', '#', '(', '[',
    ])
}

/// An unquoted value in code: a call, an index, a generic type, or a dotted
/// path such as `os.environ` or `self.config.token`.
fn reads_as_code(v: &str) -> bool {
    if v.contains(['(', ')', '[', ']', '{', '}', '<', '>']) {
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
