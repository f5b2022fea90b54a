//! The engine's guarantees (overlaps, line numbers, byte-for-byte
//! preservation, idempotence) and the helpers the rule tests share; every
//! rule's positive and negative samples are in `kinds.rs`, except the
//! generic assignment rule's, which are in `generic.rs`.
//!
//! Fake secrets are generated at run time from a fixed seed, so the
//! repository never holds a string that looks like a live key.

use super::*;

mod formats;
mod generic;
mod kinds;
mod wrapped;

// The integration suite's fake-secret generator, so both suites build
// their samples the same way.
#[allow(unreachable_pub)]
#[path = "../../../tests/support/fake.rs"]
mod fake;
pub(crate) use fake::{
    B62, B64, B64URL, DIGITS, HEX, UPPER_NUM, base64, base64url, fake, jwt, key, pem_line,
    private_key_lines, slack_bot_token, slack_webhook_path,
};

pub(super) fn pem_block(kind: &str, seed: u64) -> String {
    let body: Vec<String> = (0..4).map(|i| fake(B64, 64, seed + i)).collect();
    format!(
        "{}\n{}\n{}",
        pem_line("BEGIN", kind),
        body.join("\n"),
        pem_line("END", kind)
    )
}

pub(super) fn redact(text: &str) -> Redacted {
    Redactor::new().redact(text)
}

/// `text` is redacted by `rule`, `secret` is gone, and exactly one hit.
#[track_caller]
pub(super) fn assert_redacts(rule: &str, text: &str, secret: &str) -> Redacted {
    // Whatever a rule finds, the prefilter lets through.
    assert!(
        may_hold_secret(None, text.as_bytes()),
        "{rule}: the prefilter would skip {text:?}"
    );
    let out = redact(text);
    assert!(
        !out.text.contains(secret),
        "{rule}: secret survived in {:?}",
        out.text
    );
    assert!(
        out.text.contains(&format!("[REDACTED:{rule}]")),
        "{rule}: no marker in {:?}",
        out.text
    );
    let rules: Vec<&str> = out.hits.iter().map(|h| h.rule).collect();
    assert_eq!(rules, [rule], "hits for {text:?}");
    out
}

/// Like [`assert_redacts`] on `before`, `secret`, `after`, and only the
/// secret is replaced: the text reads `before[REDACTED:rule]after`.
#[track_caller]
pub(super) fn assert_redacts_only(rule: &str, before: &str, secret: &str, after: &str) -> Redacted {
    let out = assert_redacts(rule, &format!("{before}{secret}{after}"), secret);
    assert_eq!(out.text, format!("{before}[REDACTED:{rule}]{after}"));
    out
}

/// Like [`assert_redacts`], and the hit is `info`: the value has the
/// secret's shape but looks like an example or a placeholder.
#[track_caller]
pub(super) fn assert_example(rule: &str, text: &str, secret: &str) -> Redacted {
    let out = assert_redacts(rule, text, secret);
    assert_eq!(out.hits[0].severity, RuleSeverity::Info, "in {text:?}");
    out
}

/// Like [`assert_redacts`], and the hit has the rule's own severity: the
/// value reads as a real credential.
#[track_caller]
pub(super) fn assert_real(rule: &str, text: &str, secret: &str) -> Redacted {
    let out = assert_redacts(rule, text, secret);
    let expected = RULES.iter().find(|r| r.name == rule).expect("a rule");
    assert_eq!(out.hits[0].severity, expected.severity, "in {text:?}");
    out
}

/// Nothing in `text` is redacted.
#[track_caller]
pub(super) fn assert_clean(text: &str) {
    let out = redact(text);
    assert!(out.hits.is_empty(), "unexpected {:?} in {text:?}", out.hits);
    assert_eq!(out.text, text);
}

/// `rule` does not fire on `text` (another rule may).
#[track_caller]
pub(super) fn assert_not_rule(rule: &str, text: &str) {
    let out = redact(text);
    assert!(
        out.hits.iter().all(|h| h.rule != rule),
        "{rule} fired on {text:?}"
    );
}

#[test]
fn every_rule_compiles_and_names_are_unique() {
    let redactor = Redactor::new();
    assert!(redactor.is_enabled());
    let mut names: Vec<&str> = rule_names().collect();
    assert_eq!(names.len(), RULES.len());
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), RULES.len(), "duplicate rule names");
    for name in names {
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{name} is not kebab-case"
        );
    }
}

