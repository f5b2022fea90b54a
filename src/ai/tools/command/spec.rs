//! What each allowed program accepts: its options, what their values mean,
//! and what its operands are.
//!
//! The tables are allow-lists. An option not listed here is refused, so a
//! flag we have not thought about can never slip through. Dangerous options
//! are listed too, as [`Effect::Refused`] with the reason the model is told.
//! Long options must be spelled out in full: GNU tools accept unambiguous
//! prefixes (`--fil` for `--file`), and matching only whole names means a
//! prefix can never be read one way here and another way by the tool.
//!
//! `find` has its own grammar and its own table ([`find_primary`]).

/// The programs `run_command` may start, sorted (as the model is shown them).
pub(crate) const WHITELIST: [&str; 8] =
    ["du", "file", "find", "grep", "head", "stat", "tail", "wc"];

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Takes {
    Nothing,
    /// A required value: glued (`-n5`, `--lines=5`) or the next word.
    Value,
    /// An optional value, only ever glued with `=` (`--color=never`).
    OptionalValue,
}

/// What an option does that the checker cares about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Nothing that touches the file system beyond the operands.
    Harmless,
    /// grep's `-e`: its value is a pattern, so no operand is.
    Pattern,
    /// grep's `-f`: a file of search patterns, so no operand is the pattern.
    /// Allowed when it is a regular file inside the target: a pattern file
    /// cannot make the program open anything else, unlike a list of names.
    PatternFile,
    /// A file of name patterns to skip (`--exclude-from`, du `-X`): same rule.
    ExcludeFile,
    /// grep's `-D`: only `skip` is allowed, since `read` opens FIFOs.
    DevicesAction,
    /// Never allowed; the text says why.
    Refused(&'static str),
}

/// One option of one program.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opt {
    pub short: Option<char>,
    pub long: Option<&'static str>,
    pub takes: Takes,
    pub effect: Effect,
}

/// How a program treats its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operands {
    /// Files whose contents are read: FIFOs, sockets and devices are refused.
    Read,
    /// Files only looked at (stat, du): any file type is fine.
    Metadata,
    /// grep: the first operand is the pattern unless `-e`/`-f` gave one; the
    /// rest are files to read.
    PatternThenRead,
}

/// Which all-digit options a program accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Digits {
    None,
    /// head/tail: a whole word `-NUM` means `-n NUM`.
    LineCount,
    /// grep: digits are context flags and may appear in a cluster (`-5n`).
    Context,
}

/// A program other than find.
#[derive(Debug)]
pub(crate) struct Program {
    pub name: &'static str,
    pub options: &'static [Opt],
    pub operands: Operands,
    pub digits: Digits,
}

const NAME_LIST: &str = "it reads the names of the files to examine from a file, and those \
    names could point anywhere; pass the files as arguments instead";
const FOLLOWS_LINKS: &str = "it follows symbolic links, which can lead out of the target directory";
const NEVER_ENDS: &str = "following a file never ends; read it once instead";
const ONLY_WITH_FOLLOW: &str = "it only matters with --follow, which is refused";

const fn opt(short: char, long: &'static str, takes: Takes, effect: Effect) -> Opt {
    Opt {
        short: if short == '\0' { None } else { Some(short) },
        long: if long.is_empty() { None } else { Some(long) },
        takes,
        effect,
    }
}

/// A harmless flag; `'\0'` or `""` when it has no short or long spelling.
const fn flag(short: char, long: &'static str) -> Opt {
    opt(short, long, Takes::Nothing, Effect::Harmless)
}

/// A harmless option with a required value.
const fn value(short: char, long: &'static str) -> Opt {
    opt(short, long, Takes::Value, Effect::Harmless)
}

const fn refused(short: char, long: &'static str, takes: Takes, why: &'static str) -> Opt {
    opt(short, long, takes, Effect::Refused(why))
}

const HELP: Opt = flag('\0', "help");
const VERSION: Opt = flag('\0', "version");

static WC: Program = Program {
    name: "wc",
    options: &[
        flag('c', "bytes"),
        flag('m', "chars"),
        flag('l', "lines"),
        flag('w', "words"),
        flag('L', "max-line-length"),
        value('\0', "total"),
        refused('\0', "files0-from", Takes::Value, NAME_LIST),
        HELP,
        VERSION,
    ],
    operands: Operands::Read,
    digits: Digits::None,
};

