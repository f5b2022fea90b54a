//! Secret redaction: the one filter every piece of user text passes through on
//! its way to the model.
//!
//! A matched span is replaced by `[REDACTED:<rule>]` and the rest of the text
//! is kept byte for byte, so the agent still understands the file. Each hit is
//! reported back (rule, line and severity, never the value) so the caller can
//! record it as a flag. The rules are ours and live in one table, [`RULES`]
//! (`kinds.rs`); what makes `name = value` a literal assigned to a secret's
//! name is in `assign.rs`, and how a value reads (random, chosen, an example)
//! in `entropy.rs` and `examples.rs`.
//!
//! A value with a credential's shape is always redacted. One that looks like
//! a documentation example or a placeholder is reported at
//! [`RuleSeverity::Info`] instead of its rule's severity: masking it costs
//! the model a few characters, letting a real key through because it looked
//! like an example would cost the user the key.
//!
//! The patterns are compiled once per process and shared; a [`Redactor`] is a
//! flag and the memory of what it has removed (below), so it is cheap to
//! build and safe to share across threads. `--no-redact` turns this off
//! ([`Redactor::disabled`]).
//!
//! When matches overlap, the one that starts first wins, then the longest,
//! then the one earlier in [`RULES`]. A match that starts inside a kept span
//! but runs past its end extends that span, so no tail of a secret survives.
//!
//! A redactor also remembers every secret it has removed (`known.rs`), and
//! masks any later stretch of text that shares [`known::WINDOW`] bytes with
//! one: a key body quoted line by line by `grep`, or its last lines by
//! `tail`, no longer has the shape a rule needs, but it is still the secret.
//! Examples are masked the same way, except phrases and sentences (see
//! `Redactor::candidates`). Use one redactor for a whole run so that what one
//! tool found protects every later request.
//!
//! Some values are credentials only in a file named like one (`user:password`
//! lines in `credentials.txt`): callers that know the file pass its name
//! ([`Redactor::redact_named`]). A run learns every text file of the tree
//! before its first tool result (`crate::ai::tools::learning`, which picks
//! the files with the cheap [`may_hold_secret`]); each source is learned
//! once (`sources.rs`), and tools wait for that learning
//! ([`Redactor::wait_learned`]).
//!
//! After a match its rule rejects, the search goes on from inside the match
//! (its value), not after it: `grep -rn` writes `path:line:` before each
//! line, and a file named `secret_1.txt` makes the generic rule match
//! `secret_1.txt:3:token` first, with the real assignment inside.

use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use regex::Regex;

mod assign;
mod check;
mod entropy;
mod examples;
mod formats;
mod kinds;
mod known;
mod prefilter;
pub(crate) mod sources;

use check::{Found, Verdict};
pub use kinds::RULES;
use known::Known;
pub use prefilter::may_hold_secret;
use sources::{Claim, LearnedSources};

/// How serious a redaction is when it turns up as a flag: a rule's
/// severity, or `Info` for a value that looks like an example.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleSeverity {
    /// Keys and tokens: `critical`.
    Critical,
    /// Passwords in URLs and generic password/secret assignments: `concern`.
    Concern,
    /// A value of any rule that looks like a documentation example or a
    /// placeholder (redacted all the same): `info`. No rule has it as its
    /// own severity.
    Info,
}

impl RuleSeverity {
    /// The flag severity string (`critical`, `concern`, `info`).
    pub fn as_str(self) -> &'static str {
        match self {
            RuleSeverity::Critical => "critical",
            RuleSeverity::Concern => "concern",
            RuleSeverity::Info => "info",
        }
    }
}

/// One redaction that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The rule's name, as in `[REDACTED:<rule>]`.
    pub rule: &'static str,
    /// 1-based line of the text where the secret started.
    pub line: usize,
    /// The rule's severity, or [`RuleSeverity::Info`] when the value looks
    /// like an example or a placeholder.
    pub severity: RuleSeverity,
    /// This redactor had already removed the same value before (from this
    /// text or another): a repeat, not a new find.
    pub known: bool,
}