/// The exact rule set and each rule's severity: keys and tokens are
/// critical; passwords (in URLs, configuration files, command lines and
/// generic assignments), which misfire more often, are concerns.
#[test]
fn the_rules_and_their_severities_are_pinned() {
    let pinned: Vec<(&str, &str)> = RULES
        .iter()
        .map(|rule| (rule.name, rule.severity.as_str()))
        .collect();
    assert_eq!(
        pinned,
        [
            ("private-key", "critical"),
            ("aws-access-key-id", "critical"),
            ("aws-secret-access-key", "critical"),
            ("github-token", "critical"),
            ("gitlab-token", "critical"),
            ("slack-token", "critical"),
            ("slack-webhook", "critical"),
            ("stripe-live-key", "critical"),
            ("google-api-key", "critical"),
            ("anthropic-api-key", "critical"),
            ("openai-api-key", "critical"),
            ("jwt", "critical"),
            ("service-token", "critical"),
            ("telegram-bot-token", "critical"),
            ("azure-client-secret", "critical"),
            ("encoded-private-key", "critical"),
            ("azure-sas-signature", "critical"),
            ("discord-webhook", "critical"),
            ("password-hash", "concern"),
            ("cookie-file", "concern"),
            ("gcp-private-key-id", "concern"),
            ("url-credentials", "concern"),
            ("bearer-token", "critical"),
            ("basic-auth", "concern"),
            ("netrc-password", "concern"),
            ("pgpass-password", "concern"),
            ("curl-user", "concern"),
            ("mysql-password", "concern"),
            ("xml-secret", "concern"),
            ("generic-secret", "concern"),
            ("credential-line", "concern"),
        ]
    );
}

/// A `lowercase` rule runs over lowercased text, so an uppercase letter in
/// its pattern (outside a class or a group name) could never match.
#[test]
fn lowercase_rules_have_lowercase_patterns() {
    let names = regex::Regex::new(r"\(\?P<[a-z]+>").expect("valid");
    let classes = regex::Regex::new(r"\[(?:\\.|[^\]\\])*\]").expect("valid");
    for rule in RULES.iter().filter(|r| r.lowercase) {
        let bare = names.replace_all(rule.pattern, "(");
        let bare = classes.replace_all(&bare, "");
        let bare = bare.replace("(?-u:\\b)", "");
        assert!(
            !bare.bytes().any(|b| b.is_ascii_uppercase()),
            "{}: uppercase literal in {bare}",
            rule.name
        );
    }
}

#[test]
fn key_names_match_in_any_case() {
    let v = fake(B62, 24, 5);
    for text in [
        format!("Db_PassWord={v}"),
        format!("X-Api-Key: {v}"),
        format!("CLIENT_SECRET: '{v}'"),
    ] {
        let out = assert_redacts("generic-secret", &text, &v);
        assert!(out.text.starts_with(&text[..text.find(&v).expect("value")]));
    }
    let token = fake(B64URL, 40, 6);
    assert_redacts(
        "bearer-token",
        &format!("authorization: BEARER {token}"),
        &token,
    );
    let secret = fake(B64, 40, 7);
    assert_redacts(
        "aws-secret-access-key",
        &format!("Aws_Secret_Access_Key = {secret}"),
        &secret,
    );
}

#[test]
fn format_rules_win_ties_with_the_generic_rule() {
    let token = format!("ghp_{}", fake(B62, 36, 170));
    assert_redacts("github-token", &format!("token = \"{token}\""), &token);
    let key = format!("sk-{}", fake(B62, 48, 171));
    assert_redacts("openai-api-key", &format!("OPENAI_API_KEY={key}"), &key);
    let url_token = format!("ghp_{}", fake(B62, 36, 172));
    let out = assert_redacts(
        "github-token",
        &format!("https://x-access-token:{url_token}@github.com/o/r"),
        &url_token,
    );
    assert_eq!(
        out.text,
        "https://x-access-token:[REDACTED:github-token]@github.com/o/r"
    );
}

