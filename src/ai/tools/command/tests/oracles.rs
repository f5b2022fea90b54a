//! The oracles the property in [`super::escapes`] judges a command line by:
//! shell syntax, a write/exec `find` action, a path outside the target.

use super::*;

/// An independent scan for characters a shell would act on: outside quotes
/// (`;|&<>()`{}$`), in double quotes (`` ` `` and `$(`), and control
/// characters anywhere.
pub(super) fn has_shell_syntax(line: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    let (mut single, mut double, mut i) = (false, false, 0);
    while i < chars.len() {
        let c = chars[i];
        if c.is_control() && c != '\t' {
            return true;
        }
        if single {
            single = c != '\'';
        } else if double {
            match c {
                '"' => double = false,
                '\\' => i += 1,
                '`' => return true,
                '$' if chars.get(i + 1) == Some(&'(') => return true,
                _ => {}
            }
        } else {
            match c {
                '\'' => single = true,
                '"' => double = true,
                '\\' => i += 1,
                ';' | '|' | '&' | '<' | '>' | '(' | ')' | '`' | '$' | '{' | '}' => return true,
                _ => {}
            }
        }
        i += 1;
    }
    false
}

/// find words that take one value, listed independently of the checker.
const FIND_TAKES_VALUE: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-perm",
    "-size",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-inum",
    "-links",
    "-amin",
    "-atime",
    "-cmin",
    "-ctime",
    "-mmin",
    "-mtime",
    "-used",
    "-maxdepth",
    "-mindepth",
    "-regextype",
    "-fstype",
    "-context",
    "-printf",
    "-newer",
    "-anewer",
    "-cnewer",
    "-samefile",
];

const FIND_FORBIDDEN: &[&str] = &[
    "-exec",
    "-execdir",
    "-ok",
    "-okdir",
    "-delete",
    "-fprint",
    "-fprint0",
    "-fprintf",
    "-fls",
    "-follow",
    "-L",
    "-files0-from",
];

pub(super) fn find_action_in(args: &[&str]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        if FIND_FORBIDDEN.contains(&args[i]) {
            return Some(args[i].to_string());
        }
        i += if FIND_TAKES_VALUE.contains(&args[i]) {
            2
        } else {
            1
        };
    }
    None
}

/// Whether `raw`, as a path the program would open from `target`, stays
/// inside: through links when it exists, lexically when it does not.
pub(super) fn stays_inside(target: &Path, raw: &str) -> bool {
    let joined = target.join(raw);
    match std::fs::canonicalize(&joined) {
        Ok(real) => real.starts_with(target),
        Err(_) => crate::paths::normalize_lexically(&joined).starts_with(target),
    }
}
