//! A pure server-sent-events parser (the WHATWG `text/event-stream` rules).
//!
//! Feed it byte chunks exactly as they come off the wire, split anywhere: in
//! the middle of a line, of a UTF-8 sequence or of a CRLF pair. It hands back
//! each complete event. It does no I/O and knows nothing about the Messages
//! API; [`super::stream`] gives the events their meaning.
//!
//! Rules implemented: lines end in LF, CR or CRLF; a blank line dispatches the
//! event; `:` starts a comment; `field: value` drops one leading space from
//! the value; several `data:` lines join with `\n`; an empty `data:` is an
//! empty line of data; `event:` names the event; `id:` is kept; `retry:` and
//! unknown fields are ignored; a leading byte-order mark is dropped.
//!
//! One deliberate leniency: at the end of the stream, [`SseParser::finish`]
//! dispatches an event whose closing blank line never came, instead of
//! discarding it as browsers do. A server that omits the final blank line
//! still delivers its last event; a stream cut mid-event still fails later,
//! because its data is cut too.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SseEvent {
    /// The `event:` name, `None` when the event had none (type "message").
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last `id:` seen, if any.
    pub id: Option<String>,
}

/// Incremental parser state. See the module docs.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// The previous chunk ended in CR: a LF at the start of the next chunk
    /// belongs to that line ending.
    after_cr: bool,
    /// Still at the very start of the stream (a BOM may follow).
    at_start: bool,
    event: Option<String>,
    /// Data lines, each followed by `\n` (the last one is removed on dispatch).
    data: String,
    /// Whether any `data:` line was seen for the current event.
    has_data: bool,
    last_id: Option<String>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    pub(crate) fn new() -> SseParser {
        SseParser {
            at_start: true,
            ..SseParser::default()
        }
    }

    /// Feed the next chunk; returns the events it completed, in order.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..end]);
            let terminator = rest[end];
            rest = &rest[end + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.process_line(&line) {
                events.push(event);
            }
        }
        self.line.extend_from_slice(rest);
        events
    }

    /// The stream has ended: process an unterminated last line and dispatch
    /// an event left without its closing blank line (see the module docs).
    pub(crate) fn finish(&mut self) -> Option<SseEvent> {
        self.after_cr = false;
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.process_line(&line) {
                return Some(event);
            }
        }
        self.dispatch()
    }

    fn process_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        let mut line = line;
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            return None;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"event" => self.event = Some(value.into_owned()),
            b"data" => {
                self.data.push_str(&value);
                self.data.push('\n');
                self.has_data = true;
            }
            b"id" if !value.contains('\0') => self.last_id = Some(value.into_owned()),
            // `retry` only matters to reconnecting browsers; unknown fields
            // are ignored by the standard.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        Some(SseEvent {
            event,
            data,
            id: self.last_id.clone(),
        })
    }
}