#[test]
fn overlaps_resolve_by_start_then_length_then_table_order() {
    let s = |start, end, rule| Span {
        start,
        end,
        rule,
        origin: Origin::New,
        example: false,
    };
    // Same start: the longest wins; same span: the earlier rule wins.
    assert_eq!(resolve_overlaps(vec![s(0, 5, 1), s(0, 9, 2)]), [s(0, 9, 2)]);
    assert_eq!(resolve_overlaps(vec![s(3, 9, 4), s(3, 9, 2)]), [s(3, 9, 2)]);
    // Contained spans vanish; a span running past the kept one extends it.
    assert_eq!(
        resolve_overlaps(vec![s(2, 4, 0), s(0, 10, 3)]),
        [s(0, 10, 3)]
    );
    assert_eq!(
        resolve_overlaps(vec![s(5, 20, 0), s(0, 10, 3)]),
        [s(0, 20, 3)]
    );
    // Adjacent spans stay separate.
    assert_eq!(
        resolve_overlaps(vec![s(5, 8, 0), s(0, 5, 1)]),
        [s(0, 5, 1), s(5, 8, 0)]
    );
}

#[test]
fn a_known_stretch_yields_to_a_rule_match_on_the_same_bytes() {
    let span = |start, end, rule, origin| Span {
        start,
        end,
        rule,
        origin,
        example: false,
    };
    // Same bytes: the rule's match is kept (and reported).
    assert_eq!(
        resolve_overlaps(vec![
            span(0, 9, 0, Origin::Known),
            span(0, 9, 5, Origin::Repeat)
        ]),
        [span(0, 9, 5, Origin::Repeat)]
    );
    // A known stretch that starts first takes on the rule it runs into.
    assert_eq!(
        resolve_overlaps(vec![
            span(0, 6, 0, Origin::Known),
            span(4, 9, 5, Origin::New)
        ]),
        [span(0, 9, 5, Origin::New)]
    );
}

/// A PEM key as `grep -rn` and `tail` show it: every line prefixed with the
/// file name, or only the last lines, so no BEGIN line precedes the body.
fn key_views(block: &str) -> (String, String) {
    let grep = block
        .lines()
        .enumerate()
        .map(|(i, line)| format!("keys/deploy_key.pem:{}:{line}\n", i + 1))
        .collect();
    let lines: Vec<&str> = block.lines().collect();
    let tail = lines[lines.len() - 3..].join("\n");
    (grep, tail)
}

#[test]
fn pieces_of_a_key_it_has_seen_are_masked_wherever_they_turn_up() {
    let block = pem_block("RSA ", 300);
    let body: Vec<&str> = block.lines().filter(|l| !l.starts_with("-----")).collect();
    let (grep, tail) = key_views(&block);

    // The shapes alone defeat the rule.
    let fresh = Redactor::new();
    assert!(fresh.redact(&tail).hits.is_empty());
    assert!(
        body.iter()
            .any(|line| fresh.redact(&grep).text.contains(line))
    );

    // Once the file has been seen whole, no piece survives, and the pieces
    // are not new finds.
    let redactor = Redactor::new();
    let first = redactor.redact(&format!("# deploy key\n{block}\n"));
    assert_eq!(first.hits.len(), 1);
    assert!(!first.hits[0].known);
    for view in [&grep, &tail] {
        let out = redactor.redact(view);
        for line in &body {
            assert!(!out.text.contains(line), "{line} survived in {}", out.text);
        }
        assert!(out.text.contains("[REDACTED:private-key]"), "{}", out.text);
        assert!(out.hits.iter().all(|h| h.known), "{:?}", out.hits);
    }
    // The file-name prefixes and the markers are kept.
    let out = redactor.redact(&grep);
    assert!(
        out.text
            .contains("keys/deploy_key.pem:5:[REDACTED:private-key]"),
        "{}",
        out.text
    );
    assert!(out.text.contains(&pem_line("END", "RSA ")), "{}", out.text);
    // A cut piece of a line is masked too (`tail -c`).
    let cut = &body[3][20..];
    let out = redactor.redact(&format!("...{cut}\n"));
    assert_eq!(out.text, "...[REDACTED:private-key]\n");
    // Text that shares nothing with it is untouched.
    let plain = "fn main() { println!(\"hello, world\"); }";
    assert_eq!(redactor.redact(plain).text, plain);
}

