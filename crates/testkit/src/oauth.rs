//! An OAuth-protected MCP server on loopback for tests: one origin serving an
//! authorization server (metadata, `/authorize` that approves at once, `/token`,
//! `/register`) and a streamable HTTP MCP endpoint at `/mcp` (JSON answers; one tool,
//! `echo`) that wants a bearer token it issued. [`OAuthServer::start`] takes
//! [`OAuthOptions`]: which token endpoint client authentication methods it accepts
//! (`client_secret_basic`, `client_secret_post`, `none`, `private_key_jwt` with an ES256
//! key it makes), which protocol era it publishes its metadata in ([`Era`]), clients
//! registered beforehand, and a scope `tools/call` needs beyond the others (answered
//! `403 insufficient_scope`, for step-up). Every request to the authorization server is
//! recorded ([`OAuthServer::authorizations`], [`OAuthServer::token_requests`],
//! [`OAuthServer::registrations`]) with the client authentication the token request used.
//!
//! HTTP/1.1 by hyper (through axum) on a current-thread tokio runtime on a thread of its
//! own ([`crate::loopback`]), as [`crate::otlp`]: it works the same from a sync test and
//! beside any async runtime. The "browser" of a test is a program that follows redirects
//! (`curl -s -L -o /dev/null URL`): `/authorize` redirects at once to the client's
//! `redirect_uri` with a code.

mod jwt;

use crate::loopback::{self, Served};
use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::StatusCode;
use http::header::{self, HeaderName, HeaderValue};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Request bodies larger than this are answered 413.
const BODY_MAX: usize = 1024 * 1024;

/// A request with its body read whole.
type Request = http::Request<Bytes>;

/// Where the server publishes how to sign in to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Era {
    /// 2025-06-18 and later: protected resource metadata at
    /// `/.well-known/oauth-protected-resource/mcp` (named in the 401's
    /// `resource_metadata`), naming this origin as the authorization server.
    #[default]
    ResourceMetadata,
    /// 2025-03-26: no protected resource metadata; authorization server metadata at this
    /// origin's `/.well-known/oauth-authorization-server`, for issuer `ORIGIN/oauth`
    /// whose endpoints live under `/oauth`.
    OriginMetadata,
    /// 2025-03-26 with no metadata at all: the default `/authorize`, `/token` and
    /// `/register` at this origin.
    DefaultEndpoints,
}

/// How the fixture behaves.
#[derive(Debug, Clone)]
pub struct OAuthOptions {
    pub era: Era,
    /// `token_endpoint_auth_methods_supported`: the token endpoint refuses any other
    /// client authentication with `401 invalid_client`.
    pub auth_methods: Vec<String>,
    /// Whether `/register` (RFC 7591) is offered.
    pub registration: bool,
    /// The `token_endpoint_auth_method` a registration answers (and then requires); by
    /// default the one asked for when supported, else the first supported.
    pub registration_method: Option<String>,
    /// Clients registered beforehand: id and secret (`None`: a public client, or one
    /// that authenticates with the fixture's private key under `private_key_jwt`).
    pub clients: Vec<(String, Option<String>)>,
    /// `scopes_supported` in the protected resource metadata.
    pub scopes_supported: Vec<String>,
    /// A scope `tools/call` needs: a token without it is answered
    /// `403 insufficient_scope` naming the token's scopes and this one.
    pub tool_scope: Option<String>,
    /// Scopes the authorization server never grants, whoever asks (a step-up that
    /// cannot succeed).
    pub withheld_scopes: Vec<String>,
    /// Grants the authorization server offers (`grant_types_supported`).
    pub grants: Vec<String>,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        OAuthOptions {
            era: Era::default(),
            auth_methods: vec!["none".to_owned()],
            registration: true,
            registration_method: None,
            clients: Vec::new(),
            scopes_supported: Vec::new(),
            tool_scope: None,
            withheld_scopes: Vec::new(),
            grants: vec!["authorization_code".to_owned(), "refresh_token".to_owned(), "client_credentials".to_owned()],
        }
    }
}

/// One `/authorize` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    pub client_id: String,
    /// The `scope` parameter, split; empty when absent.
    pub scopes: Vec<String>,
    pub resource: Option<String>,
}

