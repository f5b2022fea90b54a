//! Splitting a command line into words the way a POSIX shell would, without
//! ever running one.
//!
//! The splitter honours single quotes, double quotes and backslashes and keeps,
//! for every character, whether it was quoted. That bit is what lets the rest
//! of the checker tell a glob (`*.rs`) from a literal star (`'*.rs'`), and a
//! harmless quoted `|` in a grep pattern from a pipe.
//!
//! Its edge: anything a shell would *act on* rather than pass through is
//! refused here, because nothing downstream would honour it and the model
//! would get silently different behaviour:
//!
//! - unquoted `;` `|` `&` `<` `>` `(` `)` `` ` `` `$` `{` `}`, a leading `~`
//!   and a leading `#`;
//! - inside double quotes, where a shell still substitutes: `` ` `` and a `$`
//!   that would start an expansion (`$(`, `${`, `$NAME`, `$1`, `$?`, ...);
//! - newlines, carriage returns and every other control character except tab,
//!   *even when quoted*. A newline ends a command in a shell, none of the
//!   allowed tools needs one in an argument (grep would read it as a second
//!   pattern; `-e` twice says that plainly), so a newline is either a mistake
//!   or an injection attempt.
//!
//! Inside single quotes every character is literal, so `grep 'a|b$' .` and
//! `grep '$(x)' .` are fine: without a shell they are just bytes.

use std::fmt;

/// One word of the command line, with the quoting of each character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    chars: Vec<char>,
    quoted: Vec<bool>,
}

impl Word {
    fn new() -> Word {
        Word {
            chars: Vec::new(),
            quoted: Vec::new(),
        }
    }

    fn push(&mut self, c: char, quoted: bool) {
        self.chars.push(c);
        self.quoted.push(quoted);
    }

    /// The word's text after quote removal.
    pub(crate) fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// Each character with whether it was quoted.
    pub(crate) fn chars(&self) -> impl Iterator<Item = (char, bool)> + '_ {
        self.chars.iter().copied().zip(self.quoted.iter().copied())
    }

    /// Whether the word holds an unquoted glob character (`*`, `?`, `[`).
    pub(crate) fn has_unquoted_glob(&self) -> bool {
        self.chars()
            .any(|(c, quoted)| !quoted && matches!(c, '*' | '?' | '['))
    }
}

/// Why a command line could not be split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitError {
    /// A quote was opened and never closed.
    UnterminatedQuote(char),
    /// The line ends in a backslash with nothing to escape.
    DanglingBackslash,
    /// A character a shell would act on; `what` names it for the model.
    ShellSyntax { token: String, what: &'static str },
    /// A newline or other control character.
    ControlCharacter(char),
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::UnterminatedQuote(q) => {
                write!(f, "Error: unterminated {q} quote in the command.")
            }
            SplitError::DanglingBackslash => {
                write!(f, "Error: the command ends with a lone backslash.")
            }
            SplitError::ShellSyntax { token, what } => write!(
                f,
                "Error: '{token}' ({what}) is shell syntax, and run_command does not use a \
                 shell: it runs exactly one program, with no pipes, redirection, command \
                 chaining, substitution or variables. Put the character inside single \
                 quotes if you meant it literally (for example in a grep pattern)."
            ),
            SplitError::ControlCharacter(c) => write!(
                f,
                "Error: the command contains a control character ({}); newlines and other \
                 control characters are refused, even inside quotes. Use one command per \
                 call (and `-e` twice for two grep patterns).",
                c.escape_default()
            ),
        }
    }
}

impl std::error::Error for SplitError {}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Unquoted,
    Single,
    Double,
}

/// Split `line` into words, or say which shell construct it contains.
pub(crate) fn split(line: &str) -> Result<Vec<Word>, SplitError> {
    if let Some(c) = line.chars().find(|&c| c.is_control() && c != '\t') {
        return Err(SplitError::ControlCharacter(c));
    }
    let mut splitter = Splitter {
        chars: line.chars().peekable(),
        words: Vec::new(),
        word: Word::new(),
        started: false,
        mode: Mode::Unquoted,
    };
    while let Some(c) = splitter.chars.next() {
        splitter.take(c)?;
    }
    splitter.finish()
}

/// The splitter's state as it reads the line a character at a time.
struct Splitter<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    words: Vec<Word>,
    word: Word,
    /// A word exists once any character or quote was seen, so `''` is an
    /// (empty) argument rather than nothing.
    started: bool,
    mode: Mode,
}

