//! TLS on a team service's endpoint: the service's certificate and key (PEM files, `mcpflow
//! service --listen ADDR --tls-cert FILE --tls-key FILE`), and the studio's trust in it
//! (`MCPFLOW_SERVICE=tls://HOST:PORT`: the system's roots, or the CA of
//! `MCPFLOW_SERVICE_CA`). rustls with ring, as every HTTPS client of mcpflow.

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::path::Path;
use std::sync::Arc;

/// The environment variable naming a PEM file of CA certificates the studio trusts for a
/// team service over TLS, instead of the system's roots (a team's own CA, a self-signed
/// certificate).
pub const CA_ENV: &str = "MCPFLOW_SERVICE_CA";

/// The service's TLS side (its certificate and key).
#[derive(Clone)]
pub struct Acceptor(pub(crate) tokio_rustls::TlsAcceptor);

/// A studio's TLS side (the roots it trusts).
#[derive(Clone)]
pub struct Connector(pub(crate) tokio_rustls::TlsConnector);

impl std::fmt::Debug for Acceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Acceptor(…)")
    }
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Connector(…)")
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The service's side: its certificate chain and private key, read from PEM files. The
/// error names the file and what is wrong with it.
pub fn acceptor(cert: &Path, key: &Path) -> Result<Acceptor, String> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(Iterator::collect)
        .map_err(|e| format!("--tls-cert {}: not a PEM certificate chain ({e})", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("--tls-cert {}: no certificate in it", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("--tls-key {}: not a PEM private key ({e})", key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("--tls-cert and --tls-key do not make a TLS identity: {e}"))?;
    Ok(Acceptor(tokio_rustls::TlsAcceptor::from(Arc::new(config))))
}

/// The studio's side: trusts the CA certificates in `ca` (PEM), else the system's roots.
pub fn connector(ca: Option<&Path>) -> Result<Connector, String> {
    let mut roots = rustls::RootCertStore::empty();
    match ca {
        Some(file) => {
            let certs: Vec<CertificateDer<'static>> =
                CertificateDer::pem_file_iter(file)
                    .and_then(Iterator::collect)
                    .map_err(|e| format!("{CA_ENV} {}: not a PEM certificate file ({e})", file.display()))?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(format!("{CA_ENV} {}: no usable CA certificate in it", file.display()));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(format!(
                    "this system has no root certificates to check the team service's certificate with; install \
                     them (Debian: ca-certificates) or name the team's CA in {CA_ENV}"
                ));
            }
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Connector(tokio_rustls::TlsConnector::from(Arc::new(config))))
}

/// The name a certificate must carry for `host` (a DNS name or an IP address).
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_owned()).map_err(|e| format!("`{host}` is not a host name for TLS: {e}"))
}
