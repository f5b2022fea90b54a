//! A request body serialized straight from a conversation's borrowed
//! parts: nothing of the history is copied to send it. A conversation's
//! requests grow with every turn, and each one used to be a full copy of
//! the history (and of the copy, to place the caching marks) before it was
//! encoded.
//!
//! The bytes are exactly those of the [`MessagesRequest`] the same parts
//! make, with the prompt-caching [`Marks`] placed as
//! [`super::caching::apply_marks`] places them: the batch transport names a
//! request by the digest of these bytes, so they must not depend on how
//! the request was built. The parts must carry no marks of their own (a
//! conversation's history never does); the marks are placed as the body is
//! written, on copies of the few items that carry one (the last tool, the
//! last block of the user messages the marks name).
//!
//! [`MessagesRequest`]: super::MessagesRequest

use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

use super::caching::Marks;
use super::catalog::CacheTtl;
use super::settings::CallSettings;
use super::types::{CacheControl, Content, ContentBlock, Message, TextType, ToolDefinition};
use super::{ApiError, ApiErrorKind};

/// A Messages API request whose conversation is borrowed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestBody<'a> {
    pub model: &'a str,
    /// The system prompt; empty sends none.
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolDefinition],
    /// `max_tokens`, `thinking` and `output_config`.
    pub settings: CallSettings,
    /// Where its prompt-caching marks go, and their lifetime.
    pub marks: Marks,
    /// A streamed reply (`/v1/messages`), or a whole one (a batch's
    /// `params`).
    pub stream: bool,
}

impl RequestBody<'_> {
    /// The JSON bytes.
    pub(crate) fn encode(&self) -> Result<Vec<u8>, ApiError> {
        serde_json::to_vec(self).map_err(|err| {
            ApiError::new(
                ApiErrorKind::InvalidRequest,
                format!("could not encode the request: {err}"),
            )
        })
    }
}

impl Serialize for RequestBody<'_> {
    /// The fields in [`super::MessagesRequest`]'s order, absent where it
    /// leaves them out.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let ttl = self.marks.ttl;
        let marked = self.marks.prefix.then_some(ttl);
        let settings = &self.settings;
        let mut body = serializer.serialize_struct("MessagesRequest", 8)?;
        body.serialize_field("model", self.model)?;
        body.serialize_field("max_tokens", &settings.max_tokens)?;
        if self.system.is_empty() {
            body.skip_field("system")?;
        } else {
            let system = SystemText {
                text: self.system,
                marked,
            };
            body.serialize_field("system", &[system])?;
        }
        let newest: Vec<usize> = self.marks.messages().collect();
        body.serialize_field(
            "messages",
            &Messages {
                messages: self.messages,
                marked: &newest,
                lifetime: ttl,
            },
        )?;
        if self.tools.is_empty() {
            body.skip_field("tools")?;
        } else {
            body.serialize_field("tools", &MarkLast::new(self.tools, marked))?;
        }
        match &settings.thinking {
            Some(thinking) => body.serialize_field("thinking", thinking)?,
            None => body.skip_field("thinking")?,
        }
        match &settings.output_config {
            Some(output) => body.serialize_field("output_config", output)?,
            None => body.skip_field("output_config")?,
        }
        if self.stream {
            body.serialize_field("stream", &true)?;
        } else {
            body.skip_field("stream")?;
        }
        body.end()
    }
}

/// The system prompt as its one text block.
struct SystemText<'a> {
    text: &'a str,
    /// The lifetime of its mark, if it has one.
    marked: Option<CacheTtl>,
}

impl Serialize for SystemText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut block = serializer.serialize_struct("SystemBlock", 3)?;
        block.serialize_field("type", &TextType::Text)?;
        block.serialize_field("text", self.text)?;
        if let Some(ttl) = self.marked {
            block.serialize_field("cache_control", &CacheControl::lasting(ttl))?;
        } else {
            block.skip_field("cache_control")?;
        }
        block.end()
    }
}

/// An item that can carry a caching mark.
trait Markable: Serialize + Clone {
    /// This item with a mark asking for `ttl`.
    fn marked(&self, ttl: CacheTtl) -> Self;
}

impl Markable for ToolDefinition {
    fn marked(&self, ttl: CacheTtl) -> Self {
        ToolDefinition {
            cache_control: Some(CacheControl::lasting(ttl)),
            ..self.clone()
        }
    }
}

impl Markable for ContentBlock {
    /// Thinking blocks take no mark (see [`ContentBlock::set_cache_control`]).
    fn marked(&self, ttl: CacheTtl) -> Self {
        let mut block = self.clone();
        block.set_cache_control(Some(CacheControl::lasting(ttl)));
        block
    }
}

/// A list written as it is, its last item marked when `mark` (the mark's
/// lifetime) says so.
struct MarkLast<'a, T> {
    items: &'a [T],
    mark: Option<CacheTtl>,
}

impl<'a, T> MarkLast<'a, T> {
    fn new(items: &'a [T], mark: Option<CacheTtl>) -> Self {
        MarkLast { items, mark }
    }
}