/// Text after redaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub hits: Vec<Hit>,
}

/// The redaction filter. Cheap to share (`&Redactor` across threads); it
/// remembers the secrets it has removed, so share one per run.
#[derive(Debug)]
pub struct Redactor {
    enabled: bool,
    known: Mutex<Known>,
    /// The sources (files) learned whole, and the learning gate.
    sources: LearnedSources,
}

/// [`RULES`]' patterns, compiled once for the whole process.
static COMPILED: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|rule| {
            Regex::new(rule.pattern)
                .unwrap_or_else(|e| panic!("redaction rule {} does not compile: {e}", rule.name))
        })
        .collect()
});

/// The names of every rule, in table order.
pub fn rule_names() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|rule| rule.name)
}

impl Redactor {
    /// The default redactor with every rule.
    pub fn new() -> Redactor {
        LazyLock::force(&COMPILED);
        Redactor {
            enabled: true,
            known: Mutex::default(),
            sources: LearnedSources::default(),
        }
    }

    /// A redactor that passes text through untouched (`--no-redact`).
    pub fn disabled() -> Redactor {
        Redactor {
            enabled: false,
            known: Mutex::default(),
            sources: LearnedSources::default(),
        }
    }

    /// The remembered secrets. A panic while the lock was held cannot leave
    /// them inconsistent (each insert is whole), so a poisoned lock is used
    /// as it is.
    fn known(&self) -> MutexGuard<'_, Known> {
        self.known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether this redactor changes anything.
    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Redact `text`.
    pub fn redact(&self, text: &str) -> Redacted {
        self.redact_named(None, text)
    }

    /// Redact `text` read from the file named `name` (its last path
    /// component), when known: some values are credentials only in a file
    /// named like one (`user:password` lines in `credentials.txt`).
    pub fn redact_named(&self, name: Option<&str>, text: &str) -> Redacted {
        if !self.enabled {
            return Redacted {
                text: text.to_owned(),
                hits: Vec::new(),
            };
        }
        let spans = resolve_overlaps(self.candidates(text, name));
        apply(text, &spans)
    }

    /// The byte ranges of `text` that [`Redactor::redact`] would replace,
    /// in order and apart, with its hits: for a caller that masks the
    /// original bytes itself (a hex view of a binary file).
    pub(crate) fn redacted_ranges(&self, text: &str) -> (Vec<std::ops::Range<usize>>, Vec<Hit>) {
        if !self.enabled {
            return (Vec::new(), Vec::new());
        }
        let spans = resolve_overlaps(self.candidates(text, None));
        let hits = apply(text, &spans).hits;
        (spans.iter().map(|s| s.start..s.end).collect(), hits)
    }

    /// Redact the first `keep` bytes of `text`, judging secrets on the whole
    /// of `text`. Callers that show only the start of a file read a little
    /// further and pass it all here: a token cut by the limit would no longer
    /// match its rule and its first half would leak. A secret that crosses
    /// `keep` is redacted whole and the cut moves to its end. Returns the
    /// redaction and how many bytes of `text` it covers.
    pub(crate) fn redact_prefix(
        &self,
        name: Option<&str>,
        text: &str,
        keep: usize,
    ) -> (Redacted, usize) {
        let mut cut = floor_char_boundary(text, keep.min(text.len()));
        if !self.enabled {
            return (
                Redacted {
                    text: text[..cut].to_owned(),
                    hits: Vec::new(),
                },
                cut,
            );
        }
        let mut spans = resolve_overlaps(self.candidates(text, name));
        if let Some(crossing) = spans.iter().find(|s| s.start < cut && s.end > cut) {
            cut = crossing.end;
        }
        spans.retain(|s| s.end <= cut);
        (apply(&text[..cut], &spans), cut)
    }

