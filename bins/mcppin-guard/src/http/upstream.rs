//! The connection to the server behind the guard: HTTP or HTTPS (the TLS of
//! `mcppin_client::tls_config`: the system's roots and any `--upstream-ca`), a connect timeout,
//! and a pool of kept-alive connections.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use mcppin_core::http::{MAX_HEADERS, beside_uri};

/// The upstream URL as messages show it: without its query and userinfo, which may hold a
/// token.
fn shown(uri: &Uri) -> String {
    mcppin_client::http::redact_url(&uri.to_string())
}

/// The server behind the guard.
#[derive(Debug)]
pub(crate) struct Upstream {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    uri: Uri,
    timeout: Duration,
}

/// Why a request to the server failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// No answer head within the timeout.
    Timeout,
    /// The connection or the exchange failed (the message names no header or body).
    Broken(String),
}

impl Upstream {
    /// A client for `uri` (`http` or `https`), trusting the system's roots and the
    /// certificates of the `ca` PEM files.
    pub(crate) fn new(uri: Uri, ca: &[PathBuf], timeout: Duration) -> anyhow::Result<Self> {
        match uri.scheme_str() {
            Some("http" | "https") => {}
            _ => anyhow::bail!(
                "--upstream {}: the URL must start with http:// or https://",
                shown(&uri)
            ),
        }
        anyhow::ensure!(
            uri.host().is_some(),
            "--upstream {}: the URL has no host",
            shown(&uri)
        );
        let mut extra = Vec::new();
        for path in ca {
            let named = || format!("--upstream-ca {}", path.display());
            let mut roots = rustls::RootCertStore::empty();
            // Read to a bound and without waiting on a pipe, as every file the guard reads.
            let pem =
                mcppin_cli::read_at_most(path, mcppin_cli::MAX_DOCUMENT).with_context(named)?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.with_context(named)?;
                // Checked here, file by file, so that an error names its file.
                roots.add(cert.clone()).with_context(named)?;
                extra.push(cert);
            }
            anyhow::ensure!(
                !roots.is_empty(),
                "--upstream-ca {}: no PEM certificate in it",
                path.display()
            );
        }
        let tls = match mcppin_client::tls_config(extra) {
            Ok(tls) => tls,
            // A system without a trust store still reaches a plain HTTP upstream (the TLS
            // configuration is then never used).
            Err(_) if uri.scheme_str() == Some("http") => {
                rustls::ClientConfig::builder_with_provider(Arc::new(
                    rustls::crypto::ring::default_provider(),
                ))
                .with_safe_default_protocol_versions()
                .context("the TLS configuration")?
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth()
            }
            Err(err) => {
                return Err(err).context(
                    "the TLS configuration (the system's trust roots and any --upstream-ca)",
                );
            }
        };
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(timeout));
        http.set_nodelay(true);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .http1_max_buf_size(MAX_HEADERS)
            .build(connector);
        Ok(Self {
            client,
            uri,
            timeout,
        })
    }

    /// The path of the MCP endpoint (the guard serves the same one).
    pub(crate) fn endpoint_path(&self) -> &str {
        self.uri.path()
    }

    /// The URI of the MCP endpoint.
    pub(crate) fn uri(&self) -> &Uri {
        &self.uri
    }

    /// The URI of another path on the server (`/.well-known/...`); `None` for a path with a
    /// dot segment (a server resolving it could serve its MCP endpoint there).
    pub(crate) fn beside(&self, path_and_query: &str) -> Option<Uri> {
        beside_uri(&self.uri, path_and_query)
    }

    /// Sends a request; the answer's head arrives within the timeout or the request fails.
    pub(crate) async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, Failure> {
        match tokio::time::timeout(self.timeout, self.client.request(request)).await {
            Err(_) => Err(Failure::Timeout),
            Ok(Err(err)) => Err(Failure::Broken(error_chain(&err))),
            // The head's size is judged with the rest of it (`http::Exchange::head`).
            Ok(Ok(response)) => Ok(response),
        }
    }
}

/// An error with its causes, for stderr.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
