//! What of a server's URL a message may show: never its userinfo, query or fragment, where
//! keys are kept, and only its origin where the path may hold one.

use reqwest::Url;

/// A URL without userinfo, query or fragment: scheme, host, port and path. Text that is not a
/// URL is `<invalid url>`.
///
/// # Security
///
/// Some services put the key in the path (`https://host/mcp/KEY/sse`): messages and `Debug`
/// forms in this crate show [`origin`] only.
///
/// # Examples
///
/// ```
/// use mcppin_client::http::redact_url;
///
/// assert_eq!(
///     redact_url("https://me:pw@api.example.com:8443/mcp?key=s3cret#x"),
///     "https://api.example.com:8443/mcp"
/// );
/// ```
#[must_use]
pub fn redact_url(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        Err(_) => "<invalid url>".to_owned(),
    }
}

/// The origin of a URL, as messages show it: scheme, host and port only
/// (`https://api.example.com:8443`). Text that is not a URL is `<invalid url>`.
///
/// # Examples
///
/// ```
/// use mcppin_client::http::origin;
///
/// assert_eq!(origin("https://me:pw@api.example.com:8443/mcp/k3y/sse?key=s"), "https://api.example.com:8443");
/// assert_eq!(origin("not a url"), "<invalid url>");
/// ```
#[must_use]
pub fn origin(url: &str) -> String {
    match Url::parse(url) {
        Ok(url) if url.has_host() => url.origin().ascii_serialization(),
        Ok(url) => format!("{}:", url.scheme()),
        Err(_) => "<invalid url>".to_owned(),
    }
}
