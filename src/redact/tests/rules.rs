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
