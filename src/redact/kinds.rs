//! The rule table: every kind of secret luminos redacts, in one place.
//!
//! Key formats are public facts; the patterns and the checks that keep them
//! quiet on ordinary code are ours. Each rule is a regex plus an `accept`
//! check run on the candidate value, which returns a [`Verdict`]: not this
//! kind of secret at all, a secret, or a value with the secret's shape that
//! looks like a documentation example or a placeholder. Both of the last two
//! are redacted; an example is flagged `info` instead of the rule's severity
//! (a masked example costs the model a few characters, a leaked key costs
//! the user the key). When a pattern has a capture group named `s`, only
//! that group is redacted (the key name, scheme or host around it stays);
//! otherwise the whole match is.
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

use super::RuleSeverity;
use super::assign::generic_assignment;
use super::check::{Found, Verdict};
use super::entropy::{
    is_template, password_looks_real, percent_decode, shannon_entropy, wordiness,
};
use super::examples::{has_placeholder_marker, has_simple_run, key_body_is_example};

// The key-body check is this table's, so it sits here, beside its rules.
impl Verdict {
    /// A key body after its format's prefix: an example when it reads as
    /// one ([`key_body_is_example`]), else a secret.
    fn key_body(body: &str) -> Verdict {
        Verdict::real_if(!key_body_is_example(body))
    }
}

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
    pub(crate) accept: fn(secret: &str, found: &Found<'_>) -> Verdict,
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
        accept: private_key_verdict,
    },
    Rule {
        name: "aws-access-key-id",
        severity: Critical,
        summary: "AWS access key ids (AKIA…, ASIA…, ABIA…, ACCA… + 16)",
        pattern: r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)",
        lowercase: false,
        accept: aws_key_id_verdict,
    },
    Rule {
        name: "aws-secret-access-key",
        severity: Critical,
        summary: "AWS secret access keys assigned to an aws_secret_access_key-like name",
        pattern: r#"(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)\\?["']?[ \t]*(?::=|=>|=|:)[ \t]*\\?["']?(?P<s>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        lowercase: true,
        accept: |s, _| Verdict::key_body(s),
    },
    Rule {
        name: "github-token",
        severity: Critical,
        summary: "GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
        pattern: r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{60,251})(?-u:\b)",
        lowercase: false,
        accept: |s, _| Verdict::key_body(after_prefix(s, "_")),
    },
    Rule {
        name: "gitlab-token",
        severity: Critical,
        summary: "GitLab tokens (glpat-, and the gldt-, glrt-, glptt-, glft-, glsoat- families)",
        pattern: r"(?-u:\b)gl(?:pat|dt|rt|ptt|ft|soat|agent|imt|cbt)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9]+)*",
        lowercase: false,
        accept: |s, _| Verdict::key_body(after_prefix(s, "-")),
    },
    Rule {
        name: "slack-token",
        severity: Critical,
        summary: "Slack tokens (xoxa-, xoxb-, xoxp-, xoxr-, xoxs-)",
        pattern: r"(?-u:\b)xox[abprs]-(?:[0-9A-Za-z]+-){1,5}[0-9A-Za-z]{8,}",
        lowercase: false,
        accept: slack_token_verdict,
    },
    Rule {
        name: "slack-webhook",
        severity: Critical,
        summary: "Slack incoming webhook URLs (the path after hooks.slack.com/services/)",
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+-]{20,})",
        lowercase: false,
        accept: |s, _| Verdict::key_body(s),
    },
    Rule {
        name: "stripe-live-key",
        severity: Critical,
        summary: "Stripe live secret and restricted keys (sk_live_, rk_live_); publishable pk_live_ keys are public by design",
        pattern: r"(?-u:\b)[sr]k_live_[A-Za-z0-9]{20,247}(?-u:\b)",
        lowercase: false,
        accept: |s, _| Verdict::key_body(&s[8..]),
    },
    Rule {
        name: "google-api-key",
        severity: Critical,
        summary: "Google API keys (AIza + 35)",
        pattern: r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
        lowercase: false,
        accept: |s, _| Verdict::key_body(&s[4..]),
    },
    Rule {
        name: "anthropic-api-key",
        severity: Critical,
        summary: "Anthropic API keys (sk-ant-…)",
        pattern: r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{32,}",
        lowercase: false,
        accept: |s, _| Verdict::key_body(&s[7..]),
    },
    Rule {
        name: "openai-api-key",
        severity: Critical,
        summary: "OpenAI API keys (sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…)",
        pattern: r"(?-u:\b)sk-[A-Za-z0-9_-]{32,}",
        lowercase: false,
        accept: openai_key_verdict,
    },
    Rule {
        name: "jwt",
        severity: Critical,
        summary: "JSON Web Tokens (three base64url segments, header eyJ…)",
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        lowercase: false,
        accept: jwt_verdict,
    },
    Rule {
        name: "url-credentials",
        severity: Concern,
        summary: "passwords in URLs (scheme://user:password@host), unless a template; scheme, user and host are kept",
        pattern: r"://(?P<user>[^\s:/?#@\x22'<>\[\]{}\\]+):(?P<s>[^\s/?#@\x22'<>\[\]{}\\]+)@[A-Za-z0-9\[]",
        lowercase: false,
        accept: url_password_verdict,
    },
    Rule {
        name: "bearer-token",
        severity: Critical,
        summary: "values of 20 or more token characters after `Authorization: Bearer`",
        pattern: r"(?-u:\b)bearer[ \t]+(?P<s>[A-Za-z0-9._~+/-]{20,}=*)",
        lowercase: true,
        accept: |s, _| Verdict::real_if(password_looks_real(s)),
    },
    Rule {
        name: "generic-secret",
        severity: Concern,
        summary: "literals of 8 or more characters (words and passphrases too) assigned to names holding password, passwd, passphrase, pass, pwd, secret, token, api_key, access_key or private_key; not references, templates, types or code",
        pattern: r#"(?P<word>password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)(?P<suffix>[A-Za-z0-9_.-]*)\\?["']?(?P<sep>[ \t]*(?::=|=>|=|:)[ \t]*)(?P<s>\\"[^"\\\n]+\\"|"[^"\n]+"|'[^'\n]+'|`[^`\n]+`|[^\s"'`,;&\\]+)"#,
        lowercase: true,
        accept: generic_assignment,
    },
];

