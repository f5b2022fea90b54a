//! No value leaves, whatever the agent does first: every text file of the
//! tree is learned before the first tool result, so an agent that digs
//! values out on its first turn (with `grep -o`, which prints them with no
//! name beside them), in every directory at once, sends none; keys in
//! every wrapping (a service account's key as one JSON string, a key in
//! base64 as a Kubernetes Secret holds it) send no line and no piece; and
//! an Azure SAS signature and Stripe's webhook secrets stay home. Each
//! check counts what reached the mock and prints it.

use serde_json::json;

use crate::credentials::cache_quoting_results;
use crate::support::TestEnv;
use crate::support::agent::{AgentEnv, Turn};
use crate::support::mock::Reply;
use crate::support::secrets::{
    B62, FRAGMENT, LeakCheck, base64, credential_formats, fake, key, private_key_lines,
};

/// Everything the mock was sent, decoded and as raw JSON.
fn everything_sent(env: &AgentEnv) -> String {
    env.server
        .requests()
        .iter()
        .flat_map(|request| {
            [
                crate::support::output::json_strings(&request.body),
                request.body.to_string(),
            ]
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Turn 1: run `commands` (`read PATH` is a `read_file`). Turn 2: cache a
/// summary quoting every result. Turn 3: report.
fn digging<'a>(commands: &'a [String]) -> impl Fn(&Turn<'_>) -> Reply + Send + Sync + 'a {
    move |turn| match turn.turn {
        1 => Reply::tool_uses(commands.iter().map(|command| {
            if let Some(path) = command.strip_prefix("read ") {
                ("read_file", json!({ "path": path }))
            } else {
                ("run_command", json!({ "command": command }))
            }
        })),
        2 => cache_quoting_results(turn, "I found: "),
        _ => Reply::tool_use(
            "submit_report",
            json!({"summary": "Dug.", "completeness": 1.0}),
        ),
    }
}

/// An agent in every directory that runs `commands` on its first turn,
/// four loops at once.
fn run_digging(env: TestEnv, commands: Vec<String>) -> AgentEnv {
    let commands: &'static [String] = Box::leak(commands.into_boxed_slice());
    let env = env.with_agent(move |agent| agent.every_dir_script(digging(commands)));
    env.run_ok(&["--json", "-j", "4"]);
    env
}

/// The eleven credential formats (the `.properties` password starts with
/// `R` and digits, the Basic header's user is `bob`), and a Basic header
/// whose short password makes it look like an example: an agent in every
/// directory greps them out on its first turn, before reading any file.
/// None reaches a request, whole or as a piece of 8 bytes.
#[test]
fn an_agent_that_greps_values_out_first_sends_none() {
    let env = TestEnv::new();
    let mut values = Vec::new();
    for file in credential_formats() {
        env.file(&file.rel, &file.text);
        values.extend(file.values);
    }
    let example = base64(b"bob:s3cret");
    env.file(
        "scripts/example.http",
        format!("GET /v1/ping\nAuthorization: Basic {example}\n"),
    );
    values.push(example);
    env.file("README.md", "# Deploy tooling\n");
    let commands = vec![
        "grep -rno -E 'R[0-9]+[A-Za-z0-9&]+|Ym9i[A-Za-z0-9=]+' .".to_string(),
        "grep -rhoE '[A-Za-z0-9&+/=]{8,}' .".to_string(),
    ];
    let env = run_digging(env, commands);
    let sent = everything_sent(&env);
    let whole = values.iter().filter(|v| sent.contains(v.as_str())).count();
    let check = LeakCheck::new(&values);
    let pieces = check.leaked(&sent).len();
    println!(
        "of {} planted values: {whole} sent whole, {pieces} with a piece of {FRAGMENT} bytes",
        values.len()
    );
    assert_eq!(check.leak(&sent), None);
    // The grep really ran and was shown: the values came back masked.
    assert!(sent.contains("[REDACTED:"), "nothing was masked");
}

/// A service account's key (its PEM as one JSON string with `\n` escapes)
/// and another key in base64 as a Kubernetes Secret's `tls.key`, with an
/// agent grepping base64 runs before and after reading both: no PEM line
/// and no piece of 24 characters of either reaches a request.
#[test]
fn keys_in_json_strings_and_in_base64_send_no_line_and_no_piece() {
    let (gcp_lines, gcp_block) = private_key_lines(900, 26);
    let (tls_lines, tls_block) = private_key_lines(950, 26);
    let encoded = base64(tls_block.as_bytes());
    let env = TestEnv::new();
    env.file(
        "gcp/service-account.json",
        format!(
            "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"shop\",\n  \
             \"private_key_id\": \"{}\",\n  \"private_key\": \"{}\",\n  \
             \"client_email\": \"ci@shop.iam.gserviceaccount.com\"\n}}\n",
            fake("0123456789abcdef", 40, 980),
            gcp_block.replace('\n', "\\n")
        ),
    )
    .file(
        "k8s/tls-secret.yaml",
        format!(
            "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: {}\n  \
             tls.key: {encoded}\n",
            base64(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
        ),
    )
    .file("README.md", "# Cluster config\n");
    let grep = "grep -rhoE '[A-Za-z0-9+/=]{16,}' .".to_string();
    let commands = vec![
        grep.clone(),
        "read gcp/service-account.json".to_string(),
        "read k8s/tls-secret.yaml".to_string(),
        grep,
    ];
    let env = run_digging(env, commands);
    let sent = everything_sent(&env);
    let lines: Vec<&String> = gcp_lines.iter().chain(&tls_lines).collect();
    let whole_lines = lines.iter().filter(|l| sent.contains(l.as_str())).count();
    let secrets: Vec<String> = lines
        .iter()
        .map(|l| l.to_string())
        .chain([encoded.clone()])
        .collect();
    let check = LeakCheck::new(&[]).with(&secrets, 24);
    let pieces = check.leaked(&sent).len();
    println!("PEM lines sent: {whole_lines}; values with a piece of 24 characters sent: {pieces}");
    assert_eq!(whole_lines, 0);
    assert_eq!(check.leak(&sent), None);
    assert!(
        sent.contains("[REDACTED:encoded-private-key]"),
        "tls.key was read"
    );
}

/// An Azure SAS URL, Stripe's webhook signing secret in an `.env` and in
/// prose: an agent that greps for them first and then reads every file
/// sends none of the three.
#[test]
fn a_sas_signature_and_stripe_webhook_secrets_stay_home() {
    let sig = format!("{}%2B{}%3D", fake(B62, 20, 990), fake(B62, 22, 991));
    let whsec_env = key("whsec_", B62, 32, 992);
    let whsec_prose = key("whsec_", B62, 32, 993);
    let env = TestEnv::new();
    env.file(
        "deploy/blob.env",
        format!(
            "BLOB_URL=https://shop.blob.core.windows.net/exports/daily.csv?sv=2022-11-02&ss=b\
             &srt=o&sp=r&se=2030-01-01T00:00:00Z&spr=https&sig={sig}\n"
        ),
    )
    .file(".env", format!("STRIPE_WEBHOOK={whsec_env}\n"))
    .file(
        "docs/payments.md",
        format!(
            "# Payments\n\nThe webhook signing secret is {whsec_prose}; rotate it with the \
             dashboard.\n"
        ),
    );
    let commands = vec![
        "grep -rnoE 'sig=[^& ]+|whsec_[A-Za-z0-9]+' .".to_string(),
        "read deploy/blob.env".to_string(),
        "read .env".to_string(),
        "read docs/payments.md".to_string(),
    ];
    let env = run_digging(env, commands);
    let sent = everything_sent(&env);
    let values = [sig, whsec_env, whsec_prose];
    let reached = values.iter().filter(|v| sent.contains(v.as_str())).count();
    println!("of the SAS signature and both Stripe secrets, {reached} reached a request");
    assert_eq!(reached, 0);
    assert_eq!(LeakCheck::new(&values).leak(&sent), None);
    assert!(
        sent.contains("[REDACTED:azure-sas-signature]"),
        "the URL was read"
    );
}

/// What the learning said it did (its `-v` line): files, read, through the
/// redactor, holding values.
fn learned(stderr: &str) -> [u64; 4] {
    let line = stderr
        .lines()
        .find(|line| line.contains("Redaction: learned "))
        .unwrap_or_else(|| panic!("no learning line in\n{stderr}"));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    [numbers[0], numbers[1], numbers[2], numbers[3]]
}

/// A rerun does not read or redact again what held nothing: the files
/// found clean are kept by their path, size and modification time; only
/// those holding values (whose values are never written down) and those
/// that changed are read again. A rerun that sends no request learns
/// nothing at all.
#[test]
fn a_rerun_reads_again_only_what_holds_values_or_changed() {
    let env = TestEnv::new();
    for n in 0..12 {
        env.file(&format!("src/m{n}.rs"), format!("pub fn f{n}() {{}}\n"));
    }
    // The notes name a secret without holding one: the prefilter lets
    // them through, the redactor finds nothing.
    env.file(".env", format!("API_TOKEN={}\n", fake(B62, 32, 995)))
        .file("docs/notes.md", "# Notes\nNothing secret.\n");
    let env = env.with_mock();
    let stderr = |out: std::process::Output| crate::support::output::stderr(&out);
    let first = learned(&stderr(env.run_ok(&["-v"])));
    assert_eq!(first, [14, 14, 2, 1], "files, read, redacted, with values");
    let unchanged = stderr(env.run_ok(&["-v"]));
    assert!(!unchanged.contains("Redaction: learned"), "{unchanged}");
    env.file("src/m0.rs", "pub fn f0() -> u8 { 0 }\n");
    let again = learned(&stderr(env.run_ok(&["-v"])));
    assert_eq!(again, [14, 2, 1, 1]);
    env.file(
        "docs/notes.md",
        "# Notes\nStill nothing secret, but longer.\n",
    );
    let changed = learned(&stderr(env.run_ok(&["-v"])));
    assert_eq!(changed, [14, 2, 2, 1]);
}
