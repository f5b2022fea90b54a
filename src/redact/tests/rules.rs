//! Every rule on positive and negative samples. Fake secrets come from
//! [`fake`] at run time; nothing here is a live-looking key in the source.

use super::*;

#[test]
fn private_key_blocks() {
    for (i, kind) in ["RSA ", "EC ", "OPENSSH ", "DSA ", "ENCRYPTED ", ""]
        .iter()
        .enumerate()
    {
        let block = pem_block(kind, 10 + i as u64);
        let text = format!("key file:\n{block}\ntrailer\n");
        let out = assert_redacts("private-key", &text, &block[40..80]);
        assert_eq!(out.text, "key file:\n[REDACTED:private-key]\ntrailer\n");
        assert_eq!(out.hits[0].line, 2);
    }
    // Legacy encrypted PEM carries headers inside the block.
    let headers = format!(
        "{}\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{}\n\n{}\n{}\n",
        pem_line("BEGIN", "RSA "),
        fake(HEX, 32, 3).to_uppercase(),
        fake(B64, 64, 4),
        pem_line("END", "RSA ")
    );
    let out = assert_redacts("private-key", &headers, &fake(B64, 64, 4));
    assert_eq!(out.text, "[REDACTED:private-key]\n");
    // PGP armour.
    let pgp = format!(
        "{}\n\n{}\n={}\n-----END PGP PRIVATE {} BLOCK-----",
        pem_line("BEGIN", "PGP ").replace("KEY", "KEY BLOCK"),
        fake(B64, 64, 5),
        fake(B64, 4, 6),
        "KEY"
    );
    assert_redacts("private-key", &pgp, &fake(B64, 64, 5));
    // Inside a JSON string (a request body), newlines are `\n` escapes.
    let escaped = format!(
        "{{\"content\":\"{}\\n\"}}",
        pem_block("", 7).replace('\n', "\\n")
    );
    let out = assert_redacts("private-key", &escaped, &fake(B64, 64, 7));
    assert_eq!(out.text, "{\"content\":\"[REDACTED:private-key]\\n\"}");
    // A block cut short (a truncated read) is still redacted to its end.
    let cut = format!(
        "{}\n{}\n{}\n",
        pem_line("BEGIN", "RSA "),
        fake(B64, 64, 8),
        fake(B64, 30, 9)
    );
    let out = assert_redacts("private-key", &cut, &fake(B64, 30, 9));
    assert_eq!(out.text, "[REDACTED:private-key]");
}

#[test]
fn private_key_negatives() {
    // Parsing code and docs quote the marker lines without a key.
    assert_clean(&format!(
        "const BEGIN: &str = \"{}\";\nconst END: &str = \"{}\";\n",
        pem_line("BEGIN", ""),
        pem_line("END", "")
    ));
    assert_clean(&format!(
        "{}\n...\n{}\n",
        pem_line("BEGIN", "RSA "),
        pem_line("END", "RSA ")
    ));
    // Public keys and certificates are not secrets.
    let body = fake(B64, 64, 11);
    assert_clean(&format!(
        "-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n"
    ));
    assert_clean(&format!(
        "-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"
    ));
}

#[test]
fn aws_access_key_ids() {
    for (i, prefix) in ["AKIA", "ASIA", "ABIA", "ACCA"].iter().enumerate() {
        let key = format!("{prefix}{}", fake(UPPER_NUM, 16, 20 + i as u64));
        let text = format!("aws_access_key_id = {key}\n");
        let out = assert_redacts("aws-access-key-id", &text, &key);
        assert_eq!(
            out.text,
            "aws_access_key_id = [REDACTED:aws-access-key-id]\n"
        );
    }
    // AWS's documentation key id and a simple sequence are examples:
    // redacted, flagged info.
    let doc = format!("AKIA{}{}", "IOSFODNN7", "EXAMPLE");
    assert_example("aws-access-key-id", &format!("id = {doc}"), &doc);
    let sequence = format!("AKIA{}", "ABCDEFGHJKMNPQRS");
    assert_example("aws-access-key-id", &format!("id = {sequence}"), &sequence);
    // Too short, too long, glued to a word.
    assert_clean(&format!("id = AKIA{}", fake(UPPER_NUM, 15, 24)));
    assert_clean(&format!("id = AKIA{}", fake(UPPER_NUM, 17, 25)));
    assert_clean(&format!("id = XAKIA{}", fake(UPPER_NUM, 16, 26)));
    assert_clean("THE_AKIAAAAAAAAAAAAAAAAA_NAME");
}

