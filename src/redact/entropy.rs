//! Value heuristics: does a string look like a random credential, a
//! password someone chose, or a word, an identifier or a template?
//!
//! They decide how a redacted password-like value is flagged (a real-looking
//! one `concern` or `critical`, anything else `info`), and the template test
//! decides that a value is a reference rather than a value. They work on one
//! candidate value at a time, never on the whole text, so they favour clarity
//! over speed. Placeholders and examples are recognised in `examples.rs`.

use super::examples::{has_placeholder_word, password_is_example};

/// Shannon entropy of `s` in bits per character.
pub(crate) fn shannon_entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut total = 0u32;
    for b in s.bytes() {
        counts[b as usize] += 1;
        total += 1;
    }
    if total == 0 {
        return 0.0;
    }
    let total = f64::from(total);
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / total;
            -p * p.log2()
        })
        .sum()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CharClass {
    Lower,
    Upper,
    Digit,
    Other,
}

fn class_of(b: u8) -> CharClass {
    match b {
        b'a'..=b'z' => CharClass::Lower,
        b'A'..=b'Z' => CharClass::Upper,
        b'0'..=b'9' => CharClass::Digit,
        _ => CharClass::Other,
    }
}

/// How many of lower, upper, digit and other characters occur in `s`.
pub(crate) fn class_count(s: &str) -> usize {
    let mut seen = [false; 4];
    for b in s.bytes() {
        seen[class_of(b) as usize] = true;
    }
    seen.iter().filter(|&&x| x).count()
}

/// Fraction of neighbouring letter/digit pairs whose class (lower, upper,
/// digit) changes. Random base62 or hex scores about 0.5 to 0.6; words,
/// snake_case and camelCase score near 0.
pub(crate) fn class_transition_ratio(s: &str) -> f64 {
    let alnum: Vec<CharClass> = s
        .bytes()
        .map(class_of)
        .filter(|c| *c != CharClass::Other)
        .collect();
    if alnum.len() < 2 {
        return 0.0;
    }
    let changes = alnum.windows(2).filter(|w| w[0] != w[1]).count();
    changes as f64 / (alnum.len() - 1) as f64
}

/// Fraction of `s` covered by word-like segments: camelCase or snake_case
/// pieces of three or more letters that read as English (`Token`, `config`,
/// `BASE`). Random strings rarely hold such pieces; identifiers are made of
/// them.
pub(crate) fn wordiness(s: &str) -> f64 {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return 0.0;
    }
    let mut covered = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let run = word_segment_len(&bytes[i..]);
        if run >= 3 && reads_like_a_word(&bytes[i..i + run]) {
            covered += run;
        }
        i += run.max(1);
    }
    covered as f64 / bytes.len() as f64
}

/// Letter pairs that make up 97% of the pairs in English prose,
/// lowercase, as a 26x26 table. The list was measured once on English
/// documentation text; about 38% of all pairs are in it, so a random
/// string rarely strings several of them together.
const COMMON_BIGRAMS: &str = "\
ab ac ad af ag ai ak al am an ap ar as at au av ax ay ba be bi bl bo br bu ca ce ch ci ck cl cm co \
cr ct cu da dd de di dl do ds du ea ec ed ee ef eg ei el em en ep er es et ev ew ex ey fa fe ff fi \
fl fo fr ft fu ga ge gh gi gl gn gr gs gu ha he hi hl ho ht ia ib ic id ie if ig ik il im in io ip \
ir is it iv ix iz ju ke ki ks la ld le li ll lo ls lt lu ly ma mb md me mi mm mo mp ms mu na nc nd \
ne nf ng ni nl nn no ns nt nu nv ny oa ob oc od oe of og oi ol om on oo op or os ot ou ov ow pa pe \
pi pl po pp pr ps pt pu py qu ra rc rd re rg ri rk rl rm rn ro rr rs rt ru rw ry sa sc se sh si sl \
sn so sp sr ss st su sy ta tc td te th ti tl to tr ts tt tu tw tx ty ua ub uc ue uf ug ui ul um un \
up ur us ut va ve vi wa we wh wi wo wr ws xa xe xp xt yn yo yp ys yt ze";

