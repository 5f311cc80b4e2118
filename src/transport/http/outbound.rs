//! Requests to a remote Streamable HTTP server: one pooled hyper client, https through rustls
//! (ring) with the system's roots and an optional extra CA file, used by the MCP client
//! (`check --url`, `snapshot --url`, `verify --url`, passthrough) and the record proxy alike.
//!
//! Extra trust (docs/http.md, "TLS"): `MCP_CASSETTE_EXTRA_CA_CERTS` names a PEM file of CA
//! certificates added to the system roots; `NODE_EXTRA_CA_CERTS` is read when ours is unset, so a
//! setup made for the reference tool keeps working; `SSL_CERT_FILE` / `SSL_CERT_DIR` replace the
//! system roots as they do for OpenSSL-based tools.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use http::{Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

/// The environment variables that name an extra CA file, in the order they are read.
pub const EXTRA_CA_VARS: [&str; 2] = ["MCP_CASSETTE_EXTRA_CA_CERTS", "NODE_EXTRA_CA_CERTS"];

#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    #[error("failed to read the extra CA file {path} (named by {var}): {message}")]
    ExtraCa {
        path: PathBuf,
        var: &'static str,
        message: String,
    },
    #[error(
        "no trusted root certificates: the system has none readable and no extra CA file was given"
    )]
    NoRoots,
    #[error("failed to set up TLS: {0}")]
    Tls(String),
    /// The request could not be made or its answer's head not read (refused, reset, DNS, TLS).
    #[error("{0}")]
    Request(String),
}

/// A URL the user gave as a Streamable HTTP endpoint was not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("\"{0}\" is not a URL")]
    Unparseable(String),
    #[error("\"{0}\" is not an http:// or https:// URL")]
    Scheme(String),
    #[error("\"{0}\" names no host")]
    NoHost(String),
}

/// Parses an endpoint URL: absolute, `http` or `https`, with a host.
pub fn parse_url(text: &str) -> Result<Uri, UrlError> {
    let uri: Uri = text
        .parse()
        .map_err(|_| UrlError::Unparseable(text.to_owned()))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(UrlError::Scheme(text.to_owned())),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(UrlError::NoHost(text.to_owned()));
    }
    Ok(uri)
}

/// A pooled client for one process; cheap to clone (the pool is shared).
#[derive(Clone, Debug)]
pub struct Outbound {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl Outbound {
    /// A client for `target`: TLS roots are loaded only when it is an https URL, so a plain
    /// http session never reads the system's certificate store.
    pub fn for_url(target: &Uri) -> Result<Outbound, OutboundError> {
        let roots = if target.scheme_str() == Some("https") {
            load_roots(&|var| std::env::var_os(var).map(PathBuf::from))?
        } else {
            RootCertStore::empty()
        };
        let provider = rustls::crypto::ring::default_provider();
        let config = rustls::ClientConfig::builder_with_provider(provider.into())
            .with_safe_default_protocol_versions()
            .map_err(|err| OutboundError::Tls(err.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(config)
            .https_or_http()
            .enable_http1()
            .build();
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ok(Outbound { client })
    }

    /// Sends one request; the answer's head is back when this returns, its body streams.
    pub async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, OutboundError> {
        self.client
            .request(request)
            .await
            .map_err(|err| OutboundError::Request(describe(&err)))
    }
}

/// The error and its causes in one line: hyper-util's own message is only "client error
/// (Connect)", and the cause ("Connection refused") is what a user needs.
fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The system's roots (or `SSL_CERT_FILE`/`SSL_CERT_DIR`) plus the extra CA file, if named.
fn load_roots(env: &dyn Fn(&str) -> Option<PathBuf>) -> Result<RootCertStore, OutboundError> {
    let mut roots = RootCertStore::empty();
    // Unreadable entries in the system store are skipped, as every TLS client does; only an
    // empty result is an error, below.
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    for var in EXTRA_CA_VARS {
        let Some(path) = env(var).filter(|p| !p.as_os_str().is_empty()) else {
            continue;
        };
        for cert in read_pem(&path, var)? {
            roots
                .add(cert)
                .map_err(|err| extra_ca_error(&path, var, err.to_string()))?;
        }
        break;
    }
    if roots.is_empty() {
        return Err(OutboundError::NoRoots);
    }
    Ok(roots)
}

fn read_pem(path: &Path, var: &'static str) -> Result<Vec<CertificateDer<'static>>, OutboundError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|err| extra_ca_error(path, var, err.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| extra_ca_error(path, var, err.to_string()))?;
    if certs.is_empty() {
        return Err(extra_ca_error(
            path,
            var,
            "it holds no PEM certificate".to_owned(),
        ));
    }
    Ok(certs)
}

fn extra_ca_error(path: &Path, var: &'static str, message: String) -> OutboundError {
    OutboundError::ExtraCa {
        path: path.to_owned(),
        var,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_http_with_a_host() {
        assert!(parse_url("http://127.0.0.1:6402/mcp").is_ok());
        assert!(parse_url("https://example.com").is_ok());
        assert_eq!(
            parse_url("ftp://host/x"),
            Err(UrlError::Scheme("ftp://host/x".into()))
        );
        assert_eq!(
            parse_url("host:80"),
            Err(UrlError::Scheme("host:80".into()))
        );
        assert_eq!(
            parse_url("/just/a/path"),
            Err(UrlError::Scheme("/just/a/path".into()))
        );
        assert!(matches!(
            parse_url("not a url"),
            Err(UrlError::Unparseable(_))
        ));
    }

    #[test]
    fn an_unreadable_extra_ca_is_named_with_its_variable() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.pem");
        let env = |var: &str| (var == "NODE_EXTRA_CA_CERTS").then(|| missing.clone());
        let err = load_roots(&env).unwrap_err().to_string();
        assert!(
            err.contains("nope.pem") && err.contains("NODE_EXTRA_CA_CERTS"),
            "{err}"
        );

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let env = |var: &str| (var == "MCP_CASSETTE_EXTRA_CA_CERTS").then(|| empty.clone());
        let err = load_roots(&env).unwrap_err().to_string();
        assert!(err.contains("no PEM certificate"), "{err}");
    }
}
