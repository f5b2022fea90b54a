//! Fake secrets for tests: at least one sample of every redaction rule, in
//! the shapes they take in real files.
//!
//! Values are generated at run time from fixed seeds, so the repository holds
//! nothing a secret scanner would mistake for a live key. Shared by the
//! redactor's recall measurement (`all/redaction.rs`) and the end-to-end
//! privacy tests.

pub const B62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
pub const DIGITS: &str = "0123456789";
pub const HEX: &str = "0123456789abcdef";

/// A deterministic pseudo-random string over `alphabet` (xorshift64).
pub fn fake(alphabet: &str, len: usize, seed: u64) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chars[(x % chars.len() as u64) as usize]
        })
        .collect()
}

/// One fixture sample: the rule that must fire, the text, and the parts of
/// the text that must not survive.
pub struct Sample {
    pub rule: &'static str,
    pub text: String,
    pub secrets: Vec<String>,
}

fn sample(rule: &'static str, text: String, secret: &str) -> Sample {
    Sample {
        rule,
        text,
        secrets: vec![secret.to_owned()],
    }
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
    pub fn new(secrets: &[String]) -> LeakCheck {
        let mut windows = std::collections::HashMap::new();
        for (index, secret) in secrets.iter().enumerate() {
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
