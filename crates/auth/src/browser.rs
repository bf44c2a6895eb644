//! Opening the authorization URL: `$BROWSER URL` when it is set (split like a command
//! line, no shell), else `xdg-open` (Linux, BSD) or `open` (macOS). The program is not
//! waited for beyond its start: the sign-in ends when the redirect arrives.

use std::process::Stdio;

/// How the authorization URL is opened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Browser {
    /// `$BROWSER`, else the system's opener.
    #[default]
    System,
    /// This program and its arguments; the URL is added last.
    Command(Vec<String>),
}

impl Browser {
    /// The command line that opens `url`.
    pub fn command_line(&self, url: &str) -> Result<Vec<String>, String> {
        let mut argv = match self {
            Browser::Command(argv) => argv.clone(),
            Browser::System => match std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty()) {
                Some(value) => split(&value)?,
                None if cfg!(target_os = "macos") => vec!["open".to_owned()],
                None if cfg!(windows) => vec!["explorer".to_owned()],
                None => vec!["xdg-open".to_owned()],
            },
        };
        if argv.is_empty() {
            return Err("the browser command is empty".to_owned());
        }
        // `$BROWSER` may hold `%s` for the URL (the old convention); else the URL goes last.
        if argv.iter().any(|a| a.contains("%s")) {
            for a in &mut argv {
                *a = a.replace("%s", url);
            }
        } else {
            argv.push(url.to_owned());
        }
        Ok(argv)
    }

    /// Starts the browser on `url`; an error says what could not be run. The child is
    /// reaped in the background.
    pub fn open(&self, url: &str) -> Result<(), String> {
        let argv = self.command_line(url)?;
        let mut child = tokio::process::Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(false)
            .spawn()
            .map_err(|e| format!("cannot run the browser `{}`: {e}", argv[0]))?;
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        Ok(())
    }
}

/// Splits a command line as a POSIX shell would split words: whitespace separates,
/// single quotes keep everything, double quotes and backslashes escape. No expansion.
pub fn split(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("`$BROWSER` has an unclosed single quote".to_owned()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("`$BROWSER` ends inside a double quote".to_owned()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("`$BROWSER` has an unclosed double quote".to_owned()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    word.push(c);
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell_without_expanding() {
        assert_eq!(
            split("node 'my dir/f.js' --x \"a b\" $HOME").unwrap(),
            ["node", "my dir/f.js", "--x", "a b", "$HOME"]
        );
        assert_eq!(split("a\\ b ''").unwrap(), ["a b", ""]);
        assert!(split("'open").is_err());
    }

    #[test]
    fn the_url_goes_last_or_in_place_of_percent_s() {
        let b = Browser::Command(vec!["x".into(), "--new".into()]);
        assert_eq!(b.command_line("http://u").unwrap(), ["x", "--new", "http://u"]);
        let b = Browser::Command(vec!["x".into(), "--url=%s".into()]);
        assert_eq!(b.command_line("http://u").unwrap(), ["x", "--url=http://u"]);
    }
}
