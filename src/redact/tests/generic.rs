//! The generic assignment rule on positive and negative samples: which
//! names and values are literals assigned to a secret's name, which are
//! references or code, and which redacted values are flagged as examples.
//! Fake secrets come from [`fake`] at run time.

use super::*;

/// `grep -rn` puts `path:line:` before every line, and a file name can hold
/// a secret's name: the rule's first match (`secret_1.txt:3:password`) is
/// rejected, and the assignment inside it must still be found.
#[test]
fn a_rejected_match_does_not_hide_the_assignment_inside_it() {
    let v = fake(B62, 10, 330);
    for (text, value) in [
        (
            "config/secret_1.txt:3:secret = \"correct horse battery staple\"".to_string(),
            "correct horse battery staple".to_string(),
        ),
        (format!("keys/token_2.env:1:DB_PASSWORD={v}"), v.clone()),
        (format!("passwords.txt:9:password: \"{v}\""), v.clone()),
    ] {
        assert_redacts("generic-secret", &text, &value);
    }
    // Text made of nothing but rejected matches is still scanned to its end
    // (its speed is measured in the benchmark).
    let hostile = "token:".repeat(64 * 1024 / 6);
    assert!(redact(&hostile).hits.is_empty());
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
        "fn Check(clienttoken : super::super::Win32::Foundation:: HANDLE, x : u32);",
        "pub const TOKEN_READ: TOKEN_ACCESS_MASK = 131080u32;",
        "pub const PrivateKeyFlags: X509PrivateKeyFlags = 0x0001_0000u32;",
        "pub StencilPassOp: D3D10_STENCIL_OP,",
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

/// A number is code only with a Rust type suffix (`131080u32`): digits
/// alone, or hex, assigned to a secret's name in configuration are values.
#[test]
fn numbers_without_a_type_suffix_are_values() {
    let key = format!("0x{}", fake(HEX, 64, 233));
    for (text, value) in [
        ("password: 84736291".to_owned(), "84736291"),
        (format!("private_key: {key}"), key.as_str()),
    ] {
        assert_redacts("generic-secret", &text, value);
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
