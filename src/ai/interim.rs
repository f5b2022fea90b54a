//! Stand-ins for interfaces whose implementations are landing in parallel
//! (token accounting, the dir-context listing, the tree renderer), shaped
//! like them. Removed as soon as the real ones are merged.

use std::path::Path;

use crate::ai::api::Usage;

/// The context budget of one dir loop.
pub const CONTEXT_BUDGET: u64 = 140_000;

/// Run-wide token totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenTotals {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub requests: u64,
}

/// Run-wide token accounting.
#[derive(Debug, Default)]
pub struct TokenTracker {
    totals: std::sync::Mutex<TokenTotals>,
}

impl TokenTracker {
    pub fn new(_model: &str) -> Self {
        TokenTracker::default()
    }
    pub fn record(&self, usage: &Usage) {
        let mut t = self.totals.lock().unwrap();
        t.input_tokens += usage.input_tokens;
        t.output_tokens += usage.output_tokens;
        t.cache_creation_input_tokens += usage.cache_creation_input_tokens;
        t.cache_read_input_tokens += usage.cache_read_input_tokens;
        t.requests += 1;
    }
    pub fn totals(&self) -> TokenTotals {
        *self.totals.lock().unwrap()
    }
    pub fn summary(&self) -> String {
        let t = self.totals();
        format!("{} input / {} output", t.input_tokens, t.output_tokens)
    }
    pub fn cost(&self) -> f64 {
        0.0
    }
    pub fn cache_savings(&self) -> f64 {
        0.0
    }
}

/// One loop's usage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub turns: u32,
    pub last_context: u64,
}

impl LoopUsage {
    pub fn record(&mut self, usage: &Usage) {
        self.input_tokens += usage.context_tokens();
        self.output_tokens += usage.output_tokens;
        self.turns += 1;
        self.last_context = usage.context_tokens();
    }
    pub fn budget_exceeded(&self) -> bool {
        self.last_context > CONTEXT_BUDGET
    }
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// `1234567` → `1,234,567`.
pub fn format_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The dir prompt's listing.
pub fn format_dir_context(_dir: &Path) -> String {
    String::from("(empty)")
}

/// The rendered tree.
pub fn render_tree(_target: &Path, _options: &crate::config::ScanOptions) -> String {
    String::from("(tree unavailable)")
}
