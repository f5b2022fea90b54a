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

/// One rule's samples, each checked as it is given. A sample's text is the
/// words before the value, the value (which must not survive), and the words
/// after it.
pub(super) struct Rule(pub(super) &'static str);

impl Rule {
    /// Redacted by the rule, exactly one hit.
    #[track_caller]
    pub(super) fn redacts(&self, before: &str, value: &str, after: &str) -> &Self {
        assert_redacts(self.0, &format!("{before}{value}{after}"), value);
        self
    }

    /// Redacted, and flagged with the rule's own severity.
    #[track_caller]
    pub(super) fn real(&self, before: &str, value: &str, after: &str) -> &Self {
        assert_real(self.0, &format!("{before}{value}{after}"), value);
        self
    }

    /// Redacted, and flagged `info`: it looks like an example.
    #[track_caller]
    pub(super) fn example(&self, before: &str, value: &str, after: &str) -> &Self {
        assert_example(self.0, &format!("{before}{value}{after}"), value);
        self
    }

    /// A placeholder on its own: the whole text is the value, an example.
    #[track_caller]
    pub(super) fn placeholder(&self, value: &str) -> &Self {
        self.example("", value, "")
    }

    /// The rule does not fire (another may).
    #[track_caller]
    pub(super) fn not_rule(&self, text: &str) -> &Self {
        assert_not_rule(self.0, text);
        self
    }

    /// Nothing at all is redacted: what the rule must not mistake for its
    /// secret.
    #[track_caller]
    pub(super) fn clean(&self, text: &str) -> &Self {
        assert_clean(text);
        self
    }
}

/// `prefix` and `len` copies of `c`: a placeholder in a key's shape.
pub(super) fn filler(prefix: &str, c: &str, len: usize) -> String {
    format!("{prefix}{}", c.repeat(len))
}

#[test]
fn private_key_negatives() {
    // Parsing code and docs quote the marker lines without a key.
    let (begin, end) = (pem_line("BEGIN", ""), pem_line("END", ""));
    let body = fake(B64, 64, 11);
    Rule("private-key")
        .clean(&format!(
            "const BEGIN: &str = \"{begin}\";\nconst END: &str = \"{end}\";\n"
        ))
        .clean(&format!(
            "{}\n...\n{}\n",
            pem_line("BEGIN", "RSA "),
            pem_line("END", "RSA ")
        ))
        // Public keys and certificates are not secrets.
        .clean(&format!(
            "-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n"
        ))
        .clean(&format!(
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
    // redacted, flagged info. Too short, too long, glued to a word: no key.
    Rule("aws-access-key-id")
        .example("id = ", &format!("AKIA{}{}", "IOSFODNN7", "EXAMPLE"), "")
        .example("id = ", &format!("AKIA{}", "ABCDEFGHJKMNPQRS"), "")
        .clean(&format!("id = {}", key("AKIA", UPPER_NUM, 15, 24)))
        .clean(&format!("id = {}", key("AKIA", UPPER_NUM, 17, 25)))
        .clean(&format!("id = {}", key("XAKIA", UPPER_NUM, 16, 26)))
        .clean("THE_AKIAAAAAAAAAAAAAAAAA_NAME");
}

#[test]
fn aws_secret_access_keys() {
    let secret = fake(B64, 40, 30);
    Rule("aws-secret-access-key")
        .redacts("aws_secret_access_key = ", &secret, "\n")
        .redacts("AWS_SECRET_ACCESS_KEY=\"", &secret, "\"\n")
        .redacts("{\"SecretAccessKey\": \"", &secret, "\"}")
        .redacts("secretAccessKey: '", &secret, "'")
        .example(
            "aws_secret_access_key = ",
            &format!("wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}", "EXAMPLEKEY"),
            "",
        )
        .clean("aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}")
        // A length off by one is no secret key (the generic rule may fire).
        .not_rule(&format!("aws_secret_access_key = {}", fake(B64, 39, 31)))
        .not_rule(&format!("aws_secret_access_key = {}", fake(B64, 41, 32)));
}

#[test]
fn github_tokens() {
    for (i, prefix) in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].iter().enumerate() {
        let token = format!("{prefix}{}", fake(B62, 36, 40 + i as u64));
        let out = assert_redacts("github-token", &format!("GH={token} rest"), &token);
        assert_eq!(out.text, "GH=[REDACTED:github-token] rest");
    }
    let pat = format!("github_pat_{}_{}", fake(B62, 22, 46), fake(B62, 59, 47));
    Rule("github-token")
        .redacts("token: ", &pat, "")
        .placeholder(&filler("ghp_", "x", 36))
        .clean(&key("ghp_", B62, 20, 48))
        .clean(&key("github_pat_", B62, 30, 49))
        .clean(&key("my_ghp_", B62, 36, 50));
}

#[test]
fn gitlab_tokens() {
    Rule("gitlab-token")
        .redacts("CI_TOKEN=", &key("glpat-", B62, 20, 60), "")
        .redacts("x ", &key("gldt-", B64URL, 24, 61), " y")
        .placeholder(&filler("glpat-", "x", 20))
        .clean(&key("glpat-", B62, 12, 62));
}

#[test]
fn slack_tokens() {
    let bot = slack_bot_token(70);
    let user = format!(
        "xoxp-{}-{}-{}-{}",
        fake(DIGITS, 10, 73),
        fake(DIGITS, 10, 74),
        fake(DIGITS, 12, 75),
        fake(HEX, 32, 76)
    );
    // Documentation's ids count up; a token with no numeric ids at all is
    // a placeholder. Both are redacted as examples.
    let counted = format!(
        "xoxb-{}-{}-{}",
        "123456789012",
        "1234567890123",
        fake(B62, 24, 79)
    );
    Rule("slack-token")
        .redacts("SLACK_BOT=", &bot, "")
        .redacts("", &user, "\n")
        .example("SLACK_BOT=", &counted, "")
        .placeholder(&format!("xoxp-{}-{}", "abcdefghij", "klmnopqrstuv"))
        .clean("xoxb-your-bot-token-here")
        .clean("xoxb-not-a-real-token-value")
        .clean(&format!(
            "xoxz-{}-{}",
            fake(DIGITS, 12, 77),
            fake(B62, 24, 78)
        ));
}

#[test]
fn slack_webhooks() {
    let path = slack_webhook_path(80);
    let url = format!("https://hooks.slack.com/services/{path}");
    let out = assert_redacts("slack-webhook", &format!("url = \"{url}\""), &path);
    assert_eq!(
        out.text,
        "url = \"https://hooks.slack.com/services/[REDACTED:slack-webhook]\""
    );
    Rule("slack-webhook")
        .example(
            "https://hooks.slack.com/services/",
            &filler("T00000000/B00000000/", "X", 24),
            "",
        )
        .clean("see https://hooks.slack.com/services/ for details");
}

#[test]
fn stripe_live_keys() {
    // Publishable keys are public by design; secret test keys are
    // `service-token`s.
    Rule("stripe-live-key")
        .redacts("STRIPE=", &key("sk_live_", B62, 24, 90), "")
        .redacts("'", &key("rk_live_", B62, 99, 91), "'")
        .clean(&key("pk_live_", B62, 24, 92))
        .not_rule(&key("sk_test_", B62, 24, 93))
        .placeholder(&filler("sk_live_", "x", 24));
}

#[test]
fn google_api_keys() {
    let secret = key("AIza", B64URL, 35, 100);
    let out = assert_redacts("google-api-key", &format!("key={secret}&q=1"), &secret);
    assert_eq!(out.text, "key=[REDACTED:google-api-key]&q=1");
    Rule("google-api-key")
        .clean(&key("AIza", B64URL, 20, 101))
        .placeholder(&filler("AIza", "x", 35));
}

#[test]
fn anthropic_keys_win_over_openai() {
    let secret = format!("sk-ant-api03-{}AA", fake(B64URL, 93, 110));
    Rule("anthropic-api-key")
        .redacts("ANTHROPIC_API_KEY=", &secret, "")
        .redacts("OPENAI_API_KEY=\"", &secret, "\"")
        .redacts("x-api-key: ", &secret, "")
        .clean(&key("sk-ant-", B64URL, 20, 111))
        .placeholder(&filler("sk-ant-api03-", "x", 40));
}

#[test]
fn openai_keys() {
    // A kebab-case identifier is not a key; a body of one letter is a
    // placeholder for one.
    let doc = format!("sk-proj-{}{}", fake(B62, 30, 124), "EXAMPLE");
    Rule("openai-api-key")
        .redacts("key: ", &key("sk-", B62, 48, 120), "")
        .redacts("OPENAI_API_KEY=", &key("sk-proj-", B64URL, 156, 121), "")
        .clean("class=\"sk-some-long-kebab-case-css-class-name-here\"")
        .placeholder(&filler("sk-", "x", 48))
        .example("OPENAI_API_KEY=", &doc, "")
        .clean(&key("sk-", B62, 20, 122))
        .clean(&key("task-", B62, 48, 123));
}

#[test]
fn jwts() {
    let jwt = jwt(30, 60, 130);
    let out = assert_redacts_only("jwt", "Cookie: session=", &jwt, "; Path=/");
    assert_eq!(out.hits[0].severity, RuleSeverity::Critical);
    // A token whose claims name a placeholder is a documentation sample.
    let header = base64url(br#"{"alg":"HS256","typ":"JWT"}"#);
    let signed = |claims: &str, seed| {
        format!(
            "{header}.{}.{}",
            base64url(claims.as_bytes()),
            fake(B64URL, 43, seed)
        )
    };
    let john_doe = r#"{"sub":"1234567890","name":"John Doe","iat":1516239022}"#;
    Rule("jwt")
        .example("token: ", &signed(john_doe, 135), "")
        .example("token: ", &signed(r#"{"sub":"user@example.com"}"#, 135), "")
        .real(
            "t=",
            &signed(r#"{"sub":"u_8f3k2","exp":1900000000}"#, 136),
            "",
        )
        .clean(&format!(
            "eyJ{}.{}",
            fake(B64URL, 30, 133),
            fake(B64URL, 30, 134)
        ))
        .clean("eyJhbGci.e30.x")
        .clean("version 1.2.3 of eyJ");
}

#[test]
fn url_credentials_keep_scheme_user_and_host() {
    let pw = fake(B62, 16, 140);
    assert_redacts_only(
        "url-credentials",
        "DATABASE_URL=postgres://app:",
        &pw,
        "@db.internal:5432/app",
    );
    let pw = format!("{}%40{}", fake(B62, 6, 141), fake(B62, 6, 142));
    Rule("url-credentials").redacts("redis://default:", &pw, "@cache:6379");
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
    // Templates are references, not passwords; URLs without one have none.
    Rule("url-credentials")
        .clean("redis://:${REDIS_PASSWORD}@redis:6379")
        .clean("postgres://app:$DB_PASS@db/app")
        .clean("mysql://root:<password>@localhost")
        .clean("https://github.com/owner/repo")
        .clean("git@github.com:owner/repo.git")
        .clean("http://[::1]:8080/path")
        .clean("ssh://git@host:22/x")
        .clean("https://user@host:8080/path");
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
    Rule("bearer-token")
        .example("Authorization: Bearer ", "YOUR_ACCESS_TOKEN_GOES_HERE", "")
        .clean("curl -H \"Authorization: Bearer $TOKEN\"")
        .clean("Authorization: Bearer <token>")
        .clean("bearer token authentication is described in RFC 6750")
        .clean("Authorization: Bearer ${{ secrets.GITHUB_TOKEN }}");
}
