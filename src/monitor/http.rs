//! The HTTP side of `--http`: hyper (HTTP/1.1) on the monitor's tokio runtime, one task per
//! connection, optional TLS (tokio-rustls) and bearer-token check, and the routes.
//!
//! Limits: a request's head must arrive within [`HEADER_WAIT`] and fit hyper's smallest read
//! buffer (8 KiB), or the connection is closed (hyper answers 400 or 431 where it can); only
//! `GET` and `HEAD` are answered (405 otherwise); a request body is never read.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

use super::{lock, State};

/// How long a client has to send a request's head.
pub(crate) const HEADER_WAIT: Duration = Duration::from_secs(10);

const INDEX_HTML: &str = include_str!("assets/index.html");
const DASHBOARD_JS: &str = include_str!("assets/dashboard.js");
const DASHBOARD_CSS: &str = include_str!("assets/dashboard.css");
const UPLOT_JS: &str = include_str!("assets/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("assets/uPlot.min.css");

/// Accepts connections until the runtime shuts down.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    state: Arc<State>,
) {
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // Out of descriptors or a connection reset before it was accepted: try again shortly.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            match acceptor {
                Some(acceptor) => {
                    if let Ok(Ok(tls)) = tokio::time::timeout(HEADER_WAIT, acceptor.accept(stream)).await {
                        connection(TokioIo::new(tls), state).await;
                    }
                }
                None => connection(TokioIo::new(stream), state).await,
            }
        });
    }
}

async fn connection<I>(io: I, state: Arc<State>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(respond(&state, &request)) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_WAIT)
        .max_buf_size(8192)
        .serve_connection(io, service)
        .await;
}

type Body = Full<Bytes>;

