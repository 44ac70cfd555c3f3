//! One run of a probe: `exec` through CRI `ExecSync` with the probe's timeout, `tcpSocket` as a
//! connection to the pod IP, `httpGet` as a plain-HTTP GET to the pod IP (`User-Agent: kube-probe`,
//! `Accept: */*`; a status from 200 to 399 passes). `https` is not supported and fails with a
//! message. The answer is pass/fail and a message (output or error).

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_cri::Runtime;
use tokio::net::TcpStream;

use k8s_openapi::api::core::v1::Probe;

/// Runs `probe` once against container `id` of the pod at `ip`.
pub async fn run(runtime: &Runtime, id: &str, probe: &Probe, ip: &str, timeout: Duration) -> (bool, String) {
    if let Some(exec) = &probe.exec {
        let cmd: Vec<&str> = exec.command.iter().flatten().map(String::as_str).collect();
        return match runtime.exec_sync(id, &cmd, timeout).await {
            Ok(out) => {
                let mut message = String::from_utf8_lossy(&out.stdout).into_owned();
                message.push_str(&String::from_utf8_lossy(&out.stderr));
                (out.exit_code == 0, message.trim_end().to_string())
            }
            Err(e) => (false, e.to_string()),
        };
    }
    if ip.is_empty() {
        return (false, "the pod has no IP".into());
    }
    if let Some(tcp) = &probe.tcp_socket {
        let Some(port) = port(&tcp.port) else {
            return (false, format!("invalid port {:?}", tcp.port));
        };
        let address = format!("{ip}:{port}");
        return match tokio::time::timeout(timeout, TcpStream::connect(&address)).await {
            Ok(Ok(_)) => (true, String::new()),
            Ok(Err(e)) => (false, format!("dial tcp {address}: {e}")),
            Err(_) => (false, format!("dial tcp {address}: timeout after {timeout:?}")),
        };
    }
    if let Some(get) = &probe.http_get {
        let scheme = get.scheme.as_deref().unwrap_or("HTTP");
        if !scheme.eq_ignore_ascii_case("HTTP") {
            return (
                false,
                format!("httpGet scheme {scheme} is not supported by this agent"),
            );
        }
        let Some(port) = port(&get.port) else {
            return (false, format!("invalid port {:?}", get.port));
        };
        let path = get.path.as_deref().filter(|p| !p.is_empty()).unwrap_or("/");
        let headers: Vec<(String, String)> = get
            .http_headers
            .iter()
            .flatten()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect();
        return match tokio::time::timeout(timeout, http_get(ip, port, path, &headers)).await {
            Ok(result) => result,
            Err(_) => (
                false,
                format!("GET http://{ip}:{port}{path}: timeout after {timeout:?}"),
            ),
        };
    }
    (false, "the probe has no exec, tcpSocket or httpGet".into())
}

fn port(port: &IntOrString) -> Option<u16> {
    let n = match port {
        IntOrString::Int(n) => *n,
        // The manager resolves named ports; a numeric string is a number.
        IntOrString::String(s) => s.parse().ok()?,
    };
    u16::try_from(n).ok().filter(|n| *n > 0)
}

async fn http_get(host: &str, port: u16, path: &str, headers: &[(String, String)]) -> (bool, String) {
    let url = format!("http://{host}:{port}{path}");
    // As the kubelet: `Accept: */*` unless the probe sets its own.
    let mut headers = headers.to_vec();
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("accept"))
    {
        headers.push(("Accept".into(), "*/*".into()));
    }
    match crate::daemon::http_get::status(host, port, path, "kube-probe", &headers).await {
        Ok(code) if (200..400).contains(&code) => (true, String::new()),
        Ok(code) => (
            false,
            format!("GET {url}: HTTP probe failed with statuscode: {code}"),
        ),
        Err(e) => (false, format!("GET {url}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;
    use tokio::net::TcpListener;

    async fn serve_once(answer: &'static str) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0_u8; 1024];
            let n = s.read(&mut buf).await.unwrap();
            let request = String::from_utf8_lossy(&buf[..n]).into_owned();
            let request = request.to_ascii_lowercase();
            assert!(request.contains("user-agent: kube-probe\r\n"), "{request}");
            assert!(request.contains("accept: */*\r\n"), "{request}");
            s.write_all(answer.as_bytes()).await.unwrap();
        });
        port
    }

    #[tokio::test]
    async fn http_get_passes_on_2xx_3xx_and_fails_otherwise() {
        let ok = serve_once("HTTP/1.1 204 No Content\r\n\r\n").await;
        assert_eq!(
            http_get("127.0.0.1", ok, "/healthz", &[]).await,
            (true, String::new())
        );
        let bad = serve_once("HTTP/1.1 503 Service Unavailable\r\n\r\n").await;
        let (passed, message) = http_get("127.0.0.1", bad, "/healthz", &[]).await;
        assert!(!passed);
        assert!(message.contains("statuscode: 503"), "{message}");
    }

    #[test]
    fn ports_are_numbers() {
        assert_eq!(port(&IntOrString::Int(80)), Some(80));
        assert_eq!(port(&IntOrString::String("8080".into())), Some(8080));
        assert_eq!(port(&IntOrString::String("http".into())), None);
        assert_eq!(port(&IntOrString::Int(0)), None);
    }
}