static HEAD: Program = Program {
    name: "head",
    options: &[
        value('c', "bytes"),
        value('n', "lines"),
        flag('q', "quiet"),
        flag('\0', "silent"),
        flag('v', "verbose"),
        flag('z', "zero-terminated"),
        HELP,
        VERSION,
    ],
    operands: Operands::Read,
    digits: Digits::LineCount,
};

static TAIL: Program = Program {
    name: "tail",
    options: &[
        value('c', "bytes"),
        value('n', "lines"),
        flag('q', "quiet"),
        flag('\0', "silent"),
        flag('v', "verbose"),
        flag('z', "zero-terminated"),
        refused('f', "", Takes::Nothing, NEVER_ENDS),
        refused('\0', "follow", Takes::OptionalValue, NEVER_ENDS),
        refused('F', "", Takes::Nothing, NEVER_ENDS),
        refused('\0', "retry", Takes::Nothing, ONLY_WITH_FOLLOW),
        refused('s', "sleep-interval", Takes::Value, ONLY_WITH_FOLLOW),
        refused('\0', "pid", Takes::Value, ONLY_WITH_FOLLOW),
        refused('\0', "max-unchanged-stats", Takes::Value, ONLY_WITH_FOLLOW),
        HELP,
        VERSION,
    ],
    operands: Operands::Read,
    digits: Digits::LineCount,
};

static STAT: Program = Program {
    name: "stat",
    options: &[
        // Following links is harmless here: every operand has already been
        // resolved through its links and must land inside the target, and
        // stat does not descend into directories.
        flag('L', "dereference"),
        flag('f', "file-system"),
        value('\0', "cached"),
        value('c', "format"),
        value('\0', "printf"),
        flag('t', "terse"),
        HELP,
        VERSION,
    ],
    operands: Operands::Metadata,
    digits: Digits::None,
};

static DU: Program = Program {
    name: "du",
    options: &[
        flag('0', "null"),
        flag('a', "all"),
        flag('\0', "apparent-size"),
        value('B', "block-size"),
        flag('b', "bytes"),
        flag('c', "total"),
        // -D/-H only follow links named as operands, which are checked.
        flag('D', "dereference-args"),
        flag('H', ""),
        value('d', "max-depth"),
        refused('\0', "files0-from", Takes::Value, NAME_LIST),
        flag('h', "human-readable"),
        flag('\0', "inodes"),
        flag('k', ""),
        refused('L', "dereference", Takes::Nothing, FOLLOWS_LINKS),
        flag('l', "count-links"),
        flag('m', ""),
        flag('P', "no-dereference"),
        flag('S', "separate-dirs"),
        flag('\0', "si"),
        flag('s', "summarize"),
        value('t', "threshold"),
        opt('\0', "time", Takes::OptionalValue, Effect::Harmless),
        value('\0', "time-style"),
        opt('X', "exclude-from", Takes::Value, Effect::ExcludeFile),
        value('\0', "exclude"),
        flag('x', "one-file-system"),
        HELP,
        VERSION,
    ],
    operands: Operands::Metadata,
    digits: Digits::None,
};

static FILE: Program = Program {
    name: "file",
    options: &[
        flag('b', "brief"),
        flag('c', "checking-printout"),
        refused(
            'C',
            "compile",
            Takes::Nothing,
            "it writes a compiled magic file",
        ),
        flag('d', "debug"),
        flag('E', ""),
        value('e', "exclude"),
        value('\0', "exclude-quiet"),
        flag('\0', "extension"),
        value('F', "separator"),
        refused('f', "files-from", Takes::Value, NAME_LIST),
        // Per-operand, and every operand is checked through its links.
        flag('h', "no-dereference"),
        flag('L', "dereference"),
        flag('i', "mime"),
        flag('\0', "mime-type"),
        flag('\0', "mime-encoding"),
        flag('\0', "apple"),
        flag('k', "keep-going"),
        flag('l', "list"),
        refused(
            'm',
            "magic-file",
            Takes::Value,
            "custom magic files are not supported; the system's magic database is used",
        ),
        flag('N', "no-pad"),
        flag('n', "no-buffer"),
        flag('0', "print0"),
        refused(
            'p',
            "preserve-date",
            Takes::Nothing,
            "it changes the access times of the files it reads",
        ),
        value('P', "parameter"),
        flag('r', "raw"),
        refused(
            's',
            "special-files",
            Takes::Nothing,
            "it reads devices, which can block or never end",
        ),
        refused(
            'S',
            "no-sandbox",
            Takes::Nothing,
            "it turns off file's own system-call sandbox",
        ),
        flag('z', "uncompress"),
        flag('Z', "uncompress-noreport"),
        flag('v', "version"),
        HELP,
    ],
    operands: Operands::Read,
    digits: Digits::None,
};

