//! The service's endpoint: bound by the store's owner, found by the other front doors.
//!
//! | transport | where | who may connect |
//! |---|---|---|
//! | Unix domain socket | [`SOCKET_FILE`](super::SOCKET_FILE) in the data folder, mode 0600 | the user: the file's mode |
//! | loopback TCP | `127.0.0.1`, a port the system picks, written with a token in [`ENDPOINT_FILE`](super::ENDPOINT_FILE) (mode 0600) | whoever presents the token in the hello: the user, who alone reads the file |
//!
//! The socket is the rule on Unix. The loopback port is the fallback: on platforms
//! without Unix sockets, when the socket's path would not fit the platform's `sun_path`
//! (108 bytes on Linux, 104 on macOS, the final NUL included — a deep data folder), and
//! when `MCPFLOW_ENDPOINT=tcp` (a folder on a file system without sockets). Clients look
//! for the socket first, then the endpoint file. Either way a connection splits into the
//! same boxed halves ([`ReadHalf`], [`WriteHalf`]), so nothing past the hello knows which.

use super::{SOCKET_FILE, endpoint_file, socket_path};
use mcpflow_app::home::NotPrivate;
use mcpflow_serve::http::constant_time_eq;
use serde::{Deserialize, Serialize};
use std::io::Read as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};

/// The reading half of a connection, whichever its transport.
pub type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;
/// The writing half of a connection, whichever its transport.
pub type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// The environment variable that asks for the loopback port (`tcp`) where a socket
/// would do.
pub const ENDPOINT_ENV: &str = "MCPFLOW_ENDPOINT";
/// Longest endpoint file a client reads.
pub const MAX_ENDPOINT_FILE: u64 = 4 * 1024;
/// How long connecting to the loopback port may take (it answers at once, or is gone).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest socket path the platform takes, its final NUL included (`sun_path`).
const SUN_PATH: usize = if cfg!(any(target_os = "linux", target_os = "android")) { 108 } else { 104 };

/// The environment variable holding a team service's token: `mcpflow service --listen`
/// wants every hello to carry it, and the studio (with `MCPFLOW_SERVICE`) presents it.
pub const TEAM_TOKEN_ENV: &str = "MCPFLOW_SERVICE_TOKEN";
/// The shortest token a team service takes.
pub const MIN_TEAM_TOKEN: usize = 32;

/// Which kind of endpoint a data folder gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// [`SOCKET_FILE`](super::SOCKET_FILE), mode 0600.
    Unix,
    /// A loopback port and a token, in [`ENDPOINT_FILE`](super::ENDPOINT_FILE).
    Tcp,
}

impl Transport {
    /// The endpoint data folder `home` gets here, with [`ENDPOINT_ENV`] as it is set.
    pub fn for_home(home: &Path) -> std::io::Result<Transport> {
        let setting = std::env::var(ENDPOINT_ENV).ok();
        Transport::choose(home, setting.as_deref())
            .map_err(|message| std::io::Error::new(std::io::ErrorKind::InvalidInput, message))
    }

    /// [`Transport::for_home`] with the setting given.
    fn choose(home: &Path, setting: Option<&str>) -> Result<Transport, String> {
        match setting.map(str::trim) {
            None | Some("") => {}
            Some("tcp") => return Ok(Transport::Tcp),
            Some(other) => {
                return Err(format!(
                    "{ENDPOINT_ENV} is `{other}`: set it to `tcp` (the service answers on a loopback port, its \
                     token in {}), or leave it unset (a Unix socket where one fits)",
                    endpoint_file(home).display()
                ));
            }
        }
        Ok(if cfg!(unix) && socket_fits(home) { Transport::Unix } else { Transport::Tcp })
    }
}

/// Whether the socket of data folder `home` fits the platform's `sun_path`, under its
/// own name and under the longer one it is bound with before the rename.
pub fn socket_fits(home: &Path) -> bool {
    let longest = staging_socket(home, u32::MAX);
    longest.as_os_str().as_encoded_bytes().len() < SUN_PATH
}

/// The name the socket is bound under by process `pid`, before it takes its own.
fn staging_socket(home: &Path, pid: u32) -> PathBuf {
    home.join(format!(".{SOCKET_FILE}.{pid}"))
}

/// The secret a client presents over the loopback port: 32 random bytes, in hex. Never
/// shown (`Debug` hides it); compared in constant time.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Token(String);

