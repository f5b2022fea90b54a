//! One conversation's history, append-only, and redacted once.
//!
//! Models that bind thinking to the conversation check, on every request
//! that sends thinking back, that the system prompt, the tools and every
//! message before the thinking are exactly what they were when it was
//! produced, and that the thinking blocks are unaltered; anything else is a
//! 400 (preserved-thinking prefix-check page, read 2026-11-23:
//! <https://platform.claude.com/docs/build-with-claude/preserved-thinking/prefix-checks>).
//! A redaction sweep over the whole request before every call could break
//! that: the redactor learns secrets as the run reads files and then masks
//! text it let through before. So the history follows three rules:
//!
//! - **What luminos adds is redacted once**, when it is first sent: the
//!   system prompt and each user message (kickoff, tool results, nudges) go
//!   through the redactor just before the request that carries them first,
//!   and are stored in that form. Nothing sent before is redacted again.
//!   This loses nothing: text a later sweep would have masked had already
//!   reached the API in the earlier request.
//! - **What the model said goes back exactly as received**, thinking blocks
//!   and signatures included. It came from the API, so echoing it cannot
//!   leak anything local.
//! - **Nothing is rewritten.** Messages are only appended; luminos's own
//!   short notes may be added to the user message that has not been
//!   answered yet, as text blocks after its tool results.
//!
//! The tools and the system prompt are fixed when the conversation starts,
//! so every request of a conversation carries them byte for byte.

use serde_json::Value;

use crate::ai::api::caching::Marks;
use crate::ai::api::settings::Workload;
use crate::ai::api::types::{Content, Role};
use crate::ai::api::{ContentBlock, Message, ToolDefinition};
use crate::ai::engine::window::json_len;
use crate::redact::Redactor;

/// An append-only conversation.
#[derive(Debug, Clone)]
pub(crate) struct Transcript {
    system: String,
    tools: Vec<ToolDefinition>,
    workload: Workload,
    messages: Vec<Message>,
    /// The system prompt went through the redactor.
    system_redacted: bool,
    /// Messages before this index went through the redactor (or are the
    /// model's) and are never touched again.
    redacted: usize,
    /// JSON bytes of `tools`, and of the messages before `redacted`: what
    /// never changes is measured once ([`Transcript::request_bytes`]), not
    /// at every request of a long conversation.
    tools_bytes: usize,
    sealed_bytes: usize,
    /// The user message where the conversation's cache was last written:
    /// the last block of it carried the write mark of a request that was
    /// answered, so the next request reads the history up to there back.
    written: Option<usize>,
}

impl Transcript {
    /// A conversation that opens with `kickoff` from the user.
    pub(crate) fn new(
        system: String,
        kickoff: &str,
        mut tools: Vec<ToolDefinition>,
        workload: Workload,
    ) -> Transcript {
        // The caching marks are placed on each request as it is written
        // (see `crate::ai::api::body`), never kept in the history.
        for tool in &mut tools {
            tool.cache_control = None;
        }
        Transcript {
            system,
            tools_bytes: json_len(&tools),
            sealed_bytes: 0,
            tools,
            workload,
            // Blocks, not a plain string: the same message must be spelled
            // the same way in every request, and the newest user message
            // becomes blocks anyway when it carries the caching mark.
            messages: vec![Message::user_blocks(vec![ContentBlock::text(kickoff)])],
            system_redacted: false,
            redacted: 0,
            written: None,
        }
    }

    pub(crate) fn system(&self) -> &str {
        &self.system
    }

    pub(crate) fn tools(&self) -> &[ToolDefinition] {
        &self.tools
    }

    /// What kind of conversation this is (it decides the call settings).
    pub(crate) fn workload(&self) -> Workload {
        self.workload
    }

    /// The same conversation as another kind of work. Only before its first
    /// request: the settings are fixed for a conversation.
    pub(crate) fn with_workload(mut self, workload: Workload) -> Transcript {
        debug_assert!(self.messages.len() == 1 && self.redacted == 0);
        self.workload = workload;
        self
    }

    pub(crate) fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Where the conversation's cache was last written (see
    /// [`Transcript::answered_with`]).
    pub(crate) fn written(&self) -> Option<usize> {
        self.written
    }

    /// The newest user message: where a request's write mark goes.
    pub(crate) fn newest_user(&self) -> Option<usize> {
        self.messages.iter().rposition(|m| m.role == Role::User)
    }

    /// A request that carried `marks` was answered: what its write mark
    /// wrote is there for the next request to read.
    pub(crate) fn answered_with(&mut self, marks: Marks) {
        if let Some(at) = marks.write {
            self.written = Some(at);
        }
    }

