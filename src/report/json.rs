//! The JSON report (`--json`, `--format json`): every key of [`Report`],
//! in the original's order with luminos's own keys after them, serialized
//! straight into the output, since at 200,000 files it is tens of megabytes
//! that need not exist twice in memory.

use std::io::{self, Write};

use super::Report;

/// Write `report` as pretty-printed JSON.
pub(crate) fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(out, report).map_err(io::Error::from)
}
