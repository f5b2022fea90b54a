//! A cheap first look at a file: could any rule find a value in it?
//!
//! Before the first tool result, a run learns every text file of the tree
//! (see [`crate::ai::learning`]); most files hold nothing any rule could
//! match, and the full redactor (twenty-odd patterns, each with its checks)
//! costs several times a single pass. So each file first meets one
//! case-insensitive literal search over what every rule needs somewhere in
//! its match (a key's documented prefix, `-----BEGIN`, a secret's name such
//! as `pass`, `token` or `secret`, `sig=`, a cookie file's `\tTRUE\t`), and
//! one small pattern for the three rules without such a literal (a Telegram
//! token's `<digits>:A`, a `.pgpass` line's `:port:`, a URL's `user:pass@`).
//! A file that passes neither holds nothing the rules could find; one that
//! passes goes through the full redactor, which decides. The test below
//! holds every sample of every rule to it, so a rule that gains a form the
//! prefilter would miss fails there first.
//!
//! `user:password` lines count only in a file named like credentials, so
//! such a file always goes to the full redactor.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::bytes::Regex;

use super::formats::credential_file;

/// Literals one of which every match of a rule contains (compared without
/// regard to ASCII case, which only lets more files through).
const LITERALS: &[&str] = &[
    // Key blocks, in the clear and in base64.
    "-----BEGIN",
    "LS0tLS1CRUdJTi",
    // Documented prefixes.
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "glft-",
    "glsoat-",
    "glagent-",
    "glimt-",
    "glcbt-",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
    "hooks.slack.com",
    "k_live_",
    "k_test_",
    "k_prod_",
    "AIza",
    "sk-",
    "eyJ",
    "npm_",
    "pypi-",
    "shpat_",
    "shpca_",
    "shppa_",
    "shpss_",
    "_v1_",
    "SG.",
    "hvs.",
    "hvb.",
    "dapi",
    "dp.",
    "glc_",
    "glsa_",
    "hf_",
    "api_org_",
    "lin_api_",
    "PMAK-",
    "pul-",
    "pnu_",
    "rubygems_",
    "sntry",
    "pplx-",
    "pscale_",
    "AGE-SECRET-KEY-1",
    "HRKU-AA",
    "fo1_",
    "fm1",
    "fm2",
    "ntn_",
    "sq0",
    "ATATT3",
    "GOCSPX-",
    "xapp-",
    "whsec_",
    "key-",
    "AccountKey=",
    "SharedAccessKey=",
    "Q~",
    "sig=",
    "discord",
    // Password hashes.
    "$apr1$",
    "$2a$",
    "$2b$",
    "$2x$",
    "$2y$",
    "$1$",
    "$5$",
    "$6$",
    "$y$",
    "$gy$",
    "$7$",
    "{SHA}",
    "{SSHA}",
    // Cookie files.
    "\tTRUE\t",
    "\tFALSE\t",
    // Names of secrets and the places passwords are typed.
    "pass",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "accesskey",
    "access_key",
    "access-key",
    "privatekey",
    "private_key",
    "private-key",
    "bearer",
    "basic",
    "\"auth\"",
    "_auth",
    "curl",
    "mysql",
    "mariadb",
];

static LITERAL_SEARCH: LazyLock<AhoCorasick> = LazyLock::new(|| {
    // A full DFA (faster than an NFA on code, for a table of a few hundred
    // kilobytes built once per process), asked only whether anything
    // matches, with no literal prefilter: among a hundred literals of
    // common letters it finds candidates everywhere and slows the search.
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .prefilter(false)
        .kind(Some(AhoCorasickKind::DFA))
        .build(LITERALS)
        .unwrap_or_else(|e| panic!("the prefilter's literals make an automaton: {e}"))
});

/// What the rules without a literal of their own need: a Telegram token's
/// bot id and `:A`, a `.pgpass` line's port (or `*`) between colons with
/// two fields after it, a URL's `user:password@`.
static SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?-u)[0-9]:A|:(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:|://[^\s/?#@"'<>\[\]{}\\]+:[^\s/?#@"'<>\[\]{}\\]+@"#,
    )
    .unwrap_or_else(|e| panic!("the prefilter's pattern compiles: {e}"))
});

/// Whether the rules could find anything in `text` (a file's bytes, read
/// as its text will be), read from the file named `name` (when known).
/// False means certainly not.
pub fn may_hold_secret(name: Option<&str>, text: &[u8]) -> bool {
    name.is_some_and(credential_file) || LITERAL_SEARCH.is_match(text) || SHAPES.is_match(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_code_and_prose_pass_straight_through() {
        for text in [
            "fn main() {\n    let value = compute(3) + 1;\n}\n",
            "# Notes\n\nSome prose about item 7, see https://example.com/docs.\n",
            "id,value\n1,2\n3,4\n",
            "12:30 meeting; 14:00 lunch\n",
        ] {
            assert!(!may_hold_secret(None, text.as_bytes()), "{text}");
        }
        assert!(may_hold_secret(Some("credentials.txt"), b"a:b\n"));
        assert!(may_hold_secret(None, b"let Password = 1;"));
        assert!(may_hold_secret(None, b"postgres://u:p@db/app"));
        assert!(may_hold_secret(None, b"db:5432:app:me:pw\n"));
    }
}