impl Token {
    /// A new token from the operating system's random source.
    fn generate() -> std::io::Result<Token> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| {
            std::io::Error::other(format!("no random bytes from the operating system for the endpoint's token: {e}"))
        })?;
        Ok(Token(hex::encode(bytes)))
    }

    /// A team service's token, as its operator gave it ([`TEAM_TOKEN_ENV`]): at least
    /// [`MIN_TEAM_TOKEN`] characters. The error says what is wrong, never the value.
    pub fn from_secret(secret: &str) -> Result<Token, String> {
        let secret = secret.trim();
        let length = secret.chars().count();
        if length < MIN_TEAM_TOKEN {
            return Err(format!(
                "{TEAM_TOKEN_ENV} has {length} characters; a team service's token needs at least {MIN_TEAM_TOKEN}: \
                 make one with `openssl rand -hex 32` and give the same to the service and to each studio"
            ));
        }
        Ok(Token(secret.to_owned()))
    }

    /// Whether `presented` is this token; `false` when none was presented.
    pub fn admits(&self, presented: Option<&Token>) -> bool {
        presented.is_some_and(|p| constant_time_eq(p.0.as_bytes(), self.0.as_bytes()))
    }
}

impl PartialEq for Token {
    fn eq(&self, other: &Token) -> bool {
        self.admits(Some(other))
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// What [`ENDPOINT_FILE`](super::ENDPOINT_FILE) says: where the service answers, the
/// token it wants, and its process.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct EndpointFile {
    port: u16,
    token: Token,
    pid: u32,
}

/// One connection to or from the endpoint.
pub struct Connection {
    halves: Halves,
    token: Option<Token>,
}

/// A connection's two directions, or (a team service over TLS, just accepted) the stream
/// whose TLS handshake is still to come ([`Connection::handshake`]).
enum Halves {
    Ready(ReadHalf, WriteHalf),
    Tls(TcpStream, crate::tls::Acceptor),
}

impl Connection {
    fn new(read: impl AsyncRead + Send + Unpin + 'static, write: impl AsyncWrite + Send + Unpin + 'static) -> Self {
        Connection { halves: Halves::Ready(Box::new(read), Box::new(write)), token: None }
    }

    fn tcp(stream: TcpStream, token: Token) -> Self {
        // Lines go one at a time, each answered: no waiting to fill a segment.
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        Connection { token: Some(token), ..Connection::new(read, write) }
    }

    /// A TLS stream (either side) whose hellos carry `token`.
    fn tls<S>(stream: S, token: Option<Token>) -> Self
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let (read, write) = tokio::io::split(stream);
        Connection { token, ..Connection::new(read, write) }
    }

    /// Completes a connection a TLS listener accepted: the TLS handshake, within `within`
    /// (done on the connection's own task, so a slow client holds up no other). Any other
    /// connection is ready as it is.
    pub async fn handshake(self, within: Duration) -> std::io::Result<Connection> {
        let Connection { halves, token } = self;
        match halves {
            Halves::Ready(read, write) => Ok(Connection { halves: Halves::Ready(read, write), token }),
            Halves::Tls(stream, acceptor) => {
                let _ = stream.set_nodelay(true);
                let tls = tokio::time::timeout(within, acceptor.0.accept(stream))
                    .await
                    .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no TLS handshake in time"))??;
                Ok(Connection::tls(tls, token))
            }
        }
    }

    /// The endpoint's token: over the loopback port, what a client presents in its hello
    /// and the service expects there; `None` over the Unix socket (its mode guards it).
    pub fn token(&self) -> Option<&Token> {
        self.token.as_ref()
    }

    /// The two directions. A TLS connection not yet through [`Connection::handshake`]
    /// has none: it reads as ended.
    pub fn split(self) -> (ReadHalf, WriteHalf) {
        match self.halves {
            Halves::Ready(read, write) => (read, write),
            Halves::Tls(..) => (Box::new(tokio::io::empty()), Box::new(tokio::io::sink())),
        }
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("token", &self.token).finish_non_exhaustive()
    }
}

/// The bound endpoint; its file (the socket, or the endpoint file) is removed when dropped.
#[derive(Debug)]
pub struct Listener {
    inner: Inner,
    path: PathBuf,
}

#[derive(Debug)]
enum Inner {
    #[cfg(unix)]
    Unix(tokio::net::UnixListener),
    Tcp {
        listener: TcpListener,
        port: u16,
        token: Token,
    },
    /// A team service's address (`mcpflow service --listen`): no file; TLS when given.
    Team {
        listener: TcpListener,
        port: u16,
        token: Token,
        tls: Option<crate::tls::Acceptor>,
    },
}