impl Splitter<'_> {
    /// Take `c` by the quoting it is in. An unquoted blank ends the word
    /// (if one started) and starts nothing; anything else starts one.
    fn take(&mut self, c: char) -> Result<(), SplitError> {
        match self.mode {
            Mode::Single => self.single_quoted(c),
            Mode::Double => self.double_quoted(c)?,
            Mode::Unquoted if matches!(c, ' ' | '\t') => {
                if self.started {
                    self.words
                        .push(std::mem::replace(&mut self.word, Word::new()));
                    self.started = false;
                }
                return Ok(());
            }
            Mode::Unquoted => self.unquoted(c)?,
        }
        self.started = true;
        Ok(())
    }

    /// Inside single quotes everything is literal up to the closing quote.
    fn single_quoted(&mut self, c: char) {
        match c {
            '\'' => self.mode = Mode::Unquoted,
            _ => self.word.push(c, true),
        }
    }

    /// Inside double quotes a backslash escapes only `$`, `` ` ``, `"` and
    /// itself, and a shell would still substitute, so those are refused.
    fn double_quoted(&mut self, c: char) -> Result<(), SplitError> {
        match c {
            '"' => self.mode = Mode::Unquoted,
            '\\' => match self.chars.peek() {
                Some(&next @ ('$' | '`' | '"' | '\\')) => {
                    self.chars.next();
                    self.word.push(next, true);
                }
                _ => self.word.push('\\', true),
            },
            '`' => return Err(substitution("`")),
            '$' if starts_expansion(self.chars.peek().copied()) => {
                return Err(dollar_error(self.chars.peek().copied()));
            }
            _ => self.word.push(c, true),
        }
        Ok(())
    }

    /// Outside quotes (blanks aside): quotes open, a backslash quotes the
    /// next character, and whatever a shell would act on is refused.
    fn unquoted(&mut self, c: char) -> Result<(), SplitError> {
        match c {
            '\'' => self.mode = Mode::Single,
            '"' => self.mode = Mode::Double,
            '\\' => match self.chars.next() {
                Some(next) => self.word.push(next, true),
                None => return Err(SplitError::DanglingBackslash),
            },
            '$' => return Err(dollar_error(self.chars.peek().copied())),
            '~' | '#' if !self.started => return Err(shell_char(c)),
            _ if is_shell_char(c) => return Err(shell_char(c)),
            _ => self.word.push(c, false),
        }
        Ok(())
    }

    /// The words, once the line is read with every quote closed.
    fn finish(mut self) -> Result<Vec<Word>, SplitError> {
        match self.mode {
            Mode::Unquoted => {}
            Mode::Single => return Err(SplitError::UnterminatedQuote('\'')),
            Mode::Double => return Err(SplitError::UnterminatedQuote('"')),
        }
        if self.started {
            self.words.push(self.word);
        }
        Ok(self.words)
    }
}

/// Characters that a shell acts on wherever they appear unquoted.
fn is_shell_char(c: char) -> bool {
    matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')' | '`' | '{' | '}')
}

fn shell_char(c: char) -> SplitError {
    let what = match c {
        ';' => "a command separator",
        '|' => "a pipe",
        '&' => "background execution or command chaining",
        '<' | '>' => "redirection",
        '(' | ')' => "a subshell or grouping; find's grouping needs \\( and \\)",
        '`' => return substitution("`"),
        '{' | '}' => "brace expansion",
        '~' => "home-directory expansion, which points outside the target",
        '#' => "the start of a comment",
        _ => "a shell metacharacter",
    };
    SplitError::ShellSyntax {
        token: c.to_string(),
        what,
    }
}

fn substitution(token: &str) -> SplitError {
    SplitError::ShellSyntax {
        token: token.to_string(),
        what: "command substitution",
    }
}

/// Whether a shell would expand `$` followed by `next` (inside double quotes).
fn starts_expansion(next: Option<char>) -> bool {
    match next {
        Some(c) => {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '(' | '{' | '@' | '*' | '#' | '?' | '-' | '$' | '!')
        }
        None => false,
    }
}

