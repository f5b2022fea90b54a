//! The fake-secret generator: deterministic strings over a credential's
//! alphabet, so no repository file holds anything that looks like a live
//! key. Shared by the integration suite (through `secrets`) and the
//! redactor's unit tests (`src/redact/tests`), which include this file.

pub const B62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
pub const DIGITS: &str = "0123456789";
pub const HEX: &str = "0123456789abcdef";

/// A deterministic pseudo-random string over `alphabet` (xorshift64).
pub fn fake(alphabet: &str, len: usize, seed: u64) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chars[(x % chars.len() as u64) as usize]
        })
        .collect()
}

/// `prefix` and `len` characters of [`fake`]: a key in its usual shape.
pub fn key(prefix: &str, alphabet: &str, len: usize, seed: u64) -> String {
    format!("{prefix}{}", fake(alphabet, len, seed))
}

/// `template` with each `{}` filled in turn by fake characters of a part,
/// `(alphabet, len)`, the n-th part from seed `seed + n`.
fn seeded_parts(template: &str, parts: &[(&str, usize)], seed: u64) -> String {
    (seed..)
        .zip(parts)
        .fold(template.to_string(), |text, (seed, &(alphabet, len))| {
            text.replacen("{}", &fake(alphabet, len, seed), 1)
        })
}

/// A Slack bot token: `xoxb-`, a 12- and a 13-digit id and 24 base62, from
/// seeds `seed` to `seed + 2`.
pub fn slack_bot_token(seed: u64) -> String {
    let parts = [(DIGITS, 12), (DIGITS, 13), (B62, 24)];
    seeded_parts("xoxb-{}-{}-{}", &parts, seed)
}

/// The path of a Slack incoming webhook, `T<8>/B<8>/<24 base62>`, from
/// seeds `seed` to `seed + 2`.
pub fn slack_webhook_path(seed: u64) -> String {
    let parts = [(UPPER_NUM, 8), (UPPER_NUM, 8), (B62, 24)];
    seeded_parts("T{}/B{}/{}", &parts, seed)
}

/// A JWT of random segments: `eyJ` and `header` characters, `eyJ` and
/// `claims` characters, and a 43-character signature, from seeds `seed` to
/// `seed + 2`.
pub fn jwt(header: usize, claims: usize, seed: u64) -> String {
    let parts = [(B64URL, header), (B64URL, claims), (B64URL, 43)];
    seeded_parts("eyJ{}.eyJ{}.{}", &parts, seed)
}

/// `-----BEGIN <kind>PRIVATE KEY-----`, spelled in pieces.
pub fn pem_line(edge: &str, kind: &str) -> String {
    format!("-----{edge} {kind}PRIVATE {}-----", "KEY")
}

/// base64url without padding (JWT segments and claims).
pub fn base64url(bytes: &[u8]) -> String {
    encode(bytes, B64URL, false)
}

/// Standard base64 with padding (HTTP Basic credentials).
pub fn base64(bytes: &[u8]) -> String {
    encode(bytes, B64, true)
}

/// `bytes` in the base64 `alphabet`, a last group shorter than four
/// characters padded with `=` when `pad` says so.
fn encode(bytes: &[u8], alphabet: &str, pad: bool) -> String {
    let chars = alphabet.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(chars[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// A private key of `lines` lines of 64 base64 characters (from seeds
/// `seed` on): the lines, and the PEM block with its marker lines.
pub fn private_key_lines(seed: u64, lines: u64) -> (Vec<String>, String) {
    let body: Vec<String> = (0..lines).map(|i| fake(B64, 64, seed + i)).collect();
    let block = format!(
        "{}\n{}\n{}\n",
        pem_line("BEGIN", ""),
        body.join("\n"),
        pem_line("END", "")
    );
    (body, block)
}
