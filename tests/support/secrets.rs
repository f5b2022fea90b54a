//! Fake secrets for tests: at least one sample of every redaction rule, in
//! the shapes they take in real files, both as a real credential would look
//! ([`fixture`]) and as a documentation example or placeholder would
//! ([`examples`]). Both kinds must be redacted; examples are flagged `info`.
//!
//! Values are generated at run time from fixed seeds, so the repository holds
//! nothing a secret scanner would mistake for a live key. Shared by the
//! redactor's recall measurement (`all/redaction.rs`) and the end-to-end
//! privacy tests.

pub use super::fake::{B62, B64, B64URL, DIGITS, HEX, UPPER_NUM, base64url, fake};

/// A classic GitHub personal access token (`ghp_` and 36 base62).
pub fn github_token(seed: u64) -> String {
    format!("ghp_{}", fake(B62, 36, seed))
}

/// One fixture sample: the rule that must fire, the text, and the parts of
/// the text that must not survive.
pub struct Sample {
    pub rule: &'static str,
    pub text: String,
    pub secrets: Vec<String>,
    /// Example-looking: its flag is `info`, not the rule's severity.
    pub example: bool,
}

impl Sample {
    /// The severity its flag must have: `info` for an example, else the
    /// rule's own.
    pub fn severity(&self) -> &'static str {
        if self.example {
            return "info";
        }
        luminos::redact::RULES
            .iter()
            .find(|rule| rule.name == self.rule)
            .expect("a known rule")
            .severity
            .as_str()
    }
}

fn sample(rule: &'static str, text: String, secret: &str) -> Sample {
    Sample {
        rule,
        text,
        secrets: vec![secret.to_owned()],
        example: false,
    }
}

fn example(rule: &'static str, text: String, secret: &str) -> Sample {
    Sample {
        example: true,
        ..sample(rule, text, secret)
    }
}

/// Words people build passwords and passphrases from.
const WORDS: &[&str] = &[
    "velvet", "orchard", "lantern", "harbor", "thistle", "meadow", "copper", "falcon", "juniper",
    "quarry", "ember", "walnut", "glacier", "saffron", "tundra", "marble",
];

/// `n` words picked by `seed`, each capitalised when `capitals` is set.
fn words(n: usize, seed: u64, capitals: bool) -> Vec<String> {
    let alphabet: String = (0..WORDS.len())
        .map(|i| char::from(b'a' + i as u8))
        .collect();
    fake(&alphabet, n, seed)
        .bytes()
        .map(|b| {
            let word = WORDS[usize::from(b - b'a')];
            if capitals {
                format!("{}{}", word[..1].to_uppercase(), &word[1..])
            } else {
                word.to_string()
            }
        })
        .collect()
}