impl<T: Markable> Serialize for MarkLast<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.items.len()))?;
        let last = self.items.len().saturating_sub(1);
        for (n, item) in self.items.iter().enumerate() {
            if let Some(ttl) = self.mark.filter(|_| n == last) {
                seq.serialize_element(&item.marked(ttl))?;
            } else {
                seq.serialize_element(item)?;
            }
        }
        seq.end()
    }
}

/// The history, the messages at `marked` (indexes) with their last block
/// marked.
struct Messages<'a> {
    messages: &'a [Message],
    marked: &'a [usize],
    lifetime: CacheTtl,
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.messages.len()))?;
        for (n, message) in self.messages.iter().enumerate() {
            if self.marked.contains(&n) {
                seq.serialize_element(&MarkedMessage(message, self.lifetime))?;
            } else {
                seq.serialize_element(message)?;
            }
        }
        seq.end()
    }
}

/// A message with its last block marked; a plain string becomes one
/// marked text block, as [`super::caching`] turns it into one.
struct MarkedMessage<'a>(&'a Message, CacheTtl);

impl Serialize for MarkedMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (message, ttl) = (self.0, self.1);
        let mut out = serializer.serialize_struct("Message", 2)?;
        out.serialize_field("role", &message.role)?;
        match &message.content {
            Content::Text(text) if !text.is_empty() => {
                let block = ContentBlock::text(text.as_str()).marked(ttl);
                out.serialize_field("content", &[block])?;
            }
            Content::Text(_) => out.serialize_field("content", &message.content)?,
            Content::Blocks(blocks) => {
                out.serialize_field("content", &MarkLast::new(blocks, Some(ttl)))?;
            }
        }
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ai::api::caching::Reuse;
    use crate::ai::api::catalog::lookup;
    use crate::ai::api::settings::Workload;
    use crate::ai::api::types::{Message, MessagesRequest, SystemBlock};
    use crate::ai::api::{DEFAULT_MODEL, caching};

    /// A tool as the model is offered it: no mark of its own.
    fn tool(name: &str) -> ToolDefinition {
        let offered = json!({"name": name, "description": "d", "input_schema": {}});
        serde_json::from_value(offered).unwrap()
    }

    /// The bytes the owned request of the same parts encodes to, marked
    /// by [`caching::apply_marks`].
    fn owned_bytes(body: &RequestBody<'_>) -> Vec<u8> {
        let mut request = MessagesRequest {
            model: body.model.to_string(),
            max_tokens: 0,
            system: if body.system.is_empty() {
                Vec::new()
            } else {
                vec![SystemBlock::text(body.system)]
            },
            messages: body.messages.to_vec(),
            tools: body.tools.to_vec(),
            thinking: None,
            output_config: None,
            stream: body.stream,
        }
        .with_settings(&body.settings);
        caching::apply_marks(&mut request, body.marks);
        serde_json::to_vec(&request).unwrap()
    }

    /// Marks a request over `messages` may carry: a conversation's usual
    /// ones at either lifetime, none, and each kind of mark alone.
    fn marks_of(messages: &[Message]) -> Vec<Marks> {
        let usual = |ttl| Marks::for_reuse(Reuse::Expected, messages, ttl);
        let last = messages.len() - 1;
        vec![
            usual(CacheTtl::FiveMinutes),
            usual(CacheTtl::OneHour),
            Marks::NONE,
            Marks {
                prefix: true,
                ..Marks::NONE
            },
            Marks {
                read: Some(0),
                ..usual(CacheTtl::OneHour)
            },
            Marks {
                prefix: false,
                read: None,
                write: Some(last),
                ttl: CacheTtl::FiveMinutes,
            },
        ]
    }

    #[test]
    fn the_body_is_byte_for_byte_the_owned_request() {
        let thinking = ContentBlock::Thinking {
            thinking: "hm".into(),
            signature: "sig".into(),
        };
        let call = ContentBlock::ToolUse {
            id: "t1".into(),
            name: "a".into(),
            input: json!({"path": "x"}),
            cache_control: None,
        };
        let histories = vec![
            vec![Message::user_blocks(vec![ContentBlock::text("go")])],
            vec![Message::user_text("go")],
            vec![Message::user_text("")],
            vec![
                Message::user_text("go"),
                Message::assistant(vec![thinking.clone(), call]),
                Message::user_blocks(vec![
                    ContentBlock::tool_result("t1", "one", false),
                    ContentBlock::tool_result("t2", "two", true),
                    ContentBlock::text("note"),
                ]),
                Message::assistant(vec![thinking]),
                Message::user_blocks(vec![]),
            ],
        ];
        let toolsets = [vec![], vec![tool("a")], vec![tool("a"), tool("b")]];
        let model = lookup(DEFAULT_MODEL).unwrap();
        for messages in &histories {
            for tools in &toolsets {
                for system in ["", "You investigate."] {
                    for marks in marks_of(messages) {
                        for stream in [true, false] {
                            for workload in [Workload::Routine, Workload::Judgment] {
                                let body = RequestBody {
                                    model: DEFAULT_MODEL,
                                    system,
                                    messages,
                                    tools,
                                    settings: CallSettings::new(model, workload),
                                    marks,
                                    stream,
                                };
                                assert_eq!(
                                    String::from_utf8(body.encode().unwrap()).unwrap(),
                                    String::from_utf8(owned_bytes(&body)).unwrap(),
                                    "{marks:?} stream={stream} system={system:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
