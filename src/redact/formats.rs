//! The checks of the rules for credentials written where a program reads
//! them rather than in a key's own shape: configuration files (`.netrc`,
//! `.pgpass`, XML settings, `.npmrc`, Docker's `config.json`), command lines
//! (`curl -u`, `mysql -p`) and HTTP headers (`Authorization: Basic`), and
//! for tokens whose prefix a service documents.
//!
//! In these places the value is a password someone typed, so it may be
//! short or made of words; what tells it from a reference is only whether it
//! is a template or a variable (`$PASS`, `${DB_PASSWORD}`, `{encrypted}`).
//! Anything else is redacted, and flagged as a secret when it reads like one
//! ([`password_looks_real`]).

use super::check::{Found, Verdict};
use super::entropy::{is_template, password_looks_real, percent_decode};
use super::examples::key_body_is_example;

/// A password typed into a file or a command line: a template or a
/// variable is a reference, not a value; anything else is redacted.
pub(crate) fn typed_password(s: &str, _: &Found<'_>) -> Verdict {
    if is_template(s) || s.contains("[REDACTED") || s == "*" {
        return Verdict::Pass;
    }
    Verdict::real_if(password_looks_real(&percent_decode(s)))
}

/// A `.pgpass` line's password. The match starts at the port; before it on
/// its line there must be the host alone, or `path:` or `path:N:` (what
/// `grep` adds) and the host. Not when the line is hex digits and colons:
/// an IPv6 address has the same shape.
pub(crate) fn pgpass_password(s: &str, found: &Found<'_>) -> Verdict {
    let start = found.caps.get(0).map_or(0, |m| m.start());
    let end = found.caps.get(0).map_or(0, |m| m.end());
    let line_start = found.text[..start].rfind('\n').map_or(0, |i| i + 1);
    let before = &found.text[line_start..start];
    let mut fields = before.rsplit(':');
    let host = fields.next().unwrap_or("");
    let is_host = |h: &str| {
        !h.is_empty()
            && h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'*' | b'-'))
    };
    let prefix: Vec<&str> = fields.collect();
    let grep_prefix = match prefix.as_slice() {
        [] => true,
        [path] => !path.is_empty() && !path.contains(char::is_whitespace),
        [number, path] => {
            !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
                && !path.is_empty()
                && !path.contains(char::is_whitespace)
        }
        _ => false,
    };
    let line = &found.text[line_start..end];
    let address = line
        .trim_end()
        .bytes()
        .all(|b| b.is_ascii_hexdigit() || b == b':');
    if !is_host(host) || !grep_prefix || address {
        return Verdict::Pass;
    }
    typed_password(s, found)
}

/// `curl -u user:password`: also not a password when both halves are
/// numbers (`-u 1000:1000` reads as ids) or the password repeats the user.
pub(crate) fn curl_user_password(s: &str, found: &Found<'_>) -> Verdict {
    let user = found.group("user");
    let numeric = |v: &str| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
    if (numeric(user) && numeric(s)) || s == user {
        return Verdict::Pass;
    }
    typed_password(s, found)
}

/// Base64 of `user:password`, after `Authorization: Basic` (always a
/// credential) or as a stored `auth` (Docker's `config.json`, npm's
/// `_auth`), which is one only when it decodes to `user:password`. The
/// password decides whether it reads as real.
pub(crate) fn basic_credentials(s: &str, found: &Found<'_>) -> Verdict {
    let decoded = super::kinds::base64url_decode(s);
    let pair = String::from_utf8(decoded)
        .ok()
        .and_then(|text| text.split_once(':').map(|(_, pw)| pw.to_owned()));
    match pair {
        Some(password) if !password.is_empty() => Verdict::real_if(password_looks_real(&password)),
        _ if found.group("stored").is_empty() => Verdict::Example,
        _ => Verdict::Pass,
    }
}

/// A token with a documented prefix: an example when its random part (the
/// longest stretch between `_`, `-`, `.` and `~`, which is never the
/// prefix) reads as one ([`key_body_is_example`]). Mailgun's `key-` is a
/// common word part, so a `key-` that continues a name (`cache-key-…`,
/// `my_key-…`) is not one.
pub(crate) fn prefixed_token(s: &str, found: &Found<'_>) -> Verdict {
    if s.starts_with("key-") {
        let start = found.caps.get(0).map_or(0, |m| m.start());
        let before = found.text[..start].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')) {
            return Verdict::Pass;
        }
    }
    let body = s
        .split(['_', '-', '.', '~'])
        .max_by_key(|part| part.len())
        .unwrap_or(s);
    Verdict::real_if(!key_body_is_example(body))
}