/// The part of `s` after the first `sep`, or all of it.
fn after_prefix<'a>(s: &'a str, sep: &str) -> &'a str {
    s.split_once(sep).map_or(s, |(_, rest)| rest)
}

/// A key block must carry key material, not just the BEGIN line that
/// PEM-parsing code and documentation quote on their own. Material that
/// spells a placeholder, or has too few distinct characters for encoded
/// key bytes (real bodies, zero runs of OpenSSH keys included, carry over
/// five bits a character), is an example.
fn private_key_verdict(s: &str, _: &Found<'_>) -> Verdict {
    // Skip "-----BEGIN", then the marker's closing dashes.
    let after_begin = s[10..].find("-----").map_or("", |i| &s[10 + i + 5..]);
    let body: String = after_begin
        .split("-----END")
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '+' || *c == '/')
        .collect();
    if body.len() < 64 {
        return Verdict::Pass;
    }
    Verdict::real_if(!has_placeholder_marker(&body) && shannon_entropy(&body) >= 4.5)
}

/// AWS's documentation key id (`…EXAMPLE`), simple sequences and ids of a
/// few repeated characters are examples. The entropy floor is lower than
/// [`key_body_is_example`]'s: sixteen random characters from a 32-letter
/// alphabet fall below 3 bits now and then.
fn aws_key_id_verdict(s: &str, _: &Found<'_>) -> Verdict {
    let body = &s[4..];
    Verdict::real_if(
        !has_placeholder_marker(s) && !has_simple_run(body, 6) && shannon_entropy(body) >= 2.5,
    )
}

/// Real Slack tokens carry long numeric workspace and user ids; a token
/// without them, or with a placeholder or a simple sequence, is an example.
fn slack_token_verdict(s: &str, _: &Found<'_>) -> Verdict {
    let body = &s[5..];
    let digits = body.bytes().filter(u8::is_ascii_digit).count();
    Verdict::real_if(digits >= 6 && !has_placeholder_marker(body) && !has_simple_run(body, 6))
}

/// OpenAI keys are long random base62 (with `-`/`_` in the newer formats),
/// so they mix cases and digits. A body that does not is an example
/// (`sk-xxxx…`) unless it is made of words: then it is a kebab-case
/// identifier (`sk-some-long-css-class-name`), not a key. `sk-ant-` is
/// Anthropic's and never OpenAI's.
fn openai_key_verdict(s: &str, _: &Found<'_>) -> Verdict {
    if s.starts_with("sk-ant-") {
        return Verdict::Pass;
    }
    let body = &s[3..];
    let has = |f: fn(&u8) -> bool| body.bytes().any(|b| f(&b));
    if has(u8::is_ascii_lowercase) && has(u8::is_ascii_uppercase) && has(u8::is_ascii_digit) {
        Verdict::key_body(body)
    } else if wordiness(body) >= 0.5 {
        Verdict::Pass
    } else {
        Verdict::Example
    }
}

/// A JWT whose payload names a placeholder (`John Doe`, `1234567890`,
/// `example`, `test`) is a documentation or test token.
fn jwt_verdict(s: &str, _: &Found<'_>) -> Verdict {
    let payload = s.split('.').nth(1).unwrap_or("");
    let claims = String::from_utf8_lossy(&base64url_decode(payload)).to_ascii_lowercase();
    let example = [
        "example",
        "john doe",
        "jane doe",
        "1234567890",
        "test",
        "sample",
        "dummy",
        "fake",
        "lorem",
        "foo",
        "acme",
    ]
    .iter()
    .any(|w| claims.contains(w));
    Verdict::real_if(!example)
}

/// Decode base64url (or base64) without padding; stops at the first byte
/// outside the alphabet. Enough to read a JWT's claims.
fn base64url_decode(s: &str) -> Vec<u8> {
    let value = |b: u8| -> Option<u32> {
        match b {
            b'A'..=b'Z' => Some(u32::from(b - b'A')),
            b'a'..=b'z' => Some(u32::from(b - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(b - b'0') + 52),
            b'-' | b'+' => Some(62),
            b'_' | b'/' => Some(63),
            _ => None,
        }
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for v in s.bytes().map_while(value) {
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// A password in a URL is redacted unless it is a template
/// (`:${DB_PASSWORD}@`). Passwords that documentation and URL test suites
/// write (`user:pass@`, `Aladdin:opensesame@`, `guest:guest@`, `a:b@`) are
/// examples; a password someone chose is a secret.
fn url_password_verdict(s: &str, found: &Found<'_>) -> Verdict {
    if is_template(s) {
        return Verdict::Pass;
    }
    let user = found.group("user");
    Verdict::real_if(s != user && password_looks_real(&percent_decode(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_decodes_jwt_segments() {
        assert_eq!(base64url_decode("eyJhIjoxfQ"), b"{\"a\":1}");
        assert_eq!(base64url_decode("_-8"), [0xff, 0xef]);
        assert_eq!(base64url_decode("QQ==rest"), b"A");
    }
}