fn dollar_error(next: Option<char>) -> SplitError {
    match next {
        Some('(') => substitution("$("),
        _ => SplitError::ShellSyntax {
            token: "$".to_string(),
            what: "variable or parameter expansion",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<String> {
        split(line).unwrap().iter().map(Word::text).collect()
    }

    fn refused_token(line: &str) -> String {
        match split(line) {
            Err(SplitError::ShellSyntax { token, .. }) => token,
            other => panic!("{line:?}: expected shell-syntax refusal, got {other:?}"),
        }
    }

    #[test]
    fn splits_on_blanks() {
        assert_eq!(texts("grep -rn  foo\tsrc "), ["grep", "-rn", "foo", "src"]);
        assert!(texts("   ").is_empty());
        assert!(texts("").is_empty());
    }

    #[test]
    fn quotes_group_and_are_removed() {
        assert_eq!(texts("grep 'a b' \"c d\""), ["grep", "a b", "c d"]);
        assert_eq!(texts("grep ab'c d'\"e\"f"), ["grep", "abc def"]);
        assert_eq!(texts("grep '' x"), ["grep", "", "x"]);
        assert_eq!(texts("grep \"\""), ["grep", ""]);
    }

    #[test]
    fn backslashes_follow_posix_rules() {
        assert_eq!(
            texts(r"find . \( -name x \)"),
            ["find", ".", "(", "-name", "x", ")"]
        );
        assert_eq!(texts(r"grep a\ b"), ["grep", "a b"]);
        // Inside double quotes only \$ \` \" \\ are escapes.
        assert_eq!(texts(r#"grep "a\"b\\c\d""#), ["grep", r#"a"b\c\d"#]);
        // Inside single quotes nothing is.
        assert_eq!(texts(r"grep 'a\b'"), ["grep", r"a\b"]);
        assert_eq!(texts(r#"grep "\$HOME""#), ["grep", "$HOME"]);
    }

    #[test]
    fn quoting_is_recorded_per_character() {
        let words = split(r#"grep '*.rs' *.rs "?" \[a]"#).unwrap();
        let globby: Vec<bool> = words.iter().map(Word::has_unquoted_glob).collect();
        assert_eq!(globby, [false, false, true, false, false]);
        let mixed = &split("a'*'*").unwrap()[0];
        assert_eq!(
            mixed.chars().collect::<Vec<_>>(),
            [('a', false), ('*', true), ('*', false)]
        );
    }

    #[test]
    fn unquoted_shell_syntax_is_refused() {
        for (line, token) in [
            ("grep x .; touch /tmp/x", ";"),
            ("grep x . | head", "|"),
            ("grep x . && rm y", "&"),
            ("grep x . &", "&"),
            ("grep x > out", ">"),
            ("grep x < in", "<"),
            ("grep `id` .", "`"),
            ("grep $(id) .", "$("),
            ("grep $HOME .", "$"),
            ("grep ${HOME} .", "$"),
            ("grep x$ .", "$"),
            ("head (x)", "("),
            ("head {a,b}.rs", "{"),
            ("head ~/.ssh/id_rsa", "~"),
            ("grep x . # comment", "#"),
        ] {
            assert_eq!(refused_token(line), token, "{line}");
        }
    }

    #[test]
    fn double_quotes_still_refuse_substitution() {
        assert_eq!(refused_token(r#"grep "$(id)" ."#), "$(");
        assert_eq!(refused_token(r#"grep "`id`" ."#), "`");
        assert_eq!(refused_token(r#"grep "$HOME" ."#), "$");
        assert_eq!(refused_token(r#"grep "${x}" ."#), "$");
        assert_eq!(refused_token(r#"grep "$?" ."#), "$");
    }

    #[test]
    fn quoted_metacharacters_are_literal() {
        assert_eq!(
            texts(r#"grep -E 'a|b;c&d>e<f`g$(h)' "x|y;z" \; "end$" "a $ b""#),
            [
                "grep",
                "-E",
                "a|b;c&d>e<f`g$(h)",
                "x|y;z",
                ";",
                "end$",
                "a $ b"
            ]
        );
        // `~` and `#` only matter at the start of a word.
        assert_eq!(texts("grep a~b a#b"), ["grep", "a~b", "a#b"]);
        assert_eq!(texts("grep '~' '#'"), ["grep", "~", "#"]);
    }

    #[test]
    fn control_characters_are_refused_even_quoted() {
        for line in [
            "grep x .\ntouch y",
            "grep 'a\nb' .",
            "grep \"a\rb\"",
            "grep \u{1b}[31m",
        ] {
            assert!(
                matches!(split(line), Err(SplitError::ControlCharacter(_))),
                "{line:?}"
            );
        }
        assert_eq!(texts("grep 'a\tb'"), ["grep", "a\tb"]);
    }

    #[test]
    fn unbalanced_input_is_refused() {
        assert_eq!(split("grep 'x"), Err(SplitError::UnterminatedQuote('\'')));
        assert_eq!(split("grep \"x"), Err(SplitError::UnterminatedQuote('"')));
        assert_eq!(split("grep x\\"), Err(SplitError::DanglingBackslash));
    }
}