/// Decode standard base64, skipping anything outside its alphabet (line
/// breaks, `\n` escapes' backslashes and letters are alphabet: the escape
/// leaves an `n` behind, which costs a few bits at that spot and no more).
fn decode_base64(s: &str) -> Vec<u8> {
    let clean: String = s
        .replace("\\n", "")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/'))
        .collect();
    super::kinds::base64url_decode(&clean)
}

/// Base64 that starts like `-----BEGIN`: a private key when it decodes to
/// a private key block (not a certificate or a public key), judged as the
/// private-key rule judges a block (a sample body is an example).
pub(crate) fn encoded_private_key_verdict(s: &str, _: &Found<'_>) -> Verdict {
    let decoded = String::from_utf8_lossy(&decode_base64(s)).into_owned();
    if !decoded.starts_with("-----BEGIN") || !decoded.contains("PRIVATE KEY") {
        return Verdict::Pass;
    }
    let body: String = decoded
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .flat_map(str::chars)
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/'))
        .collect();
    if body.len() < 64 {
        return Verdict::Pass;
    }
    Verdict::real_if(
        !super::examples::has_placeholder_marker(&body)
            && super::entropy::shannon_entropy(&body) >= 4.5,
    )
}

/// An Azure SAS `sig=`: only in a query or connection string that carries
/// the other SAS fields (`sv=` and one of `se=`, `sp=`, `sr=`, `ss=`),
/// and only a signature's length (HMAC-SHA256 in base64, 43 or 44
/// characters once its `%XX` escapes are decoded).
pub(crate) fn sas_signature_verdict(s: &str, found: &Found<'_>) -> Verdict {
    let start = found.caps.get(0).map_or(0, |m| m.start());
    let line_start = found.text[..start]
        .rfind(['\n', ' ', '"', '\''])
        .map_or(0, |i| i + 1);
    let end = found.caps.get(0).map_or(start, |m| m.end());
    let line_end = found.text[end..]
        .find(['\n', ' ', '"', '\''])
        .map_or(found.text.len(), |i| end + i);
    let around = &found.text[line_start..line_end];
    let has = |field: &str| {
        around.contains(&format!("?{field}="))
            || around.contains(&format!("&{field}="))
            || around.contains(&format!(";{field}="))
            || around.contains(&format!("={field}="))
            || around.starts_with(&format!("{field}="))
    };
    let decoded = percent_decode(s);
    let signature = (43..=44).contains(&decoded.len());
    let sas_fields = has("sv") && ["se", "sp", "sr", "ss"].iter().any(|f| has(f));
    if !(sas_fields && signature) {
        return Verdict::Pass;
    }
    Verdict::real_if(!key_body_is_example(&decoded))
}

/// Words in a file's name that say it keeps credentials.
const CREDENTIAL_FILE_WORDS: &[&str] = &[
    "cred", "passw", "passwd", "pwd", "secret", "login", "account", "htpasswd",
];

/// Whether `name` (a file name) reads like a file of credentials.
pub(crate) fn credential_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    CREDENTIAL_FILE_WORDS.iter().any(|w| lower.contains(w))
}

/// A `user:password` line: a credential only in a file named like one
/// ([`credential_file`]); there the password is redacted unless it is a
/// template, a number (`host:8080`) or repeats the user.
pub(crate) fn credential_line(s: &str, found: &Found<'_>) -> Verdict {
    if !found.source.is_some_and(credential_file) {
        return Verdict::Pass;
    }
    let user = found.group("user");
    if s == user || s.bytes().all(|b| b.is_ascii_digit()) || user.len() > 64 || s.len() > 128 {
        return Verdict::Pass;
    }
    typed_password(s, found)
}

/// A password hash after `user:`: the user name (letters, digits, `._@-`,
/// at most 64) must come right before the colon, at the start of a line or
/// after white space or another colon (`path:N:` from `grep`).
pub(crate) fn password_hash(s: &str, found: &Found<'_>) -> Verdict {
    let colon = found.caps.get(0).map_or(0, |m| m.start());
    let before = &found.text[..colon];
    let user_len = before
        .bytes()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'@' | b'-'))
        .count();
    let ahead = before[..before.len() - user_len].chars().next_back();
    let placed = ahead.is_none_or(|c| c.is_whitespace() || c == ':');
    if user_len == 0 || user_len > 64 || !placed {
        return Verdict::Pass;
    }
    Verdict::real_if(!super::examples::has_placeholder_marker(s))
}
