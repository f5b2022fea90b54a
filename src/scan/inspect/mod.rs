//! Reading files: one pass per file that both classifies and counts lines.
//!
//! The original ran `file` on every file with an unknown extension and then
//! `wc -l` twice on every source file. Here each file is opened at most once
//! and streamed in fixed-size chunks: the first chunks feed the content
//! sniffer ([`super::sniff`]), and when the file turns out to be source every
//! chunk feeds the newline counter. A 2 GiB file costs one buffer of memory,
//! and the holes of a sparse file are skipped rather than read (they hold no
//! newlines), so a terabyte-sized sparse file costs a few `lseek`s.
//!
//! Files are opened with `O_NONBLOCK` and checked with `fstat` before any
//! read, so a FIFO or a device swapped in after the walk is never read from.
//! Files that vanish, shrink or grow while we read simply give the answer for
//! the bytes we saw, like `wc -l`.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::progress::Counter;

use super::filetypes::description_category;
use super::sniff::{TextSniffer, describe};

/// Bytes read per `read` call.
const CHUNK: usize = 128 * 1024;

/// What reading one file told us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inspection {
    pub category: &'static str,
    /// The content description; `None` when the extension decided.
    pub description: Option<String>,
    /// Newline bytes, counted for source files only (0 otherwise or when the
    /// file could not be read, as `wc -l` failing gave the original).
    pub lines: u64,
}

/// A reusable read buffer; one per worker thread.
pub(crate) struct Buffer(Vec<u8>);

impl Buffer {
    pub(super) fn new() -> Buffer {
        Buffer(vec![0; CHUNK])
    }
}

/// A file waiting to be classified.
pub(crate) struct FileToInspect {
    pub path: PathBuf,
    pub name: String,
    /// Size from the walk (following a symlink).
    pub size: u64,
    /// The extension table's verdict.
    pub by_extension: Option<&'static str>,
    /// The entry is a symlink (to a regular file).
    pub is_symlink: bool,
}

/// Files handed to a worker at a time: small enough to balance the threads,
/// large enough that taking work costs nothing.
const BATCH: usize = 16;

/// Inspect every file on `threads` workers. The result is in input order.
pub(crate) fn inspect_all(
    files: &[FileToInspect],
    threads: usize,
    counter: &Counter,
) -> Vec<Inspection> {
    let next = AtomicUsize::new(0);
    let workers = threads.clamp(1, files.len().div_ceil(BATCH).max(1));
    let done: Vec<(usize, Inspection)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut buf = Buffer::new();
                    let mut out = Vec::new();
                    loop {
                        let start = next.fetch_add(BATCH, Ordering::Relaxed);
                        if start >= files.len() {
                            break;
                        }
                        let end = (start + BATCH).min(files.len());
                        for (i, file) in files[start..end].iter().enumerate() {
                            let inspected = inspect(file, &mut buf);
                            out.push((start + i, inspected));
                        }
                        counter.add((end - start) as u64);
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut inspected: Vec<Option<Inspection>> = vec![None; files.len()];
    for (i, f) in done {
        inspected[i] = Some(f);
    }
    // A worker that died leaves its files unread rather than misaligned.
    inspected
        .into_iter()
        .zip(files)
        .map(|(f, file)| {
            f.unwrap_or(Inspection {
                category: file.by_extension.unwrap_or("unknown"),
                description: file.by_extension.is_none().then(|| "data".to_string()),
                lines: 0,
            })
        })
        .collect()
}

/// `file --brief` does not follow symlinks: the original described a
/// symlink whose extension it did not know as `symbolic link to <target>`,
/// which no pattern matches, and never counted its lines.
pub(crate) fn describe_symlink(path: &Path) -> Inspection {
    let target = std::fs::read_link(path)
        .map(|t| t.to_string_lossy().into_owned())
        .unwrap_or_default();
    let description = format!("symbolic link to {target}");
    Inspection {
        category: description_category(&description),
        description: Some(description),
        lines: 0,
    }
}

/// Open `path` for reading without ever blocking (FIFOs) or acquiring a
/// controlling terminal (TTYs).
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// Classify one file and count its lines if it is source. A text file
/// whose name says it is prose (`LICENSE`, `copyright`, `README`, ...) is a
/// document, not source: its lines are not code.
pub(crate) fn inspect(file: &FileToInspect, buf: &mut Buffer) -> Inspection {
    let mut inspected = classify(file, buf);
    if inspected.category == "source"
        && file.by_extension.is_none()
        && crate::scan::filetypes::is_prose_name(&file.name)
    {
        inspected.category = "document";
        inspected.lines = 0;
    }
    inspected
}

fn classify(file: &FileToInspect, buf: &mut Buffer) -> Inspection {
    if file.is_symlink && file.by_extension.is_none() {
        let mut inspected = describe_symlink(&file.path);
        if inspected.category == "source" {
            inspected.lines = count_lines(&file.path, file.size, buf).unwrap_or(0);
        }
        return inspected;
    }
    inspect_path(&file.path, file.by_extension, file.size, buf)
}

/// Classify the file at `path` by its extension's verdict (`by_extension`)
/// or its content. `size_hint` is the size seen during the walk: once that
/// many bytes were read, a short read is taken as the end of the file, which
/// saves one `read` per file.
fn inspect_path(
    path: &Path,
    by_extension: Option<&'static str>,
    size_hint: u64,
    buf: &mut Buffer,
) -> Inspection {
    match by_extension {
        Some("source") => Inspection {
            category: "source",
            description: None,
            lines: count_lines(path, size_hint, buf).unwrap_or(0),
        },
        Some(category) => Inspection {
            category,
            description: None,
            lines: 0,
        },
        None => sniff_and_count(path, size_hint, buf),
    }
}

/// An open regular file.
struct Regular {
    file: File,
    /// Fewer blocks than bytes: the file may have holes worth skipping.
    sparse: bool,
}

/// Open a regular file; anything else is refused with the description
/// libmagic would have given.
fn open_regular(path: &Path) -> Result<Regular, String> {
    let file = open_nonblocking(path).map_err(|e| open_failure(path, &e))?;
    let meta = file.metadata().map_err(|e| open_failure(path, &e))?;
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(Regular {
            file,
            sparse: meta.blocks().saturating_mul(512) < meta.len(),
        });
    }
    Err(if kind.is_dir() {
        "directory"
    } else if kind.is_fifo() {
        "fifo (named pipe)"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_char_device() {
        "character special"
    } else if kind.is_block_device() {
        "block special"
    } else {
        "data"
    }
    .to_string())
}

fn open_failure(path: &Path, err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::PermissionDenied => "regular file, no read permission".to_string(),
        _ => format!(
            "cannot open `{}' ({})",
            path.to_string_lossy(),
            strip_os_error_code(err)
        ),
    }
}