impl Listener {
    /// A team service's endpoint at `addr`, whose hellos must carry `token`, over TLS
    /// with `tls`. Without TLS, loopback only: the token and every blueprint would cross a
    /// network in the clear (docs/scale-out.md).
    pub async fn team(addr: SocketAddr, token: Token, tls: Option<crate::tls::Acceptor>) -> std::io::Result<Listener> {
        if tls.is_none() && !addr.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "--listen {addr} is not a loopback address, and without TLS the token and every blueprint would \
                     cross the network in the clear: give --tls-cert FILE and --tls-key FILE (PEM), or listen on \
                     127.0.0.1:PORT and reach it through an SSH tunnel (`ssh -L PORT:127.0.0.1:PORT HOST`)"
                ),
            ));
        }
        let listener = TcpListener::bind(addr).await?;
        let port = listener.local_addr()?.port();
        Ok(Listener { inner: Inner::Team { listener, port, token, tls }, path: PathBuf::new() })
    }

    pub async fn accept(&self) -> std::io::Result<Connection> {
        match &self.inner {
            #[cfg(unix)]
            Inner::Unix(listener) => {
                let (stream, _) = listener.accept().await?;
                let (read, write) = stream.into_split();
                Ok(Connection::new(read, write))
            }
            Inner::Tcp { listener, token, .. } | Inner::Team { listener, token, tls: None, .. } => {
                let (stream, _) = listener.accept().await?;
                Ok(Connection::tcp(stream, token.clone()))
            }
            Inner::Team { listener, token, tls: Some(acceptor), .. } => {
                let (stream, _) = listener.accept().await?;
                Ok(Connection { halves: Halves::Tls(stream, acceptor.clone()), token: Some(token.clone()) })
            }
        }
    }

    /// The socket, or the endpoint file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn transport(&self) -> Transport {
        match &self.inner {
            #[cfg(unix)]
            Inner::Unix(_) => Transport::Unix,
            Inner::Tcp { .. } | Inner::Team { .. } => Transport::Tcp,
        }
    }

    /// The loopback port, over TCP.
    pub fn port(&self) -> Option<u16> {
        match &self.inner {
            #[cfg(unix)]
            Inner::Unix(_) => None,
            Inner::Tcp { port, .. } | Inner::Team { port, .. } => Some(*port),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        match &self.inner {
            #[cfg(unix)]
            Inner::Unix(_) => {
                let _ = std::fs::remove_file(&self.path);
            }
            Inner::Team { .. } => {}
            // Only while it still names this listener.
            Inner::Tcp { port, .. } => {
                if read_endpoint_file(&self.path)
                    .is_ok_and(|file| file.is_some_and(|f| f.port == *port && f.pid == std::process::id()))
                {
                    let _ = std::fs::remove_file(&self.path);
                }
            }
        }
    }
}

/// Where a team service answers: `HOST:PORT` (plain TCP, loopback only) or
/// `tls://HOST:PORT`, as `MCPFLOW_SERVICE` says.
#[derive(Debug, Clone)]
pub struct TeamAddress {
    /// `HOST:PORT`.
    pub addr: String,
    /// The host, for the certificate's name; `Some` over TLS.
    tls_host: Option<String>,
}

impl TeamAddress {
    /// Reads `HOST:PORT` or `tls://HOST:PORT`. Plain TCP is refused to any host but
    /// loopback, so the token never crosses a network in the clear.
    pub fn parse(text: &str) -> Result<TeamAddress, String> {
        let text = text.trim();
        let (tls, rest) = match text.strip_prefix("tls://") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let Some((host, port)) = rest.rsplit_once(':').filter(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
        else {
            return Err(format!("`{text}` is not HOST:PORT or tls://HOST:PORT"));
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if !tls && !loopback {
            return Err(format!(
                "`{text}` is not on this machine, and plain TCP would send the token in the clear: use \
                 tls://{rest} (the service with --tls-cert), or an SSH tunnel to 127.0.0.1:{port}"
            ));
        }
        Ok(TeamAddress { addr: rest.to_owned(), tls_host: tls.then(|| host.to_owned()) })
    }

    pub fn is_tls(&self) -> bool {
        self.tls_host.is_some()
    }
}

impl std::fmt::Display for TeamAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_tls() { write!(f, "tls://{}", self.addr) } else { f.write_str(&self.addr) }
    }
}

