//! Just enough HTTP/1.1 for the OAuth fixture: requests with a `Content-Length` body,
//! kept alive; answers with a body and their length.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};

const HEAD_MAX: usize = 64 * 1024;
const BODY_MAX: usize = 1024 * 1024;

pub(super) struct Request {
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Lower-case names.
    headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    pub fn query(&self) -> HashMap<String, String> {
        self.target.split_once('?').map(|(_, q)| pairs(q)).unwrap_or_default()
    }

    pub fn form(&self) -> HashMap<String, String> {
        pairs(&String::from_utf8_lossy(&self.body))
    }
}

pub(super) struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    pub fn status(status: u16) -> Response {
        Response { status, headers: Vec::new(), body: Vec::new() }
    }

    pub fn json(status: u16, body: &serde_json::Value) -> Response {
        Response::status(status).with_header("Content-Type", "application/json").with_body(body.to_string())
    }

    pub fn redirect(location: &str) -> Response {
        Response::status(302).with_header("Location", location)
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    fn with_body(mut self, body: String) -> Response {
        self.body = body.into_bytes();
        self
    }

    pub fn write(&self, out: &mut TcpStream) -> io::Result<()> {
        let mut head =
            format!("HTTP/1.1 {} {}\r\nContent-Length: {}\r\n", self.status, reason(self.status), self.body.len());
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        out.write_all(&self.body)?;
        out.flush()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Other",
    }
}

/// The next request on the connection; `None` when the client closed it or the fixture
/// stops.
pub(super) fn read(reader: &mut BufReader<TcpStream>, stop: &AtomicBool) -> io::Result<Option<Request>> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        if stop.load(Ordering::Acquire) || head.len() > HEAD_MAX {
            return Ok(None);
        }
        match reader.read_until(b'\n', &mut head) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_owned();
    let target = first.next().unwrap_or_default().to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    if length > BODY_MAX {
        return Ok(None);
    }
    let mut body = vec![0; length];
    let mut filled = 0;
    while filled < length {
        if stop.load(Ordering::Acquire) {
            return Ok(None);
        }
        match reader.read(&mut body[filled..]) {
            Ok(0) => return Ok(None),
            Ok(n) => filled += n,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Some(Request { method, target, headers, body }))
}

/// `a=1&b=x%20y` decoded (`+` is a space).
fn pairs(text: &str) -> HashMap<String, String> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (form_decode(k), form_decode(v))
        })
        .collect()
}

pub(super) fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) fn form_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
