//! Fake secrets for tests: at least one sample of every redaction rule, in
//! the shapes they take in real files, both as a real credential would look
//! ([`fixture`]) and as a documentation example or placeholder would
//! ([`examples`]). Both kinds must be redacted; examples are flagged `info`.
//!
//! Values are generated at run time from fixed seeds, so the repository holds
//! nothing a secret scanner would mistake for a live key. Shared by the
//! redactor's recall measurement (`all/redaction.rs`) and the end-to-end
//! privacy tests.

pub use super::fake::{
    B62, B64, B64URL, DIGITS, HEX, UPPER_NUM, base64, base64url, fake, jwt, key, pem_line,
    private_key_lines, slack_bot_token, slack_webhook_path,
};

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
    /// The name of the file the text must be in for its rule to fire
    /// (`user:password` lines count only in a file named like credentials).
    pub source: Option<&'static str>,
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

fn sample(rule: &'static str, template: &str, secret: String) -> Sample {
    Sample {
        rule,
        text: template.replacen("{}", &secret, 1),
        secrets: vec![secret],
        example: false,
        source: None,
    }
}

fn example(rule: &'static str, template: &str, secret: String) -> Sample {
    Sample {
        example: true,
        ..sample(rule, template, secret)
    }
}

/// One row of a sample table: the rule that must fire, the text with a `{}`
/// where the secret stands, and the secret.
type Row = (&'static str, &'static str, String);

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

/// A private key block of `kind` (`RSA `, `OPENSSH `, ...) around `lines`.
fn key_block(kind: &str, lines: &[String]) -> String {
    format!(
        "{}\n{}\n{}",
        pem_line("BEGIN", kind),
        lines.join("\n"),
        pem_line("END", kind)
    )
}