fn response(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static("default-src 'self'"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn text(status: StatusCode, message: &str) -> Response<Body> {
    response(status, "text/plain; charset=utf-8", format!("{message}\n"))
}

fn json(value: &impl serde::Serialize) -> Response<Body> {
    match serde_json::to_vec(value) {
        Ok(body) => response(StatusCode::OK, "application/json", body),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, &format!("cannot encode: {e}")),
    }
}

/// Answers one request.
pub(crate) fn respond(state: &State, request: &Request<Incoming>) -> Response<Body> {
    let headers = request.headers();
    respond_to(state, request.method(), request.uri(), headers.get(AUTHORIZATION), headers.get(hyper::header::ACCEPT))
}

fn respond_to(
    state: &State,
    method: &Method,
    uri: &hyper::Uri,
    authorization: Option<&HeaderValue>,
    accept: Option<&HeaderValue>,
) -> Response<Body> {
    if method != Method::GET && method != Method::HEAD {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
        r.headers_mut().insert(hyper::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let path = uri.path();
    // The page and its static files carry no data; everything else needs the token.
    match path {
        "/" | "/index.html" => return response(StatusCode::OK, "text/html; charset=utf-8", INDEX_HTML),
        "/dashboard.js" => return response(StatusCode::OK, "text/javascript; charset=utf-8", DASHBOARD_JS),
        "/dashboard.css" => return response(StatusCode::OK, "text/css; charset=utf-8", DASHBOARD_CSS),
        "/uPlot.iife.min.js" => return response(StatusCode::OK, "text/javascript; charset=utf-8", UPLOT_JS),
        "/uPlot.min.css" => return response(StatusCode::OK, "text/css; charset=utf-8", UPLOT_CSS),
        // Browsers ask for one; there is none.
        "/favicon.ico" => return response(StatusCode::NO_CONTENT, "image/x-icon", Bytes::new()),
        _ => {}
    }
    if let Some(token) = &state.token {
        let expected = format!("Bearer {token}");
        if authorization.map(|v| v.as_bytes()) != Some(expected.as_bytes()) {
            let mut r = text(StatusCode::UNAUTHORIZED, "an Authorization: Bearer TOKEN header is required");
            r.headers_mut().insert(hyper::header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return r;
        }
    }
    match path {
        "/metrics" => {
            let profile = state.profiler.as_ref().map(|p| p.snapshot());
            let live = lock(&state.run).live.as_ref().map(|l| l.progress.clone());
            let external: Vec<(String, String, u64)> =
                lock(&state.external).iter().map(|e| (e.name.clone(), e.help.clone(), (e.read)())).collect();
            match state.metrics.encode(profile.as_ref(), live.as_ref().map(|p| &p.counters), &external) {
                // OpenMetrics to whoever asks for it (Prometheus does), the classic text format
                // otherwise.
                Ok(body)
                    if accept.is_some_and(|a| a.to_str().is_ok_and(|a| a.contains("application/openmetrics-text"))) =>
                {
                    response(StatusCode::OK, "application/openmetrics-text; version=1.0.0; charset=utf-8", body)
                }
                Ok(body) => {
                    response(StatusCode::OK, "text/plain; version=0.0.4; charset=utf-8", super::metrics::classic(&body))
                }
                Err(_) => text(StatusCode::INTERNAL_SERVER_ERROR, "cannot encode the metrics"),
            }
        }
        "/api/status" => json(&status(state)),
        "/api/epochs" => {
            let since = match query_u64(uri.query(), "since") {
                Ok(s) => s.unwrap_or(0),
                Err(e) => return text(StatusCode::BAD_REQUEST, &e),
            };
            let run = lock(&state.run);
            // Epochs are in order: skip those before `since`.
            let start = run.epochs.partition_point(|e| e.epoch < since);
            let epochs: Vec<_> = run.epochs.range(start..).collect();
            json(&epochs)
        }
        "/api/profile" => match &state.profiler {
            Some(p) => json(&p.snapshot()),
            None => text(StatusCode::NOT_FOUND, "this run has no profile"),
        },
        "/api/components" => match &state.components {
            Some(c) => {
                let mut c = lock(c);
                c.catch_up();
                json(&serde_json::json!({
                    "applied_epochs": c.applied_epochs,
                    "components": c.size.len(),
                    "vertices": c.label.len(),
                    "distribution": c.distribution(),
                }))
            }
            None => text(StatusCode::NOT_FOUND, "this run maintains no WCC"),
        },
        _ => text(StatusCode::NOT_FOUND, &format!("no such page: {path}")),
    }
}

/// `name=N` from a query string.
fn query_u64(query: Option<&str>, name: &str) -> Result<Option<u64>, String> {
    let Some(query) = query else { return Ok(None) };
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == name {
            return v.parse::<u64>().map(Some).map_err(|_| format!("{name}={v}: not a whole number"));
        }
    }
    Ok(None)
}

fn status(state: &State) -> serde_json::Value {
    let run = lock(&state.run);
    let last = run.epochs.back();
    serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "configuration": state.configuration,
        "outputs": run.outputs,
        "uptime_seconds": state.started.elapsed().as_secs_f64(),
        "live": run.live.as_ref().map(|l| {
            let c = &l.progress.counters;
            let get = crate::live::LiveCounters::get;
            serde_json::json!({
                "first_epoch": l.next_epoch,
                "address": l.local_addr.map(|a| a.to_string()),
                "producers": get(&c.producers),
                "wal_bytes": get(&c.wal_bytes),
                "wal_appends": get(&c.wal_appends),
                "snapshots": get(&c.snapshots),
            })
        }),
        "current_epoch": run.totals.current_epoch,
        "watermark": run.totals.watermark,
        "epochs_behind": last.and_then(|e| e.epochs_behind),
        "totals": run.totals,
        "profile": state.profiler.is_some(),
        "finished": run.summary.is_some(),
        "summary": run.summary,
    })
}

#[cfg(test)]
mod tests {
    use super::query_u64;

    #[test]
    fn query_parameters() {
        assert_eq!(query_u64(Some("since=12"), "since"), Ok(Some(12)));
        assert_eq!(query_u64(Some("a=1&since=3"), "since"), Ok(Some(3)));
        assert_eq!(query_u64(Some("a=1"), "since"), Ok(None));
        assert!(query_u64(Some("since=x"), "since").is_err());
    }
}
