//! Looking at processes (Linux `/proc`), for tests that check servers are reaped or never
//! started.

/// One live child process.
#[derive(Debug, Clone)]
pub struct Child {
    pub pid: u32,
    /// The state letter of `/proc/<pid>/stat` (`R`, `S`, `Z`, …).
    pub state: char,
    /// NUL-separated arguments.
    pub cmdline: String,
    /// `NAME=value` entries (empty for a zombie).
    pub environ: Vec<String>,
}

/// Every process whose parent is `parent`.
pub fn children_of(parent: u32) -> Vec<Child> {
    every(|ppid, _| ppid == parent)
}

/// Every live process whose command line contains `needle` (a process forked but not yet
/// exec'd shows its parent's command line).
pub fn mentioning(needle: &str) -> Vec<Child> {
    every(|_, cmdline| cmdline.contains(needle))
}

/// The processes that `keep(ppid, cmdline)` keeps.
fn every(keep: impl Fn(u32, &str) -> bool) -> Vec<Child> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // Fields after the parenthesised command: state, ppid, …
        let mut rest = stat.rsplit(')').next().unwrap_or_default().split_whitespace();
        let state = rest.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let ppid: u32 = rest.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let cmdline =
            String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()).into_owned();
        if !keep(ppid, &cmdline) {
            continue;
        }
        let environ = std::fs::read(format!("/proc/{pid}/environ"))
            .unwrap_or_default()
            .split(|b| *b == 0)
            .filter(|kv| !kv.is_empty())
            .map(|kv| String::from_utf8_lossy(kv).into_owned())
            .collect();
        found.push(Child { pid, state, cmdline, environ });
    }
    found
}
