//! Redactor recall on a fixture holding a sample of every rule: each sample
//! is redacted alone and all together, and nothing survives.
//!
//! Fake secrets are generated at run time, so the repository holds nothing a
//! secret scanner would mistake for a live key.

use std::collections::BTreeSet;

use luminos::redact::{Redactor, rule_names};

use crate::support::secrets::fixture;

#[test]
fn recall_every_rule_on_the_fixture() {
    let redactor = Redactor::new();
    let samples = fixture();

    let covered: BTreeSet<&str> = samples.iter().map(|s| s.rule).collect();
    let all: BTreeSet<&str> = rule_names().collect();
    assert_eq!(covered, all, "the fixture must hold a sample of every rule");

    let mut redacted = 0;
    for sample in &samples {
        let out = redactor.redact(&sample.text);
        let leaked: Vec<&String> = sample
            .secrets
            .iter()
            .filter(|secret| out.text.contains(secret.as_str()))
            .collect();
        let rules: Vec<&str> = out.hits.iter().map(|h| h.rule).collect();
        assert!(
            leaked.is_empty(),
            "{}: leaked in {:?}",
            sample.rule,
            out.text
        );
        assert_eq!(rules, [sample.rule], "in {:?}", sample.text);
        redacted += 1;
    }

    // The same samples as one file: nothing survives, one hit per sample.
    let whole: String = samples.iter().map(|s| s.text.as_str()).collect();
    let out = redactor.redact(&whole);
    for secret in samples.iter().flat_map(|s| &s.secrets) {
        assert!(!out.text.contains(secret.as_str()), "leaked {secret:?}");
    }
    assert_eq!(out.hits.len(), samples.len());
    // Text that comes back through the redactor (a cached summary quoting a
    // redacted file) gains nothing and loses nothing.
    let again = redactor.redact(&out.text);
    assert!(again.hits.is_empty(), "second pass fired: {:?}", again.hits);
    assert_eq!(again.text, out.text);
    println!(
        "recall: {redacted}/{} samples over {} rules redacted (100%)",
        samples.len(),
        all.len()
    );
}