/// `No such file or directory (os error 2)` → `No such file or directory`.
fn strip_os_error_code(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

/// Read the next chunk into `buf[start..]`, retrying on EINTR. Returns 0 at
/// the end of the file or on an error.
fn read_chunk(file: &mut File, buf: &mut [u8]) -> usize {
    loop {
        match file.read(buf) {
            Ok(n) => return n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return 0,
        }
    }
}

/// `wc -l` for one file: the number of `\n` bytes.
fn count_lines(path: &Path, size_hint: u64, buf: &mut Buffer) -> Option<u64> {
    let file = open_regular(path).ok()?;
    Some(count_newlines_from(&file, 0, size_hint, buf))
}

/// The `\n` bytes of `file` from `offset` to its end. A hole in a sparse
/// file reads as zeros, which hold no newline, so holes are skipped rather
/// than read: a terabyte-sized sparse file costs a few `lseek`s, and the
/// count is still exactly `wc -l`'s.
fn count_newlines_from(regular: &Regular, offset: u64, size_hint: u64, buf: &mut Buffer) -> u64 {
    let file = &regular.file;
    if !regular.sparse {
        return count_range(file, offset, u64::MAX, size_hint, buf);
    }
    let mut lines = 0;
    let mut pos = offset;
    loop {
        match seek_data(file, pos) {
            Seek::Data { start, end } => {
                lines += count_range(file, start, end, end, buf);
                pos = end;
            }
            Seek::End => return lines,
            // No hole support here: read everything that is left.
            Seek::Unsupported => return lines + count_range(file, pos, u64::MAX, size_hint, buf),
        }
    }
}

/// Where the next data of a sparse file lies.
enum Seek {
    /// Data from `start` up to the hole (or the end) at `end`.
    Data {
        start: u64,
        end: u64,
    },
    /// Only holes from here on.
    End,
    Unsupported,
}

fn seek_data(file: &File, from: u64) -> Seek {
    let fd = file.as_raw_fd();
    let Ok(from) = libc::off_t::try_from(from) else {
        return Seek::End;
    };
    // SAFETY: lseek on a descriptor we own; it only moves the file offset,
    // which the positioned reads below do not use.
    let start = unsafe { libc::lseek(fd, from, libc::SEEK_DATA) };
    if start < 0 {
        return match io::Error::last_os_error().raw_os_error() {
            Some(libc::ENXIO) => Seek::End,
            _ => Seek::Unsupported,
        };
    }
    // SAFETY: as above.
    let end = unsafe { libc::lseek(fd, start, libc::SEEK_HOLE) };
    if end < start {
        return Seek::Unsupported;
    }
    Seek::Data {
        start: start as u64,
        end: end as u64,
    }
}

/// Count `\n` in `[start, end)` of `file` (to its end when `end` lies past
/// it). Once `size_hint` bytes are behind us, a short read is taken as the
/// end, which saves one `read` per file.
fn count_range(file: &File, start: u64, end: u64, size_hint: u64, buf: &mut Buffer) -> u64 {
    let mut lines = 0;
    let mut pos = start;
    while pos < end {
        let want = buf
            .0
            .len()
            .min(usize::try_from(end - pos).unwrap_or(usize::MAX));
        let n = read_chunk_at(file, &mut buf.0[..want], pos);
        if n == 0 {
            break;
        }
        lines += count_newlines(&buf.0[..n]);
        pos += n as u64;
        if n < want && pos >= size_hint {
            break;
        }
    }
    lines
}

/// [`read_chunk`] at an offset.
fn read_chunk_at(file: &File, buf: &mut [u8], offset: u64) -> usize {
    loop {
        match file.read_at(buf, offset) {
            Ok(n) => return n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return 0,
        }
    }
}

/// Describe a file by its content, counting newlines in the same read; keep
/// reading to the end only when the description makes it source.
fn sniff_and_count(path: &Path, size_hint: u64, buf: &mut Buffer) -> Inspection {
    let mut regular = match open_regular(path) {
        Ok(regular) => regular,
        Err(description) => {
            let category = description_category(&description);
            return Inspection {
                category,
                description: Some(description),
                lines: 0,
            };
        }
    };
    let mut sniffer = TextSniffer::default();
    let mut head: Vec<u8> = Vec::new();
    let mut lines = 0;
    let mut total = 0u64;
    let mut carry = 0;
    let (category, description, at_eof) = loop {
        let n = read_chunk(&mut regular.file, &mut buf.0[carry..]);
        let at_eof = n == 0 || (carry + n < buf.0.len() && total + n as u64 >= size_hint);
        let chunk = &buf.0[..carry + n];
        lines += count_newlines(&chunk[carry..]);
        total += n as u64;
        if head.is_empty() {
            head.extend_from_slice(chunk);
        }
        let keep = sniffer.feed(chunk, carry, at_eof);
        if sniffer.decided() || at_eof {
            let description = describe(
                &head,
                sniffer.kind(&head),
                at_eof && total == head.len() as u64,
            );
            let category = description_category(&description);
            if category != "source" {
                return Inspection {
                    category,
                    description: Some(description),
                    lines: 0,
                };
            }
            break (category, description, at_eof);
        }
        // Keep an incomplete UTF-8 sequence in front of the next chunk.
        let len = chunk.len();
        buf.0.copy_within(len - keep..len, 0);
        carry = keep;
    };
    if !at_eof {
        // Source: count the rest, `total` bytes in.
        lines += count_newlines_from(&regular, total, size_hint, buf);
    }
    Inspection {
        category,
        description: Some(description),
        lines,
    }
}

/// Count `\n` bytes, eight at a time: each word's newline bytes become one
/// bit per byte lane, summed in byte lanes over at most 255 words (so no lane
/// overflows) and then added up. Several times faster than a byte loop.
pub(crate) fn count_newlines(bytes: &[u8]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    const WORDS_PER_BLOCK: usize = 255;
    let mut total = 0u64;
    let mut blocks = bytes.chunks(8 * WORDS_PER_BLOCK);
    for block in &mut blocks {
        let mut words = block.chunks_exact(8);
        let mut lanes = 0u64;
        for word in &mut words {
            let mut le = [0u8; 8];
            le.copy_from_slice(word);
            let x = u64::from_le_bytes(le) ^ NEWLINES;
            // Bit 7 set in exactly the bytes of `x` that are zero.
            let zero = !(((x & LOW7) + LOW7) | x | LOW7);
            lanes += zero >> 7;
        }
        total += sum_byte_lanes(lanes);
        total += words.remainder().iter().filter(|&&b| b == b'\n').count() as u64;
    }
    total
}

/// The sum of the eight bytes of `lanes`.
fn sum_byte_lanes(lanes: u64) -> u64 {
    const EVEN_BYTES: u64 = 0x00ff_00ff_00ff_00ff;
    let pairs = (lanes & EVEN_BYTES) + ((lanes >> 8) & EVEN_BYTES);
    pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48
}

#[cfg(test)]
mod tests;