/// One `/token` request, and how the client authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRequest {
    pub grant_type: String,
    /// `client_secret_basic`, `client_secret_post`, `private_key_jwt` or `none`.
    pub auth_method: String,
    pub client_id: Option<String>,
    pub resource: Option<String>,
    /// The HTTP status answered.
    pub status: u16,
}

/// One `/register` request: the metadata the client sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    pub metadata: Value,
}

#[derive(Default)]
struct State {
    clients: HashMap<String, Client>,
    codes: HashMap<String, Code>,
    /// Access token → its scopes.
    tokens: HashMap<String, Vec<String>>,
    /// Refresh token → client and scopes.
    refresh: HashMap<String, (String, Vec<String>)>,
    authorizations: Vec<Authorization>,
    token_requests: Vec<TokenRequest>,
    registrations: Vec<Registration>,
    issued: usize,
}

#[derive(Debug, Clone)]
struct Client {
    secret: Option<String>,
    /// The method it must authenticate with (`None`: any the server supports).
    method: Option<String>,
}

struct Code {
    client_id: String,
    scopes: Vec<String>,
    challenge: String,
    redirect_uri: String,
}

struct Shared {
    options: OAuthOptions,
    origin: String,
    /// The fixture's ES256 key pair for `private_key_jwt` (PKCS#8).
    key: jwt::KeyPair,
    state: Mutex<State>,
}

/// The running fixture; stops when dropped.
pub struct OAuthServer {
    shared: Arc<Shared>,
    _served: Served,
}

impl OAuthServer {
    /// Serves on a port of `127.0.0.1` the system picks.
    pub fn start(options: OAuthOptions) -> io::Result<OAuthServer> {
        let mut state = State::default();
        for (id, secret) in &options.clients {
            state.clients.insert(id.clone(), Client { secret: secret.clone(), method: None });
        }
        let listener = loopback::bind(0)?;
        let shared = Arc::new(Shared {
            options,
            origin: format!("http://{}", listener.local_addr()?),
            key: jwt::KeyPair::generate(),
            state: Mutex::new(state),
        });
        let router = axum::Router::new().fallback(handle).with_state(shared.clone());
        let served = Served::start(listener, "oauth-fixture", |listener| loopback::serve_http(listener, router))?;
        Ok(OAuthServer { shared, _served: served })
    }

    /// The MCP endpoint: `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.shared.origin)
    }

    /// The authorization server's issuer.
    pub fn issuer(&self) -> String {
        self.shared.issuer()
    }

    /// The PKCS#8 PEM of the private key a `private_key_jwt` client signs with.
    pub fn client_key_pem(&self) -> String {
        self.shared.key.private_pem()
    }

    pub fn authorizations(&self) -> Vec<Authorization> {
        self.shared.lock().authorizations.clone()
    }

    pub fn token_requests(&self) -> Vec<TokenRequest> {
        self.shared.lock().token_requests.clone()
    }

    pub fn registrations(&self) -> Vec<Registration> {
        self.shared.lock().registrations.clone()
    }

    /// Every access token issued so far (to check none leaks anywhere).
    pub fn issued_tokens(&self) -> Vec<String> {
        self.shared.lock().tokens.keys().cloned().collect()
    }
}