/// A test's numbered ids assigned to token names are examples: masked
/// where the rule sees them, flagged info, and not remembered, so the words
/// they are made of stay readable in later text.
#[test]
fn numbered_words_are_examples_and_not_remembered() {
    let redactor = Redactor::new();
    let first = redactor.redact("\"refresh_token\": \"refresh-1\",\n");
    assert_eq!(
        first.text,
        "\"refresh_token\": \"[REDACTED:generic-secret]\",\n"
    );
    assert_eq!(first.hits[0].severity, RuleSeverity::Info);
    let later = "there is no refresh-token fallback\n";
    assert_eq!(redactor.redact(later).text, later);
}

#[test]
fn a_repeated_value_is_still_redacted_but_marked_known() {
    let redactor = Redactor::new();
    let token = format!("ghp_{}", fake(B62, 36, 310));
    let first = redactor.redact(&format!("a = {token}\n"));
    let again = redactor.redact(&format!("b = {token}\n"));
    assert_eq!(again.text, "b = [REDACTED:github-token]\n");
    assert!(!first.hits[0].known);
    assert!(again.hits[0].known);
}

#[test]
fn learning_remembers_without_redacting_and_each_source_once() {
    let redactor = Redactor::new();
    let block = pem_block("EC ", 320);
    let (grep, _) = key_views(&block);
    let hits = redactor.learn_source("keys/deploy_key.pem@1", None, true, || Some(block.clone()));
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].rule, hits[0].line, hits[0].known),
        ("private-key", 1, false)
    );
    assert!(
        !redactor
            .redact(&grep)
            .text
            .contains(block.lines().nth(2).unwrap())
    );
    // The same source again is not read again.
    let again = redactor.learn_source("keys/deploy_key.pem@1", None, true, || panic!("read twice"));
    assert!(again.is_empty());
    // A disabled redactor learns nothing and masks nothing.
    let off = Redactor::disabled();
    assert!(
        off.learn_source("k", None, true, || Some(block.clone()))
            .is_empty()
    );
    assert_eq!(off.redact(&grep).text, grep);
}

#[test]
fn lines_are_where_each_secret_starts() {
    let gh = format!("ghp_{}", fake(B62, 36, 180));
    let aws = format!("AKIA{}", fake(UPPER_NUM, 16, 181));
    let text = format!(
        "first {gh}\nsecond\r\nthird {aws} and {gh}\n\n{}\nafter {aws}\n",
        pem_block("EC ", 182)
    );
    let out = redact(&text);
    let got: Vec<(&str, usize)> = out.hits.iter().map(|h| (h.rule, h.line)).collect();
    assert_eq!(
        got,
        [
            ("github-token", 1),
            ("aws-access-key-id", 3),
            ("github-token", 3),
            ("private-key", 5),
            ("aws-access-key-id", 11),
        ]
    );
}

#[test]
fn untouched_text_is_kept_byte_for_byte() {
    let gh = format!("ghp_{}", fake(B62, 36, 190));
    let text = format!("héllo wörld ✓\r\n\ttabs\u{0}nul {gh}\u{7f} 日本語\n");
    let out = redact(&text);
    assert_eq!(
        out.text,
        "héllo wörld ✓\r\n\ttabs\u{0}nul [REDACTED:github-token]\u{7f} 日本語\n"
    );
    let plain = "fn main() {\n    println!(\"no secrets here: token, password, key\");\n}\n";
    assert_clean(plain);
    assert_clean("");
}

#[test]
fn hits_and_debug_never_show_the_secret() {
    let key = format!("sk-ant-api03-{}", fake(B64URL, 95, 200));
    let out = redact(&format!("k={key}"));
    let debug = format!("{:?} {:?} {:?}", out.hits, Redactor::new(), RULES);
    assert!(!debug.contains(&key[10..30]));
    assert_eq!(out.hits[0].severity.as_str(), "critical");
}

#[test]
fn disabled_passes_text_through() {
    let key = format!("AKIA{}", fake(UPPER_NUM, 16, 210));
    let text = format!("id={key}\n");
    let out = Redactor::disabled().redact(&text);
    assert!(!Redactor::disabled().is_enabled());
    assert_eq!(out.text, text);
    assert!(out.hits.is_empty());
}

#[test]
fn redactor_is_send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Redactor>();
}

