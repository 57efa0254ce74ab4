//! The gate in front of every route of the viewer. In order:
//!
//! 1. `Host` names 127.0.0.1 or localhost on this port (a DNS-rebinding page is refused).
//! 2. The session: the random per-run token in the query (`?t=`, the printed URL), or the
//!    session cookie it sets. The cookie's value is a second random value, not the printed
//!    token, and its `Path` is the viewer's random per-run path prefix ([`super::page::Site`]):
//!    a browser sends it only to URLs under that prefix, so other local servers the user
//!    opens never receive it (a `__Host-` name would scope it to this port, but browsers
//!    accept that prefix only with `Secure`, which needs HTTPS).
//! 3. Fetch metadata: a request that changes something (any method but GET/HEAD) must come
//!    from this page itself. Browsers send `Origin` on every such request and `Sec-Fetch-Site`
//!    on every request, so: an `Origin` other than `http://<Host>` is refused (an opaque
//!    `null` too), and a `Sec-Fetch-Site` other than `same-origin` is refused. A page on any
//!    other local port is `same-site` (cookies are not port-isolated), so "same site" is not
//!    enough. A client that sends neither header is not a browser (curl, a script): it still
//!    needs the session cookie and the form token below. A GET that another local page loads
//!    as a subresource (`same-site`/`cross-site`, not a navigation) is refused as well, so
//!    another page cannot probe the viewer with `<img>` or `<script>`. No GET route writes:
//!    `/forget` without a post is the engine's dry run.
//! 4. Every change carries the per-run form token (`csrf`, a hidden field in each of the
//!    page's forms; another origin cannot read the pages to learn it), compared in constant
//!    time. The body is read here, bounded in size and time, and handed on unchanged.
//!
//! Every refusal is a 403 page with one sentence.

use super::{Ctx, Shared, UiError};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// Largest request body read (a memory file is at most 256 KiB; axum's own default is 2 MB).
pub(super) const MAX_BODY: usize = 2 << 20;

/// The form field every post carries the form token in.
pub(super) const CSRF_FIELD: &str = "csrf";

/// A fresh random value: 32 hex characters (128 bits from the OS).
pub(super) fn new_secret() -> anyhow::Result<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| anyhow::anyhow!("no OS randomness: {e}"))?;
    Ok(hex::encode(b))
}

/// Equal without an early exit on the first differing byte; an empty secret never matches.
pub(super) fn same_secret(given: &str, secret: &str) -> bool {
    !secret.is_empty()
        && given.len() == secret.len()
        && given
            .bytes()
            .zip(secret.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn form_value(raw: &[u8], name: &str) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(raw).ok()?;
    pairs.into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn query_token(uri: &axum::http::Uri) -> Option<String> {
    form_value(uri.query()?.as_bytes(), "t")
}

fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

fn forbidden(why: &str) -> Response {
    UiError {
        status: StatusCode::FORBIDDEN,
        message: why.to_string(),
    }
    .into_response()
}

fn header_str<'a>(h: &'a HeaderMap, name: &header::HeaderName) -> Option<&'a str> {
    h.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// Step 1: the `Host` the request names, when it is one this server answers to.
fn known_host<'a>(ctx: &Ctx, h: &'a HeaderMap) -> Option<&'a str> {
    header_str(h, &header::HOST).filter(|host| {
        *host == format!("127.0.0.1:{}", ctx.port) || *host == format!("localhost:{}", ctx.port)
    })
}

/// Step 3: why a request from another page is refused (`None`: it may go on).
fn foreign(method: &Method, host: &str, h: &HeaderMap) -> Option<&'static str> {
    let site = header_str(h, &header::HeaderName::from_static("sec-fetch-site"));
    if method == Method::GET || method == Method::HEAD {
        let mode = header_str(h, &header::HeaderName::from_static("sec-fetch-mode"));
        let other = matches!(site, Some("same-site" | "cross-site"));
        return (other && mode != Some("navigate"))
            .then_some("another site's page may not load this viewer's pages or files");
    }
    if let Some(origin) = header_str(h, &header::ORIGIN)
        && origin.strip_prefix("http://") != Some(host)
    {
        return Some("this change was sent from another page (its Origin is not this viewer)");
    }
    if site.is_some_and(|s| s != "same-origin") {
        return Some("this change was sent from another page (Sec-Fetch-Site is not same-origin)");
    }
    None
}