/// At least one sample of every rule, in the shapes they take in real files.
pub fn fixture() -> Vec<Sample> {
    let mut s = Vec::new();
    for (i, kind) in ["RSA ", "OPENSSH ", "EC ", ""].iter().enumerate() {
        let lines: Vec<String> = (0..5).map(|j| fake(B64, 64, 100 * i as u64 + j)).collect();
        s.push(Sample {
            rule: "private-key",
            text: format!("# deploy key\n{}\n", key_block(kind, &lines)),
            secrets: lines,
            example: false,
            source: None,
        });
    }
    let mut rows: Vec<Row> = vec![
        (
            "aws-access-key-id",
            "[default]\naws_access_key_id = {}\n",
            key("AKIA", UPPER_NUM, 16, 1),
        ),
        (
            "aws-access-key-id",
            "\"AccessKeyId\": \"{}\",",
            key("ASIA", UPPER_NUM, 16, 2),
        ),
        (
            "aws-secret-access-key",
            "aws_secret_access_key = {}\n",
            fake(B64, 40, 3),
        ),
    ];
    for (i, prefix) in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].iter().enumerate() {
        rows.push((
            "github-token",
            "GITHUB_TOKEN={}\n",
            key(prefix, B62, 36, 10 + i as u64),
        ));
    }
    rows.extend([
        (
            "github-token",
            "  token: {}\n",
            format!("github_pat_{}_{}", fake(B62, 22, 16), fake(B62, 59, 17)),
        ),
        ("gitlab-token", "export GL={}\n", key("glpat-", B62, 20, 20)),
        ("slack-token", "slack: { bot: '{}' }\n", slack_bot_token(30)),
        (
            "slack-webhook",
            "notify: https://hooks.slack.com/services/{}\n",
            slack_webhook_path(33),
        ),
        (
            "stripe-live-key",
            "Stripe.api_key = \"{}\"\n",
            key("sk_live_", B62, 24, 40),
        ),
        ("stripe-live-key", "{}\n", key("rk_live_", B62, 24, 41)),
        (
            "google-api-key",
            "fetch(`https://maps/api?key={}`)\n",
            key("AIza", B64URL, 35, 50),
        ),
        (
            "anthropic-api-key",
            "ANTHROPIC_API_KEY={}\n",
            key("sk-ant-api03-", B64URL, 93, 60) + "AA",
        ),
        (
            "openai-api-key",
            "openai.api_key = '{}'\n",
            key("sk-", B62, 48, 61),
        ),
        (
            "openai-api-key",
            "OPENAI_API_KEY={}\n",
            key("sk-proj-", B64URL, 156, 62),
        ),
        ("jwt", "Cookie: session={}\n", jwt(33, 80, 70)),
        (
            "url-credentials",
            "DATABASE_URL=postgres://app:{}@db.internal:5432/app\n",
            fake(B62, 18, 80),
        ),
        (
            "bearer-token",
            "curl -H \"Authorization: Bearer {}\" https://api.internal/\n",
            fake(B64URL, 48, 90),
        ),
        ("generic-secret", "DB_PASSWORD={}\n", fake(B62, 20, 100)),
        ("generic-secret", "  password: \"{}\"\n", fake(B62, 16, 101)),
        (
            "generic-secret",
            "{\"client_secret\": \"{}\"}\n",
            fake(B62, 32, 102),
        ),
        ("generic-secret", "api_key = '{}'\n", fake(HEX, 32, 103)),
        (
            "generic-secret",
            "const apiKey = \"{}\";\n",
            fake(B62, 24, 104),
        ),
        ("generic-secret", "ACCESS_KEY={}\n", fake(B64, 28, 105)),
        (
            "generic-secret",
            "passwd = {}\n",
            format!("{}#{}!", fake(B62, 6, 106), fake(B62, 5, 107)),
        ),
        // Passwords people chose, made of words: a passphrase, words joined
        // in an .env file, and camel-cased words with a year in YAML.
        (
            "generic-secret",
            "password = \"{}\"\n",
            format!(
                "{} {}",
                words(3, 110, false).join(" "),
                fake(DIGITS, 2, 111)
            ),
        ),
        (
            "generic-secret",
            "DB_PASSWORD={}\n",
            words(3, 112, true).join("-"),
        ),
        (
            "generic-secret",
            "  password: {}\n",
            format!("{}{}", words(2, 113, true).concat(), fake(DIGITS, 4, 114)),
        ),
        (
            "service-token",
            "publish with {} from CI\n",
            key("npm_", B62, 36, 120),
        ),
        (
            "telegram-bot-token",
            "BOT_TOKEN={}\n",
            format!("{}:A{}", fake(DIGITS, 10, 127), fake(B64URL, 34, 128)),
        ),
        (
            "azure-client-secret",
            "  clientSecret: {}\n",
            format!("{}8Q~{}", fake(B62, 3, 129), fake(B62, 34, 130)),
        ),
        (
            "basic-auth",
            "GET /v1/items HTTP/1.1\nAuthorization: Basic {}\n",
            base64(key("svc-deploy:", B62, 16, 121).as_bytes()),
        ),
        (
            "netrc-password",
            "machine api.internal\n  login deploy\n  password {}\n",
            fake(B62, 14, 122),
        ),
        (
            "pgpass-password",
            "db.internal:5432:app:app:{}\n",
            fake(B62, 16, 123),
        ),
        (
            "curl-user",
            "curl -sS -u deploy:{} https://api.internal/v1/items\n",
            fake(B62, 12, 124),
        ),
        (
            "mysql-password",
            "mysqldump -h db -u root -p{} app > app.sql\n",
            fake(B62, 12, 125),
        ),
        (
            "xml-secret",
            "<server>\n  <id>corp</id>\n  <password>{}</password>\n</server>\n",
            fake(B62, 16, 126),
        ),
        (
            "azure-sas-signature",
            "BLOB=https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&se=2030-01-01&sig={}\n",
            format!("{}%3D", fake(B62, 43, 131)),
        ),
        (
            "discord-webhook",
            "hook: https://discord.com/api/webhooks/410377196554952704/{}\n",
            fake(B64URL, 68, 132),
        ),
        (
            "password-hash",
            "admin:{}\n",
            format!("$apr1${}${}", fake(B62, 8, 133), fake(B62, 22, 134)),
        ),
        (
            "cookie-file",
            ".shop.internal\tTRUE\t/\tTRUE\t2147483647\tsessionid\t{}\n",
            fake(B62, 32, 135),
        ),
        (
            "gcp-private-key-id",
            "  \"private_key_id\": \"{}\",\n",
            fake(HEX, 40, 136),
        ),
        (
            "service-token",
            "STRIPE_WEBHOOK={}\n",
            key("whsec_", B62, 32, 137),
        ),
    ]);
    s.extend(
        rows.into_iter()
            .map(|(rule, template, secret)| sample(rule, template, secret)),
    );
    // A key in base64, as a Kubernetes Secret holds it.
    let lines: Vec<String> = (0..6).map(|j| fake(B64, 64, 140 + j)).collect();
    let encoded = base64(format!("{}\n", key_block("", &lines)).as_bytes());
    s.push(sample(
        "encoded-private-key",
        "data:\n  tls.key: {}\n",
        encoded,
    ));
    s.push(Sample {
        source: Some("credentials.txt"),
        ..sample(
            "credential-line",
            "# shared logins\nadmin:{}\n",
            format!("{}!{}", fake(B62, 7, 138), fake(B62, 6, 139)),
        )
    });
    s
}