/// A connection to the team service at `to`, whose hello will carry `token`; over TLS,
/// checked with `tls`.
pub async fn connect_team(
    to: &TeamAddress,
    token: Token,
    tls: Option<&crate::tls::Connector>,
) -> std::io::Result<Connection> {
    let addr = &to.addr;
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, format!("no answer from {addr}")))??;
    let (Some(host), Some(connector)) = (&to.tls_host, tls) else {
        return Ok(Connection::tcp(stream, token));
    };
    let _ = stream.set_nodelay(true);
    let name = crate::tls::server_name(host).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let tls = tokio::time::timeout(CONNECT_TIMEOUT * 5, connector.0.connect(name, stream))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, format!("no TLS handshake with {addr}")))??;
    Ok(Connection::tls(tls, Some(token)))
}

/// Binds the endpoint of data folder `home`, of the kind [`Transport::for_home`] says.
/// Call only while holding its store (the lock says no other process may bind it): an
/// endpoint there that still answers, of either kind, is another process's, an error;
/// one that does not is a dead process's leftover, removed.
pub fn bind(home: &Path) -> std::io::Result<Listener> {
    bind_with(home, Transport::for_home(home)?)
}

/// [`bind`] with the transport given.
pub fn bind_with(home: &Path, transport: Transport) -> std::io::Result<Listener> {
    clear_leftovers(home)?;
    match transport {
        Transport::Unix => bind_socket(home),
        Transport::Tcp => bind_port(home),
    }
}

/// Refuses when another process answers for data folder `home`, on its socket or its
/// port; else removes what a dead one left of either.
fn clear_leftovers(home: &Path) -> std::io::Result<()> {
    let in_use = |message: String| Err(std::io::Error::new(std::io::ErrorKind::AddrInUse, message));
    #[cfg(unix)]
    {
        let socket = socket_path(home);
        if std::fs::symlink_metadata(&socket).is_ok() {
            if std::os::unix::net::UnixStream::connect(&socket).is_ok() {
                return in_use(format!("another mcpflow process answers at {}; stop it first", socket.display()));
            }
            std::fs::remove_file(&socket)?;
        }
    }
    let file = endpoint_file(home);
    // Unreadable, not ours, or naming a port or process that is gone: a leftover.
    if let Ok(Some(found)) = read_endpoint_file(&file)
        && process_alive(found.pid)
        && std::net::TcpStream::connect_timeout(&loopback(found.port), CONNECT_TIMEOUT).is_ok()
    {
        return in_use(format!(
            "another mcpflow process (pid {}) answers for this data folder on 127.0.0.1:{}, as {} says; stop it first",
            found.pid,
            found.port,
            file.display()
        ));
    }
    match std::fs::remove_file(&file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(unix)]
fn bind_socket(home: &Path) -> std::io::Result<Listener> {
    use std::os::unix::fs::PermissionsExt as _;
    let path = socket_path(home);
    // Made under another name and given its mode before it takes the real name, so it
    // is never reachable with wider permissions.
    let staging = staging_socket(home, std::process::id());
    let _ = std::fs::remove_file(&staging);
    let inner = tokio::net::UnixListener::bind(&staging)?;
    std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))?;
    std::fs::rename(&staging, &path)?;
    Ok(Listener { inner: Inner::Unix(inner), path })
}

#[cfg(not(unix))]
fn bind_socket(_home: &Path) -> std::io::Result<Listener> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no Unix domain sockets on this platform: the service answers on a loopback port",
    ))
}

fn bind_port(home: &Path) -> std::io::Result<Listener> {
    let path = endpoint_file(home);
    // Loopback only: never another interface.
    let listener = std::net::TcpListener::bind(loopback(0))?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    let listener = TcpListener::from_std(listener)?;
    let token = Token::generate()?;
    let file = EndpointFile { port, token: token.clone(), pid: std::process::id() };
    let text = serde_json::to_string(&file).map_err(std::io::Error::other)?;
    mcpflow_app::files::write_private(&path, &text)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))?;
    Ok(Listener { inner: Inner::Tcp { listener, port, token }, path })
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// The endpoint file at `path`, read within [`MAX_ENDPOINT_FILE`]: `Ok(None)` when there
/// is none.
fn read_endpoint_file(path: &Path) -> std::io::Result<Option<EndpointFile>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut text = Vec::new();
    file.take(MAX_ENDPOINT_FILE + 1).read_to_end(&mut text)?;
    if text.len() as u64 > MAX_ENDPOINT_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is longer than {MAX_ENDPOINT_FILE} bytes: not an mcpflow endpoint file", path.display()),
        ));
    }
    serde_json::from_slice(&text).map(Some).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is not an mcpflow endpoint file: {e}", path.display()),
        )
    })
}