/// Step 4: the body of a change, read whole (bounded), and whether it holds the form token.
async fn read_form(
    ctx: &Ctx,
    body: Body,
    content_length: Option<u64>,
) -> Result<(Bytes, bool), Response> {
    if content_length.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(
            UiError::too_large(format!("the request body is over {} MiB", MAX_BODY >> 20))
                .into_response(),
        );
    }
    let read = tokio::time::timeout(ctx.read_timeout, axum::body::to_bytes(body, MAX_BODY));
    let bytes = match read.await {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => {
            return Err(
                UiError::bad(format!("could not read the request body: {e}")).into_response(),
            );
        }
        Err(_) => {
            return Err(UiError {
                status: StatusCode::REQUEST_TIMEOUT,
                message: format!(
                    "the request body did not arrive within {}",
                    seconds(ctx.read_timeout)
                ),
            }
            .into_response());
        }
    };
    let ok = form_value(&bytes, CSRF_FIELD).is_some_and(|t| same_secret(&t, &ctx.csrf));
    Ok((bytes, ok))
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// The gate itself (see the module doc for the steps and their reasons).
pub(super) async fn guard(State(ctx): State<Shared>, req: Request, next: Next) -> Response {
    let Some(host) = known_host(&ctx, req.headers()).map(str::to_string) else {
        return forbidden("this page answers only to 127.0.0.1 and localhost on its own port");
    };
    let from_query = query_token(req.uri()).is_some_and(|t| same_secret(&t, &ctx.token));
    let from_cookie = cookie_value(req.headers(), &ctx.cookie_name())
        .is_some_and(|v| same_secret(&v, &ctx.session));
    if !from_query && !from_cookie {
        return forbidden(
            "missing or wrong access token: open the URL `memctl ui` printed (it holds the token)",
        );
    }
    if let Some(why) = foreign(req.method(), &host, req.headers()) {
        return forbidden(why);
    }
    let req = if req.method() == Method::GET || req.method() == Method::HEAD {
        req
    } else {
        let (parts, body) = req.into_parts();
        let length =
            header_str(&parts.headers, &header::CONTENT_LENGTH).and_then(|v| v.parse().ok());
        match read_form(&ctx, body, length).await {
            Err(resp) => return resp,
            Ok((_, false)) => {
                return forbidden("missing or wrong form token: reload the page and try again");
            }
            Ok((bytes, true)) => Request::from_parts(parts, Body::from(bytes)),
        }
    };
    let mut resp = next.run(req).await;
    secure_headers(resp.headers_mut());
    if !from_cookie && let Ok(v) = HeaderValue::from_str(&ctx.set_cookie()) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

/// What every answer carries: only this page's own script and styles, never framed, no
/// `Referer` to other sites (the token is in the first URL), never cached. Not `no-referrer`:
/// under it browsers send `Origin: null` on the page's own posts, which step 3 refuses.
fn secure_headers(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_32_hex_and_differ() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abcd", "abcd"));
        assert!(!same_secret("abcd", "abce"));
        assert!(!same_secret("abcd", "abc"));
        assert!(!same_secret("", ""), "an unset secret matches nothing");
    }

    #[test]
    fn cookie_value_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; memctl_ui_9=tok; b=2"),
        );
        assert_eq!(cookie_value(&h, "memctl_ui_9").as_deref(), Some("tok"));
        assert_eq!(cookie_value(&h, "memctl_ui_8"), None);
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn changes_must_come_from_this_origin() {
        let host = "127.0.0.1:8080";
        let post = Method::POST;
        let ok = [
            headers(&[]),
            headers(&[("origin", "http://127.0.0.1:8080")]),
            headers(&[
                ("origin", "http://127.0.0.1:8080"),
                ("sec-fetch-site", "same-origin"),
            ]),
            headers(&[("sec-fetch-site", "same-origin")]),
        ];
        for h in &ok {
            assert_eq!(foreign(&post, host, h), None, "{h:?}");
        }
        let refused = [
            headers(&[("origin", "http://evil.example")]),
            headers(&[("origin", "http://127.0.0.1:3000")]),
            headers(&[("origin", "http://localhost:8080")]),
            headers(&[("origin", "https://127.0.0.1:8080")]),
            headers(&[("origin", "null")]),
            headers(&[("sec-fetch-site", "cross-site")]),
            headers(&[("sec-fetch-site", "same-site")]),
            headers(&[("sec-fetch-site", "none")]),
            headers(&[
                ("origin", "http://127.0.0.1:8080"),
                ("sec-fetch-site", "same-site"),
            ]),
        ];
        for h in &refused {
            assert!(foreign(&post, host, h).is_some(), "{h:?}");
        }
        assert!(foreign(&Method::DELETE, host, &refused[0]).is_some());
    }

    #[test]
    fn other_pages_may_navigate_here_but_not_embed() {
        let host = "127.0.0.1:8080";
        let nav = headers(&[
            ("sec-fetch-site", "same-site"),
            ("sec-fetch-mode", "navigate"),
        ]);
        let img = headers(&[
            ("sec-fetch-site", "same-site"),
            ("sec-fetch-mode", "no-cors"),
        ]);
        let own = headers(&[
            ("sec-fetch-site", "same-origin"),
            ("sec-fetch-mode", "no-cors"),
        ]);
        assert_eq!(foreign(&Method::GET, host, &nav), None);
        assert_eq!(foreign(&Method::GET, host, &own), None);
        assert!(foreign(&Method::GET, host, &img).is_some());
        assert!(foreign(&Method::HEAD, host, &img).is_some());
    }
}
