//! One plain-HTTP GET from the node agent, on hyper's HTTP/1.1 client: a CRR preStop `httpGet` hook and
//! an `httpGet` probe ask it for the answer's status code.

use hyper::client::conn::http1;
use hyper::header::{HOST, HeaderName, HeaderValue, USER_AGENT};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// GETs `http://host:port/path` with `User-Agent: user_agent` and `headers`, one connection, closed
/// after the answer; returns its status code, or why there is none. The caller bounds the time.
pub async fn status(
    host: &str,
    port: u16,
    path: &str,
    user_agent: &str,
    headers: &[(String, String)],
) -> Result<u16, String> {
    let mut request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(HOST, format!("{host}:{port}"))
        .header(USER_AGENT, user_agent)
        .header("connection", "close");
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| format!("header {name:?}: {e}"))?;
        let value = HeaderValue::from_str(value).map_err(|e| format!("header {name}: {e}"))?;
        request = request.header(name, value);
    }
    let request = request.body(String::new()).map_err(|e| e.to_string())?;
    let stream = TcpStream::connect((host, port))
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    // The connection is driven beside the request and ends with it (`Connection: close`).
    let driver = tokio::spawn(connection);
    let answer = sender.send_request(request).await.map_err(|e| e.to_string());
    drop(sender);
    driver.abort();
    Ok(answer?.status().as_u16())
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;

    use super::*;

    /// A server answering one request with `answer`; returns its port and the request it read.
    async fn serve_once(answer: &'static str) -> (u16, tokio::task::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let read = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = vec![0; 4096];
            let n = s.read(&mut buf).await.unwrap();
            s.write_all(answer.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&buf[..n]).into_owned()
        });
        (port, read)
    }

    #[tokio::test]
    async fn the_status_code_is_read_and_the_request_carries_host_agent_and_headers() {
        for (answer, code) in [
            ("HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n", 204),
            (
                "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 2\r\n\r\nno",
                503,
            ),
        ] {
            let (port, read) = serve_once(answer).await;
            let headers = [("X-Probe".to_string(), "yes".to_string())];
            assert_eq!(
                status("127.0.0.1", port, "/healthz?a=b", "kube-probe", &headers).await,
                Ok(code)
            );
            let request = read.await.unwrap().to_ascii_lowercase();
            assert!(request.starts_with("get /healthz?a=b http/1.1\r\n"), "{request}");
            for line in [
                format!("host: 127.0.0.1:{port}"),
                "user-agent: kube-probe".into(),
                "x-probe: yes".into(),
            ] {
                assert!(request.contains(&line), "{line} in {request}");
            }
        }
    }

    #[tokio::test]
    async fn no_server_or_no_http_answer_is_an_error() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        assert!(
            status("127.0.0.1", port, "/", "kruise-daemon", &[])
                .await
                .is_err()
        );
        let (port, _read) = serve_once("SSH-2.0-OpenSSH\r\n").await;
        assert!(
            status("127.0.0.1", port, "/", "kruise-daemon", &[])
                .await
                .is_err()
        );
        let bad = [("bad header".to_string(), "x".to_string())];
        assert!(status("127.0.0.1", 1, "/", "kube-probe", &bad).await.is_err());
    }
}