static BIGRAM_TABLE: [[bool; 26]; 26] = bigram_table();

const fn bigram_table() -> [[bool; 26]; 26] {
    let mut table = [[false; 26]; 26];
    let b = COMMON_BIGRAMS.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i].is_ascii_lowercase() && b[i + 1].is_ascii_lowercase() {
            table[(b[i] - b'a') as usize][(b[i + 1] - b'a') as usize] = true;
            i += 2;
        } else {
            i += 1;
        }
    }
    table
}

/// Whether `piece` is one ordinary word, letters of one case that read like
/// English (`progress`, `PASSWORD`), or a number (`20251127`). Such a piece
/// of a remembered value says little about the value and turns up by
/// chance in other text: masking it would hide the word or the number
/// wherever the run shows it.
pub(crate) fn is_word_piece(piece: &[u8]) -> bool {
    let one_case =
        piece.iter().all(u8::is_ascii_lowercase) || piece.iter().all(u8::is_ascii_uppercase);
    (one_case && reads_like_a_word(piece)) || piece.iter().all(u8::is_ascii_digit)
}

/// A segment reads like a word when at least three quarters of its letter
/// pairs are common in English: `Engine`, `CONFIG`, `token`, but not `Xlfj`
/// or `DKSB`.
fn reads_like_a_word(segment: &[u8]) -> bool {
    let pairs = segment.len() - 1;
    let common = segment
        .windows(2)
        .filter(|w| {
            let (a, b) = (w[0].to_ascii_lowercase(), w[1].to_ascii_lowercase());
            a.is_ascii_lowercase()
                && b.is_ascii_lowercase()
                && BIGRAM_TABLE[(a - b'a') as usize][(b - b'a') as usize]
        })
        .count();
    common * 4 >= pairs * 3
}

/// Length of the camelCase/snake_case segment starting at `b[0]`: an
/// optional capital followed by lowercase letters, or a run of capitals.
fn word_segment_len(b: &[u8]) -> usize {
    let Some(&first) = b.first() else {
        return 0;
    };
    match class_of(first) {
        CharClass::Upper => {
            let lowers = b[1..].iter().take_while(|c| c.is_ascii_lowercase()).count();
            if lowers > 0 {
                1 + lowers
            } else {
                b.iter().take_while(|c| c.is_ascii_uppercase()).count()
            }
        }
        CharClass::Lower => b.iter().take_while(|c| c.is_ascii_lowercase()).count(),
        CharClass::Digit | CharClass::Other => 0,
    }
}

/// Whether `s` is built like a template or a variable reference rather than
/// a literal: `$X`, `${X}`, `$(cmd)`, `{{x}}`, `#{x}`, `<your-key>`, `{x}`,
/// `%X%`, `%s`, `%(name)s`, `<b>{}</b>`. A `$` or `{` inside random text is
/// not one, nor is a value that starts with `$` and goes on with more than a
/// name (`$ecr3t!`, a password).
pub(crate) fn is_template(s: &str) -> bool {
    let wrapped =
        |open: char, close: char| s.len() >= 2 && s.starts_with(open) && s.ends_with(close);
    let variable = s.strip_prefix('$').is_some_and(|name| {
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    });
    variable
        || ["${", "$(", "{{", "}}", "#{", "%s", "%(", "{}"]
            .iter()
            .any(|t| s.contains(t))
        || wrapped('<', '>')
        || wrapped('{', '}')
        || wrapped('%', '%')
        || wrapped('[', ']')
}