static GREP: Program = Program {
    name: "grep",
    options: &[
        flag('E', "extended-regexp"),
        flag('F', "fixed-strings"),
        flag('G', "basic-regexp"),
        flag('P', "perl-regexp"),
        opt('e', "regexp", Takes::Value, Effect::Pattern),
        opt('f', "file", Takes::Value, Effect::PatternFile),
        flag('i', "ignore-case"),
        flag('y', ""),
        flag('\0', "no-ignore-case"),
        flag('w', "word-regexp"),
        flag('x', "line-regexp"),
        flag('z', "null-data"),
        flag('s', "no-messages"),
        flag('v', "invert-match"),
        flag('V', "version"),
        HELP,
        value('m', "max-count"),
        flag('b', "byte-offset"),
        flag('n', "line-number"),
        flag('\0', "line-buffered"),
        flag('H', "with-filename"),
        flag('h', "no-filename"),
        value('\0', "label"),
        flag('o', "only-matching"),
        flag('q', "quiet"),
        flag('\0', "silent"),
        value('\0', "binary-files"),
        flag('a', "text"),
        flag('I', ""),
        value('d', "directories"),
        opt('D', "devices", Takes::Value, Effect::DevicesAction),
        // -r follows only the links named on the command line, and those are
        // checked; links met while recursing are not followed.
        flag('r', "recursive"),
        refused('R', "dereference-recursive", Takes::Nothing, FOLLOWS_LINKS),
        value('\0', "include"),
        value('\0', "exclude"),
        opt('\0', "exclude-from", Takes::Value, Effect::ExcludeFile),
        value('\0', "exclude-dir"),
        flag('L', "files-without-match"),
        flag('l', "files-with-matches"),
        flag('c', "count"),
        flag('T', "initial-tab"),
        flag('Z', "null"),
        value('B', "before-context"),
        value('A', "after-context"),
        value('C', "context"),
        value('\0', "group-separator"),
        flag('\0', "no-group-separator"),
        opt('\0', "color", Takes::OptionalValue, Effect::Harmless),
        opt('\0', "colour", Takes::OptionalValue, Effect::Harmless),
        flag('U', "binary"),
    ],
    operands: Operands::PatternThenRead,
    digits: Digits::Context,
};

/// The table for `name`, or `None` for find (which has its own grammar) and
/// for anything not allowed.
pub(crate) fn program(name: &str) -> Option<&'static Program> {
    match name {
        "wc" => Some(&WC),
        "head" => Some(&HEAD),
        "tail" => Some(&TAIL),
        "stat" => Some(&STAT),
        "du" => Some(&DU),
        "file" => Some(&FILE),
        "grep" => Some(&GREP),
        _ => None,
    }
}

impl Program {
    pub(crate) fn short(&self, c: char) -> Option<&'static Opt> {
        self.options.iter().find(|o| o.short == Some(c))
    }

    pub(crate) fn long(&self, name: &str) -> Option<&'static Opt> {
        self.options.iter().find(|o| o.long == Some(name))
    }

    /// A full long-option name `given` abbreviates, if exactly one.
    pub(crate) fn expansion_of(&self, given: &str) -> Option<&'static str> {
        let mut names = self
            .options
            .iter()
            .filter_map(|o| o.long)
            .filter(|long| long.starts_with(given));
        match (names.next(), names.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    }
}

