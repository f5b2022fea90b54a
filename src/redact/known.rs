//! Secrets this run has already removed, recognised again wherever a piece of
//! one turns up.
//!
//! The rules find a secret by its shape and its surroundings, and some shapes
//! only exist whole: a private key is a key only between its BEGIN and END
//! lines. A command that shows part of a key file (`tail -n 3 id_ed25519`,
//! `grep -rn A keys/`, which also prefixes every line with the file name)
//! prints key material that no rule can recognise. So every secret a rule
//! removes is remembered, cut into overlapping windows of [`WINDOW`] bytes,
//! and any later text that shares a window with a remembered secret has that
//! stretch masked too, under the same rule's name.
//!
//! Only pieces of at least [`WINDOW`] bytes are remembered, and not the
//! `-----BEGIN/END ...-----` marker lines, which are format, not secret,
//! nor a window that is one ordinary word (`progress` in `progress-1`, a
//! value a rule took for a password) or a number: it says little about the
//! value and masking it would hide the word or the number everywhere. A
//! stretch masked this way is not reported as a new hit: the rule that found
//! the secret the first time already was. Some values are remembered whole
//! but not cut into windows (examples made of words, see the redactor): a
//! rule that finds one again reports a repeat, and its pieces mask nothing.

use std::collections::HashMap;

use super::entropy::is_word_piece;
use super::kinds::public_prefix_len;

/// Bytes a shared stretch must have before it is masked.
pub(crate) const WINDOW: usize = 8;

/// Bits in the prefilter: 8 KiB, which stays in the L1 cache.
const PREFILTER_BITS: usize = 1 << 16;

/// What the run has removed so far.
#[derive(Debug, Default)]
pub(super) struct Known {
    /// Every window of every remembered piece, with the index of the rule
    /// that found it first.
    windows: HashMap<[u8; WINDOW], usize>,
    /// One bit per hash of a window's first four bytes: almost every
    /// window of ordinary text is ruled out here, before the map is asked
    /// (which would make scanning a large request ten times slower).
    prefilter: Vec<u64>,
    /// The secrets themselves, whole, to tell a repeat from a new find,
    /// and whether their windows are remembered.
    values: HashMap<String, bool>,
}

impl Known {
    /// Whether nothing has been remembered yet (the common case: no masking
    /// work at all).
    pub(super) fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// Remember `secret` (found by rule `rule`), and when `mask` is set its
    /// windows too, so that pieces of it are masked wherever they turn up.
    /// Returns whether it was already known.
    pub(super) fn remember(&mut self, secret: &str, rule: usize, mask: bool) -> bool {
        let (repeat, masked) = match self.values.get(secret) {
            Some(&masked) => (true, masked),
            None => (false, false),
        };
        // A value remembered unmasked (an example of words) and found
        // again where it must be masked (a password in a credentials file)
        // is masked from now on.
        if masked || !mask {
            if !repeat {
                self.values.insert(secret.to_owned(), false);
            }
            return repeat;
        }
        self.values.insert(secret.to_owned(), true);
        // A format's documented prefix (`sk_live_`, a JWT's header) is
        // public: a window that lies wholly in it is not the secret.
        let public = public_prefix_len(secret);
        for piece in pieces(secret) {
            let offset = piece.as_ptr() as usize - secret.as_ptr() as usize;
            for (at, window) in piece.as_bytes().windows(WINDOW).enumerate() {
                if offset + at + WINDOW <= public {
                    continue;
                }
                let Ok(key) = <[u8; WINDOW]>::try_from(window) else {
                    continue;
                };
                if is_word_piece(window) || few_bytes(window) {
                    continue;
                }
                if self.prefilter.is_empty() {
                    self.prefilter = vec![0; PREFILTER_BITS / 64];
                }
                let bit = prefilter_bit(window);
                self.prefilter[bit / 64] |= 1 << (bit % 64);
                self.windows.entry(key).or_insert(rule);
            }
        }
        repeat
    }

    /// The byte ranges of `text` that share a window with a remembered
    /// secret, merged and widened to character boundaries, each with the rule
    /// that found the secret.
    pub(super) fn stretches(&self, text: &str) -> Vec<(usize, usize, usize)> {
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        if self.is_empty() || text.len() < WINDOW {
            return found;
        }
        for (at, window) in text.as_bytes().windows(WINDOW).enumerate() {
            let bit = prefilter_bit(window);
            if self.prefilter[bit / 64] & (1 << (bit % 64)) == 0 {
                continue;
            }
            let Ok(key) = <[u8; WINDOW]>::try_from(window) else {
                continue;
            };
            let Some(&rule) = self.windows.get(&key) else {
                continue;
            };
            let end = at + WINDOW;
            match found.last_mut() {
                Some(last) if at <= last.1 => last.1 = end,
                _ => found.push((at, end, rule)),
            }
        }
        for stretch in &mut found {
            while !text.is_char_boundary(stretch.0) {
                stretch.0 -= 1;
            }
            while !text.is_char_boundary(stretch.1) {
                stretch.1 += 1;
            }
        }
        found
    }
}

/// Whether `window` holds two different bytes or fewer (`xxxxxxxx`,
/// `00000000`, `0x000000`, `==` padding): a placeholder's run, which turns
/// up everywhere and says nothing of the value.
fn few_bytes(window: &[u8]) -> bool {
    let first = window[0];
    let other = window.iter().find(|&&b| b != first);
    other.is_none_or(|&other| window.iter().all(|&b| b == first || b == other))
}