/// `s` with `%XX` escapes decoded (invalid UTF-8 replaced), so URL-encoded
/// values are judged by what they spell: `%c3%89t%C3%A9` is `Été`.
pub(crate) fn percent_decode(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('%') {
        return std::borrow::Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    std::borrow::Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// Whether a password someone chose (in a URL, say) reads as a real one:
/// eight or more characters and not a placeholder, with three character
/// classes, or two and not made of words, or one and long and random
/// (`kqzvtmwpxbrl`). Looser than [`looks_random`], because people pick these.
pub(crate) fn looks_like_password(v: &str) -> bool {
    let classes = class_count(v);
    let len = v.chars().count();
    len >= 8
        && !has_placeholder_word(v)
        && shannon_entropy(v) >= 2.5
        && (classes >= 3
            || (classes == 2 && wordiness(v) < 0.5)
            || (len >= 10 && wordiness(v) < 0.3 && shannon_entropy(v) >= 3.0))
}

/// Whether `v` is a passphrase: three or more words of three or more
/// letters, apart (spaces, dashes, dots, digits) or in camel case
/// (`velvet orchard lantern 42`, `Velvet-Orchard-Lantern`,
/// `VelvetOrchardLantern`), twelve or more characters, not a sentence,
/// not an identifier in upper case or snake_case.
pub(crate) fn looks_like_passphrase(v: &str) -> bool {
    if v.chars().count() < 12 || super::examples::reads_as_prose(v) {
        return false;
    }
    let identifier_like = v
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        || !v.bytes().any(|b| b.is_ascii_lowercase());
    if identifier_like {
        return false;
    }
    let bytes = v.as_bytes();
    let mut words = 0;
    let mut i = 0;
    while i < bytes.len() {
        let run = word_segment_len(&bytes[i..]);
        if run >= 3 {
            words += 1;
        }
        i += run.max(1);
    }
    words >= 3
}

/// Whether a password-like value (assigned to a secret's name, in a URL,
/// after `Bearer`) reads as a real credential: not an example, and random,
/// or chosen like a password, or a passphrase. Anything else that is
/// redacted is flagged as an example.
pub(crate) fn password_looks_real(v: &str) -> bool {
    !password_is_example(v)
        && (looks_random(v) || looks_like_password(v) || looks_like_passphrase(v))
}

/// Whether a value with no known prefix reads as a random credential rather
/// than a word, identifier, number or short placeholder.
///
/// Long values need entropy and mixed character classes that change often;
/// short ones (8 to 15 characters, typical hand-made passwords) need three
/// character classes as well. Either way, a value mostly made of words
/// (`BaseEngineConfig`) is an identifier, not a secret.
pub(crate) fn looks_random(v: &str) -> bool {
    let len = v.len();
    if len < 8 || v.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    if has_placeholder_word(v) || wordiness(v) >= 0.5 {
        return false;
    }
    let entropy = shannon_entropy(v);
    let transitions = class_transition_ratio(v);
    if len >= 16 {
        entropy >= 3.0 && transitions >= 0.2
    } else {
        class_count(v) >= 3 && entropy >= 2.75 && transitions >= 0.3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_grows_with_variety() {
        assert_eq!(shannon_entropy(""), 0.0);
        assert_eq!(shannon_entropy("aaaa"), 0.0);
        assert!((shannon_entropy("abab") - 1.0).abs() < 1e-9);
        assert!(shannon_entropy("q8Zk2LmP0xVb7RtN") > 3.9);
    }

    #[test]
    fn transitions_separate_random_from_identifiers() {
        assert!(class_transition_ratio("q8Zk2LmP0xVb7RtN") > 0.5);
        assert!(class_transition_ratio("snake_case_name") < 0.01);
        assert!(class_transition_ratio("camelCaseName") < 0.4);
    }

    #[test]
    fn wordiness_spots_identifiers() {
        assert!(wordiness("BaseEngineConfig") > 0.9);
        assert!(wordiness("MY_SECRET_VALUE") > 0.7);
        assert!(wordiness("q8Zk2LmP0xVb7RtN") < 0.3);
        assert!(wordiness("9f86d081884c7d659a2feaa0c55ad015") < 0.3);
    }

    /// Recall of the heuristic itself: generated credentials of the usual
    /// alphabets and lengths are accepted (deterministic seeds).
    #[test]
    fn generated_credentials_are_recognised() {
        use crate::redact::tests::fake;
        let alphabets = [
            ("base62", crate::redact::tests::B62, 16, 0.99),
            (
                "base64",
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                16,
                0.99,
            ),
            ("hex", "0123456789abcdef", 24, 0.98),
            ("lower36", "abcdefghijklmnopqrstuvwxyz0123456789", 24, 0.95),
        ];
        for (name, alphabet, min_len, want) in alphabets {
            for len in [min_len, 32, 40, 64] {
                let n = 500;
                let accepted = (0..n)
                    .filter(|i| looks_random(&fake(alphabet, len, 7919 * i + 1)))
                    .count();
                let rate = accepted as f64 / n as f64;
                assert!(rate >= want, "{name} len {len}: {rate}");
            }
        }
    }

    #[test]
    fn word_pieces() {
        for piece in ["progress", "PASSWORD", "settings", "20251127"] {
            assert!(is_word_piece(piece.as_bytes()), "{piece}");
        }
        for piece in ["rogress-", "Progress", "qzkxvbnm", "r482kqz9", "velvet o"] {
            assert!(!is_word_piece(piece.as_bytes()), "{piece}");
        }
    }

    #[test]
    fn random_values_pass() {
        for v in [
            "q8Zk2LmP0xVb7RtN",
            "Tr0ub4dor&3x",
            "9f86d081884c7d659a2feaa0c55ad015",
            "550e8400-e29b-41d4-a716-446655440000",
            "dGhpcyBpcyBub3QgYSByZWFsIGtleQ9Xz",
        ] {
            assert!(looks_random(v), "{v} should look random");
        }
    }

    #[test]
    fn words_identifiers_and_placeholders_fail() {
        for v in [
            "changeme",
            "hunter2",
            "password123",
            "BaseEngineConfig",
            "MY_SECRET_VALUE",
            "snake_case_identifier",
            "12345678901234",
            "your-api-key-here",
            "xxxxxxxxxxxxxxxx",
            "TokenStream",
            "string",
        ] {
            assert!(!looks_random(v), "{v} should not look random");
        }
    }

    #[test]
    fn percent_escapes_are_decoded() {
        for (escaped, decoded) in [
            ("%c3%89t%C3%A9", "Été"),
            ("a%2", "a%2"),
            ("plain", "plain"),
            ("%ff", "\u{fffd}"),
        ] {
            assert_eq!(percent_decode(escaped), decoded, "{escaped}");
        }
    }

    #[test]
    fn chosen_passwords() {
        assert!(looks_like_password("MyS3cretPassw!"));
        assert!(looks_like_password("k2j4h5g6f7"));
        for v in [
            "opensesame",
            "foobar",
            "secre1",
            "hunter2hunter2",
            "Password1",
            "guest",
        ] {
            assert!(!looks_like_password(v), "{v}");
        }
    }

    #[test]
    fn templates_are_recognised() {
        for v in [
            "${TOKEN}",
            "$PASSWORD",
            "{{ secret }}",
            "<your-key>",
            "%s",
            "%DB_PASS%",
            "#{ENV['X']}",
            "{password}",
            "$(pass show db)",
            "<b>{}</b>",
            "$db_pass",
        ] {
            assert!(is_template(v), "{v}");
        }
        assert!(!is_template("q8Zk2LmP0xVb7RtN"));
        assert!(!is_template("k#9z$x2!Lq{0"));
        assert!(!is_template("$ecr3t-Harbor!"));
    }
}
