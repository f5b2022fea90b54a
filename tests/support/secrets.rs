//! Fake secrets for tests: at least one sample of every redaction rule, in
//! the shapes they take in real files, both as a real credential would look
//! ([`fixture`]) and as a documentation example or placeholder would
//! ([`examples`]). Both kinds must be redacted; examples are flagged `info`.
//!
//! Values are generated at run time from fixed seeds, so the repository holds
//! nothing a secret scanner would mistake for a live key. Shared by the
//! redactor's recall measurement (`all/redaction.rs`) and the end-to-end
//! privacy tests.

pub use super::fake::{B62, B64, B64URL, DIGITS, HEX, UPPER_NUM, base64, base64url, fake};

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
    let npm = format!("npm_{}", fake(B62, 36, 120));
    s.push(sample(
        "service-token",
        format!("publish with {npm} from CI\n"),
        &npm,
    ));
    let telegram = format!("{}:A{}", fake(DIGITS, 10, 127), fake(B64URL, 34, 128));
    s.push(sample(
        "telegram-bot-token",
        format!("BOT_TOKEN={telegram}\n"),
        &telegram,
    ));
    let azure = format!("{}8Q~{}", fake(B62, 3, 129), fake(B62, 34, 130));
    s.push(sample(
        "azure-client-secret",
        format!("  clientSecret: {azure}\n"),
        &azure,
    ));
    let basic = base64(format!("svc-deploy:{}", fake(B62, 16, 121)).as_bytes());
    s.push(sample(
        "basic-auth",
        format!("GET /v1/items HTTP/1.1\nAuthorization: Basic {basic}\n"),
        &basic,
    ));
    let netrc = fake(B62, 14, 122);
    s.push(sample(
        "netrc-password",
        format!("machine api.internal\n  login deploy\n  password {netrc}\n"),
        &netrc,
    ));
    let pgpass = fake(B62, 16, 123);
    s.push(sample(
        "pgpass-password",
        format!("db.internal:5432:app:app:{pgpass}\n"),
        &pgpass,
    ));
    let curl = fake(B62, 12, 124);
    s.push(sample(
        "curl-user",
        format!("curl -sS -u deploy:{curl} https://api.internal/v1/items\n"),
        &curl,
    ));
    let mysql = fake(B62, 12, 125);
    s.push(sample(
        "mysql-password",
        format!("mysqldump -h db -u root -p{mysql} app > app.sql\n"),
        &mysql,
    ));
    let xml = fake(B62, 16, 126);
    s.push(sample(
        "xml-secret",
        format!("<server>\n  <id>corp</id>\n  <password>{xml}</password>\n</server>\n"),
        &xml,
    ));
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
    let npm = format!("npm_{}", "x".repeat(36));
    s.push(example(
        "service-token",
        format!("publish with {npm} from CI\n"),
        &npm,
    ));
    let telegram = format!("123456789:A{}", "x".repeat(34));
    s.push(example(
        "telegram-bot-token",
        format!("BOT_TOKEN={telegram}\n"),
        &telegram,
    ));
    let azure = format!("abc8Q~{}", "x".repeat(34));
    s.push(example(
        "azure-client-secret",
        format!("  clientSecret: {azure}\n"),
        &azure,
    ));
    let basic = base64(b"Aladdin:open sesame");
    s.push(example(
        "basic-auth",
        format!("Authorization: Basic {basic}\n"),
        &basic,
    ));
    for (rule, text) in [
        (
            "netrc-password",
            "machine example.com login me password changeme1234\n",
        ),
        ("pgpass-password", "localhost:5432:mydb:me:changeme1234\n"),
        (
            "curl-user",
            "curl -u me:changeme1234 https://api.example.com/\n",
        ),
        ("mysql-password", "mysql -u root -pchangeme1234 mydb\n"),
        ("xml-secret", "<password>changeme1234</password>\n"),
    ] {
        s.push(example(rule, text.to_string(), "changeme1234"));
    }
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
    let basic = base64(format!("svc:{}", fake(B62, 16, 310)).as_bytes());
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
    let npm = format!("npm_{}", fake(B62, 36, 313));
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
