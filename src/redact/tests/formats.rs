//! Samples of the rules for credentials in configuration files, command
//! lines and headers, and for tokens with a documented prefix: what each
//! must redact (as a secret or as an example) and what it must leave alone.

use super::kinds::{Rule, filler};
use super::*;

/// Two base32 digits of an age key's alphabet.
const AGE: &str = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

#[test]
fn service_tokens() {
    Rule("service-token")
        .real("NPM_TOKEN=", &key("npm_", B62, 36, 600), "\n")
        .real("", &key("pypi-AgEIcHlwaS5vcmc", B64URL, 60, 601), "")
        .real("", &key("shpat_", HEX, 32, 602), "")
        .real("", &key("dop_v1_", HEX, 64, 603), "")
        .real(
            "",
            &format!("SG.{}.{}", fake(B64URL, 22, 604), fake(B64URL, 43, 605)),
            "",
        )
        .real("VAULT_TOKEN=", &key("hvs.", B64URL, 95, 606), "")
        .real("", &key("dapi", HEX, 32, 607), "")
        .real("", &key("hf_", LETTERS, 34, 608), "")
        .real("", &key("glc_", B62, 40, 609), "")
        .real("", &key("lin_api_", B62, 40, 610), "")
        .real("", &key("AGE-SECRET-KEY-1", AGE, 58, 611), "")
        .real("", &key("sk_test_", B62, 24, 93), "")
        .real(
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=",
            &format!("{}==", fake(B64, 86, 616)),
            ";EndpointSuffix=core.windows.net",
        )
        .placeholder(&filler("npm_", "x", 36))
        .placeholder(&filler("shpat_", "0", 32))
        .clean("npm_config_cache=/tmp/npm")
        .clean("let key_name = \"key-value\";")
        .clean("if sk_test_mode { run() }")
        .clean("hf_hub_download(repo_id, filename)");
}

#[test]
fn telegram_and_azure_secrets() {
    Rule("telegram-bot-token")
        .real(
            "bot = ",
            &format!("{}:A{}", fake(DIGITS, 10, 612), fake(B64URL, 34, 613)),
            "",
        )
        .clean("at 12345678:Abstract syntax");
    Rule("azure-client-secret")
        .real(
            "client_credential: ",
            &format!("{}8Q~{}", fake(B62, 3, 614), fake(B62, 34, 615)),
            "",
        )
        .clean("see Q~ in the docs");
}

#[test]
fn basic_credentials_in_headers_and_stored_auth() {
    let pair = |user: &str, pw: &str| base64(format!("{user}:{pw}").as_bytes());
    let real = pair("svc", &fake(B62, 16, 620));
    Rule("basic-auth")
        .real("Authorization: Basic ", &real, "\n")
        .real("curl -H 'authorization: basic ", &real, "' https://x")
        .real(
            r#"{"auths": {"registry.internal": {"auth": ""#,
            &real,
            r#""}}}"#,
        )
        .real("//registry.internal/:_auth=", &real, "\n")
        .example("Authorization: Basic ", &pair("Aladdin", "open sesame"), "")
        .example("Authorization: Basic ", &base64(b"no colon in it"), "")
        .clean(&format!(r#""auth": "{}""#, base64(b"no colon in it")))
        .clean("Use basic authentication for the admin interface.")
        .clean(r#"headers = {"Authorization": "Basic " + encoded}"#);
}

#[test]
fn netrc_passwords() {
    Rule("netrc-password")
        .real(
            "machine api.internal login deploy password ",
            &fake(B62, 14, 630),
            "\n",
        )
        .real(
            "machine git.internal\n  login deploy\n  password ",
            &fake(B62, 14, 631),
            "\n",
        )
        .real(
            "default login anonymous password ",
            &format!("{}!{}", fake(B62, 6, 632), fake(B62, 6, 633)),
            "",
        )
        .example("machine h login me password ", "hunter2hunter2", "")
        .clean("machine learning is a password-free zone")
        .clean("machine h login u password $NETRC_PASSWORD");
}

#[test]
fn pgpass_lines() {
    Rule("pgpass-password")
        .real("db.internal:5432:app:app:", &fake(B62, 16, 640), "\n")
        .real("# replica\n*:*:*:replicator:", &fake(B62, 16, 641), "")
        .real("home/.pgpass:3:db:5432:app:app:", &fake(B62, 16, 642), "")
        .real(
            "db:5432:app:app:",
            &format!("{}\\:{}", fake(B62, 8, 643), fake(B62, 8, 644)),
            "",
        )
        .real("home/.pgpass:db:5432:app:app:", &fake(B62, 16, 645), "")
        .clean("localhost:5432:*:postgres:*")
        .clean("    \"[1001:1002:1003:1004:1005:1006:1007:1008%4294967295]:65000\".len()")
        .clean("assert!(parse(\"2015-02-18T23:59:60.234567+05:00:00\").is_err());")
        .clean("const INPUT: &[u8] = b\"\\x1b[38:2:255:0:255;1m\";")
        .clean("fe80:0:0:0:202:b3ff:fe1e:8329")
        .clean("see host:port:database:user:password\tin the docs");
}

#[test]
fn curl_user_passwords() {
    Rule("curl-user")
        .real(
            "curl -sS -u deploy:",
            &fake(B62, 12, 650),
            " https://api.internal/",
        )
        .real("curl --user 'deploy:", &fake(B62, 12, 651), "' https://x")
        .real("curl https://x \\\n  -u deploy:", &fake(B62, 12, 652), "")
        .example("curl -u user:", "password1", " https://x")
        .clean("curl -u \"$USER:$PASS\" https://x")
        .clean("curl -u 1000:1000 x")
        .clean("docker run -u 1000:1000 image")
        .clean("curl -u deploy https://x");
}

#[test]
fn mysql_passwords() {
    Rule("mysql-password")
        .real(
            "mysqldump -h db -u root -p",
            &fake(B62, 12, 660),
            " app > app.sql",
        )
        .real("mysql -uroot -p'", &fake(B62, 12, 661), "' app")
        .example("mysql -u root -p", "changeme", " app")
        .clean("mysql -u root -p app")
        .clean("mysql -u root -p\"$MYSQL_PASSWORD\" app")
        .clean("mysql -h db -P3306 -u root app")
        .clean("docker run -p 3306:3306 mysql");
}

#[test]
fn xml_secrets() {
    Rule("xml-secret")
        .real(
            "<server><id>corp</id><username>deploy</username><password>",
            &fake(B62, 16, 670),
            "</password></server>",
        )
        .real(
            "<add key=\"ClearTextPassword\" value=\"",
            &fake(B62, 16, 671),
            "\" />",
        )
        .example("<token>", "changeme-please", "</token>")
        .clean("<password>${env.MAVEN_PASSWORD}</password>")
        .clean("<password>{COQLCE6DU6GtcS5P=}</password>");
}

/// A value may hold `&`; in a query string the next parameter is kept.
#[test]
fn values_with_ampersands_and_dashed_yaml_keys() {
    let value = format!("{}&3{}", fake(B62, 9, 680), fake(B62, 8, 681));
    Rule("generic-secret")
        .real("password=", &value, "\n")
        .real("  api-key: ", &fake(B62, 24, 690), "\n")
        .real("    x-api-key: ", &fake(HEX, 32, 691), "\n");
    let token = fake(B62, 20, 682);
    assert_redacts_only("generic-secret", "https://x/?token=", &token, "&page=2");
}