/// At least one sample of every rule, in the shapes they take in real files.
pub fn fixture() -> Vec<Sample> {
    let mut s = Vec::new();
    let key_marker = |edge: &str, kind: &str| format!("-----{edge} {kind}PRIVATE {}-----", "KEY");
    for (i, kind) in ["RSA ", "OPENSSH ", "EC ", ""].iter().enumerate() {
        let lines: Vec<String> = (0..5).map(|j| fake(B64, 64, 100 * i as u64 + j)).collect();
        let block = format!(
            "{}\n{}\n{}",
            key_marker("BEGIN", kind),
            lines.join("\n"),
            key_marker("END", kind)
        );
        s.push(Sample {
            rule: "private-key",
            text: format!("# deploy key\n{block}\n"),
            secrets: lines,
            example: false,
        });
    }
    let akia = format!("AKIA{}", fake(UPPER_NUM, 16, 1));
    s.push(sample(
        "aws-access-key-id",
        format!("[default]\naws_access_key_id = {akia}\n"),
        &akia,
    ));
    let asia = format!("ASIA{}", fake(UPPER_NUM, 16, 2));
    s.push(sample(
        "aws-access-key-id",
        format!("\"AccessKeyId\": \"{asia}\","),
        &asia,
    ));
    let aws_secret = fake(B64, 40, 3);
    s.push(sample(
        "aws-secret-access-key",
        format!("aws_secret_access_key = {aws_secret}\n"),
        &aws_secret,
    ));
    for (i, prefix) in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].iter().enumerate() {
        let token = format!("{prefix}{}", fake(B62, 36, 10 + i as u64));
        s.push(sample(
            "github-token",
            format!("GITHUB_TOKEN={token}\n"),
            &token,
        ));
    }
    let pat = format!("github_pat_{}_{}", fake(B62, 22, 16), fake(B62, 59, 17));
    s.push(sample("github-token", format!("  token: {pat}\n"), &pat));
    let glpat = format!("glpat-{}", fake(B62, 20, 20));
    s.push(sample(
        "gitlab-token",
        format!("export GL={glpat}\n"),
        &glpat,
    ));
    let xoxb = format!(
        "xoxb-{}-{}-{}",
        fake(DIGITS, 12, 30),
        fake(DIGITS, 13, 31),
        fake(B62, 24, 32)
    );
    s.push(sample(
        "slack-token",
        format!("slack: {{ bot: '{xoxb}' }}\n"),
        &xoxb,
    ));
    let hook = format!(
        "T{}/B{}/{}",
        fake(UPPER_NUM, 8, 33),
        fake(UPPER_NUM, 8, 34),
        fake(B62, 24, 35)
    );
    s.push(sample(
        "slack-webhook",
        format!("notify: https://hooks.slack.com/services/{hook}\n"),
        &hook,
    ));
    let stripe = format!("sk_live_{}", fake(B62, 24, 40));
    s.push(sample(
        "stripe-live-key",
        format!("Stripe.api_key = \"{stripe}\"\n"),
        &stripe,
    ));
    let restricted = format!("rk_live_{}", fake(B62, 24, 41));
    s.push(sample(
        "stripe-live-key",
        format!("{restricted}\n"),
        &restricted,
    ));
    let google = format!("AIza{}", fake(B64URL, 35, 50));
    s.push(sample(
        "google-api-key",
        format!("fetch(`https://maps/api?key={google}`)\n"),
        &google,
    ));
    let ant = format!("sk-ant-api03-{}AA", fake(B64URL, 93, 60));
    s.push(sample(
        "anthropic-api-key",
        format!("ANTHROPIC_API_KEY={ant}\n"),
        &ant,
    ));
    let oai = format!("sk-{}", fake(B62, 48, 61));
    s.push(sample(
        "openai-api-key",
        format!("openai.api_key = '{oai}'\n"),
        &oai,
    ));
    let proj = format!("sk-proj-{}", fake(B64URL, 156, 62));
    s.push(sample(
        "openai-api-key",
        format!("OPENAI_API_KEY={proj}\n"),
        &proj,
    ));
    let jwt = format!(
        "eyJ{}.eyJ{}.{}",
        fake(B64URL, 33, 70),
        fake(B64URL, 80, 71),
        fake(B64URL, 43, 72)
    );
    s.push(sample("jwt", format!("Cookie: session={jwt}\n"), &jwt));
    let db_pw = fake(B62, 18, 80);
    s.push(sample(
        "url-credentials",
        format!("DATABASE_URL=postgres://app:{db_pw}@db.internal:5432/app\n"),
        &db_pw,
    ));
    let bearer = fake(B64URL, 48, 90);
    s.push(sample(
        "bearer-token",
        format!("curl -H \"Authorization: Bearer {bearer}\" https://api.internal/\n"),
        &bearer,
    ));
    let generic = [
        ("DB_PASSWORD=", "\n", fake(B62, 20, 100)),
        ("  password: \"", "\"\n", fake(B62, 16, 101)),
        ("{\"client_secret\": \"", "\"}\n", fake(B62, 32, 102)),
        ("api_key = '", "'\n", fake(HEX, 32, 103)),
        ("const apiKey = \"", "\";\n", fake(B62, 24, 104)),
        ("ACCESS_KEY=", "\n", fake(B64, 28, 105)),
        (
            "passwd = ",
            "\n",
            format!("{}#{}!", fake(B62, 6, 106), fake(B62, 5, 107)),
        ),
    ];
    for (before, after, value) in generic {
        s.push(sample(
            "generic-secret",
            format!("{before}{value}{after}"),
            &value,
        ));
    }
    // Passwords people chose, made of words: a passphrase, words joined in
    // an .env file, and camel-cased words with a year in YAML.
    let chosen = [
        (
            "password = \"",
            "\"\n",
            format!(
                "{} {}",
                words(3, 110, false).join(" "),
                fake(DIGITS, 2, 111)
            ),
        ),
        ("DB_PASSWORD=", "\n", words(3, 112, true).join("-")),
        (
            "  password: ",
            "\n",
            format!("{}{}", words(2, 113, true).concat(), fake(DIGITS, 4, 114)),
        ),
    ];
    for (before, after, value) in chosen {
        s.push(sample(
            "generic-secret",
            format!("{before}{value}{after}"),
            &value,
        ));
    }
    s
}

