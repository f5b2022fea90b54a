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
use super::formats::{
    basic_credentials, credential_line, curl_user_password, encoded_private_key_verdict,
    password_hash, pgpass_password, prefixed_token, sas_signature_verdict, typed_password,
};

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

/// The rule of `user:password` lines, which fires only in a file named like
/// credentials.
pub(super) const CREDENTIAL_LINE: &str = "credential-line";

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
        name: "service-token",
        severity: Critical,
        summary: "tokens with a prefix their service documents: npm, PyPI, Shopify, DigitalOcean, SendGrid, HashiCorp Vault, Databricks, Doppler, Grafana, Hugging Face, Linear, Postman, Pulumi, Prefect, RubyGems, Sentry, Perplexity, PlanetScale, age, Heroku, Fly.io, Notion, Square, Atlassian, 1Password, Google OAuth client secrets, Slack app tokens, Stripe test keys and webhook signing secrets (whsec_), Mailgun API keys (key-), and Azure storage account keys",
        // Prefixes, alphabets and lengths as the services document them.
        // Only formats with a literal prefix share this one pattern: the
        // regex engine finds their prefixes together in one fast pass, and
        // a format without one makes the whole pass slow (measured).
        pattern: concat!(
            r"(?-u:\b)(?:npm_[A-Za-z0-9]{36}",
            r"|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
            r"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
            r"|do[opr]_v1_[a-f0-9]{64}",
            r"|SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{40,46}",
            r"|hv[sb]\.[A-Za-z0-9_-]{90,300}",
            r"|dapi[a-f0-9]{32}(?:-[0-9])?",
            r"|dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}",
            r"|glc_[A-Za-z0-9+/]{32,400}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
            r"|hf_[A-Za-z]{34}|api_org_[A-Za-z]{34}",
            r"|lin_api_[A-Za-z0-9]{40}",
            r"|PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
            r"|pul-[a-f0-9]{40}",
            r"|pnu_[A-Za-z0-9]{36}",
            r"|rubygems_[a-f0-9]{48}",
            r"|sntry[us]_[A-Za-z0-9+/=_]{64,}",
            r"|pplx-[A-Za-z0-9]{48}",
            r"|pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}",
            r"|AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
            r"|HRKU-AA[A-Za-z0-9_-]{58}",
            r"|fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}",
            r"|ntn_[0-9]{11}[A-Za-z0-9]{35}",
            r"|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}",
            r"|ATATT3[A-Za-z0-9_=-]{100,}",
            r"|ops_eyJ[A-Za-z0-9+/]{250,}",
            r"|GOCSPX-[A-Za-z0-9_-]{28}",
            r"|xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]+",
            r"|[sr]k_(?:test|prod)_[A-Za-z0-9]{20,247}",
            r"|whsec_[A-Za-z0-9+/=]{24,}",
            r"|key-[0-9a-f]{32}",
            r")(?-u:\b)",
            r"|(?:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/]{43,88}={0,2})",
        ),
        lowercase: false,
        accept: prefixed_token,
    },
    Rule {
        name: "telegram-bot-token",
        severity: Critical,
        summary: "Telegram bot tokens (a bot id, `:A`, then 34 characters)",
        pattern: r"(?-u:\b)[0-9]{8,10}:A[A-Za-z0-9_-]{34}(?-u:\b)",
        lowercase: false,
        accept: prefixed_token,
    },
    Rule {
        name: "azure-client-secret",
        severity: Critical,
        summary: "Azure AD (Entra ID) client secrets (`Q~` after four characters)",
        pattern: r"(?-u:\b)[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?-u:\b)",
        lowercase: false,
        accept: prefixed_token,
    },
    Rule {
        name: "encoded-private-key",
        severity: Critical,
        summary: "private keys wrapped in base64 (a Kubernetes Secret's tls.key or ssh-privatekey, a *.key value): base64 that decodes to a BEGIN ... PRIVATE KEY block",
        // Base64 of `-----BEGIN` always starts so; the value may be wrapped
        // in lines: `\n` escapes in one string, or real lines, each of which
        // must be base64 to its end (so the next line of `grep -rn` output,
        // `config/app.yml:2:...`, is not taken for the key's).
        pattern: r"(?m)LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}(?:(?:\\n[A-Za-z0-9+/]{4,}={0,2})+|(?:\r?\n[ \t]*[A-Za-z0-9+/]{4,}={0,2}[ \t\r]*$)*)",
        lowercase: false,
        accept: encoded_private_key_verdict,
    },
    Rule {
        name: "azure-sas-signature",
        severity: Critical,
        summary: "the sig= of an Azure shared access signature (a blob or queue URL, a connection string's SharedAccessSignature), which grants access by itself",
        pattern: r"[?&;]sig=(?P<s>(?:[A-Za-z0-9+/]|%2[BbFf]){30,}(?:=|%3[Dd]){0,2})",
        lowercase: false,
        accept: sas_signature_verdict,
    },
    Rule {
        name: "discord-webhook",
        severity: Critical,
        summary: "Discord webhook tokens (the part after discord.com/api/webhooks/<id>/)",
        pattern: r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/(?P<s>[A-Za-z0-9_-]{60,68})",
        lowercase: false,
        accept: |s, _| Verdict::key_body(s),
    },
    Rule {
        name: "password-hash",
        severity: Concern,
        summary: "password hashes after a user name and a colon, as .htpasswd and /etc/shadow keep them ($apr1$, bcrypt $2y$, crypt $1$/$5$/$6$, yescrypt $y$, {SHA}, {SSHA})",
        // Found from the colon on, which has a literal to look for (from the
        // user name it ran at a fifth of the speed); the check wants a user
        // name before it.
        pattern: r":(?P<s>\$(?:apr1|2[abxy]|[156]|y|gy|7)\$[A-Za-z0-9./$]{8,}|\{SSHA\}[A-Za-z0-9+/]{20,}={0,2}|\{SHA\}[A-Za-z0-9+/]{27}=)",
        lowercase: false,
        accept: password_hash,
    },
    Rule {
        name: "cookie-file",
        severity: Concern,
        summary: "cookie values in cookie-jar files (Netscape format: domain, flags, path, secure, expiry, name, value, tab-separated), such as session ids",
        pattern: r"(?m)(?:^|:)(?:#HttpOnly_)?\.?[A-Za-z0-9.-]+\t(?:TRUE|FALSE)\t[^\t\n]*\t(?:TRUE|FALSE)\t[0-9]+\t[^\t\n]+\t(?P<s>[^\t\r\n]{8,})",
        lowercase: false,
        accept: typed_password,
    },
    Rule {
        name: "gcp-private-key-id",
        severity: Concern,
        summary: "the private_key_id of a Google Cloud service-account key (40 hex digits)",
        pattern: r#"private_key_id\\?["']?[ \t]*[:=][ \t]*\\?["']?(?P<s>[0-9a-f]{40})(?-u:\b)"#,
        lowercase: false,
        accept: |s, _| Verdict::key_body(s),
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
        name: "basic-auth",
        severity: Concern,
        summary: "base64 user:password after `Authorization: Basic`, and stored as Docker's \"auth\" or npm's _auth",
        pattern: r#"(?:authorization\\?["']?[ \t]*[:=,][ \t]*\\?["']?[ \t]*basic[ \t]+|(?P<stored>"auth"[ \t]*:[ \t]*"|(?-u:\b)_auth[ \t]*=[ \t]*))(?P<s>[a-z0-9+/]{8,}={0,2})"#,
        lowercase: true,
        accept: basic_credentials,
    },
    Rule {
        name: "netrc-password",
        severity: Concern,
        summary: ".netrc passwords (`machine HOST login USER password PASS`, on one line or several)",
        pattern: r"(?-u:\b)(?:machine\s+[^\s]+|default)(?:\s+(?:login|account|port)\s+[^\s]+)+\s+password\s+(?P<s>[^\s]+)",
        lowercase: true,
        accept: typed_password,
    },
    Rule {
        name: "pgpass-password",
        severity: Concern,
        summary: ".pgpass lines (`host:port:database:user:password`); the password is redacted",
        // Found from the port on, which has a literal to look for (a
        // pattern that starts at the host is ten times slower); the check
        // then wants the host alone before it on the line, or after the
        // `path:` or `path:N:` that `grep` adds. The password ends the line
        // (a `:` in it is escaped as `\:`).
        pattern: r"(?m):(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:(?P<s>(?:[^:\s\\]|\\[^\s])+)[ \t\r]*$",
        lowercase: false,
        accept: pgpass_password,
    },
    Rule {
        name: "curl-user",
        severity: Concern,
        summary: "passwords in `curl -u user:password` and `--user user:password`",
        pattern: r#"(?-u:\b)curl(?-u:\b)(?:[^\n]|\\\n)*?[ \t](?:-u[ \t]*|--user(?:[ \t]+|=))["']?(?P<user>[^\s:"']*):(?P<s>[^\s"']+)"#,
        lowercase: false,
        accept: curl_user_password,
    },
    Rule {
        name: "mysql-password",
        severity: Concern,
        summary: "passwords glued to `-p` on MySQL and MariaDB command lines (`mysql -pPASS`)",
        pattern: r#"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlpump|mysqlsh|mariadb|mariadb-dump|mariadb-admin)(?-u:\b)(?:[^\n]|\\\n)*?[ \t]-p(?P<s>"[^"\n]+"|'[^'\n]+'|[^\s"'`;|&<>()]+)"#,
        lowercase: false,
        accept: typed_password,
    },
    Rule {
        name: "xml-secret",
        severity: Concern,
        summary: "values of XML elements named password, secret, token, apikey, accesskey or privatekey (Maven's settings.xml), and NuGet's <add key=\"Password\" value=…>",
        pattern: r#"(?:<(?:password|passwd|passphrase|secret|token|apikey|api-key|api_key|accesskey|access-key|secretkey|secret-key|clientsecret|client-secret|privatekey|private-key)>|<add[ \t]+key="(?:cleartext)?password"[ \t]+value=")(?P<s>[^<"\n]{1,256})(?:</|")"#,
        lowercase: true,
        accept: typed_password,
    },
    Rule {
        name: "generic-secret",
        severity: Concern,
        summary: "literals of 8 or more characters (words and passphrases too) assigned to names holding password, passwd, passphrase, pass, pwd, secret, token, api_key, access_key or private_key; not references, templates, types or code",
        pattern: r#"(?P<word>password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)(?P<suffix>[A-Za-z0-9_.-]*)\\?["']?(?P<sep>[ \t]*(?::=|=>|=|:)[ \t]*)(?P<s>\\"[^"\\\n]+\\"|"[^"\n]+"|'[^'\n]+'|`[^`\n]+`|[^\s"'`,;&\\]+(?:&[^\s"'`,;&\\=]+)*)"#,
        lowercase: true,
        accept: generic_assignment,
    },
    Rule {
        name: CREDENTIAL_LINE,
        severity: Concern,
        summary: "user:password lines in files named like credentials (credentials.txt, passwords, logins.csv, .secrets): the password is redacted",
        // The whole line: it counts only in a file's own text (a command's
        // output has no file name to go by).
        // (Unbounded repetitions: `{1,64}` and `{4,128}` made this the
        // slowest pattern to compile, on the first request's path.)
        pattern: r"(?m)^[ \t]*(?P<user>[A-Za-z0-9._@+-]+):(?P<s>[^\s:]{4,})[ \t\r]*$",
        lowercase: false,
        accept: credential_line,
    },
];