/// Parse a whole byte stream at once (for tests and small bodies).
#[cfg(test)]
pub(crate) fn parse_all(bytes: &[u8]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = parser.push(bytes);
    events.extend(parser.finish());
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
            id: None,
        }
    }

    /// Every way of cutting `bytes` in two, and in three around each cut,
    /// must give the same events as parsing it whole.
    fn assert_split_invariant(bytes: &[u8]) -> Vec<SseEvent> {
        let whole = parse_all(bytes);
        for cut in 0..=bytes.len() {
            let mut parser = SseParser::new();
            let mut got = parser.push(&bytes[..cut]);
            got.extend(parser.push(&bytes[cut..]));
            got.extend(parser.finish());
            assert_eq!(got, whole, "split at byte {cut}");
        }
        // Byte by byte.
        let mut parser = SseParser::new();
        let mut got: Vec<SseEvent> = bytes.iter().flat_map(|b| parser.push(&[*b])).collect();
        got.extend(parser.finish());
        assert_eq!(got, whole, "one byte at a time");
        whole
    }

    #[test]
    fn basic_events_and_names() {
        let got = assert_split_invariant(
            b"event: ping\ndata: {\"type\": \"ping\"}\n\nevent: message_stop\ndata: {}\n\n",
        );
        assert_eq!(
            got,
            vec![
                ev(Some("ping"), "{\"type\": \"ping\"}"),
                ev(Some("message_stop"), "{}")
            ]
        );
    }

    /// The line rules, each case split at every byte boundary.
    #[test]
    fn line_rules() {
        let cases: [(&str, &[u8], Vec<SseEvent>); 4] = [
            (
                "multiple data lines join with a newline",
                b"data: first\ndata:second\ndata:  third\n\n",
                vec![ev(None, "first\nsecond\n third")],
            ),
            (
                "CRLF, CR and LF all end lines",
                b"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n",
                vec![ev(Some("a"), "1"), ev(Some("b"), "2"), ev(None, "3")],
            ),
            (
                "comments, empty data and unknown fields",
                b": keep-alive\n\ndata:\n\ndata\n\nfoo: bar\nretry: 10\ndata: x\n\n:only a comment\n\n",
                vec![ev(None, ""), ev(None, ""), ev(None, "x")],
            ),
            (
                "an event without data is not dispatched and resets the name",
                b"event: lonely\n\ndata: after\n\n",
                vec![ev(None, "after")],
            ),
        ];
        for (rule, input, expected) in cases {
            assert_eq!(assert_split_invariant(input), expected, "{rule}");
        }
    }

    #[test]
    fn utf8_split_inside_a_sequence() {
        let text = "data: héllo → wörld 🦀\n\n";
        let got = assert_split_invariant(text.as_bytes());
        assert_eq!(got, vec![ev(None, "héllo → wörld 🦀")]);
    }

    #[test]
    fn bom_and_id() {
        let got = assert_split_invariant(b"\xEF\xBB\xBFid: 7\ndata: a\n\ndata: b\n\n");
        let mut first = ev(None, "a");
        first.id = Some("7".into());
        let mut second = ev(None, "b");
        second.id = Some("7".into());
        assert_eq!(got, vec![first, second]);
    }

    #[test]
    fn finish_dispatches_an_unterminated_event() {
        let got = assert_split_invariant(b"event: message_stop\ndata: {\"type\":\"message_stop\"}");
        assert_eq!(
            got,
            vec![ev(Some("message_stop"), "{\"type\":\"message_stop\"}")]
        );
        let mut parser = SseParser::new();
        assert!(parser.push(b"data: x\n").is_empty());
        assert_eq!(parser.finish(), Some(ev(None, "x")));
        assert_eq!(parser.finish(), None);
    }

    #[test]
    fn trailing_cr_then_lf_in_next_chunk_is_one_line_end() {
        let mut parser = SseParser::new();
        assert_eq!(parser.push(b"data: a\r"), vec![]);
        assert_eq!(parser.push(b"\n"), vec![]);
        assert_eq!(parser.push(b"\r"), vec![ev(None, "a")]);
        assert_eq!(parser.push(b"\ndata: b\n\n"), vec![ev(None, "b")]);
    }

    #[test]
    fn random_chunkings_match_whole_parse() {
        let stream = b"event: message_start\r\ndata: {\"a\":\"\xC3\xA9\"}\r\n\r\n: c\r\nevent: x\ndata: 1\ndata: 2\n\n\
            data:\rdata: z\r\r"
            .to_vec();
        let whole = parse_all(&stream);
        assert_eq!(whole.len(), 3);
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..500 {
            let mut parser = SseParser::new();
            let mut got = Vec::new();
            let mut rest = &stream[..];
            while !rest.is_empty() {
                let n = rng.usize(1..=rest.len().min(9));
                got.extend(parser.push(&rest[..n]));
                rest = &rest[n..];
            }
            got.extend(parser.finish());
            assert_eq!(got, whole);
        }
    }
}