impl std::fmt::Debug for OAuthServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthServer").field("url", &self.url()).finish_non_exhaustive()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Where the authorization server's endpoints live.
    fn prefix(&self) -> &'static str {
        if self.options.era == Era::OriginMetadata { "/oauth" } else { "" }
    }

    fn issuer(&self) -> String {
        format!("{}{}", self.origin, self.prefix())
    }

    fn metadata(&self) -> Value {
        let issuer = self.issuer();
        let mut doc = json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "response_types_supported": ["code"],
            "grant_types_supported": self.options.grants,
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": self.options.auth_methods,
        });
        if self.options.registration {
            doc["registration_endpoint"] = json!(format!("{issuer}/register"));
        }
        if self.options.auth_methods.iter().any(|m| m == "private_key_jwt") {
            doc["token_endpoint_auth_signing_alg_values_supported"] = json!(["ES256"]);
        }
        doc
    }

    fn route(&self, request: &Request) -> Response {
        let prefix = self.prefix();
        let era = self.options.era;
        match (request.method().as_str(), request.uri().path()) {
            ("POST", "/mcp") => self.mcp(request),
            ("GET" | "DELETE", "/mcp") => StatusCode::METHOD_NOT_ALLOWED.into_response(),
            ("GET", "/.well-known/oauth-protected-resource/mcp") if era == Era::ResourceMetadata => {
                let mut doc =
                    json!({ "resource": format!("{}/mcp", self.origin), "authorization_servers": [self.issuer()] });
                if !self.options.scopes_supported.is_empty() {
                    doc["scopes_supported"] = json!(self.options.scopes_supported);
                }
                respond(200, &doc)
            }
            ("GET", "/.well-known/oauth-authorization-server") if era != Era::DefaultEndpoints => {
                respond(200, &self.metadata())
            }
            ("GET", p) if p.strip_prefix(prefix) == Some("/authorize") => self.authorize(request),
            ("POST", p) if p.strip_prefix(prefix) == Some("/token") => self.token(request),
            ("POST", p) if p.strip_prefix(prefix) == Some("/register") && self.options.registration => {
                self.register(request)
            }
            _ => respond(404, &json!({ "error": "not_found" })),
        }
    }

    fn authorize(&self, request: &Request) -> Response {
        let query = pairs(request.uri().query().unwrap_or_default().as_bytes());
        let get = |key: &str| query.get(key).cloned();
        let scopes: Vec<String> =
            get("scope").map(|s| s.split_whitespace().map(str::to_owned).collect()).unwrap_or_default();
        let client_id = get("client_id").unwrap_or_default();
        let mut state = self.lock();
        state.authorizations.push(Authorization {
            client_id: client_id.clone(),
            scopes: scopes.clone(),
            resource: get("resource"),
        });
        let (Some(redirect_uri), Some(challenge)) = (get("redirect_uri"), get("code_challenge")) else {
            return respond(
                400,
                &json!({ "error": "invalid_request", "error_description": "no redirect_uri or code_challenge" }),
            );
        };
        if get("code_challenge_method").as_deref() != Some("S256") || !state.clients.contains_key(&client_id) {
            return respond(
                400,
                &json!({ "error": "invalid_request", "error_description": "unknown client or no S256" }),
            );
        }
        state.issued += 1;
        let code = format!("code-{}", state.issued);
        state.codes.insert(code.clone(), Code { client_id, scopes, challenge, redirect_uri: redirect_uri.clone() });
        let mut location = url_with(&redirect_uri, &[("code", &code)]);
        if let Some(s) = get("state") {
            location = url_with(&location, &[("state", &s)]);
        }
        if self.options.era == Era::ResourceMetadata {
            location = url_with(&location, &[("iss", &self.issuer())]);
        }
        with_header(StatusCode::FOUND.into_response(), header::LOCATION, &location)
    }

    fn token(&self, request: &Request) -> Response {
        let form = pairs(request.body());
        let get = |key: &str| form.get(key).cloned();
        let grant_type = get("grant_type").unwrap_or_default();
        let (method, client) = self.client_authentication(request, &form);
        let mut state = self.lock();
        let answer = (|| {
            let client_id = client.clone().ok_or("no client, or an assertion that does not verify")?;
            let known = state.clients.get(&client_id).cloned().ok_or("unknown client")?;
            if !self.options.auth_methods.contains(&method) && self.options.era != Era::DefaultEndpoints {
                return Err("this client authentication method is not supported");
            }
            if known.method.as_ref().is_some_and(|m| *m != method) {
                return Err("the client registered another token_endpoint_auth_method");
            }
            match (&known.secret, method.as_str()) {
                (Some(secret), "client_secret_basic" | "client_secret_post") => {
                    let sent =
                        if method == "client_secret_post" { get("client_secret") } else { basic(request).map(|b| b.1) };
                    if sent.as_ref() != Some(secret) {
                        return Err("wrong client secret");
                    }
                }
                (None, "none" | "private_key_jwt") => {}
                _ => return Err("this client cannot authenticate that way"),
            }
            Ok(client_id)
        })()
        .map_err(|why| (401, "invalid_client", why));
        let answer = answer.and_then(|client_id| {
            let scopes = match grant_type.as_str() {
                "authorization_code" => {
                    let code = state.codes.remove(&get("code").unwrap_or_default()).ok_or((
                        400,
                        "invalid_grant",
                        "unknown code",
                    ))?;
                    let verifier = get("code_verifier").unwrap_or_default();
                    if code.client_id != client_id
                        || s256(&verifier) != code.challenge
                        || get("redirect_uri").as_deref() != Some(code.redirect_uri.as_str())
                    {
                        return Err((400, "invalid_grant", "the code, verifier or redirect URI does not match"));
                    }
                    code.scopes
                }
                "refresh_token" => {
                    let (owner, scopes) = state
                        .refresh
                        .get(&get("refresh_token").unwrap_or_default())
                        .cloned()
                        .ok_or((400, "invalid_grant", "unknown refresh token"))?;
                    if owner != client_id {
                        return Err((400, "invalid_grant", "the refresh token is another client's"));
                    }
                    scopes
                }
                "client_credentials" => {
                    get("scope").map(|s| s.split_whitespace().map(str::to_owned).collect()).unwrap_or_default()
                }
                _ => return Err((400, "unsupported_grant_type", "unsupported grant")),
            };
            let scopes: Vec<String> =
                scopes.into_iter().filter(|s| !self.options.withheld_scopes.contains(s)).collect();
            Ok((client_id, scopes))
        });
        let status = match &answer {
            Ok(_) => 200,
            Err((status, ..)) => *status,
        };
        state.token_requests.push(TokenRequest {
            grant_type: grant_type.clone(),
            auth_method: method,
            client_id: client,
            resource: get("resource"),
            status,
        });
        match answer {
            Err((status, error, why)) => respond(status, &json!({ "error": error, "error_description": why })),
            Ok((client_id, scopes)) => {
                state.issued += 1;
                let token = format!("at-{}-{}", state.issued, uuid_like());
                state.tokens.insert(token.clone(), scopes.clone());
                let mut body = json!({ "access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": scopes.join(" ") });
                if grant_type != "client_credentials" {
                    let refresh = format!("rt-{}-{}", state.issued, uuid_like());
                    state.refresh.insert(refresh.clone(), (client_id, scopes));
                    body["refresh_token"] = json!(refresh);
                }
                respond(200, &body)
            }
        }
    }

    /// Which client authentication a token request used, and the client it names.
    fn client_authentication(&self, request: &Request, form: &HashMap<String, String>) -> (String, Option<String>) {
        if let Some((id, _)) = basic(request) {
            return ("client_secret_basic".to_owned(), Some(id));
        }
        if let Some(assertion) = form.get("client_assertion") {
            let typed = form.get("client_assertion_type").map(String::as_str)
                == Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
            let client = typed.then(|| self.key.verified_client(assertion, &self.issuer())).flatten();
            return ("private_key_jwt".to_owned(), client);
        }
        let method = if form.contains_key("client_secret") { "client_secret_post" } else { "none" };
        (method.to_owned(), form.get("client_id").cloned())
    }

    fn register(&self, request: &Request) -> Response {
        let Ok(metadata) = serde_json::from_slice::<Value>(request.body()) else {
            return respond(400, &json!({ "error": "invalid_client_metadata" }));
        };
        let asked = metadata["token_endpoint_auth_method"].as_str().unwrap_or("client_secret_basic").to_owned();
        let supported = &self.options.auth_methods;
        let method = self.options.registration_method.clone().unwrap_or_else(|| {
            if supported.contains(&asked) {
                asked
            } else {
                supported.first().cloned().unwrap_or_else(|| "none".to_owned())
            }
        });
        let mut state = self.lock();
        state.registrations.push(Registration { metadata: metadata.clone() });
        state.issued += 1;
        let id = format!("client-{}", state.issued);
        let secret = (method != "none").then(|| format!("secret-{}-{}", state.issued, uuid_like()));
        state.clients.insert(id.clone(), Client { secret: secret.clone(), method: Some(method.clone()) });
        let mut body = json!({ "client_id": id, "token_endpoint_auth_method": method,
            "redirect_uris": metadata["redirect_uris"], "client_name": metadata["client_name"] });
        if let Some(secret) = secret {
            body["client_secret"] = json!(secret);
        }
        respond(201, &body)
    }

    fn mcp(&self, request: &Request) -> Response {
        let Ok(message) = serde_json::from_slice::<Value>(request.body()) else {
            return respond(
                400,
                &json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": "parse error" } }),
            );
        };
        let method = message["method"].as_str().unwrap_or_default();
        let scopes = authorization(request)
            .and_then(|h| h.strip_prefix("Bearer "))
            .and_then(|token| self.lock().tokens.get(token).cloned());
        let Some(scopes) = scopes else {
            let challenge = match self.options.era {
                Era::ResourceMetadata => {
                    format!("Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"", self.origin)
                }
                _ => "Bearer realm=\"mcp\"".to_owned(),
            };
            let refusal = respond(401, &json!({ "error": "invalid_token" }));
            return with_header(refusal, header::WWW_AUTHENTICATE, &challenge);
        };
        if method == "tools/call"
            && let Some(wanted) = &self.options.tool_scope
            && !scopes.contains(wanted)
        {
            let mut all = scopes.clone();
            all.push(wanted.clone());
            let challenge = format!("Bearer error=\"insufficient_scope\", scope=\"{}\"", all.join(" "));
            let refusal = respond(403, &json!({ "error": "insufficient_scope" }));
            return with_header(refusal, header::WWW_AUTHENTICATE, &challenge);
        }
        let Some(id) = message.get("id").cloned() else { return StatusCode::ACCEPTED.into_response() };
        let result = match method {
            "initialize" => {
                let asked = message["params"]["protocolVersion"].as_str().unwrap_or_default();
                let version =
                    if ["2025-03-26", "2025-06-18", "2025-11-25"].contains(&asked) { asked } else { "2025-11-25" };
                json!({ "protocolVersion": version, "capabilities": { "tools": {} },
                        "serverInfo": { "name": "oauth-fixture", "version": "1.0.0" } })
            }
            "ping" => json!({}),
            "tools/list" => json!({ "tools": [{ "name": "echo", "inputSchema": { "type": "object" } }] }),
            "tools/call" => {
                let args = &message["params"]["arguments"];
                json!({ "content": [{ "type": "text", "text": args.to_string() }], "structuredContent": args })
            }
            _ => {
                return respond(
                    200,
                    &json!({ "jsonrpc": "2.0", "id": id,
                    "error": { "code": -32601, "message": format!("method not found: {method}") } }),
                );
            }
        };
        respond(200, &json!({ "jsonrpc": "2.0", "id": id, "result": result }))
    }
}