/// What one word of a find expression is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Primary {
    /// `(`, `)`, `!`, `,`, `-not`, `-a`, `-and`, `-o`, `-or`.
    Operator,
    /// A test, option or action without a value.
    NoValue,
    /// Takes one value that is a pattern, number, name or format.
    Value,
    /// Takes one value that is a reference file (`-newer FILE`): checked like
    /// any path.
    PathValue,
    /// Never allowed; the text says why.
    Refused(&'static str),
}

const FIND_WRITES: &str = "it writes to a file";
const FIND_RUNS: &str = "it runs another program";

/// Classify one word of a find expression, `None` when unknown.
pub(crate) fn find_primary(word: &str) -> Option<Primary> {
    use Primary::*;
    let primary = match word {
        "(" | ")" | "!" | "," | "-not" | "-a" | "-and" | "-o" | "-or" => Operator,
        "-depth"
        | "-d"
        | "-mount"
        | "-xdev"
        | "-noleaf"
        | "-ignore_readdir_race"
        | "-noignore_readdir_race"
        | "-daystart"
        | "-warn"
        | "-nowarn"
        | "-true"
        | "-false"
        | "-empty"
        | "-executable"
        | "-readable"
        | "-writable"
        | "-nogroup"
        | "-nouser"
        | "-print"
        | "-print0"
        | "-ls"
        | "-prune"
        | "-quit"
        | "-help"
        | "--help"
        | "-version"
        | "--version" => NoValue,
        "-amin" | "-atime" | "-cmin" | "-ctime" | "-mmin" | "-mtime" | "-used" | "-gid"
        | "-uid" | "-group" | "-user" | "-inum" | "-links" | "-size" | "-type" | "-xtype"
        | "-perm" | "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename"
        | "-regex" | "-iregex" | "-lname" | "-ilname" | "-maxdepth" | "-mindepth"
        | "-regextype" | "-fstype" | "-context" | "-printf" => Value,
        "-newer" | "-anewer" | "-cnewer" | "-samefile" => PathValue,
        "-delete" => Refused("it deletes files"),
        "-exec" | "-execdir" | "-ok" | "-okdir" => Refused(FIND_RUNS),
        "-fprint" | "-fprint0" | "-fprintf" | "-fls" => Refused(FIND_WRITES),
        "-files0-from" => Refused(NAME_LIST),
        "-follow" => Refused(FOLLOWS_LINKS),
        _ => return newer_xy(word),
    };
    Some(primary)
}

/// `-newerXY`: X is a, B, c or m; Y is one of those (a reference file) or
/// `t` (a date string).
fn newer_xy(word: &str) -> Option<Primary> {
    let xy = word.strip_prefix("-newer")?.as_bytes();
    match xy {
        [x, y] if b"aBcm".contains(x) && b"aBcm".contains(y) => Some(Primary::PathValue),
        [x, b't'] if b"aBcm".contains(x) => Some(Primary::Value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_but_find_has_a_table() {
        for name in WHITELIST {
            assert_eq!(program(name).is_some(), name != "find", "{name}");
        }
        assert!(program("rm").is_none());
    }

    #[test]
    fn tables_have_no_duplicate_spellings() {
        for name in WHITELIST.iter().filter(|n| **n != "find") {
            let p = program(name).unwrap();
            for (i, a) in p.options.iter().enumerate() {
                for b in &p.options[i + 1..] {
                    assert!(
                        a.short.is_none() || a.short != b.short,
                        "{name} -{:?}",
                        a.short
                    );
                    assert!(
                        a.long.is_none() || a.long != b.long,
                        "{name} --{:?}",
                        a.long
                    );
                }
            }
        }
    }

    #[test]
    fn abbreviations_expand_only_when_unique() {
        assert_eq!(
            GREP.expansion_of("files-with-m"),
            Some("files-with-matches")
        );
        assert_eq!(GREP.expansion_of("fi"), None);
        assert_eq!(WC.expansion_of("files0"), Some("files0-from"));
    }

    #[test]
    fn find_newer_xy_forms() {
        assert_eq!(find_primary("-newermt"), Some(Primary::Value));
        assert_eq!(find_primary("-neweram"), Some(Primary::PathValue));
        assert_eq!(find_primary("-newerBc"), Some(Primary::PathValue));
        assert_eq!(find_primary("-newerxx"), None);
        assert_eq!(find_primary("-newert"), None);
    }
}