/// Documented prefixes of key formats, eight bytes or longer: they are
/// public (every key of the format starts so, and code that recognises the
/// format spells them out), so no window that lies wholly in one is
/// remembered as a piece of a secret.
const PUBLIC_PREFIXES: &[&str] = &[
    "sk_live_",
    "rk_live_",
    "sk_test_",
    "rk_test_",
    "sk_prod_",
    "rk_prod_",
    "whsec_",
    "github_pat_",
    "sk-ant-api03-",
    "sk-ant-admin01-",
    "sk-proj-",
    "sk-svcacct-",
    "sk-admin-",
    "pypi-AgEIcHlwaS5vcmc",
    "rubygems_",
    "lin_api_",
    "api_org_",
    "pscale_tkn_",
    "pscale_oauth_",
    "pscale_pw_",
    "AGE-SECRET-KEY-1",
    "AccountKey=",
    "SharedAccessKey=",
    "LS0tLS1CRUdJTi",
];

/// How many leading bytes of `secret` are public: a documented prefix, or
/// a JSON Web Token's header (its first segment, which names the algorithm
/// and is the same in every token an issuer signs).
pub(super) fn public_prefix_len(secret: &str) -> usize {
    if secret.starts_with("eyJ") && secret.matches('.').count() == 2 {
        return secret.find('.').unwrap_or(0);
    }
    PUBLIC_PREFIXES
        .iter()
        .filter(|prefix| secret.starts_with(*prefix))
        .map(|prefix| prefix.len())
        .max()
        .unwrap_or(0)
}

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
pub(super) fn base64url_decode(s: &str) -> Vec<u8> {
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
