//! Redactor recall on fixtures holding a sample of every rule, once as a real
//! credential looks and once as a documentation example does: each sample is
//! redacted alone and all together, nothing survives, and each is flagged at
//! the right severity (the rule's own, or `info` for an example).
//!
//! Fake secrets are generated at run time, so the repository holds nothing a
//! secret scanner would mistake for a live key.

use std::collections::BTreeSet;

use luminos::redact::{Redactor, rule_names};

use crate::support::secrets::{Sample, examples, fixture};

#[test]
fn recall_every_rule_on_the_fixture() {
    recall("real-looking", &fixture());
}

#[test]
fn recall_every_rule_on_its_examples() {
    let samples = examples();
    assert!(samples.iter().all(|s| s.example));
    recall("example-looking", &samples);
}

fn recall(kind: &str, samples: &[Sample]) {
    let redactor = Redactor::new();
    let covered: BTreeSet<&str> = samples.iter().map(|s| s.rule).collect();
    let all: BTreeSet<&str> = rule_names().collect();
    assert_eq!(
        covered, all,
        "{kind}: the fixture must hold a sample of every rule"
    );

    let mut redacted = 0;
    for sample in samples {
        let out = redactor.redact_named(sample.source, &sample.text);
        let leaked = sample
            .secrets
            .iter()
            .any(|secret| out.text.contains(secret.as_str()));
        assert!(!leaked, "{}: leaked in {:?}", sample.rule, out.text);
        let hits: Vec<(&str, &str)> = out
            .hits
            .iter()
            .map(|h| (h.rule, h.severity.as_str()))
            .collect();
        assert_eq!(
            hits,
            [(sample.rule, sample.severity())],
            "in {:?}",
            sample.text
        );
        redacted += 1;
    }

    // The same samples as one file: nothing survives, one hit per sample.
    // (Those whose rule needs the file's name are left out: one file has
    // one name.)
    let anywhere: Vec<&Sample> = samples.iter().filter(|s| s.source.is_none()).collect();
    let whole: String = anywhere.iter().map(|s| s.text.as_str()).collect();
    let out = Redactor::new().redact(&whole);
    for secret in anywhere.iter().flat_map(|s| &s.secrets) {
        assert!(!out.text.contains(secret.as_str()), "leaked {secret:?}");
    }
    assert_eq!(out.hits.len(), anywhere.len());
    // Text that comes back through the redactor (a cached summary quoting a
    // redacted file) gains nothing and loses nothing.
    let again = redactor.redact(&out.text);
    assert!(again.hits.is_empty(), "second pass fired: {:?}", again.hits);
    assert_eq!(again.text, out.text);
    println!(
        "recall ({kind}): {redacted}/{} samples over {} rules redacted (100%)",
        samples.len(),
        all.len()
    );
}
