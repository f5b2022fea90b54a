//! Example values: does a value that is redacted look like a documentation
//! example or a placeholder rather than a credential someone uses?
//!
//! The answer never decides whether a value is redacted (a value with a
//! credential's shape, or a literal assigned to a secret's name, always is),
//! only how loudly it is flagged: an example is flagged `info`, so a tree
//! full of documentation and test data does not bury the one real key. So
//! the tests here may be generous: a real key taken for an example is still
//! masked; it only loses its `critical` flag.

/// Long words that mark a value as an example rather than a credential.
/// A random key contains one of these (six or more characters) with
/// negligible probability, so the format rules can use them on key bodies.
const MARKERS: &[&str] = &[
    "example",
    "placeholder",
    "xxxxxx",
    "changeme",
    "change_me",
    "change-me",
    "redacted",
    "sample",
    "insert",
    "replace",
    "******",
    "......",
    "000000",
    "123456",
];

/// Short words that also mark placeholders, but that a long random string
/// contains too often (about once in a thousand 150-character keys) to be
/// used on key bodies. Only short, free-form values (passwords) are checked
/// for these.
const WORDS: &[&str] = &[
    "your", "xxxx", "dummy", "fake", "secret", "password", "passwd", "token", "test", "****",
    "...", "demo", "lorem", "ipsum",
];

/// Passwords that documentation, tutorials and test suites use so often that
/// they are examples wherever they turn up (compared in lowercase, without
/// separators).
const FAMOUS: &[&str] = &[
    "opensesame",
    "letmein",
    "hunter2",
    "trustno1",
    "iloveyou",
    "qwerty",
    "asdf",
    "zxcv",
    "correcthorsebatterystaple",
    "foobar",
    "changeit",
    "admin",
    "guest",
    "default",
];

/// Small words that make a string read as a sentence (an error message, a
/// hint) rather than a passphrase.
const PROSE_WORDS: &[&str] = &[
    "a", "an", "the", "is", "are", "be", "to", "of", "in", "on", "at", "by", "or", "if", "for",
    "and", "not", "no", "must", "should", "can", "with", "from", "this", "that", "it", "you",
    "here", "please", "enter", "invalid", "missing", "required", "expected", "error",
];

/// Whether `s` contains a long placeholder marker (`EXAMPLE`, `xxxxxx`).
pub(crate) fn has_placeholder_marker(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    MARKERS.iter().any(|w| lower.contains(w))
}

/// Whether `s` is, or contains, any placeholder word, short ones included.
pub(crate) fn has_placeholder_word(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    MARKERS.iter().chain(WORDS).any(|w| lower.contains(w))
}

/// Whether `s` holds a run of `len` or more printable ASCII characters that
/// each repeat, or follow, or precede the one before: `aaaaaa`, `123456`,
/// `abcdef`, `987654`, `()*+,-.` (a table of characters in a test).
/// Letters are compared in lowercase.
pub(crate) fn has_simple_run(s: &str, len: usize) -> bool {
    if len <= 1 {
        return !s.is_empty();
    }
    let b: Vec<u8> = s.bytes().map(|b| b.to_ascii_lowercase()).collect();
    for step in [0i16, 1, -1] {
        let mut run = 1;
        for w in b.windows(2) {
            let printable = w[0].is_ascii_graphic() && w[1].is_ascii_graphic();
            if printable && i16::from(w[1]) - i16::from(w[0]) == step {
                run += 1;
                if run >= len {
                    return true;
                }
            } else {
                run = 1;
            }
        }
    }
    false
}

/// Whether a key body (what follows a format's prefix) looks like an
/// example: a placeholder marker, a run of six simple characters, or too
/// few distinct characters for a random key (`ghp_xxxxxxxx…`).
pub(crate) fn key_body_is_example(body: &str) -> bool {
    has_placeholder_marker(body)
        || has_simple_run(body, 6)
        || super::entropy::shannon_entropy(body) < 3.0
}

