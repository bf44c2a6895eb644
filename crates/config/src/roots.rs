//! MCP roots: the folders a server is told it may work in (`roots/list`), read from a
//! server's `roots` (absolute paths or `file://` URIs) or given by the front door as
//! defaults, checked and normalised before anything is sent.

use std::path::{Component, Path, PathBuf};

/// Most roots one server may be given.
pub const MAX_ROOTS: usize = 64;
/// Longest root, as written.
pub const MAX_ROOT_BYTES: usize = 4096;

/// One root as it is sent: a `file://` URI and a name (the folder's last component).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub uri: String,
    pub name: String,
    /// The normalised absolute path.
    pub path: PathBuf,
}

/// A server's `roots` as written; the error names the entry (`roots/1 `x`: …`) and what
/// to write instead.
pub fn parse_list(entries: &[String]) -> Result<Vec<Root>, String> {
    if entries.len() > MAX_ROOTS {
        return Err(format!("`roots` has {} entries; at most {MAX_ROOTS} are allowed", entries.len()));
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            parse(entry).map_err(|why| {
                let shown: String = entry.chars().take(120).collect();
                let cut = if shown.len() < entry.len() { "…" } else { "" };
                format!(
                    "roots/{i} `{shown}{cut}`: {why}; write an absolute path (`/home/me/project`) or a `file://` URI \
                     (`file:///home/me/project`)"
                )
            })
        })
        .collect()
}

/// One root as written: an absolute path or a `file://` URI.
pub fn parse(entry: &str) -> Result<Root, String> {
    if entry.len() > MAX_ROOT_BYTES {
        return Err(format!("longer than {MAX_ROOT_BYTES} bytes"));
    }
    let path = match entry.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("file") => {
            let (host, path) = match rest.find('/') {
                Some(at) => rest.split_at(at),
                None => return Err("a `file://` URI needs a path".to_owned()),
            };
            if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
                return Err(format!("host `{host}` is not this machine; only `file:///…` (or `file://localhost/…`)"));
            }
            let path = path.split(['?', '#']).next().unwrap_or_default();
            if path
                .split('%')
                .skip(1)
                .any(|escape| !escape.get(..2).is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())))
            {
                return Err("a `%` not followed by two hex digits".to_owned());
            }
            percent_encoding::percent_decode_str(path)
                .decode_utf8()
                .map_err(|_| "its %-escapes are not UTF-8".to_owned())?
                .into_owned()
        }
        Some((scheme, _)) if scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) => {
            return Err(format!("`{scheme}:` URIs are not roots; only folders on this machine"));
        }
        _ => entry.to_owned(),
    };
    from_path(Path::new(&path))
}

/// A folder as a root: absolute, normalised (`.` dropped, `..` applied), never above `/`.
pub fn from_path(path: &Path) -> Result<Root, String> {
    let text = path.to_string_lossy();
    if text.contains('\0') {
        return Err("contains a NUL character".to_owned());
    }
    if !path.is_absolute() {
        return Err("not an absolute path".to_owned());
    }
    let mut normal = PathBuf::new();
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => normal.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return Err("`..` goes above the root of the file system".to_owned());
                }
                normal.pop();
                depth -= 1;
            }
            Component::Normal(part) => {
                normal.push(part);
                depth += 1;
            }
        }
    }
    let name = normal.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "/".to_owned());
    let uri = url::Url::from_file_path(&normal).map_err(|()| "cannot be written as a `file://` URI".to_owned())?;
    Ok(Root { uri: uri.into(), name, path: normal })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn paths_and_file_uris_become_the_same_normalised_uri() {
        let a = parse("/home/me/./my project/../work").unwrap();
        assert_eq!(a.uri, "file:///home/me/work");
        assert_eq!(a.name, "work");
        assert_eq!(parse("file:///home/me/work").unwrap(), a);
        assert_eq!(parse("FILE://localhost/home/me/work/").unwrap(), a);
        assert_eq!(parse("/data/a b%").unwrap().uri, "file:///data/a%20b%25");
        assert_eq!(parse("file:///data/a%20b%25").unwrap().path, PathBuf::from("/data/a b%"));
        assert_eq!(parse("/").unwrap().name, "/");
    }

    #[test]
    fn relative_escaping_remote_and_oversized_roots_are_refused() {
        for (entry, why) in [
            ("rel/dir", "not an absolute path"),
            ("/a/../../etc", "`..` goes above"),
            ("file://server/share", "host `server`"),
            ("https://example.com/x", "`https:` URIs are not roots"),
            ("file:///a%2", "two hex digits"),
            ("file:///a%FF", "not UTF-8"),
            ("/a\0b", "NUL"),
        ] {
            let err = parse(entry).unwrap_err();
            assert!(err.contains(why), "{entry}: {err}");
        }
        assert!(parse(&format!("/{}", "a".repeat(MAX_ROOT_BYTES))).unwrap_err().contains("longer than"));
        let many = vec!["/a".to_owned(); MAX_ROOTS + 1];
        assert!(parse_list(&many).unwrap_err().contains("at most 64"));
        let err = parse_list(&["/ok".to_owned(), "x".to_owned()]).unwrap_err();
        assert!(err.starts_with("roots/1 `x`: not an absolute path; write an absolute path"), "{err}");
    }
}
