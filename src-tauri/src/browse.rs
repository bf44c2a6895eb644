//! Opening the page a server's URL-mode question names, in the system browser, only
//! when the person clicks for it: the URL comes from the open question (never from the
//! webview), must be `http` or `https`, and may not carry credentials (`user:pass@`).
//! The opener is the one sign-ins use (`$BROWSER`, else `xdg-open` / `open`).

use crate::dto::CommandError;
use mcpflow_app::auth::Browser;

/// The URL when it is a web page we may open: `http(s)://host…`, no user info, no
/// whitespace or control characters.
pub fn web_url(url: &str) -> Result<&str, CommandError> {
    let refuse = |why: &str| {
        CommandError::new("BAD_REQUEST", format!("the server's URL {url:?} {why}; copy it by hand if you trust it"))
    };
    let lower = url.to_ascii_lowercase();
    let rest = if let Some(r) = lower.strip_prefix("https://") {
        r
    } else if let Some(r) = lower.strip_prefix("http://") {
        r
    } else {
        return Err(refuse("is not an http or https address, so it is not opened"));
    };
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(refuse("holds spaces or control characters, so it is not opened"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() {
        return Err(refuse("names no host, so it is not opened"));
    }
    if authority.contains('@') {
        return Err(refuse("carries a user name or password, so it is not opened"));
    }
    Ok(url)
}

/// Opens `url` in the system browser (checked with [`web_url`] first).
pub fn open(url: &str) -> Result<(), CommandError> {
    let url = web_url(url)?;
    Browser::System
        .open(url)
        .map_err(|e| CommandError::new("BROWSER_FAILED", format!("{e}; open {url} by hand, or set $BROWSER")))
}

#[cfg(test)]
mod tests {
    use super::web_url;

    #[test]
    fn web_pages_pass_and_others_are_refused() {
        assert!(web_url("https://example.com/connect?x=1").is_ok());
        assert!(web_url("HTTP://127.0.0.1:8080").is_ok());
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "https://user:secret@example.com/",
            "https://",
            "https://example.com/a b",
            "ftp://example.com",
        ] {
            assert!(web_url(bad).is_err(), "{bad} should be refused");
        }
    }
}
