//! `ANTHROPIC_BASE_URL`, checked before the scan: an address luminos can
//! send requests to, or a usage error that says what is wrong with it.
//!
//! luminos appends `/v1/messages` (and the other endpoints' paths) to the
//! base itself, so a base that already ends in `/v1` (a common copy from a
//! client library's settings) would reach `/v1/v1/messages` and get a 404
//! that looks like an unknown model. Such a base is used without its `/v1`,
//! with a note saying so. A path before it (a gateway's prefix) is kept.

use super::ConfigError;

/// The variable, as messages name it.
const NAME: &str = "ANTHROPIC_BASE_URL";

/// The base to use (no trailing slash) and, when it was changed, the note
/// that says how; or the usage error for a value that is not an `http` or
/// `https` address with a host.
pub(crate) fn parse_base_url(raw: &str) -> Result<(String, Option<String>), ConfigError> {
    let trimmed = raw.trim();
    let refuse = |why: String| ConfigError::BadBaseUrl {
        value: crate::text::escape_line(trimmed).into_owned(),
        why,
    };
    if !trimmed.contains("://") {
        return Err(refuse(format!(
            "it needs a scheme: https://{} or http://{} for a local gateway",
            crate::text::escape_line(trimmed.trim_start_matches('/')),
            crate::text::escape_line(trimmed.trim_start_matches('/')),
        )));
    }
    let url = reqwest::Url::parse(trimmed).map_err(|err| refuse(err.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refuse(format!(
            "luminos speaks http and https, not {}",
            crate::text::escape_line(url.scheme())
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(refuse("it names no host".to_string()));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(refuse(
            "it has a query or fragment, which a base address cannot have".to_string(),
        ));
    }
    let base = trimmed.trim_end_matches('/');
    match base.strip_suffix("/v1") {
        Some(without) if !without.ends_with(':') && !without.ends_with('/') => {
            let note = format!(
                "Note: {NAME} ends in /v1, which luminos adds itself; using {}",
                crate::text::escape_line(without)
            );
            Ok((without.to_string(), Some(note)))
        }
        _ => Ok((base.to_string(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_base_is_kept_without_its_trailing_slash() {
        for (raw, base) in [
            ("https://api.anthropic.com", "https://api.anthropic.com"),
            ("https://api.anthropic.com/", "https://api.anthropic.com"),
            ("http://127.0.0.1:4000", "http://127.0.0.1:4000"),
            (" http://gw.local/anthropic/ ", "http://gw.local/anthropic"),
            ("http://gw.local/v1beta", "http://gw.local/v1beta"),
        ] {
            assert_eq!(
                parse_base_url(raw).unwrap(),
                (base.to_string(), None),
                "{raw}"
            );
        }
    }

    #[test]
    fn a_trailing_v1_is_dropped_with_a_note() {
        for (raw, base) in [
            ("https://api.anthropic.com/v1", "https://api.anthropic.com"),
            ("http://127.0.0.1:4000/v1/", "http://127.0.0.1:4000"),
            ("http://gw.local/anthropic/v1", "http://gw.local/anthropic"),
        ] {
            let (got, note) = parse_base_url(raw).unwrap();
            assert_eq!(got, base, "{raw}");
            assert_eq!(
                note.unwrap(),
                format!(
                    "Note: ANTHROPIC_BASE_URL ends in /v1, which luminos adds itself; using {base}"
                )
            );
        }
    }

    #[test]
    fn what_is_not_an_address_is_a_usage_error() {
        for (raw, says) in [
            (
                "api.anthropic.com",
                "it needs a scheme: https://api.anthropic.com or http://api.anthropic.com",
            ),
            ("localhost:4000", "it needs a scheme"),
            ("ftp://host", "luminos speaks http and https, not ftp"),
            ("http://", "empty host"),
            ("https://host/?x=1", "query or fragment"),
        ] {
            let err = parse_base_url(raw).unwrap_err();
            assert!(err.is_usage(), "{raw}");
            let line = err.to_string();
            assert!(
                line.starts_with("ANTHROPIC_BASE_URL is not an address luminos can use"),
                "{line}"
            );
            assert!(line.contains(says), "{raw}: {line}");
        }
    }
}