    /// Redact what has not been sent yet, in place, once: the system prompt
    /// on the first call, then each new user message. Call before every
    /// request.
    pub(crate) fn seal(&mut self, redactor: &Redactor) {
        if !self.system_redacted {
            redact_string(redactor, &mut self.system);
            self.system_redacted = true;
        }
        for message in &mut self.messages[self.redacted..] {
            if message.role == Role::User {
                redact_content(redactor, &mut message.content);
            }
            self.sealed_bytes += json_len(message);
        }
        self.redacted = self.messages.len();
    }

    /// The bytes of the system prompt, the messages and the tools as JSON,
    /// as [`crate::ai::engine::window::request_tokens`] counts them: only
    /// the messages not sent yet are measured again.
    pub(crate) fn request_bytes(&self) -> usize {
        let unsent: usize = self.messages[self.redacted..].iter().map(json_len).sum();
        // `[`, `]` and a comma between messages.
        let punctuation = 2 + self.messages.len().saturating_sub(1);
        self.system.len() + self.tools_bytes + punctuation + self.sealed_bytes + unsent
    }

    /// The messages not sent yet (after the last request), the only ones
    /// that may still change: the window guard cuts what they carry when a
    /// request would not fit ([`crate::ai::engine::window`]).
    pub(crate) fn unsent_mut(&mut self) -> &mut [Message] {
        &mut self.messages[self.redacted..]
    }

    /// The model's reply, exactly as received (less any caching mark, which
    /// only a request carries).
    pub(crate) fn push_assistant(&mut self, mut blocks: Vec<ContentBlock>) {
        for block in &mut blocks {
            block.set_cache_control(None);
        }
        let message = Message::assistant(blocks);
        let bytes = json_len(&message);
        self.messages.push(message);
        // The model's words are never redacted.
        if self.redacted == self.messages.len() - 1 {
            self.redacted = self.messages.len();
            self.sealed_bytes += bytes;
        }
    }

    /// A new user message (redacted when it is first sent).
    pub(crate) fn push_user(&mut self, blocks: Vec<ContentBlock>) {
        self.messages.push(Message::user_blocks(blocks));
    }

    /// Add luminos's own `note` as a text block at the end of the user
    /// message the model has not answered yet (after its tool results, as
    /// the API requires). Returns false, adding nothing, when the history
    /// ends with the model's turn (a paused turn that is being continued).
    pub(crate) fn append_note(&mut self, note: &str) -> bool {
        // A message sent and not answered (its request failed) may take a
        // note too: what it measures changes.
        let sealed = self.redacted == self.messages.len();
        let Some(last) = self.messages.last_mut() else {
            return false;
        };
        if last.role != Role::User {
            return false;
        }
        let before = if sealed { json_len(&*last) } else { 0 };
        let note = ContentBlock::text(note);
        match &mut last.content {
            Content::Blocks(blocks) => blocks.push(note),
            Content::Text(text) => {
                let first = ContentBlock::text(std::mem::take(text));
                last.content = Content::Blocks(vec![first, note]);
            }
        }
        if sealed {
            self.sealed_bytes = self.sealed_bytes - before + json_len(&*last);
        }
        true
    }
}

fn redact_content(redactor: &Redactor, content: &mut Content) {
    match content {
        Content::Text(text) => redact_string(redactor, text),
        Content::Blocks(blocks) => {
            for block in blocks {
                match block {
                    ContentBlock::Text { text, .. } => redact_string(redactor, text),
                    ContentBlock::ToolResult { content, .. } => redact_string(redactor, content),
                    ContentBlock::ToolUse { input, .. } => redact_value(redactor, input),
                    // Only the model writes thinking; it never sits in a
                    // user message.
                    ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => {}
                }
            }
        }
    }
}

fn redact_string(redactor: &Redactor, text: &mut String) {
    if !redactor.is_enabled() {
        return;
    }
    // Stretches of remembered secrets are masked without being reported as
    // hits, so the text is taken whatever the hits say.
    *text = redactor.redact(text).text;
}