/// Whether process `pid` is alive and this user's. Elsewhere than on Unix it cannot be
/// told without more dependencies: `true`, and the port decides.
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        // 0 and negative ids mean process groups to kill(2), never one process.
        let Some(pid) = i32::try_from(pid).ok().filter(|p| *p > 0) else { return false };
        // Signal 0 only checks; EPERM is another user's process, not the service.
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Whether data folder `home` has an endpoint file or socket (whether a service may
/// answer there: [`connect`] says).
pub fn present(home: &Path) -> bool {
    socket_path(home).exists() || endpoint_file(home).exists()
}

/// A connection to the endpoint of data folder `home`, the socket first, then the port
/// the endpoint file names (with its token, for the hello); `Ok(None)` when nothing
/// answers. Refused (`DATA_FOLDER_NOT_PRIVATE`) when the folder is not the user's alone,
/// and (`SERVICE_NOT_YOURS`) when the process answering on the socket is another user's
/// (`SO_PEERCRED`): someone who could write to the folder may have planted it.
pub async fn connect(home: &Path) -> Result<Option<Connection>, NotPrivate> {
    #[cfg(unix)]
    let me = mcpflow_app::home::current_uid();
    #[cfg(not(unix))]
    let me = 0;
    connect_as(home, me).await
}

/// [`connect`] as user `me` (tests pretend to be another user).
async fn connect_as(home: &Path, me: u32) -> Result<Option<Connection>, NotPrivate> {
    mcpflow_app::home::check(home)?;
    #[cfg(unix)]
    {
        let path = socket_path(home);
        if path.exists()
            && let Ok(stream) = tokio::net::UnixStream::connect(&path).await
        {
            check_peer(&path, stream.peer_cred().map(|c| c.uid()), me)?;
            let (read, write) = stream.into_split();
            return Ok(Some(Connection::new(read, write)));
        }
    }
    #[cfg(not(unix))]
    let _ = me;
    let found = match read_endpoint_file(&endpoint_file(home)) {
        Ok(Some(found)) => found,
        Ok(None) => return Ok(None),
        Err(error) => {
            tracing::debug!(%error, "no service endpoint to connect to");
            return Ok(None);
        }
    };
    if !process_alive(found.pid) {
        return Ok(None);
    }
    let Ok(Ok(stream)) = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(loopback(found.port))).await else {
        return Ok(None);
    };
    Ok(Some(Connection::tcp(stream, found.token)))
}