    /// Remember every secret the rules find in `text` (the whole of a file
    /// a command is about to quote in part, read from the file named `name`
    /// when known) without redacting anything, and return the hits: `known`
    /// is set on those already remembered.
    pub(crate) fn learn(&self, name: Option<&str>, text: &str) -> Vec<Hit> {
        if !self.enabled {
            return Vec::new();
        }
        let spans = resolve_overlaps(self.candidates(text, name));
        let spans: Vec<Span> = spans
            .into_iter()
            .filter(|s| s.origin != Origin::Known)
            .collect();
        apply(text, &spans).hits
    }

    /// [`Redactor::learn`] the text of the source `key` (a file's path,
    /// size and modification time) named `name`, once per run: `read`
    /// returns its text (`None` when it cannot be read) and is called by
    /// the first caller only. The hits are the source's to report once: the
    /// first caller that `tell`s (records them as the file's notice) gets
    /// them, whether it learned them now or an earlier caller that did not
    /// tell (the learning before the first tool result) did; any later
    /// caller gets none. A caller that finds the source being learned by
    /// another thread waits for it, so no output is redacted before the
    /// values of a file it quotes are known.
    pub(crate) fn learn_source(
        &self,
        key: &str,
        name: Option<&str>,
        tell: bool,
        read: impl FnOnce() -> Option<String>,
    ) -> Vec<Hit> {
        if !self.enabled {
            return Vec::new();
        }
        match self.sources.claim(key, tell) {
            Claim::Learn => {}
            Claim::Done(hits) => return hits,
        }
        let mut learning = sources::Learning::new(&self.sources, key);
        let hits = read()
            .map(|text| self.learn(name, &text))
            .unwrap_or_default();
        learning.finish(hits, tell)
    }

    /// Whether the source `key`, learned without being told (see
    /// [`Redactor::learn_source`]), held a value.
    pub(crate) fn holds_values_of(&self, key: &str) -> bool {
        self.sources.held_values(key)
    }

    /// The learning before the first tool result has begun: until the
    /// returned guard drops (the learning ended, or its thread failed),
    /// [`Redactor::wait_learned`] blocks.
    pub(crate) fn begin_learning(redactor: &Arc<Redactor>) -> LearningGate {
        redactor.sources.begin();
        LearningGate {
            redactor: redactor.clone(),
        }
    }

    /// Wait until the learning before the first tool result is over (at
    /// once when none began): every text file it covers has been through
    /// the rules, so every value in them is known.
    pub(crate) fn wait_learned(&self) {
        self.sources.wait_learned();
    }

    /// Every span to redact in `text`: the rules' matches, which are
    /// remembered, then the stretches that share a window with a remembered
    /// secret. A match is a repeat when its value was remembered before, or
    /// when it overlaps a stretch of a secret remembered before (a key's
    /// BEGIN line followed by part of a body it had already seen whole).
    ///
    /// Examples are remembered as values (a rule that finds one again
    /// reports a repeat), and their pieces masked like a secret's: a value
    /// that looks like an example (a Basic header's `bob:s3cret`, a key
    /// with `EXAMPLE` in it) may still be someone's, and `grep -o` prints it
    /// with no line around it for a rule to see. Only an example made of
    /// words or filler ([`reads_as_words`]: `refresh-1`, `"Password is
    /// required"`, `ghp_xxxx…`) is not cut into pieces, unless it
    /// spans lines (a sample key block, which `tail` always cuts): masking
    /// its pieces would hide the words wherever they turn up, and its rule
    /// finds it again in any view that keeps its line.
    fn candidates(&self, text: &str, name: Option<&str>) -> Vec<Span> {
        let mut spans = find_candidates(text, name);
        let mut known = self.known();
        let mut stretches = known.stretches(text);
        let mut learned = false;
        for span in &mut spans {
            let value = &text[span.start..span.end];
            // A rule that needs the file's name cannot find the value again
            // where a command quotes the file without it: always its pieces.
            let needs_name = RULES[span.rule].name == kinds::CREDENTIAL_LINE;
            let mask =
                !span.example || needs_name || value.contains('\n') || !reads_as_words(value);
            let overlaps_known = stretches
                .iter()
                .any(|&(start, end, _)| start < span.end && span.start < end);
            let repeat = known.remember(value, span.rule, mask);
            learned |= !repeat && mask;
            if repeat || overlaps_known {
                span.origin = Origin::Repeat;
            }
        }
        if learned {
            stretches = known.stretches(text);
        }
        spans.extend(stretches.into_iter().map(|(start, end, rule)| Span {
            start,
            end,
            rule,
            origin: Origin::Known,
            example: false,
        }));
        spans
    }
}

