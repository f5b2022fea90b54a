//! Secret redaction: the one filter every piece of user text passes through on
//! its way to the model.
//!
//! A matched span is replaced by `[REDACTED:<rule>]` and the rest of the text
//! is kept, so the agent still understands the file. Each hit is reported back
//! (rule and line, never the value) so the caller can record it as a flag.
//! The rules are ours and live in one table, [`RULES`].
//!
//! `--no-redact` turns this off ([`Redactor::disabled`]).

/// How serious a kind of secret is when it turns up as a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleSeverity {
    /// Keys and tokens: `critical`.
    Critical,
    /// Generic password/secret assignments: `concern`.
    Concern,
}

/// One redaction that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The rule's name, as in `[REDACTED:<rule>]`.
    pub rule: &'static str,
    /// 1-based line of the text where the secret started.
    pub line: usize,
    pub severity: RuleSeverity,
}

/// Text after redaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub hits: Vec<Hit>,
}

/// The redaction filter. Cheap to share (`&Redactor` across threads).
#[derive(Debug)]
pub struct Redactor {
    enabled: bool,
}

impl Redactor {
    /// The default redactor with every rule.
    pub fn new() -> Redactor {
        todo!("issue 8")
    }

    /// A redactor that passes text through untouched (`--no-redact`).
    pub fn disabled() -> Redactor {
        Redactor { enabled: false }
    }

    /// Whether this redactor changes anything.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Redact `text`.
    pub fn redact(&self, text: &str) -> Redacted {
        let _ = text;
        todo!("issue 8")
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}
