//! `mcpflow service install`: the service as a user service, so it runs from login with
//! `--keep` (schedules fire without anyone keeping a terminal open). On Linux a systemd
//! user unit, on macOS a LaunchAgent. Writing the file changes nothing running; the
//! front door says which command enables it.

use std::path::{Path, PathBuf};

/// The unit's (or agent's) name.
pub const UNIT_NAME: &str = "mcpflow.service";
/// The LaunchAgent's label.
pub const AGENT_LABEL: &str = "dev.mcpflow.service";

/// What a platform installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Systemd,
    LaunchAgent,
}

impl Flavour {
    /// This platform's.
    pub fn here() -> Option<Flavour> {
        if cfg!(target_os = "macos") {
            Some(Flavour::LaunchAgent)
        } else if cfg!(target_os = "linux") {
            Some(Flavour::Systemd)
        } else {
            None
        }
    }

    /// Where the file goes, for user `home` and config folder `config`.
    pub fn file(self, home: &Path, config: &Path) -> PathBuf {
        match self {
            Flavour::Systemd => config.join("systemd").join("user").join(UNIT_NAME),
            Flavour::LaunchAgent => home.join("Library").join("LaunchAgents").join(format!("{AGENT_LABEL}.plist")),
        }
    }

    /// The commands that start it now and at every login.
    pub fn enable_commands(self, file: &Path) -> Vec<String> {
        match self {
            Flavour::Systemd => {
                vec!["systemctl --user daemon-reload".into(), format!("systemctl --user enable --now {UNIT_NAME}")]
            }
            Flavour::LaunchAgent => vec![format!("launchctl load -w {}", file.display())],
        }
    }

    /// The commands that stop it and keep it from starting.
    pub fn disable_commands(self, file: &Path) -> Vec<String> {
        match self {
            Flavour::Systemd => vec![format!("systemctl --user disable --now {UNIT_NAME}")],
            Flavour::LaunchAgent => vec![format!("launchctl unload -w {}", file.display())],
        }
    }

    /// The file's text: `binary service --keep`, with `MCPFLOW_HOME` when one is given.
    pub fn render(self, binary: &Path, data_folder: Option<&Path>) -> String {
        match self {
            Flavour::Systemd => systemd_unit(binary, data_folder),
            Flavour::LaunchAgent => launch_agent(binary, data_folder),
        }
    }
}

fn systemd_unit(binary: &Path, data_folder: Option<&Path>) -> String {
    let environment = data_folder
        .map(|folder| format!("Environment={}\n", systemd_quote(&format!("MCPFLOW_HOME={}", folder.display()))))
        .unwrap_or_default();
    format!(
        "# Written by `mcpflow service install`; `mcpflow service uninstall` removes it.\n\
         [Unit]\n\
         Description=mcpflow service: one engine for the data folder, its runs and schedules\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={} service --keep\n\
         {environment}\
         Restart=on-failure\n\
         RestartSec=2\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        systemd_quote(&binary.display().to_string())
    )
}

/// A word for a systemd unit file: `%` doubled (specifiers), quoted when it has spaces,
/// quotes or backslashes (escaped inside).
fn systemd_quote(word: &str) -> String {
    let word = word.replace('%', "%%");
    if word.chars().any(|c| c.is_whitespace() || c == '"' || c == '\\' || c == '\'') {
        format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        word
    }
}

fn launch_agent(binary: &Path, data_folder: Option<&Path>) -> String {
    let environment = data_folder
        .map(|folder| {
            format!(
                "  <key>EnvironmentVariables</key>\n  <dict>\n    <key>MCPFLOW_HOME</key>\n    <string>{}</string>\n  </dict>\n",
                xml(&folder.display().to_string())
            )
        })
        .unwrap_or_default();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <!-- Written by `mcpflow service install`; `mcpflow service uninstall` removes it. -->\n\
         <plist version=\"1.0\">\n<dict>\n\
         \x20 <key>Label</key>\n  <string>{AGENT_LABEL}</string>\n\
         \x20 <key>ProgramArguments</key>\n  <array>\n    <string>{}</string>\n    <string>service</string>\n    <string>--keep</string>\n  </array>\n\
         {environment}\
         \x20 <key>RunAtLoad</key>\n  <true/>\n\
         \x20 <key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>\n  </dict>\n\
         </dict>\n</plist>\n",
        xml(&binary.display().to_string())
    )
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_quotes_paths_and_escapes_specifiers() {
        let unit = Flavour::Systemd.render(Path::new("/opt/my tools/mcpflow"), Some(Path::new("/data/100%")));
        assert!(unit.contains("ExecStart=\"/opt/my tools/mcpflow\" service --keep\n"), "{unit}");
        assert!(unit.contains("Environment=MCPFLOW_HOME=/data/100%%\n"), "{unit}");
        assert!(unit.contains("WantedBy=default.target"));
        let plain = Flavour::Systemd.render(Path::new("/usr/bin/mcpflow"), None);
        assert!(
            plain.contains("ExecStart=/usr/bin/mcpflow service --keep\n") && !plain.contains("Environment"),
            "{plain}"
        );
    }

    #[test]
    fn a_launch_agent_escapes_xml() {
        let plist = Flavour::LaunchAgent.render(Path::new("/Apps/a&b/mcpflow"), Some(Path::new("/Users/me/<data>")));
        assert!(plist.contains("<string>/Apps/a&amp;b/mcpflow</string>"), "{plist}");
        assert!(plist.contains("<string>/Users/me/&lt;data&gt;</string>"), "{plist}");
        assert!(plist.contains("<string>--keep</string>"));
    }
}