/// Whether a password-like value (assigned to a secret's name, in a URL,
/// after `Bearer`; percent-escapes decoded) looks like an example or
/// placeholder: a placeholder or famous example word, a simple sequence of
/// five, one short piece repeated (`abcabcabc`, `hunter2hunter2`), a
/// sentence, or control characters (nobody types those into a password; URL
/// test suites do).
pub(crate) fn password_is_example(v: &str) -> bool {
    let squeezed: String = v
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    has_placeholder_word(v)
        || FAMOUS.iter().any(|w| squeezed.contains(w))
        || has_simple_run(v, 5)
        || is_repeated(&squeezed)
        || reads_as_prose(v)
        || is_numbered_word(v)
        || v.contains(char::is_control)
}

/// Whether `v` is one lowercase word numbered with a single digit:
/// `progress-1`, `access_2`, the ids a test hands out in turn. Two or more
/// digits (`sunshine-42`) read as a chosen password and stay one.
fn is_numbered_word(v: &str) -> bool {
    let Some((word, number)) = v.rsplit_once(['-', '_']) else {
        return false;
    };
    number.len() == 1
        && number.bytes().all(|b| b.is_ascii_digit())
        && word.len() >= 3
        && word.bytes().all(|b| b.is_ascii_lowercase())
        && super::entropy::wordiness(word) >= 1.0
}

/// Whether `s` is one piece written two or more times.
fn is_repeated(s: &str) -> bool {
    let n = s.len();
    n >= 2
        && (1..=n / 2)
            .filter(|&period| n.is_multiple_of(period))
            .any(|period| s.is_char_boundary(period) && s == s[..period].repeat(n / period))
}

/// Whether `v` reads as a sentence: words separated by spaces, one of them
/// a small word of prose, or ending with sentence punctuation.
pub(crate) fn reads_as_prose(v: &str) -> bool {
    let trimmed = v.trim();
    if !trimmed.contains(' ') {
        return false;
    }
    trimmed.ends_with(['.', '!', '?', ':'])
        || trimmed
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .any(|w| PROSE_WORDS.contains(&w.to_lowercase().as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_runs() {
        for s in [
            "123456", "abcdef", "ZYXWVU", "aaaaaa", "x987654x", "AbCdEf", "'()*+,-.",
        ] {
            assert!(has_simple_run(s, 6), "{s}");
        }
        for s in [
            "12345",
            "abcde1",
            "a1b2c3d4",
            "12-34-56",
            "q8Zk2LmP0xVb7RtN",
        ] {
            assert!(!has_simple_run(s, 6), "{s}");
        }
    }

    #[test]
    fn key_bodies() {
        assert!(key_body_is_example("IOSFODNN7EXAMPLE"));
        assert!(key_body_is_example(&"x".repeat(36)));
        assert!(key_body_is_example("1234567890ABCDEF"));
        assert!(!key_body_is_example("q8Zk2LmP0xVb7RtNw3Yd"));
    }

    #[test]
    fn example_passwords() {
        for v in [
            "changeme",
            "password123",
            "hunter2hunter2",
            "Aladdin:OpenSesame",
            "abcabcabc",
            "qwerty123",
            "12345678",
            "correct horse battery staple",
            "my-test-value",
            "Password is required",
            "invalid token",
            "Enter the value here.",
            "CLIENT_TRAFFIC_SECRET_0",
            "progress-1",
            "refresh_2",
            "a\u{0}b\u{1}c\td%&'()",
        ] {
            assert!(password_is_example(v), "{v}");
        }
        for v in [
            "Tr0ub4dor&3x",
            "velvet orchard lantern 42",
            "mydogmax1985",
            "BlueHarbor#1987",
            "q8Zk2LmP0xVb7RtN",
            "sunshine-42",
            "xkqzvtrw-1",
        ] {
            assert!(!password_is_example(v), "{v}");
        }
    }
}