/// The prefilter bit of a window: a multiplicative hash of its first four
/// bytes.
fn prefilter_bit(window: &[u8]) -> usize {
    let head = u32::from_le_bytes([window[0], window[1], window[2], window[3]]);
    (head.wrapping_mul(0x9E37_79B1) >> 16) as usize
}

/// The parts of a secret worth remembering: its lines, trimmed, without the
/// PEM marker lines, at least [`WINDOW`] bytes long. A line ends at a
/// newline or a carriage return, and at their escapes (`\n`, `\r`): a key
/// written as one JSON or YAML string is remembered line by line too, so
/// each of its base64 lines is a piece, whatever wrapped it.
fn pieces(secret: &str) -> impl Iterator<Item = &str> {
    secret
        .split(['\n', '\r'])
        .flat_map(|line| line.split("\\n"))
        .flat_map(|line| line.split("\\r"))
        .map(str::trim)
        .filter(|piece| piece.len() >= WINDOW && !piece.contains("-----"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_lines_but_not_markers_or_short_pieces() {
        let mut known = Known::default();
        let secret = "-----BEGIN X PRIVATE KEY-----\nAb1Cd2Ef3Gh4Ij5K\n  short==\n-----END X PRIVATE KEY-----";
        assert!(!known.remember(secret, 0, true));
        assert!(
            known.remember(secret, 0, true),
            "the second time it is a repeat"
        );
        let text = "tail: f3Gh4Ij and -----BEGIN X PRIVATE KEY----- and short==";
        assert!(known.stretches(text).is_empty());
        let text = "x Ab1Cd2Ef3Gh4Ij5K y";
        assert_eq!(known.stretches(text), [(2, 18, 0)]);
        // A piece of exactly a window is enough.
        assert_eq!(known.stretches("x:Ef3Gh4Ij"), [(2, 10, 0)]);
    }

    #[test]
    fn a_key_in_one_escaped_string_is_remembered_line_by_line() {
        let mut known = Known::default();
        let secret = "-----BEGIN PRIVATE KEY-----\\nAb1Cd2Ef3Gh4Ij5K\\nq8Zk2LmP0xVb7RtN\\r\\n-----END PRIVATE KEY-----\\n";
        known.remember(secret, 0, true);
        // Each base64 line alone, as a grep for base64 runs prints it.
        assert_eq!(known.stretches("Ab1Cd2Ef3Gh4Ij5K"), [(0, 16, 0)]);
        assert_eq!(known.stretches("x q8Zk2LmP0xVb7RtN"), [(2, 18, 0)]);
        // Not the marker lines.
        assert!(known.stretches("-----BEGIN PRIVATE KEY-----").is_empty());
    }

    #[test]
    fn runs_of_one_or_two_bytes_are_not_remembered() {
        let mut known = Known::default();
        known.remember("ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 0, true);
        assert!(known.stretches("let mask = \"xxxxxxxxxxxx\";").is_empty());
        assert!(known.stretches("0x00000000 ==========").is_empty());
        assert!(
            !known.stretches("ghp_xxxxxxx").is_empty(),
            "its start still is"
        );
    }

    #[test]
    fn a_public_prefix_alone_is_not_masked() {
        let mut known = Known::default();
        known.remember("sk_live_Q3x9Lm2Kp7Rt5Vw8", 0, true);
        assert!(known.stretches("if key.startswith('sk_live_'):").is_empty());
        // The prefix with the start of the body is.
        assert_eq!(known.stretches("sk_live_Q3x9"), [(1, 12, 0)]);
        let mut known = Known::default();
        known.remember(
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJxMjMifQ.c2lnbmF0dXJlX2J5dGVz",
            0,
            true,
        );
        assert!(
            known
                .stretches("header eyJhbGciOiJIUzI1NiJ9 again")
                .is_empty()
        );
        assert!(!known.stretches("eyJzdWIiOiJxMjMifQ").is_empty());
    }

    #[test]
    fn a_stretch_covers_every_shared_window_and_no_more() {
        let mut known = Known::default();
        known.remember("0123456789abcdefghij", 3, true);
        // A cut piece (the end of a line) is still found.
        let text = "keys/a.pem:7:6789abcdefghij!";
        let stretches = known.stretches(text);
        assert_eq!(stretches.len(), 1);
        let (start, end, rule) = stretches[0];
        assert_eq!(&text[start..end], "6789abcdefghij");
        assert_eq!(rule, 3);
        // Less than a window in common: nothing.
        assert!(known.stretches("0123456 3456789").is_empty());
    }

    #[test]
    fn a_window_that_is_one_word_is_not_remembered() {
        let mut known = Known::default();
        known.remember("progress-1", 0, true);
        assert!(known.stretches("let progress = 0;").is_empty());
        // The value itself is still masked but for its first letter, which
        // only the word window held.
        assert_eq!(known.stretches("x progress-1"), [(3, 12, 0)]);
    }

    #[test]
    fn a_value_remembered_without_masking_is_a_repeat_but_masks_nothing() {
        let mut known = Known::default();
        assert!(!known.remember("Password is required", 2, false));
        assert!(known.remember("Password is required", 2, false));
        assert!(known.is_empty());
        assert!(known.stretches("x Password is required y").is_empty());
    }

    #[test]
    fn stretches_end_on_character_boundaries() {
        let mut known = Known::default();
        known.remember("é0123456789abcé", 1, true);
        // `ĩ` ends in the same byte as `é`, so the first shared window starts
        // inside it; the stretch widens to take the whole character.
        let text = "<ĩ0123456789abcé>";
        let (start, end, _) = known.stretches(text)[0];
        assert_eq!(&text[start..end], "ĩ0123456789abcé");
    }
}