/// Serves one request: its body read whole, then [`Shared::route`].
async fn handle(
    axum::extract::State(shared): axum::extract::State<Arc<Shared>>,
    request: axum::extract::Request,
) -> Response {
    match loopback::read_whole(request, BODY_MAX).await {
        Some(request) => shared.route(&request),
        None => {
            respond(413, &json!({ "error": "invalid_request", "error_description": "body too large or unreadable" }))
        }
    }
}

/// A JSON answer.
fn respond(status: u16, body: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

fn with_header(mut response: Response, name: HeaderName, value: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert(name, value);
    }
    response
}

fn authorization(request: &Request) -> Option<&str> {
    request.headers().get(header::AUTHORIZATION)?.to_str().ok()
}

/// `a=1&b=x%20y` (a query or a form body) decoded.
fn pairs(text: &[u8]) -> HashMap<String, String> {
    form_urlencoded::parse(text).into_owned().collect()
}

/// `Authorization: Basic` credentials, form-urlencoded then base64 (RFC 6749 §2.3.1).
fn basic(request: &Request) -> Option<(String, String)> {
    let encoded = authorization(request)?.strip_prefix("Basic ")?;
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    let unescape =
        |s: &str| percent_encoding::percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned();
    Some((unescape(id), unescape(secret)))
}

fn url_with(url: &str, pairs: &[(&str, &str)]) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{}", form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish())
}

/// 32 hex characters of the system's randomness.
fn uuid_like() -> String {
    let mut bytes = [0u8; 16];
    jwt::fill_random(&mut bytes);
    hex::encode(bytes)
}

/// PKCE's `BASE64URL(SHA256(verifier))`.
fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()))
}