fn redact_value(redactor: &Redactor, value: &mut Value) {
    match value {
        Value::String(text) => redact_string(redactor, text),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(redactor, v)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_value(redactor, v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transcript(system: &str, kickoff: &str) -> Transcript {
        Transcript::new(system.into(), kickoff, vec![], Workload::Routine)
    }

    const KEY: &str = "ghp_Xq9Lm2Vt7RpK4wZc8NbH1jY6dF3sG5aE0uTo";

    #[test]
    fn luminos_text_is_redacted_once_and_the_models_never() {
        let redactor = Redactor::new();
        let mut t = transcript(&format!("system {KEY}"), &format!("look {KEY}"));
        t.seal(&redactor);
        assert!(!t.system().contains(KEY));
        let kickoff = serde_json::to_string(&t.messages()[0]).unwrap();
        assert!(!kickoff.contains(KEY), "{kickoff}");
        // The model quoting something is echoed as it said it.
        let said = vec![
            ContentBlock::Thinking {
                thinking: format!("it said {KEY}"),
                signature: "sig".into(),
            },
            ContentBlock::text(format!("found {KEY}")),
        ];
        t.push_assistant(said.clone());
        t.push_user(vec![ContentBlock::text(format!("result {KEY}"))]);
        t.seal(&redactor);
        assert_eq!(t.messages()[1], Message::assistant(said));
        assert!(
            !serde_json::to_string(&t.messages()[2])
                .unwrap()
                .contains(KEY)
        );
    }

    #[test]
    fn sent_history_never_changes_when_the_redactor_learns_more() {
        let redactor = Redactor::new();
        // A piece of a token, which no rule matches on its own, until the
        // redactor has seen the whole token in a file.
        let secret = &KEY[6..30];
        let mut t = transcript("system", &format!("the value is {secret}"));
        t.seal(&redactor);
        let sent = t.messages().to_vec();
        let system = t.system().to_string();
        assert!(serde_json::to_string(&sent[0]).unwrap().contains(secret));
        redactor.learn_source("file", None, true, || Some(format!("token = {KEY}\n")));
        t.push_assistant(vec![ContentBlock::text("ok")]);
        t.push_user(vec![ContentBlock::text(format!("again {secret}"))]);
        t.seal(&redactor);
        // The redactor did learn it: the new message is masked...
        let newest = serde_json::to_string(&t.messages()[2]).unwrap();
        assert!(!newest.contains(secret), "{newest}");
        // ...and the one already sent is left as it was sent.
        assert_eq!(t.messages()[0], sent[0], "an earlier message was rewritten");
        assert_eq!(t.system(), system);
    }

    /// What the window guard measures: every byte of the request's parts.
    fn measured_whole(t: &Transcript) -> usize {
        t.system().len()
            + serde_json::to_vec(t.messages()).unwrap().len()
            + serde_json::to_vec(t.tools()).unwrap().len()
    }

    #[test]
    fn request_bytes_are_the_whole_request_at_every_step() {
        let redactor = Redactor::new();
        let tools = crate::ai::tools::definitions(crate::ai::tools::Toolbox::Dir);
        let mut t = Transcript::new(format!("sys {KEY}"), "go", tools, Workload::Routine);
        let check = |t: &Transcript| assert_eq!(t.request_bytes(), measured_whole(t));
        check(&t);
        t.seal(&redactor);
        check(&t);
        t.push_assistant(vec![ContentBlock::text("é \"quoted\"\n")]);
        check(&t);
        t.push_user(vec![ContentBlock::tool_result(
            "t1",
            format!("x {KEY}"),
            false,
        )]);
        check(&t);
        assert!(t.append_note("unsent note"));
        check(&t);
        t.seal(&redactor);
        check(&t);
        // Sent and not answered: a note still joins it.
        assert!(t.append_note("sent note"));
        check(&t);
        t.push_assistant(vec![ContentBlock::text("done")]);
        t.push_user(vec![ContentBlock::tool_result(
            "t2",
            "y".repeat(5000),
            false,
        )]);
        crate::ai::engine::window::shrink_pending(
            t.unsent_mut(),
            500,
            crate::ai::api::tokens::TokenEstimate::per_byte(0.25),
        );
        check(&t);
    }

    #[test]
    fn notes_join_only_an_unanswered_user_message() {
        let mut t = transcript("sys", "go");
        assert!(t.append_note("two left"));
        assert_eq!(
            t.messages(),
            [Message::user_blocks(vec![
                ContentBlock::text("go"),
                ContentBlock::text("two left")
            ])]
        );
        t.push_assistant(vec![ContentBlock::text("paused")]);
        assert!(!t.append_note("one left"));
        t.push_user(vec![ContentBlock::tool_result("t1", "ok", false)]);
        assert!(t.append_note("one left"));
        let Content::Blocks(blocks) = &t.messages()[2].content else {
            panic!("blocks expected");
        };
        assert!(matches!(blocks[0], ContentBlock::ToolResult { .. }));
        assert_eq!(blocks[1], ContentBlock::text("one left"));
    }
}