#[test]
fn aws_secret_access_keys() {
    let secret = fake(B64, 40, 30);
    for text in [
        format!("aws_secret_access_key = {secret}\n"),
        format!("AWS_SECRET_ACCESS_KEY=\"{secret}\"\n"),
        format!("{{\"SecretAccessKey\": \"{secret}\"}}"),
        format!("secretAccessKey: '{secret}'"),
    ] {
        assert_redacts("aws-secret-access-key", &text, &secret);
    }
    let doc = format!("wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}", "EXAMPLEKEY");
    assert_example(
        "aws-secret-access-key",
        &format!("aws_secret_access_key = {doc}"),
        &doc,
    );
    assert_clean("aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}");
    assert_not_rule(
        "aws-secret-access-key",
        &format!("aws_secret_access_key = {}", fake(B64, 39, 31)),
    );
    assert_not_rule(
        "aws-secret-access-key",
        &format!("aws_secret_access_key = {}", fake(B64, 41, 32)),
    );
}

#[test]
fn github_tokens() {
    for (i, prefix) in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].iter().enumerate() {
        let token = format!("{prefix}{}", fake(B62, 36, 40 + i as u64));
        let out = assert_redacts("github-token", &format!("GH={token} rest"), &token);
        assert_eq!(out.text, "GH=[REDACTED:github-token] rest");
    }
    let pat = format!("github_pat_{}_{}", fake(B62, 22, 46), fake(B62, 59, 47));
    assert_redacts("github-token", &format!("token: {pat}"), &pat);
    let placeholder = format!("ghp_{}", "x".repeat(36));
    assert_example("github-token", &placeholder, &placeholder);
    assert_clean(&format!("ghp_{}", fake(B62, 20, 48)));
    assert_clean(&format!("github_pat_{}", fake(B62, 30, 49)));
    assert_clean(&format!("my_ghp_{}", fake(B62, 36, 50)));
}

#[test]
fn gitlab_tokens() {
    let token = format!("glpat-{}", fake(B62, 20, 60));
    assert_redacts("gitlab-token", &format!("CI_TOKEN={token}"), &token);
    let deploy = format!("gldt-{}", fake(B64URL, 24, 61));
    assert_redacts("gitlab-token", &format!("x {deploy} y"), &deploy);
    let placeholder = format!("glpat-{}", "x".repeat(20));
    assert_example("gitlab-token", &placeholder, &placeholder);
    assert_clean(&format!("glpat-{}", fake(B62, 12, 62)));
}

#[test]
fn slack_tokens() {
    let bot = format!(
        "xoxb-{}-{}-{}",
        fake(DIGITS, 12, 70),
        fake(DIGITS, 13, 71),
        fake(B62, 24, 72)
    );
    assert_redacts("slack-token", &format!("SLACK_BOT={bot}"), &bot);
    let user = format!(
        "xoxp-{}-{}-{}-{}",
        fake(DIGITS, 10, 73),
        fake(DIGITS, 10, 74),
        fake(DIGITS, 12, 75),
        fake(HEX, 32, 76)
    );
    assert_redacts("slack-token", &format!("{user}\n"), &user);
    // Documentation's ids count up; a token with no numeric ids at all is
    // a placeholder. Both are redacted as examples.
    let counted = format!(
        "xoxb-{}-{}-{}",
        "123456789012",
        "1234567890123",
        fake(B62, 24, 79)
    );
    assert_example("slack-token", &format!("SLACK_BOT={counted}"), &counted);
    let lettered = format!("xoxp-{}-{}", "abcdefghij", "klmnopqrstuv");
    assert_example("slack-token", &lettered, &lettered);
    assert_clean("xoxb-your-bot-token-here");
    assert_clean("xoxb-not-a-real-token-value");
    assert_clean(&format!(
        "xoxz-{}-{}",
        fake(DIGITS, 12, 77),
        fake(B62, 24, 78)
    ));
}