/// An example-looking sample of every rule: what documentation, tutorials
/// and test suites write in place of a credential (`EXAMPLE` in the value,
/// placeholders, counting ids, `John Doe` claims, famous passwords). Each
/// must be redacted all the same, and flagged `info`.
pub fn examples() -> Vec<Sample> {
    let mut s = Vec::new();
    let key_marker = |edge: &str, kind: &str| format!("-----{edge} {kind}PRIVATE {}-----", "KEY");
    let lines: Vec<String> = (0..4)
        .map(|j| {
            format!(
                "{}EXAMPLE{}",
                fake(B64, 30, 500 + j),
                fake(B64, 27, 510 + j)
            )
        })
        .collect();
    s.push(Sample {
        rule: "private-key",
        text: format!(
            "# sample key from the docs\n{}\n{}\n{}\n",
            key_marker("BEGIN", "RSA "),
            lines.join("\n"),
            key_marker("END", "RSA ")
        ),
        secrets: lines,
        example: true,
    });
    let akia = format!("AKIA{}{}", fake(UPPER_NUM, 9, 501), "EXAMPLE");
    let aws_secret = format!("{}{}", fake(B64, 30, 502), "EXAMPLEKEY");
    // The pair together, as AWS's documentation shows it.
    s.push(example(
        "aws-access-key-id",
        format!("[default]\naws_access_key_id = {akia}\n"),
        &akia,
    ));
    s.push(example(
        "aws-secret-access-key",
        format!("aws_secret_access_key = {aws_secret}\n"),
        &aws_secret,
    ));
    let ghp = format!("ghp_{}", "x".repeat(36));
    s.push(example(
        "github-token",
        format!("GITHUB_TOKEN={ghp}\n"),
        &ghp,
    ));
    let glpat = format!("glpat-{}{}", fake(B62, 13, 503), "EXAMPLE");
    s.push(example(
        "gitlab-token",
        format!("export GL={glpat}\n"),
        &glpat,
    ));
    let xoxb = format!(
        "xoxb-{}-{}-{}",
        "123456789012",
        "1234567890123",
        fake(B62, 24, 504)
    );
    s.push(example(
        "slack-token",
        format!("slack: {{ bot: '{xoxb}' }}\n"),
        &xoxb,
    ));
    let hook = format!("T00000000/B00000000/{}", "X".repeat(24));
    s.push(example(
        "slack-webhook",
        format!("notify: https://hooks.slack.com/services/{hook}\n"),
        &hook,
    ));
    let stripe = format!("sk_live_{}{}", fake(B62, 17, 505), "EXAMPLE");
    s.push(example(
        "stripe-live-key",
        format!("Stripe.api_key = \"{stripe}\"\n"),
        &stripe,
    ));
    let google = format!("AIza{}{}", fake(B64URL, 28, 506), "EXAMPLE");
    s.push(example(
        "google-api-key",
        format!("fetch(`https://maps/api?key={google}`)\n"),
        &google,
    ));
    let ant = format!("sk-ant-api03-{}{}AA", fake(B64URL, 86, 507), "EXAMPLE");
    s.push(example(
        "anthropic-api-key",
        format!("ANTHROPIC_API_KEY={ant}\n"),
        &ant,
    ));
    let oai = format!("sk-proj-{}{}", fake(B62, 40, 508), "EXAMPLE");
    s.push(example(
        "openai-api-key",
        format!("OPENAI_API_KEY={oai}\n"),
        &oai,
    ));
    let jwt = format!(
        "{}.{}.{}",
        base64url(br#"{"alg":"HS256","typ":"JWT"}"#),
        base64url(br#"{"sub":"1234567890","name":"John Doe","iat":1516239022}"#),
        fake(B64URL, 43, 509)
    );
    s.push(example("jwt", format!("Cookie: session={jwt}\n"), &jwt));
    s.push(example(
        "url-credentials",
        "DATABASE_URL=postgres://app:changeme1234@db.internal:5432/app\n".to_string(),
        "changeme1234",
    ));
    let bearer = format!("{}{}", "YOUR_TOKEN_HERE_", fake(B62, 8, 510));
    s.push(example(
        "bearer-token",
        format!("curl -H \"Authorization: Bearer {bearer}\" https://api.internal/\n"),
        &bearer,
    ));
    for (text, value) in [
        ("password = \"changeme1234\"\n", "changeme1234"),
        ("DB_PASSWORD=password1234\n", "password1234"),
        (
            "secret = \"correct horse battery staple\"\n",
            "correct horse battery staple",
        ),
    ] {
        s.push(example("generic-secret", text.to_string(), value));
    }
    s
}

/// Bytes a leaked piece of a secret must have to count as a leak.
pub const FRAGMENT: usize = 12;

/// Finds any stretch of [`FRAGMENT`] bytes of a set of secrets in a text.
pub struct LeakCheck {
    windows: std::collections::HashMap<Vec<u8>, usize>,
    secrets: Vec<String>,
}

impl LeakCheck {
    /// Panics on a secret shorter than [`FRAGMENT`]: no piece of it could
    /// be found, so a check built on it could never fail.
    pub fn new(secrets: &[String]) -> LeakCheck {
        let mut windows = std::collections::HashMap::new();
        for (index, secret) in secrets.iter().enumerate() {
            assert!(
                secret.len() >= FRAGMENT,
                "{secret:?} is too short for a leak check"
            );
            for window in secret.as_bytes().windows(FRAGMENT) {
                windows.entry(window.to_vec()).or_insert(index);
            }
        }
        LeakCheck {
            windows,
            secrets: secrets.to_vec(),
        }
    }

    /// The first secret a piece of which appears in `text`, and the piece.
    pub fn leak(&self, text: &str) -> Option<(&str, String)> {
        text.as_bytes().windows(FRAGMENT).find_map(|window| {
            self.windows.get(window).map(|&index| {
                (
                    self.secrets[index].as_str(),
                    String::from_utf8_lossy(window).into_owned(),
                )
            })
        })
    }

    /// The secrets `text` does not hold whole.
    pub fn missing_from<'a>(&'a self, text: &str) -> Vec<&'a str> {
        self.secrets
            .iter()
            .filter(|secret| !text.contains(secret.as_str()))
            .map(String::as_str)
            .collect()
    }
}