#[test]
fn redacting_twice_changes_nothing_more() {
    let gh = format!("ghp_{}", fake(B62, 36, 220));
    let pw = fake(B62, 16, 221);
    let text = format!(
        "token = \"{gh}\"\nDB_PASSWORD={pw}\nurl: postgres://app:{pw}@db/x\n{}\n",
        pem_block("", 222)
    );
    let once = redact(&text);
    assert_eq!(once.hits.len(), 4);
    let twice = redact(&once.text);
    assert!(twice.hits.is_empty(), "{:?}", twice.hits);
    assert_eq!(twice.text, once.text);
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Pieces that put the rules' prefixes, separators and quotes next to
    /// each other and to multi-byte characters, so matches start and end in
    /// awkward places.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "password",
                "Token",
                "api_key",
                "secret",
                "=",
                ": ",
                ":",
                "\"",
                "'",
                "\\\"",
                "://",
                "@",
                "\n",
                "\r\n",
                " ",
                "é",
                "日本",
                "\\n",
                "ghp_",
                "sk-",
                "sk-ant-",
                "AKIA",
                "eyJ",
                ".",
                "xoxb-",
                "glpat-",
                "AIza",
                "sk_live_",
                "-----",
                "BEGIN ",
                "END ",
                "PRIVATE KEY",
                "Bearer ",
                "[",
                "$",
                "{",
            ])
            .prop_map(str::to_owned),
            "[A-Za-z0-9+/_-]{1,48}",
            any::<String>().prop_map(|s| s.chars().take(8).collect()),
        ]
    }

    proptest! {
        #[test]
        fn output_is_consistent_for_any_text(pieces in prop::collection::vec(piece(), 0..24)) {
            let text: String = pieces.concat();
            let out = redact(&text);
            if out.hits.is_empty() {
                prop_assert_eq!(&out.text, &text);
            }
            // Every hit leaves a marker; a remembered piece of a value
            // found may leave one more without a hit of its own (see
            // `a_remembered_piece_is_masked_without_a_new_hit`).
            let markers = out.text.matches("[REDACTED:").count()
                - text.matches("[REDACTED:").count();
            prop_assert!(markers >= out.hits.len());
            let lines = text.matches('\n').count() + 1;
            for hit in &out.hits {
                prop_assert!(hit.line >= 1 && hit.line <= lines);
            }
            for pair in out.hits.windows(2) {
                prop_assert!(pair[0].line <= pair[1].line);
            }
        }
    }
}

#[test]
fn a_secret_crossing_the_cut_is_redacted_whole() {
    let gh = format!("ghp_{}", fake(B62, 36, 230));
    let text = format!("first line\ntoken {gh} tail\n");
    let keep = text.find(&gh).unwrap() + 10;
    let (out, covered) = Redactor::new().redact_prefix(None, &text, keep);
    assert!(!out.text.contains(&gh[4..10]), "{}", out.text);
    assert!(
        out.text.ends_with("[REDACTED:github-token]"),
        "{}",
        out.text
    );
    assert_eq!(covered, text.find(&gh).unwrap() + gh.len());
    assert_eq!(out.hits.len(), 1);

    // Secrets wholly past the cut are neither shown nor counted.
    let (out, covered) = Redactor::new().redact_prefix(None, &text, 5);
    assert_eq!(
        (out.text.as_str(), covered, out.hits.len()),
        ("first", 5, 0)
    );

    // A cut inside a multi-byte character moves back to its start.
    let (out, covered) = Redactor::new().redact_prefix(None, "aé", 2);
    assert_eq!((out.text.as_str(), covered), ("a", 1));
    let (out, covered) = Redactor::disabled().redact_prefix(None, &text, keep);
    assert_eq!((out.text.as_str(), covered), (&text[..keep], keep));
}

/// A stretch that shares a window with a value a rule removed (here the
/// token's own first 8 bytes, earlier in the same text) is masked under
/// that rule's name without a new hit: the rule already reported it. A
/// format's public prefix alone (`sk_live_`) is not.
#[test]
fn a_remembered_piece_is_masked_without_a_new_hit() {
    let out = redact("Zq7_xk9_=Bearer Zq7_xk9_+_-+0+0_+0+A");
    assert_eq!(
        out.text,
        "[REDACTED:bearer-token]=Bearer [REDACTED:bearer-token]"
    );
    assert_eq!(out.hits.len(), 1, "{:?}", out.hits);
    let out = redact("sk_live_=Bearer sk_live_+_-+0+0_+0+A");
    assert_eq!(out.text, "sk_live_=Bearer [REDACTED:bearer-token]");
}
