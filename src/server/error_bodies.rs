//! JSON bodies for hyper's own HTTP/1.1 errors.
//!
//! hyper answers a request it cannot parse by itself — 400 (method, URI, version or a header), 414 (URI
//! too long), 431 (header larger than its buffer) — with an empty body, and has no hook to give one
//! (hyper 1.x, `Server::on_error` in `proto/h1/role.rs`). Every error of the webhook port carries a
//! `metav1.Status` JSON body, so [`ErrorBodies`] sits between hyper and the TLS stream and replaces such
//! a response while it is written. hyper writes one response head per request it hands to the service;
//! a final head written when every handed request already has one is hyper's own.

use std::{
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::activity::Activity;

/// Largest request header (HTTP/1.1 buffer, h2 header list).
pub(super) const MAX_HEADER_BYTES: usize = 64 * 1024;

/// An HTTP/1.1 connection's stream, with hyper's own error responses given JSON `Status` bodies.
pub(super) struct ErrorBodies<S> {
    inner: S,
    activity: Arc<Activity>,
    /// Final (non-1xx) response heads written so far.
    heads: u64,
    /// The replacement response still to write, and how much of it is written.
    pending: Vec<u8>,
    sent: usize,
}

impl<S> ErrorBodies<S> {
    pub(super) fn new(inner: S, activity: Arc<Activity>) -> Self {
        ErrorBodies {
            inner,
            activity,
            heads: 0,
            pending: Vec::new(),
            sent: 0,
        }
    }
}

/// The status of `buf` if it starts with an HTTP/1.x response head.
fn response_status(buf: &[u8]) -> Option<u16> {
    let rest = buf.strip_prefix(b"HTTP/1.")?;
    let code = rest.get(2..5)?;
    std::str::from_utf8(code).ok()?.parse().ok()
}

/// The response to send instead of hyper's empty-bodied `status`.
fn replacement(status: u16) -> Vec<u8> {
    let (reason, message) = match status {
        431 => (
            "RequestHeaderFieldsTooLarge",
            format!("the request header is larger than {} bytes", MAX_HEADER_BYTES),
        ),
        414 => ("RequestURITooLong", "the request URI is too long".to_string()),
        _ => (
            "BadRequest",
            "the request is not valid HTTP/1.1 (its method, URI, version or a header)".to_string(),
        ),
    };
    let body = super::router::status_body(status, reason, &message);
    let phrase = axum::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error");
    let mut out = format!(
        "HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

impl<S: AsyncWrite + Unpin> ErrorBodies<S> {
    /// Writes what is left of a replacement response.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.sent < self.pending.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        Ok(()).into()
    }

    /// Whether `buf`, starting with a final response head of `status`, is hyper's own error: a 4xx
    /// written alone (no body follows it) when every request handed to the service has had its head.
    fn is_own_error(&self, status: u16, buf: &[u8]) -> bool {
        let head_only =
            buf.len() >= 4 && buf.windows(4).position(|w| w == b"\r\n\r\n") == Some(buf.len() - 4);
        status >= 400 && head_only && self.heads >= self.activity.requests()
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for ErrorBodies<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ErrorBodies<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        // A final (non-1xx) response head at the start of `buf`.
        let head = response_status(buf).filter(|&status| status >= 200);
        if let Some(status) = head
            && this.is_own_error(status, buf)
        {
            tracing::debug!(
                status,
                "unparseable HTTP/1.1 request; answering with a JSON Status"
            );
            this.heads += 1;
            this.pending = replacement(status);
            this.sent = 0;
            // The rest is written now or by the flush that follows.
            if let Poll::Ready(Err(e)) = this.poll_pending(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        let written = Pin::new(&mut this.inner).poll_write(cx, buf);
        // Counted once written: a write that is retried is the same head.
        if head.is_some() && matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.heads += 1;
        }
        written
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        let bufs: Vec<&std::io::IoSlice<'_>> = bufs.iter().filter(|b| !b.is_empty()).collect();
        let Some(first) = bufs.first() else {
            return Poll::Ready(Ok(0));
        };
        if response_status(first).is_some() {
            // A head goes through `poll_write` alone, so it is counted (and replaced if need be).
            return Pin::new(this).poll_write(cx, first);
        }
        // Up to the next head, which the next call starts with.
        let upto = bufs
            .iter()
            .position(|b| response_status(b).is_some())
            .unwrap_or(bufs.len());
        let slices: Vec<std::io::IoSlice<'_>> =
            bufs[..upto].iter().map(|b| std::io::IoSlice::new(b)).collect();
        Pin::new(&mut this.inner).poll_write_vectored(cx, &slices)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_recognised_and_replacements_are_json_status() {
        assert_eq!(
            response_status(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            Some(431)
        );
        assert_eq!(response_status(b"HTTP/1.1 100 Continue\r\n\r\n"), Some(100));
        assert_eq!(response_status(b"{\"kind\":\"Status\"}"), None);
        let out = String::from_utf8(replacement(431)).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            "{head}"
        );
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let status: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(status["kind"], "Status");
        assert_eq!(status["code"], 431);
        assert_eq!(status["reason"], "RequestHeaderFieldsTooLarge");
    }
}