/// An example-looking sample of every rule: what documentation, tutorials
/// and test suites write in place of a credential (`EXAMPLE` in the value,
/// placeholders, counting ids, `John Doe` claims, famous passwords). Each
/// must be redacted all the same, and flagged `info`.
pub fn examples() -> Vec<Sample> {
    let lines: Vec<String> = (0..4)
        .map(|j| {
            format!(
                "{}EXAMPLE{}",
                fake(B64, 30, 500 + j),
                fake(B64, 27, 510 + j)
            )
        })
        .collect();
    let mut s = vec![Sample {
        rule: "private-key",
        text: format!(
            "# sample key from the docs\n{}\n",
            key_block("RSA ", &lines)
        ),
        secrets: lines,
        example: true,
        source: None,
    }];
    let xoxb = format!(
        "xoxb-{}-{}-{}",
        "123456789012",
        "1234567890123",
        fake(B62, 24, 504)
    );
    let jwt = format!(
        "{}.{}.{}",
        base64url(br#"{"alg":"HS256","typ":"JWT"}"#),
        base64url(br#"{"sub":"1234567890","name":"John Doe","iat":1516239022}"#),
        fake(B64URL, 43, 509)
    );
    let rows: Vec<Row> = vec![
        // The AWS pair together, as AWS's documentation shows it.
        (
            "aws-access-key-id",
            "[default]\naws_access_key_id = {}\n",
            key("AKIA", UPPER_NUM, 9, 501) + "EXAMPLE",
        ),
        (
            "aws-secret-access-key",
            "aws_secret_access_key = {}\n",
            fake(B64, 30, 502) + "EXAMPLEKEY",
        ),
        (
            "github-token",
            "GITHUB_TOKEN={}\n",
            format!("ghp_{}", "x".repeat(36)),
        ),
        (
            "gitlab-token",
            "export GL={}\n",
            key("glpat-", B62, 13, 503) + "EXAMPLE",
        ),
        ("slack-token", "slack: { bot: '{}' }\n", xoxb),
        (
            "slack-webhook",
            "notify: https://hooks.slack.com/services/{}\n",
            format!("T00000000/B00000000/{}", "X".repeat(24)),
        ),
        (
            "stripe-live-key",
            "Stripe.api_key = \"{}\"\n",
            key("sk_live_", B62, 17, 505) + "EXAMPLE",
        ),
        (
            "google-api-key",
            "fetch(`https://maps/api?key={}`)\n",
            key("AIza", B64URL, 28, 506) + "EXAMPLE",
        ),
        (
            "anthropic-api-key",
            "ANTHROPIC_API_KEY={}\n",
            key("sk-ant-api03-", B64URL, 86, 507) + "EXAMPLEAA",
        ),
        (
            "openai-api-key",
            "OPENAI_API_KEY={}\n",
            key("sk-proj-", B62, 40, 508) + "EXAMPLE",
        ),
        ("jwt", "Cookie: session={}\n", jwt),
        (
            "url-credentials",
            "DATABASE_URL=postgres://app:{}@db.internal:5432/app\n",
            "changeme1234".into(),
        ),
        (
            "bearer-token",
            "curl -H \"Authorization: Bearer {}\" https://api.internal/\n",
            format!("{}{}", "YOUR_TOKEN_HERE_", fake(B62, 8, 510)),
        ),
        (
            "generic-secret",
            "password = \"{}\"\n",
            "changeme1234".into(),
        ),
        ("generic-secret", "DB_PASSWORD={}\n", "password1234".into()),
        (
            "generic-secret",
            "secret = \"{}\"\n",
            "correct horse battery staple".into(),
        ),
        (
            "service-token",
            "publish with {} from CI\n",
            format!("npm_{}", "x".repeat(36)),
        ),
        (
            "telegram-bot-token",
            "BOT_TOKEN={}\n",
            format!("123456789:A{}", "x".repeat(34)),
        ),
        (
            "azure-client-secret",
            "  clientSecret: {}\n",
            format!("abc8Q~{}", "x".repeat(34)),
        ),
        (
            "basic-auth",
            "Authorization: Basic {}\n",
            base64(b"Aladdin:open sesame"),
        ),
        (
            "netrc-password",
            "machine example.com login me password {}\n",
            "changeme1234".into(),
        ),
        (
            "pgpass-password",
            "localhost:5432:mydb:me:{}\n",
            "changeme1234".into(),
        ),
        (
            "curl-user",
            "curl -u me:{} https://api.example.com/\n",
            "changeme1234".into(),
        ),
        (
            "mysql-password",
            "mysql -u root -p{} mydb\n",
            "changeme1234".into(),
        ),
        (
            "xml-secret",
            "<password>{}</password>\n",
            "changeme1234".into(),
        ),
        (
            "azure-sas-signature",
            "https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&se=2030-01-01&sig={}\n",
            format!("{}EXAMPLE{}", fake(B62, 20, 520), fake(B62, 16, 521)),
        ),
        (
            "discord-webhook",
            "https://discord.com/api/webhooks/410377196554952704/{}\n",
            format!("{}EXAMPLE{}", fake(B64URL, 30, 522), fake(B64URL, 31, 523)),
        ),
        (
            "password-hash",
            "admin:{}\n",
            format!("$apr1$EXAMPLE0${}", fake(B62, 22, 524)),
        ),
        (
            "cookie-file",
            ".example.com\tTRUE\t/\tFALSE\t0\tsession\t{}\n",
            "changeme1234".into(),
        ),
        (
            "gcp-private-key-id",
            "  \"private_key_id\": \"{}\",\n",
            "0123456789abcdef0123456789abcdef01234567".into(),
        ),
    ];
    s.extend(
        rows.into_iter()
            .map(|(rule, template, secret)| example(rule, template, secret)),
    );
    let sample_lines: Vec<String> = (0..4)
        .map(|j| {
            format!(
                "{}EXAMPLE{}",
                fake(B64, 30, 530 + j),
                fake(B64, 27, 540 + j)
            )
        })
        .collect();
    s.push(example(
        "encoded-private-key",
        "tls.key: {}\n",
        base64(format!("{}\n", key_block("", &sample_lines)).as_bytes()),
    ));
    s.push(Sample {
        source: Some("credentials.txt"),
        ..example("credential-line", "admin:{}\n", "changeme1234".into())
    });
    s
}

/// One file of the credential-format tree: a kind of credential people
/// keep in files, where it lives, and the values that must never be sent.
pub struct CredentialFile {
    /// What the issue calls the format.
    pub kind: &'static str,
    /// Path relative to the target.
    pub rel: String,
    pub text: String,
    pub values: Vec<String>,
}

fn credential(kind: &'static str, rel: &str, text: String, values: &[&String]) -> CredentialFile {
    CredentialFile {
        kind,
        rel: rel.to_string(),
        text,
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

/// One value of each credential format people keep in configuration and
/// scripts, each in the file it usually lives in: the formats a grep for
/// values once sent to the API. Values are 10 to 24 characters (a short
/// one checks that pieces of short values are remembered too); one file is
/// named after a token.
pub fn credential_formats() -> Vec<CredentialFile> {
    let mut files = Vec::new();
    let properties = format!("R{}{}", fake(DIGITS, 3, 300), fake(B62, 7, 301));
    files.push(credential(
        ".properties",
        "conf/app.properties",
        format!(
            "db.url=jdbc:postgresql://db.internal:5432/app\ndb.user=app\n\
             db.password={properties}\ndb.pool=8\n"
        ),
        &[&properties],
    ));
    let ampersand = format!("{}&3{}", fake(B62, 9, 302), fake(B62, 8, 303));
    files.push(credential(
        "value with &",
        "conf/login.ini",
        format!("[auth]\nuser = deploy\npassword={ampersand}\ntimeout = 30\n"),
        &[&ampersand],
    ));
    let api_key = fake(B62, 24, 304);
    let x_api_key = fake(HEX, 32, 305);
    files.push(credential(
        "YAML dashed keys",
        "conf/service.yaml",
        format!(
            "service:\n  name: billing\n  api-key: {api_key}\n  headers:\n    \
             x-api-key: {x_api_key}\n"
        ),
        &[&api_key, &x_api_key],
    ));
    let netrc = fake(B62, 14, 306);
    files.push(credential(
        ".netrc",
        "home/.netrc",
        format!("machine api.internal.net login deploy password {netrc}\n"),
        &[&netrc],
    ));
    let pgpass = fake(B62, 16, 307);
    files.push(credential(
        ".pgpass",
        "home/.pgpass",
        format!("db.internal:5432:app:app:{pgpass}\n"),
        &[&pgpass],
    ));
    let curl = fake(B62, 12, 308);
    files.push(credential(
        "curl -u",
        "scripts/fetch.sh",
        format!("#!/bin/sh\ncurl -sS -u deploy:{curl} https://api.internal/v1/items\n"),
        &[&curl],
    ));
    let mysql = fake(B62, 12, 309);
    files.push(credential(
        "mysql -p",
        "scripts/backup.sh",
        format!("#!/bin/sh\nmysqldump -h db.internal -u root -p{mysql} app > app.sql\n"),
        &[&mysql],
    ));
    let basic = base64(key("bob:", B62, 16, 310).as_bytes());
    files.push(credential(
        "Authorization: Basic",
        "scripts/call.http",
        format!("GET https://api.internal/v1/items\nAuthorization: Basic {basic}\n"),
        &[&basic],
    ));
    let userinfo = fake(B62, 14, 311);
    files.push(credential(
        "URL user-info",
        "conf/remote.txt",
        format!("origin https://deploy:{userinfo}@git.internal/app.git (fetch)\n"),
        &[&userinfo],
    ));
    let default_arg = fake(B62, 18, 312);
    files.push(credential(
        "URL in a default argument",
        "scripts/client.py",
        format!(
            "import psycopg\n\n\ndef connect(dsn=\"postgresql://app:{default_arg}@db/app\"):\n    \
             return psycopg.connect(dsn)\n"
        ),
        &[&default_arg],
    ));
    let npm = key("npm_", B62, 36, 313);
    files.push(credential(
        "a file named after a token",
        &format!("tokens/{npm}.txt"),
        "publish token, see the file name\n".to_string(),
        &[&npm],
    ));
    files
}

/// Bytes a leaked piece of a secret must have to count as a leak: the
/// redactor's promise (any piece of a remembered value this long is masked).
pub const FRAGMENT: usize = 8;

/// Bytes a leaked piece of an example value must have to count as a leak.
/// Examples are made of words (`changeme1234`, `correct horse battery
/// staple`); only the rules redact them, whole, and their pieces are not
/// remembered (see the redactor), so a shorter piece is just a word.
pub const EXAMPLE_FRAGMENT: usize = 12;

/// Finds any stretch of [`FRAGMENT`] bytes of a set of secrets in a text
/// (or of another length, for examples).
pub struct LeakCheck {
    /// Every window of every secret, each once, with the index of the
    /// first secret that has it.
    windows: Vec<(Vec<u8>, usize)>,
    /// One automaton over `windows`, so a text is read once however many
    /// secrets there are (the suite checks every request body).
    finder: aho_corasick::AhoCorasick,
    secrets: Vec<String>,
}

impl LeakCheck {
    /// Panics on a secret shorter than [`FRAGMENT`]: no piece of it could
    /// be found, so a check built on it could never fail.
    pub fn new(secrets: &[String]) -> LeakCheck {
        LeakCheck::build(Vec::new(), Vec::new()).with(secrets, FRAGMENT)
    }

    fn build(windows: Vec<(Vec<u8>, usize)>, secrets: Vec<String>) -> LeakCheck {
        let finder = aho_corasick::AhoCorasick::new(windows.iter().map(|(window, _)| window))
            .expect("the windows of the secrets make an automaton");
        LeakCheck {
            windows,
            finder,
            secrets,
        }
    }

    /// This check, also finding pieces of `fragment` bytes of `secrets`.
    pub fn with(self, secrets: &[String], fragment: usize) -> LeakCheck {
        let LeakCheck {
            mut windows,
            secrets: mut known,
            ..
        } = self;
        let mut seen: std::collections::HashSet<Vec<u8>> =
            windows.iter().map(|(window, _)| window.clone()).collect();
        for secret in secrets {
            assert!(
                secret.len() >= fragment,
                "{secret:?} is too short for a leak check"
            );
            let index = known.len();
            known.push(secret.clone());
            for window in secret.as_bytes().windows(fragment) {
                if seen.insert(window.to_vec()) {
                    windows.push((window.to_vec(), index));
                }
            }
        }
        LeakCheck::build(windows, known)
    }

    /// Every piece of a secret in `text`, with its secret.
    fn pieces<'a>(&'a self, text: &'a str) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
        self.finder.find_overlapping_iter(text).map(move |found| {
            let (_, index) = self.windows[found.pattern().as_usize()];
            (
                self.secrets[index].as_str(),
                &text.as_bytes()[found.range()],
            )
        })
    }

    /// The first secret a piece of which appears in `text`, and the piece.
    pub fn leak<'a>(&'a self, text: &'a str) -> Option<(&'a str, String)> {
        self.pieces(text)
            .next()
            .map(|(secret, piece)| (secret, String::from_utf8_lossy(piece).into_owned()))
    }

    /// Every secret a piece of which appears in `text`.
    pub fn leaked<'a>(&'a self, text: &'a str) -> std::collections::BTreeSet<&'a str> {
        self.pieces(text).map(|(secret, _)| secret).collect()
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