/// Whether `value` is made of words or is a placeholder's run: white space
/// in it (a phrase, a sentence), mostly words that read as English
/// (`refresh-1`, `password123`), or too few different characters to be
/// anything but filler (`ghp_xxxx…`, `T00000000/B00000000/XXXX…`).
fn reads_as_words(value: &str) -> bool {
    value.contains(char::is_whitespace)
        || entropy::wordiness(value) >= 0.5
        || entropy::shannon_entropy(value) < 3.0
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A learning before the first tool result, running (see
/// [`Redactor::begin_learning`]): tools wait until it drops.
#[derive(Debug)]
pub(crate) struct LearningGate {
    redactor: Arc<Redactor>,
}

impl LearningGate {
    /// The redactor that learns.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }
}

impl Drop for LearningGate {
    fn drop(&mut self) {
        self.redactor.sources.end();
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}

/// A span some rule wants redacted. Byte offsets into the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    rule: usize,
    origin: Origin,
    /// The rule judged the value an example ([`Verdict::Example`]).
    example: bool,
}

/// Why a span is redacted. The order is the tie-break when two spans cover
/// the same bytes: a rule's match is reported, a known stretch is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Origin {
    /// A rule matched a value this redactor had not seen.
    New,
    /// A rule matched a value it had already removed.
    Repeat,
    /// No rule matched; the text shares a window with a remembered secret.
    Known,
}

/// The longest value of a rejected match that is searched again for a
/// match inside it.
const RESCAN: usize = 256;

/// Every accepted match of every rule, unordered and possibly overlapping.
fn find_candidates(text: &str, source: Option<&str>) -> Vec<Span> {
    let lowered = text.to_ascii_lowercase();
    let mut spans = Vec::new();
    let credentials_file = source.is_some_and(formats::credential_file);
    for (index, (rule, regex)) in RULES.iter().zip(COMPILED.iter()).enumerate() {
        // A rule that needs a credentials file's name finds nothing else.
        if rule.name == kinds::CREDENTIAL_LINE && !credentials_file {
            continue;
        }
        let haystack = if rule.lowercase { &lowered } else { text };
        let mut at = 0;
        // Bytes this rule may read again after rejected matches: twice the
        // text, so text made of nothing else costs at most three scans.
        let mut rescan_budget = text.len().saturating_mul(2).max(RESCAN);
        while at <= haystack.len() {
            let Some(caps) = regex.captures_at(haystack, at) else {
                break;
            };
            // Group 0 is the whole match: always there.
            let Some(whole) = caps.get(0) else {
                break;
            };
            let secret = caps.name("s").unwrap_or(whole);
            let (start, end) = trim_quotes(text, secret.start(), secret.end());
            let end = end_before_next_parameter(text, start, end);
            let found = Found {
                text,
                caps: &caps,
                source,
            };
            let verdict = if start < end {
                (rule.accept)(&text[start..end], &found)
            } else {
                Verdict::Pass
            };
            let resume = match verdict {
                Verdict::Pass => {
                    // A rejected match's value may hold a real one: in
                    // `keys/secret_1.txt:3:token = "…"` (grep output) the
                    // rule first matches `secret_1.txt:3:token`. So search on
                    // from the value, unless it is long or the budget is
                    // spent: hostile text made of such matches must not make
                    // the scan quadratic.
                    match caps.name("s") {
                        Some(value) if value.len() <= RESCAN.min(rescan_budget) => {
                            rescan_budget -= value.len();
                            value.start()
                        }
                        _ => whole.end(),
                    }
                }
                Verdict::Secret | Verdict::Example => {
                    spans.push(Span {
                        start,
                        end,
                        rule: index,
                        origin: Origin::New,
                        example: verdict == Verdict::Example,
                    });
                    // An accepted match is redacted whole; nothing in it is
                    // left to find.
                    whole.end()
                }
            };
            at = resume.max(next_char(text, whole.start()));
        }
    }
    spans
}

/// The byte offset of the character after the one at `i`.
fn next_char(text: &str, i: usize) -> usize {
    text[i..].chars().next().map_or(i + 1, |c| i + c.len_utf8())
}

/// A value may hold `&` (`password=Tr0ub4dor&3horse`), but in a query
/// string (`?token=abc&page=2`) the last `&` before an `=` starts the next
/// parameter: the value ends there.
fn end_before_next_parameter(text: &str, start: usize, end: usize) -> usize {
    if !text[end..].starts_with('=') {
        return end;
    }
    text[start..end].rfind('&').map_or(end, |amp| start + amp)
}

/// Shrink a quoted value (`"x"`, `'x'`, `` `x` ``, `\"x\"`) to what is inside.
fn trim_quotes(text: &str, start: usize, end: usize) -> (usize, usize) {
    let s = &text[start..end];
    if s.len() >= 4 && s.starts_with("\\\"") && s.ends_with("\\\"") {
        return (start + 2, end - 2);
    }
    let b = s.as_bytes();
    if b.len() >= 2 && matches!(b[0], b'"' | b'\'' | b'`') && b[b.len() - 1] == b[0] {
        return (start + 1, end - 1);
    }
    (start, end)
}

/// Order the candidates (earliest start, then longest, then rule matches
/// before known stretches, then table order) and keep one redaction per
/// region: a candidate inside a kept span is dropped, one that runs past its
/// end extends it. A region that a rule matched anywhere is reported under
/// that rule, even when a known stretch started it, and as an example only
/// when every rule match that extends it says so.
fn resolve_overlaps(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by_key(|s| {
        (
            s.start,
            std::cmp::Reverse(s.end - s.start),
            s.origin,
            s.rule,
        )
    });
    let mut kept: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match kept.last_mut() {
            Some(last) if span.start < last.end => {
                let extends = span.end > last.end;
                last.end = last.end.max(span.end);
                if last.origin == Origin::Known && span.origin != Origin::Known {
                    last.origin = span.origin;
                    last.rule = span.rule;
                    last.example = span.example;
                } else if extends && span.origin != Origin::Known {
                    last.example &= span.example;
                }
            }
            _ => kept.push(span),
        }
    }
    kept
}

/// How every redaction starts: `[REDACTED:<rule>]` replaces the secret.
pub(crate) const REDACTION_MARK: &str = "[REDACTED:";

/// Build the redacted text and the hits from non-overlapping, ordered spans.
fn apply(text: &str, spans: &[Span]) -> Redacted {
    let mut out = String::with_capacity(text.len());
    let mut hits = Vec::with_capacity(spans.len());
    let mut copied_to = 0;
    let mut line = 1;
    for span in spans {
        let rule = &RULES[span.rule];
        line += count_newlines(&text[copied_to..span.start]);
        out.push_str(&text[copied_to..span.start]);
        out.push_str(REDACTION_MARK);
        out.push_str(rule.name);
        out.push(']');
        if span.origin != Origin::Known {
            hits.push(Hit {
                rule: rule.name,
                line,
                severity: if span.example {
                    RuleSeverity::Info
                } else {
                    rule.severity
                },
                known: span.origin == Origin::Repeat,
            });
        }
        line += count_newlines(&text[span.start..span.end]);
        copied_to = span.end;
    }
    out.push_str(&text[copied_to..]);
    Redacted { text: out, hits }
}

fn count_newlines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

#[cfg(test)]
mod tests;