#[test]
fn slack_webhooks() {
    let path = format!(
        "T{}/B{}/{}",
        fake(UPPER_NUM, 8, 80),
        fake(UPPER_NUM, 8, 81),
        fake(B62, 24, 82)
    );
    let url = format!("https://hooks.slack.com/services/{path}");
    let out = assert_redacts("slack-webhook", &format!("url = \"{url}\""), &path);
    assert_eq!(
        out.text,
        "url = \"https://hooks.slack.com/services/[REDACTED:slack-webhook]\""
    );
    let placeholder = format!("T00000000/B00000000/{}", "X".repeat(24));
    assert_example(
        "slack-webhook",
        &format!("https://hooks.slack.com/services/{placeholder}"),
        &placeholder,
    );
    assert_clean("see https://hooks.slack.com/services/ for details");
}

#[test]
fn stripe_live_keys() {
    let secret = format!("sk_live_{}", fake(B62, 24, 90));
    assert_redacts("stripe-live-key", &format!("STRIPE={secret}"), &secret);
    let restricted = format!("rk_live_{}", fake(B62, 99, 91));
    assert_redacts("stripe-live-key", &format!("'{restricted}'"), &restricted);
    // Publishable keys are public by design; test keys are not live.
    assert_clean(&format!("pk_live_{}", fake(B62, 24, 92)));
    assert_clean(&format!("sk_test_{}", fake(B62, 24, 93)));
    let placeholder = format!("sk_live_{}", "x".repeat(24));
    assert_example("stripe-live-key", &placeholder, &placeholder);
}

#[test]
fn google_api_keys() {
    let key = format!("AIza{}", fake(B64URL, 35, 100));
    let out = assert_redacts("google-api-key", &format!("key={key}&q=1"), &key);
    assert_eq!(out.text, "key=[REDACTED:google-api-key]&q=1");
    assert_clean(&format!("AIza{}", fake(B64URL, 20, 101)));
    let placeholder = format!("AIza{}", "x".repeat(35));
    assert_example("google-api-key", &placeholder, &placeholder);
}

#[test]
fn anthropic_keys_win_over_openai() {
    let key = format!("sk-ant-api03-{}AA", fake(B64URL, 93, 110));
    for text in [
        format!("ANTHROPIC_API_KEY={key}"),
        format!("OPENAI_API_KEY=\"{key}\""),
        format!("x-api-key: {key}"),
    ] {
        assert_redacts("anthropic-api-key", &text, &key);
    }
    assert_clean(&format!("sk-ant-{}", fake(B64URL, 20, 111)));
    let placeholder = format!("sk-ant-api03-{}", "x".repeat(40));
    assert_example("anthropic-api-key", &placeholder, &placeholder);
}

#[test]
fn openai_keys() {
    let legacy = format!("sk-{}", fake(B62, 48, 120));
    assert_redacts("openai-api-key", &format!("key: {legacy}"), &legacy);
    let project = format!("sk-proj-{}", fake(B64URL, 156, 121));
    assert_redacts(
        "openai-api-key",
        &format!("OPENAI_API_KEY={project}"),
        &project,
    );
    // A kebab-case identifier is not a key; a body of one letter is a
    // placeholder for one.
    assert_clean("class=\"sk-some-long-kebab-case-css-class-name-here\"");
    let placeholder = format!("sk-{}", "x".repeat(48));
    assert_example("openai-api-key", &placeholder, &placeholder);
    let doc = format!("sk-proj-{}{}", fake(B62, 30, 124), "EXAMPLE");
    assert_example("openai-api-key", &format!("OPENAI_API_KEY={doc}"), &doc);
    assert_clean(&format!("sk-{}", fake(B62, 20, 122)));
    assert_clean(&format!("task-{}", fake(B62, 48, 123)));
}