/// Whether the process answering on `socket` as user `peer` (what `SO_PEERCRED` said, or
/// why it could not be told) may be talked to by user `me`: only when it is `me`.
fn check_peer(socket: &Path, peer: std::io::Result<u32>, me: u32) -> Result<(), NotPrivate> {
    let why = match peer {
        Ok(peer) if peer == me => return Ok(()),
        Ok(peer) => format!("is answered by a process of another user (uid {peer}; you are {me})"),
        Err(e) => format!("is answered by a process whose user cannot be told ({e})"),
    };
    Err(NotPrivate {
        code: mcpflow_app::home::NOT_YOURS,
        path: socket.to_owned(),
        message: format!(
            "the mcpflow service socket {} {why}, so nothing was sent to it: someone who can write to the data \
             folder may have put it there. Remove it (`rm {}`), make the folder yours alone (`chmod 700 {}`), or set \
             MCPFLOW_HOME to a folder of your own",
            socket.display(),
            socket.display(),
            socket.parent().unwrap_or(socket).display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ENDPOINT_FILE, Hello, PROTOCOL, Welcome};
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

    #[test]
    fn a_team_address_is_plain_on_loopback_only_and_tls_anywhere() {
        let plain = TeamAddress::parse("127.0.0.1:7070").unwrap();
        assert_eq!(
            (plain.addr.as_str(), plain.is_tls(), plain.to_string()),
            ("127.0.0.1:7070", false, "127.0.0.1:7070".into())
        );
        assert!(TeamAddress::parse("localhost:7070").is_ok());
        assert!(TeamAddress::parse("[::1]:7070").is_ok());
        let far = TeamAddress::parse("team.example:7070").unwrap_err();
        assert!(far.contains("tls://team.example:7070") && far.contains("in the clear"), "{far}");
        let tls = TeamAddress::parse("tls://team.example:7070").unwrap();
        assert_eq!(
            (tls.addr.as_str(), tls.is_tls(), tls.to_string()),
            ("team.example:7070", true, "tls://team.example:7070".into())
        );
        for bad in ["team.example", "tls://:7070", "127.0.0.1:port", ""] {
            assert!(TeamAddress::parse(bad).is_err(), "{bad}");
        }
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// A data folder in `dir` whose path is `len` bytes long.
    fn home_of_length(dir: &Path, len: usize) -> PathBuf {
        let base = dir.as_os_str().len() + 1;
        assert!(len > base + 1, "{} is too long already", dir.display());
        dir.join("d".repeat(len - base))
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_socket_is_for_its_user_only_and_a_leftover_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let listener = bind_with(dir.path(), Transport::Unix).unwrap();
        assert_eq!(mode(listener.path()), 0o600);
        // A second bind while the first answers is refused.
        let err = bind_with(dir.path(), Transport::Unix).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
        let connection = connect(dir.path()).await.unwrap().expect("the socket answers");
        assert!(connection.token().is_none(), "no token over the socket");
        let path = listener.path().to_owned();
        drop(listener);
        assert!(!path.exists(), "the socket file goes with its listener");
        // A socket file nobody answers on (its process died) is replaced.
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        assert!(path.exists() && connect(dir.path()).await.unwrap().is_none());
        let again = bind_with(dir.path(), Transport::Unix).unwrap();
        assert!(connect(dir.path()).await.unwrap().is_some());
        // While it answers, the port cannot be bound for the folder either.
        let err = bind_with(dir.path(), Transport::Tcp).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
        drop(again);
        assert!(connect(dir.path()).await.unwrap().is_none());
        // The port taking over from a dead socket removes it: clients find the port.
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        let port = bind_with(dir.path(), Transport::Tcp).unwrap();
        assert!(!path.exists() && present(dir.path()));
        assert!(connect(dir.path()).await.unwrap().unwrap().token().is_some());
        drop(port);
        assert!(!present(dir.path()));
    }

    #[test]
    fn only_a_peer_of_the_same_user_is_talked_to() {
        let socket = Path::new("/home/u/.local/share/mcpflow/mcpflow.sock");
        assert!(check_peer(socket, Ok(1000), 1000).is_ok());
        let other = check_peer(socket, Ok(0), 1000).unwrap_err();
        assert_eq!(other.code(), "SERVICE_NOT_YOURS");
        assert!(other.message.contains("another user (uid 0; you are 1000)"), "{}", other.message);
        assert!(other.message.contains(&format!("`rm {}`", socket.display())), "{}", other.message);
        let unknown = check_peer(socket, Err(std::io::Error::other("no credentials")), 1000).unwrap_err();
        assert_eq!(unknown.code(), "SERVICE_NOT_YOURS");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_client_refuses_a_socket_answered_by_another_user_or_a_folder_others_can_write() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        mcpflow_app::home::prepare(&home).unwrap();
        let listener = bind_with(&home, Transport::Unix).unwrap();
        let me = mcpflow_app::home::current_uid();
        // The real socket, the real SO_PEERCRED: this user's process is talked to …
        assert!(connect_as(&home, me).await.unwrap().is_some());
        // … and, to a client of another user, it is another user's: refused.
        let refused = connect_as(&home, me + 1).await.unwrap_err();
        assert_eq!(refused.code(), "SERVICE_NOT_YOURS", "{}", refused.message);
        assert!(refused.message.contains(&format!("uid {me}; you are {}", me + 1)), "{}", refused.message);
        // A folder others can write to is refused before anything is connected.
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = connect(&home).await.unwrap_err();
        assert_eq!(refused.code(), "DATA_FOLDER_NOT_PRIVATE");
        assert!(refused.message.contains(&format!("`chmod 700 {}`", home.display())), "{}", refused.message);
        drop(listener);
    }

    #[tokio::test]
    async fn the_port_listens_on_loopback_and_its_file_is_for_its_user_only() {
        let dir = tempfile::tempdir().unwrap();
        let listener = bind_with(dir.path(), Transport::Tcp).unwrap();
        assert_eq!(listener.path(), endpoint_file(dir.path()));
        #[cfg(unix)]
        assert_eq!(mode(listener.path()), 0o600);
        // Irrefutable where there are no Unix sockets.
        #[allow(irrefutable_let_patterns)]
        let Inner::Tcp { listener: inner, port, token } = &listener.inner else { panic!("not TCP") };
        assert_eq!(inner.local_addr().unwrap(), loopback(*port));
        let file = read_endpoint_file(listener.path()).unwrap().unwrap();
        assert_eq!((file.port, file.pid), (*port, std::process::id()));
        assert_eq!(file.token.0.len(), 64);
        assert!(file.token.0.bytes().all(|b| b.is_ascii_hexdigit()), "hex");
        assert!(token.admits(Some(&file.token)));
        assert!(!format!("{listener:?}{file:?}").contains(&token.0), "Debug never shows the token");
        // No file beside it is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [ENDPOINT_FILE]);
        // A client finds it and carries the token for its hello.
        let accepted = tokio::spawn(async move {
            let connection = listener.accept().await.unwrap();
            (listener, connection)
        });
        let client = connect(dir.path()).await.unwrap().expect("the port answers");
        let (listener, served) = accepted.await.unwrap();
        assert!(served.token().unwrap().admits(client.token()));
        // A second bind while the first answers is refused; the file goes with its listener.
        let err = bind_with(dir.path(), Transport::Tcp).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
        assert!(err.to_string().contains(&std::process::id().to_string()), "{err}");
        drop(listener);
        assert!(!endpoint_file(dir.path()).exists(), "the endpoint file goes with its listener");
        assert!(connect(dir.path()).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_leftover_endpoint_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = endpoint_file(dir.path());
        // A port nobody answers on (its process died), the token of then.
        let closed = std::net::TcpListener::bind(loopback(0)).unwrap().local_addr().unwrap().port();
        let stale = format!(r#"{{"port":{closed},"token":"{}","pid":{}}}"#, "ab".repeat(32), std::process::id());
        std::fs::write(&path, &stale).unwrap();
        assert!(connect(dir.path()).await.unwrap().is_none(), "nobody answers there");
        let listener = bind_with(dir.path(), Transport::Tcp).unwrap();
        let file = read_endpoint_file(&path).unwrap().unwrap();
        assert_eq!(file.port, listener.port().unwrap());
        assert_ne!(file.token.0, "ab".repeat(32), "a new token");
        drop(listener);
        // A port that answers, in the name of a process that is gone: a leftover too.
        let someone = std::net::TcpListener::bind(loopback(0)).unwrap();
        let port = someone.local_addr().unwrap().port();
        std::fs::write(&path, format!(r#"{{"port":{port},"token":"{}","pid":{}}}"#, "cd".repeat(32), i32::MAX))
            .unwrap();
        assert!(connect(dir.path()).await.unwrap().is_none(), "the token is not sent to whoever has the port now");
        let listener = bind_with(dir.path(), Transport::Tcp).unwrap();
        assert_ne!(listener.port(), Some(port));
        drop(listener);
        // Garbage, and a file past the size limit: replaced, never read whole.
        for junk in ["not json".to_owned(), " ".repeat(MAX_ENDPOINT_FILE as usize + 1)] {
            std::fs::write(&path, &junk).unwrap();
            assert!(connect(dir.path()).await.unwrap().is_none());
            let err = read_endpoint_file(&path).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
            let listener = bind_with(dir.path(), Transport::Tcp).unwrap();
            assert!(read_endpoint_file(&path).unwrap().is_some());
            drop(listener);
        }
    }

    #[test]
    fn a_home_whose_socket_path_is_too_long_gets_the_port() {
        let dir = tempfile::tempdir().unwrap();
        let short = dir.path().join("home");
        assert_eq!(Transport::choose(&short, None), Ok(if cfg!(unix) { Transport::Unix } else { Transport::Tcp }));
        assert_eq!(Transport::choose(&short, Some("tcp")), Ok(Transport::Tcp));
        let refused = Transport::choose(&short, Some("udp")).unwrap_err();
        assert!(refused.contains("MCPFLOW_ENDPOINT is `udp`") && refused.contains("`tcp`"), "{refused}");
        // The socket under its staging name must fit the platform's `sun_path` with its NUL.
        let staging = format!("/.{SOCKET_FILE}.{}", u32::MAX).len();
        let fits = home_of_length(dir.path(), SUN_PATH - 1 - staging);
        let too_long = home_of_length(dir.path(), SUN_PATH - staging);
        assert!(socket_fits(&fits) && !socket_fits(&too_long));
        assert_eq!(Transport::choose(&too_long, None), Ok(Transport::Tcp));
    }

    /// Sends `hello` over a raw connection to `port` and reads the welcome.
    async fn welcome_of(port: u16, hello: &Hello) -> (Welcome, String) {
        let stream = TcpStream::connect(loopback(port)).await.unwrap();
        let (read, mut write) = stream.into_split();
        write.write_all(format!("{}\n", serde_json::to_string(hello).unwrap()).as_bytes()).await.unwrap();
        let mut line = String::new();
        BufReader::new(read).read_line(&mut line).await.unwrap();
        (serde_json::from_str(&line).unwrap(), line)
    }

    #[tokio::test]
    async fn connections_past_the_cap_are_closed_and_the_service_serves_again_when_they_go() {
        let dir = tempfile::tempdir().unwrap();
        let home = home_of_length(dir.path(), 150);
        let app = mcpflow_app::App::open(&home, mcpflow_app::AppOptions::default()).unwrap();
        let stop = tokio_util::sync::CancellationToken::new();
        let activity: std::sync::Arc<crate::Activity> = std::sync::Arc::default();
        let hosting = tokio::spawn(crate::host(app.clone(), home.clone(), activity.clone(), stop.clone()));
        let file = loop {
            if let Ok(Some(file)) = read_endpoint_file(&endpoint_file(&home)) {
                break file;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        // Connections that never say hello (anyone on the machine can open them).
        let mut silent = Vec::new();
        for _ in 0..crate::MAX_CONNECTIONS {
            silent.push(TcpStream::connect(("127.0.0.1", file.port)).await.unwrap());
        }
        while activity.connections() < crate::MAX_CONNECTIONS {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // One more is closed at once: the user's client is told the service did not answer.
        let refused = crate::Client::connect(&home, "test").await;
        assert!(refused.is_err(), "past the cap a connection is closed");
        drop(silent);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let client = loop {
            match crate::Client::connect(&home, "test").await {
                Ok(Some(client)) => break client,
                _ if std::time::Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(50)).await,
                other => panic!("the service did not serve again: {other:?}"),
            }
        };
        drop(client);
        stop.cancel();
        hosting.await.unwrap().unwrap();
        app.shutdown().await;
    }

    #[tokio::test]
    async fn the_service_on_the_port_refuses_a_hello_without_its_token() {
        let dir = tempfile::tempdir().unwrap();
        // Deep enough that no socket fits: the service answers on the port by itself.
        let home = home_of_length(dir.path(), 150);
        let app = mcpflow_app::App::open(&home, mcpflow_app::AppOptions::default()).unwrap();
        let stop = tokio_util::sync::CancellationToken::new();
        let activity = std::sync::Arc::default();
        let hosting = tokio::spawn(crate::host(app.clone(), home.clone(), activity, stop.clone()));
        let file = loop {
            if let Ok(Some(file)) = read_endpoint_file(&endpoint_file(&home)) {
                break file;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert!(!socket_path(&home).exists());

        let mut hello =
            Hello { mcpflow: PROTOCOL, session: "api".into(), client: "test".into(), options: Vec::new(), token: None };
        let (missing, _) = welcome_of(file.port, &hello).await;
        hello.token = Some(Token("0".repeat(64)));
        let (wrong, line) = welcome_of(file.port, &hello).await;
        // A wrong token is refused before anything else is looked at.
        hello.mcpflow = PROTOCOL + 1;
        hello.options = vec!["--servers".into()];
        let (wrong_and_more, _) = welcome_of(file.port, &hello).await;
        for refused in [&missing, &wrong, &wrong_and_more] {
            assert!(!refused.ok, "{refused:?}");
            let error = refused.error.as_ref().unwrap();
            assert_eq!(error.code, "BAD_TOKEN", "{refused:?}");
            assert!(error.message.contains(&endpoint_file(&home).display().to_string()), "{}", error.message);
        }
        assert!(!line.contains(&file.token.0), "the refusal never shows the token: {line}");

        // The same user's client reads the token from the file and is served.
        let mut client = crate::Client::connect(&home, "test").await.unwrap().expect("it answers");
        assert_eq!(client.pid, std::process::id());
        let listed = client.call("blueprints/list", serde_json::json!({})).await.unwrap();
        assert_eq!(listed, serde_json::json!([]));
        drop(client);
        stop.cancel();
        hosting.await.unwrap().unwrap();
        assert!(!endpoint_file(&home).exists(), "the endpoint file goes with the service");
        app.shutdown().await;
    }
}
