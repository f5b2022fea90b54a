//! Keys in every wrapping (a PEM block as one JSON or YAML string with `\n`
//! escapes, a PEM block in base64) and the formats added with them: Azure
//! SAS signatures, Stripe webhook secrets, Discord webhooks, Mailgun keys,
//! password hashes, cookie files, `user:password` lines in files named like
//! credentials, and a service account's `private_key_id`.

use super::kinds::Rule;
use super::*;

/// What `grep -oE '[A-Za-z0-9+/=]{16,}'` prints of `text`.
fn base64_runs(text: &str) -> String {
    let runs = regex::Regex::new(r"[A-Za-z0-9+/=]{16,}").unwrap();
    runs.find_iter(text)
        .map(|m| m.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_key_as_one_escaped_json_string_is_masked_line_by_line_after() {
    let (lines, block) = private_key_lines(700, 26);
    let escaped = block.replace('\n', "\\n");
    let json = format!(
        "{{\n  \"type\": \"service_account\",\n  \"private_key_id\": \"{}\",\n  \
         \"private_key\": \"{escaped}\",\n  \"client_email\": \"x@p.iam.gserviceaccount.com\"\n}}\n",
        fake(HEX, 40, 720)
    );
    let redactor = Redactor::new();
    let read = redactor.redact(&json);
    for line in &lines {
        assert!(!read.text.contains(&line[..24]), "{}", read.text);
    }
    // The grep an agent runs afterwards prints every line of it bare.
    let grepped = redactor.redact(&base64_runs(&json));
    for line in &lines {
        assert!(!grepped.text.contains(&line[..24]), "{}", grepped.text);
    }
    assert!(!read.text.contains(&fake(HEX, 40, 720)), "the key id");
}

#[test]
fn a_key_in_base64_is_redacted_and_each_of_its_lines_remembered() {
    let (_, block) = private_key_lines(730, 10);
    let encoded = base64(block.as_bytes());
    Rule("encoded-private-key")
        .real("  tls.key: ", &encoded, "\n  tls.crt: LS0tCg==\n")
        .real("ssh-privatekey: ", &encoded, "");
    // Wrapped at 76 characters, as a *.key file holds it.
    let wrapped: Vec<&str> = encoded
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let file = format!("{}\n", wrapped.join("\n"));
    let redactor = Redactor::new();
    let read = redactor.redact(&file);
    assert_eq!(read.text, "[REDACTED:encoded-private-key]\n");
    let grepped = redactor.redact(&base64_runs(&file));
    for line in &wrapped {
        assert!(
            !grepped.text.contains(&line[..24.min(line.len())]),
            "{}",
            grepped.text
        );
    }
    // In `grep -rn` output the next file's line is not taken for the key's.
    let grep = format!("k8s/tls.yml:3:tls.key: {encoded}\nconfig/app.yml:1:name: web\n");
    let out = Redactor::new().redact(&grep);
    assert!(
        out.text.ends_with("\nconfig/app.yml:1:name: web\n"),
        "{}",
        out.text
    );
    // A certificate or a public key in base64 is not a secret.
    let cert = format!(
        "{}\n{}\n{}\n",
        "-----BEGIN CERTIFICATE-----",
        fake(B64, 64, 740),
        "-----END CERTIFICATE-----"
    );
    Rule("encoded-private-key").clean(&format!("tls.crt: {}\n", base64(cert.as_bytes())));
}

#[test]
fn azure_sas_signatures() {
    let sig = format!(
        "{}%3D",
        fake(B64, 43, 750).replace('+', "%2B").replace('/', "%2F")
    );
    Rule("azure-sas-signature")
        .real(
            "https://acct.blob.core.windows.net/c/b.bin?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01T00:00:00Z&sig=",
            &sig,
            " done\n",
        )
        .real(
            "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&sr=c&sp=rl&sig=",
            &sig,
            "\n",
        )
        .clean("?sig=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG")
        .clean("hash: ?sv=1&sig=short");
}

#[test]
fn stripe_webhook_discord_and_mailgun() {
    let whsec = key("whsec_", B62, 32, 760);
    Rule("service-token")
        .real("STRIPE_WEBHOOK=", &whsec, "\n")
        .real("The signing secret is ", &whsec, ", keep it safe.")
        .real("MAILGUN_API_KEY=", &key("key-", HEX, 32, 761), "\n")
        .clean("let cache_key = \"user-key-d41d8cd98f00b204e9800998ecf8427e\";");
    Rule("discord-webhook").real(
        "https://discord.com/api/webhooks/410377196554952704/",
        &fake(B64URL, 68, 762),
        "\n",
    );
}

#[test]
fn password_hashes_cookie_files_and_key_ids() {
    Rule("password-hash")
        .real(
            "admin:",
            &format!("$apr1${}${}", fake(B62, 8, 770), fake(B62, 22, 771)),
            "\n",
        )
        .real("deploy:", &format!("$2y$10${}", fake(B62, 53, 772)), "\n")
        .real(
            "root:",
            &format!("$6${}${}", fake(B62, 16, 773), fake(B62, 86, 774)),
            ":19000:0:99999:7:::\n",
        )
        .real("web:", &format!("{{SHA}}{}=", fake(B64, 27, 775)), "\n")
        .clean("let pattern = \"$2y$\";");
    Rule("cookie-file").real(
        ".example.com\tTRUE\t/\tTRUE\t2147483647\tsessionid\t",
        &fake(B62, 32, 780),
        "\n",
    );
    Rule("cookie-file").clean(".example.com\tTRUE\t/\tFALSE\t0\tlang\ten\n");
    Rule("gcp-private-key-id").real("  \"private_key_id\": \"", &fake(HEX, 40, 790), "\",\n");
}

#[test]
fn user_password_lines_only_in_files_named_like_credentials() {
    let password = format!("{}!{}", fake(B62, 6, 800), fake(B62, 5, 801));
    let text = format!("# logins\nadmin:{password}\nbackup:{password}x\n");
    let redactor = Redactor::new();
    let named = redactor.redact_named(Some("credentials.txt"), &text);
    assert!(!named.text.contains(&password), "{}", named.text);
    assert_eq!(named.hits.len(), 2);
    assert_eq!(named.hits[0].rule, "credential-line");
    // Anywhere else such a line is a host and port, a time, a mapping.
    for name in [None, Some("notes.txt")] {
        let out = Redactor::new().redact_named(name, &text);
        assert_eq!(out.text, text);
    }
    let out = Redactor::new().redact_named(Some("passwords"), "db:5432\nweb:web\n");
    assert!(out.hits.is_empty(), "{out:?}");
}

#[test]
fn an_example_value_is_masked_wherever_grep_prints_it_bare() {
    // bob's short password makes the Basic value an example; it is still
    // masked when a grep prints the base64 alone.
    let basic = base64(b"bob:s3cret");
    let redactor = Redactor::new();
    let read = redactor.redact(&format!("Authorization: Basic {basic}\n"));
    assert_eq!(read.hits[0].severity, RuleSeverity::Info);
    let grepped = redactor.redact(&format!("call.http:2:{basic}\n"));
    assert!(!grepped.text.contains(&basic[..8]), "{}", grepped.text);
}
