//! The JSON report (`--json`, `--format json`): every key of [`Report`],
//! in the original's order with luminos's own keys after them, serialized
//! straight into the output, since at 200,000 files it is tens of megabytes
//! that need not exist twice in memory.
//!
//! JSON carries names and model text exactly, so nothing is escaped beyond
//! what JSON escapes, with one exception: a bidirectional control
//! ([`is_bidi_control`]) is written as its `\uXXXX` escape. The value read
//! back is the same, but no raw control reaches a terminal or an editor
//! showing the output, where it would reorder what follows
//! (`invoice\u{202e}exe.txt` read as `invoicetxt.exe`). Every JSON document
//! luminos prints goes through [`write_pretty`].

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};

use super::Report;
use crate::text::is_bidi_control;

/// Write `report` as pretty-printed JSON.
pub(crate) fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    write_pretty(report, out)
}

/// Write `value` as pretty-printed JSON with bidirectional controls
/// escaped (see the module docs).
pub(crate) fn write_pretty<T: Serialize + ?Sized>(
    value: &T,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(out, BidiSafe::default());
    value.serialize(&mut serializer).map_err(io::Error::from)
}

/// serde_json's pretty layout, writing bidirectional controls in strings
/// as `\uXXXX`.
#[derive(Default)]
struct BidiSafe(PrettyFormatter<'static>);

impl Formatter for BidiSafe {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|&(_, c)| is_bidi_control(c)) {
            writer.write_all(&rest.as_bytes()[..at])?;
            write!(writer, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidirectional_controls_are_escaped_and_read_back_the_same() {
        let value = serde_json::json!({
            "name": "invoice\u{202e}exe.txt",
            "list": ["\u{2066}a\u{2069}", "plain é"],
        });
        let mut out = Vec::new();
        write_pretty(&value, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.chars().any(is_bidi_control), "{text}");
        assert!(text.contains(r"invoice\u202eexe.txt"), "{text}");
        assert!(text.contains("plain é"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
        // The layout is serde_json's own.
        assert_eq!(
            text.replace(r"\u202e", "\u{202e}")
                .replace(r"\u2066", "\u{2066}")
                .replace(r"\u2069", "\u{2069}"),
            serde_json::to_string_pretty(&value).unwrap()
        );
    }
}