#[test]
fn jwts() {
    let jwt = format!(
        "eyJ{}.eyJ{}.{}",
        fake(B64URL, 30, 130),
        fake(B64URL, 60, 131),
        fake(B64URL, 43, 132)
    );
    let out = assert_redacts(
        "jwt",
        &format!("Cookie: session={jwt}; Path=/"),
        &fake(B64URL, 43, 132),
    );
    assert_eq!(out.text, "Cookie: session=[REDACTED:jwt]; Path=/");
    assert_eq!(out.hits[0].severity, RuleSeverity::Critical);
    // A token whose claims name a placeholder is a documentation sample.
    let header = base64url(br#"{"alg":"HS256","typ":"JWT"}"#);
    for claims in [
        r#"{"sub":"1234567890","name":"John Doe","iat":1516239022}"#,
        r#"{"sub":"user@example.com"}"#,
    ] {
        let sample = format!(
            "{header}.{}.{}",
            base64url(claims.as_bytes()),
            fake(B64URL, 43, 135)
        );
        assert_example("jwt", &format!("token: {sample}"), &sample);
    }
    let real = format!(
        "{header}.{}.{}",
        base64url(br#"{"sub":"u_8f3k2","exp":1900000000}"#),
        fake(B64URL, 43, 136)
    );
    assert_real("jwt", &format!("t={real}"), &real);
    assert_clean(&format!(
        "eyJ{}.{}",
        fake(B64URL, 30, 133),
        fake(B64URL, 30, 134)
    ));
    assert_clean("eyJhbGci.e30.x");
    assert_clean("version 1.2.3 of eyJ");
}

#[test]
fn url_credentials_keep_scheme_user_and_host() {
    let pw = fake(B62, 16, 140);
    let out = assert_redacts(
        "url-credentials",
        &format!("DATABASE_URL=postgres://app:{pw}@db.internal:5432/app"),
        &pw,
    );
    assert_eq!(
        out.text,
        "DATABASE_URL=postgres://app:[REDACTED:url-credentials]@db.internal:5432/app"
    );
    let pw = format!("{}%40{}", fake(B62, 6, 141), fake(B62, 6, 142));
    assert_redacts(
        "url-credentials",
        &format!("redis://default:{pw}@cache:6379"),
        &pw,
    );
    assert_eq!(
        out_severity(&format!("redis://default:{pw}@cache:6379")),
        "concern"
    );
    // Passwords documentation and URL test suites write are redacted too,
    // as examples.
    for (text, password) in [
        ("postgres://user:password@localhost/db", "password"),
        ("https://user:pass@host.example/", "pass"),
        ("amqp://guest:guest@localhost", ":guest@"),
        ("https://Aladdin:opensesame@proxy:8080", "opensesame"),
        ("ftp://a:b@c", "b"),
    ] {
        let out = assert_example("url-credentials", text, password);
        assert!(
            out.text.contains(":[REDACTED:url-credentials]@"),
            "{}",
            out.text
        );
    }
    // Templates are references, not passwords.
    for text in [
        "redis://:${REDIS_PASSWORD}@redis:6379",
        "postgres://app:$DB_PASS@db/app",
        "mysql://root:<password>@localhost",
        "https://github.com/owner/repo",
        "git@github.com:owner/repo.git",
        "http://[::1]:8080/path",
        "ssh://git@host:22/x",
        "https://user@host:8080/path",
    ] {
        assert_clean(text);
    }
}

/// The severity of the one hit in `text`.
#[track_caller]
fn out_severity(text: &str) -> &'static str {
    let out = redact(text);
    assert_eq!(out.hits.len(), 1, "{text:?}: {:?}", out.hits);
    out.hits[0].severity.as_str()
}

#[test]
fn bearer_tokens() {
    let token = fake(B64URL, 40, 150);
    let out = assert_redacts(
        "bearer-token",
        &format!("curl -H 'Authorization: Bearer {token}' https://api"),
        &token,
    );
    assert_eq!(
        out.text,
        "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://api"
    );
    let placeholder = "YOUR_ACCESS_TOKEN_GOES_HERE";
    assert_example(
        "bearer-token",
        &format!("Authorization: Bearer {placeholder}"),
        placeholder,
    );
    for text in [
        "curl -H \"Authorization: Bearer $TOKEN\"",
        "Authorization: Bearer <token>",
        "bearer token authentication is described in RFC 6750",
        "Authorization: Bearer ${{ secrets.GITHUB_TOKEN }}",
    ] {
        assert_clean(text);
    }
}

#[test]
fn generic_assignments_redact_only_the_value() {
    let v = fake(B62, 24, 160);
    let short = format!("Tr0ub{}4dor&3x", "");
    let hex = fake(HEX, 32, 161);
    let cases = [
        (
            format!("DB_PASSWORD={v}\n"),
            "DB_PASSWORD=[REDACTED:generic-secret]\n",
        ),
        (
            format!("password: \"{v}\"\n"),
            "password: \"[REDACTED:generic-secret]\"\n",
        ),
        (
            format!("{{\"client_secret\": \"{v}\"}}"),
            "{\"client_secret\": \"[REDACTED:generic-secret]\"}",
        ),
        (
            format!("api_key = '{v}'"),
            "api_key = '[REDACTED:generic-secret]'",
        ),
        (
            format!("  apiKey: \"{v}\","),
            "  apiKey: \"[REDACTED:generic-secret]\",",
        ),
        (
            format!("secretKey := \"{v}\""),
            "secretKey := \"[REDACTED:generic-secret]\"",
        ),
        (
            format!("'password' => '{short}',"),
            "'password' => '[REDACTED:generic-secret]',",
        ),
        (
            format!("ACCESS_KEY={hex}"),
            "ACCESS_KEY=[REDACTED:generic-secret]",
        ),
        (
            format!("{{\\\"token\\\": \\\"{v}\\\"}}"),
            "{\\\"token\\\": \\\"[REDACTED:generic-secret]\\\"}",
        ),
        (
            format!("run --password={v} now"),
            "run --password=[REDACTED:generic-secret] now",
        ),
        (
            format!("[db]\npasswd = {v}"),
            "[db]\npasswd = [REDACTED:generic-secret]",
        ),
    ];
    for (text, expected) in cases {
        let secret = if text.contains(&short) {
            short.as_str()
        } else if text.contains(&hex) {
            hex.as_str()
        } else {
            v.as_str()
        };
        let out = assert_redacts("generic-secret", &text, secret);
        assert_eq!(out.text, expected);
        assert_eq!(out.hits[0].severity, RuleSeverity::Concern);
    }
}

#[test]
fn generic_assignments_in_common_config_files() {
    let v = fake(B62, 32, 165);
    let django = format!(
        "django-insecure-{}#{}$x(!{}",
        fake(B62, 12, 166),
        fake(B62, 8, 167),
        fake(B62, 6, 168)
    );
    for (text, secret) in [
        (format!("SECRET_KEY = '{django}'\n"), django.as_str()),
        (
            format!("//registry.npmjs.org/:_authToken=npm_{v}\n"),
            v.as_str(),
        ),
        (
            format!("[pypi]\nusername = __token__\npassword = pypi-{v}\n"),
            v.as_str(),
        ),
        (
            format!("data:\n  password: {}\n", fake(B64, 24, 169)),
            &fake(B64, 24, 169),
        ),
        (format!("DB_PASS={v}\n"), v.as_str()),
        (format!("MYSQL_PWD=\"{v}\"\n"), v.as_str()),
        (
            format!("secret_key_base: {}\n", fake(HEX, 128, 170)),
            &fake(HEX, 128, 170),
        ),
    ] {
        assert_redacts("generic-secret", &text, secret);
    }
}

/// What is clearly not a value is left alone: references, templates,
/// types, calls and expressions, names that describe a secret or only hold
/// the letters of one, and values under 8 characters.
#[test]
fn generic_assignments_ignore_code_and_references() {
    for text in [
        "password = input()",
        "token: ${TOKEN}",
        "secret = os.environ[\"X\"]",
        "password: <your-password>",
        "api_key = None",
        "token = get_token()",
        "password_field = \"password\"",
        "\"token\": \"string\"",
        "token: str",
        "password: \"hunter2\"",
        "let token = self.next_token()?;",
        "token: TokenStream,",
        "secret: [u8; 32],",
        "api_key: Option<String>,",
        "Token::Ident => foo,",
        "if token == \"end_of_file\" {",
        "max_tokens = 4096",
        "TOKEN_LIMIT=100000",
        "token_url = \"https://oauth2.example.org/token\"",
        "password_file = \"/run/secrets/db_password\"",
        "secret_name: prod-database-credentials",
        "tokenizer = Tokenizer.from_pretrained(\"bert-base-uncased\")",
        "tokenizer = \"bert-base-uncased\"",
        "tokens = \"a b (c d) e\"",
        "passenger_name = \"Jane Q. Public\"",
        "apiKey: process.env.API_KEY,",
        "token = settings.SECRET_TOKEN",
        "\"passwordHint\": \"Your first pet's name\"",
        "token_type: \"Bearer\"",
        "password:\n  from_secret: db_password",
        "password: db_password",
        "api_key: &str,",
        "token => self.emit(token),",
        "Secret: MySecretManagerConfig",
        "access_key: AccessKeyConfig::default(),",
        "password = \"{{ vault_db_password }}\"",
        "password = '%(db_password)s'",
        "token: '%s' % value",
        "secret_key = \"***\"",
        "bypass = true",
        "passes: 3",
        "compass_heading = north_by_northwest",
        "pwd = os.getcwd()",
        "PWD=/home/user/src",
        "password: \"<b>{}</b>\"",
        "?token=abc&next=/home",
        "token = next_token",
        "let private_key = provider",
        "token_pos: token_start..token_start + token_len,",
        "move |token: CancellationToken| {",
        "ExporterMasterSecret => \"EXPORTER_SECRET\",",
        "Error::Token => \"invalid token\",",
        "force_pass: true/false",
        "password = \"\"",
        "password: [REDACTED:generic-secret]",
    ] {
        assert_clean(text);
    }
    for text in [
        format!("const SECRET_HASH: &str = \"{}\";", fake(HEX, 64, 230)),
        format!("api_key_sha256 = '{}'", fake(HEX, 64, 231)),
        format!("secretId: {}", fake(B62, 20, 232)),
    ] {
        assert_clean(&text);
    }
}

/// Placeholders, famous examples, simple sequences, identifiers and
/// sentences assigned to a secret's name are literals of 8 or more
/// characters: redacted, flagged info.
#[test]
fn generic_placeholders_and_words_are_redacted_as_examples() {
    for (text, value) in [
        ("password = \"changeme\"", "changeme"),
        (
            "secret = \"correct horse battery staple\"",
            "correct horse battery staple",
        ),
        ("api_key = 'your-api-key-here'", "your-api-key-here"),
        ("PASSWORD=********", "********"),
        ("password: \"password123\"", "password123"),
        ("DB_PASSWORD=12345678", "12345678"),
        ("secret: sensitive_value", "sensitive_value"),
        (
            "  token: \"Please enter a token.\"",
            "Please enter a token.",
        ),
        ("password = hunter2hunter2", "hunter2hunter2"),
    ] {
        assert_example("generic-secret", text, value);
    }
}

/// A password someone chose is redacted and flagged concern, words and
/// passphrases included, quoted or not, in code and in configuration.
#[test]
fn chosen_passwords_and_passphrases_are_secrets() {
    for (text, value) in [
        (
            "password = \"velvet orchard lantern 42\"",
            "velvet orchard lantern 42",
        ),
        (
            "passphrase: 'purple monkey dishwasher'",
            "purple monkey dishwasher",
        ),
        (
            "DB_PASSWORD=Velvet-Orchard-Lantern",
            "Velvet-Orchard-Lantern",
        ),
        ("password: mydogmax1985", "mydogmax1985"),
        ("password = BlueHarbor#1987", "BlueHarbor#1987"),
        ("\"password\": \"kqzvtmwpxbrl\"", "kqzvtmwpxbrl"),
        ("--password=!Sunset-Ferry-19", "!Sunset-Ferry-19"),
        ("  db_pass: \"$ecr3t-Harbor!\"", "$ecr3t-Harbor!"),
        (
            "X-Api-Key: Xk7pKkjAyHK0xhQmYreBRTrl",
            "Xk7pKkjAyHK0xhQmYreBRTrl",
        ),
        // The name right after multi-byte characters (found by proptest).
        ("←฿𑁒password=mydogmax1985", "mydogmax1985"),
    ] {
        assert_real("generic-secret", text, value);
    }
}
