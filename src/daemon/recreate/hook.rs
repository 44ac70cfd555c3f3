//! A request's preStop hook, run by the agent before it stops the container: `exec` through CRI
//! `ExecSync`, `httpGet` to the hook's host or else the pod's IP (OpenKruise's agent has no pod IP and
//! fails these: its §C.6 defect), `tcpSocket` as a connection (OpenKruise: unsupported, #2505).

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::core::v1::ContainerPort;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps_v1beta1::CrrProbeHandler;
use kruise_cri::Runtime;
use tokio::net::TcpStream;

/// The longest an exec hook may run (the caller's grace bounds it further).
const EXEC_LIMIT: Duration = Duration::from_secs(3600);

/// Why a hook failed.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The runtime refused the exec.
    #[error("{0}")]
    Runtime(#[from] kruise_cri::RuntimeError),
    /// The command exited non-zero (worded as kubelet's CRI client words it).
    #[error("command '{command}' exited with {code}: {stderr}")]
    Exit {
        /// The command, its words joined by spaces.
        command: String,
        /// Exit code.
        code: i32,
        /// Its stderr.
        stderr: String,
        /// Its stdout then stderr.
        output: String,
    },
    /// A network hook could not be sent.
    #[error("{0}")]
    Network(String),
}

/// How to stop one container: its preStop hook and the grace it has.
pub struct Stop<'a> {
    /// Container name (for the log).
    pub container: &'a str,
    /// The whole grace period: the hook runs within it, the stop gets what is left (at least 2 s).
    pub grace: Duration,
    /// The preStop hook, if any.
    pub pre_stop: Option<&'a CrrProbeHandler>,
    /// The container's ports (named hook ports).
    pub ports: &'a [ContainerPort],
}

/// How a preStop hook failed; the stop went on.
#[derive(Debug)]
pub enum Failure {
    /// It ended with an error.
    Failed(HookError),
    /// It was still running when the grace ran out.
    TimedOut(Duration),
}

impl Failure {
    /// The `FailedPreStopHook` message: kubelet's hook runner's wording (OpenKruise's agent runs that
    /// runner), for `container` of pod `pod` shown as `<name>_<namespace>(<uid>)`.
    pub fn message(&self, handler: &CrrProbeHandler, container: &str, pod: &str) -> String {
        match self {
            Failure::Failed(e @ HookError::Exit { output, .. }) => {
                format!(
                    "{} failed - error: {e}, message: {output:?}",
                    what(handler, container, pod)
                )
            }
            Failure::Failed(e) => format!("{} failed - error: {e}", what(handler, container, pod)),
            Failure::TimedOut(grace) => format!(
                "{} did not complete within the grace period of {}s",
                what(handler, container, pod),
                grace.as_secs()
            ),
        }
    }
}

/// "Exec lifecycle hook ([sh -c …]) for Container "c" in Pod "p_ns(uid)"", and the like.
fn what(handler: &CrrProbeHandler, container: &str, pod: &str) -> String {
    let hook = if let Some(exec) = &handler.exec {
        let words = exec.command.iter().flatten().map(String::as_str);
        format!("Exec lifecycle hook ([{}])", words.collect::<Vec<_>>().join(" "))
    } else if let Some(get) = &handler.http_get {
        format!(
            "HTTP lifecycle hook ({})",
            get.path.as_deref().unwrap_or_default()
        )
    } else if let Some(tcp) = &handler.tcp_socket {
        let port = match &tcp.port {
            IntOrString::Int(n) => n.to_string(),
            IntOrString::String(s) => s.clone(),
        };
        format!("TCPSocket lifecycle hook ({port})")
    } else {
        "Lifecycle hook".to_owned()
    };
    format!("{hook} for Container {container:?} in Pod {pod:?}")
}

/// The agent's one way to stop a container (ContainerRecreateRequests and env-from-metadata restarts):
/// runs the preStop hook within the grace (its failure is logged, not fatal), then `StopContainer`
/// with what is left of the grace, at least 2 s. The kubelet starts the container again. Returns the
/// hook's failure, if any (for event `FailedPreStopHook`).
pub async fn stop<F: Future<Output = Option<String>>>(
    runtime: &Runtime,
    id: &str,
    stop: Stop<'_>,
    pod_ip: impl FnOnce() -> F,
) -> Result<Option<Failure>, kruise_cri::RuntimeError> {
    let mut grace = stop.grace;
    let mut failed = None;
    if let Some(pre_stop) = stop.pre_stop
        && !grace.is_zero()
    {
        let started = tokio::time::Instant::now();
        match tokio::time::timeout(grace, run(runtime, id, pre_stop, stop.ports, pod_ip)).await {
            Ok(Ok(())) => tracing::info!(container = %stop.container, "preStop hook done"),
            Ok(Err(e)) => {
                tracing::warn!(container = %stop.container, error = %e, "FailedPreStopHook");
                failed = Some(Failure::Failed(e));
            }
            Err(_) => {
                tracing::warn!(container = %stop.container, "FailedPreStopHook: still running when the grace ran out");
                failed = Some(Failure::TimedOut(grace));
            }
        }
        grace = grace.saturating_sub(started.elapsed());
    }
    runtime
        .stop_container(id, grace.max(Duration::from_secs(2)))
        .await?;
    Ok(failed)
}

/// Runs the hook against container `id` (bare runtime id).
pub async fn run<F: Future<Output = Option<String>>>(
    runtime: &Runtime,
    id: &str,
    handler: &CrrProbeHandler,
    ports: &[ContainerPort],
    pod_ip: impl FnOnce() -> F,
) -> Result<(), HookError> {
    if let Some(exec) = &handler.exec {
        let cmd: Vec<&str> = exec.command.iter().flatten().map(String::as_str).collect();
        let out = runtime.exec_sync(id, &cmd, EXEC_LIMIT).await?;
        if out.exit_code != 0 {
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
            output.push_str(&stderr);
            return Err(HookError::Exit {
                command: cmd.join(" "),
                code: out.exit_code,
                stderr,
                output,
            });
        }
        return Ok(());
    }
    if let Some(get) = &handler.http_get {
        if get
            .scheme
            .as_deref()
            .is_some_and(|s| !s.eq_ignore_ascii_case("HTTP"))
        {
            return Err(HookError::Network(format!(
                "httpGet scheme {} is not supported",
                get.scheme.as_deref().unwrap_or_default()
            )));
        }
        let host = host(get.host.as_deref(), pod_ip).await?;
        let port = port(&get.port, ports)?;
        let path = get.path.as_deref().filter(|p| !p.is_empty()).unwrap_or("/");
        return http_get(&host, port, path).await;
    }
    if let Some(tcp) = &handler.tcp_socket {
        let host = host(tcp.host.as_deref(), pod_ip).await?;
        let port = port(&tcp.port, ports)?;
        return TcpStream::connect((host.as_str(), port))
            .await
            .map(drop)
            .map_err(|e| HookError::Network(format!("tcpSocket {host}:{port}: {e}")));
    }
    Ok(())
}

async fn host<F: Future<Output = Option<String>>>(
    explicit: Option<&str>,
    pod_ip: impl FnOnce() -> F,
) -> Result<String, HookError> {
    match explicit.filter(|h| !h.is_empty()) {
        Some(h) => Ok(h.to_owned()),
        None => pod_ip()
            .await
            .ok_or_else(|| HookError::Network("the pod has no IP yet".into())),
    }
}

/// A port number, or a named port of the container.
pub fn port(port: &IntOrString, ports: &[ContainerPort]) -> Result<u16, HookError> {
    let number = match port {
        IntOrString::Int(n) => *n,
        IntOrString::String(s) => match s.parse::<i32>() {
            Ok(n) => n,
            Err(_) => ports
                .iter()
                .find(|p| p.name.as_deref() == Some(s.as_str()))
                .map(|p| p.container_port)
                .ok_or_else(|| HookError::Network(format!("no port named {s} in the container")))?,
        },
    };
    u16::try_from(number)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| HookError::Network(format!("invalid port {number}")))
}

/// One HTTP GET; a status below 400 is success.
async fn http_get(host: &str, port: u16, path: &str) -> Result<(), HookError> {
    let url = format!("http://{host}:{port}{path}");
    match crate::daemon::http_get::status(host, port, path, "kruise-daemon", &[]).await {
        Ok(code) if code < 400 => Ok(()),
        Ok(code) => Err(HookError::Network(format!("httpGet {url}: HTTP {code}"))),
        Err(e) => Err(HookError::Network(format!("httpGet {url}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    #[test]
    fn ports_are_numbers_or_the_containers_names() {
        let ports = [ContainerPort {
            name: Some("http".into()),
            container_port: 8080,
            ..ContainerPort::default()
        }];
        assert_eq!(port(&IntOrString::Int(80), &ports).unwrap(), 80);
        assert_eq!(port(&IntOrString::String("http".into()), &ports).unwrap(), 8080);
        assert_eq!(port(&IntOrString::String("81".into()), &ports).unwrap(), 81);
        assert!(port(&IntOrString::String("grpc".into()), &ports).is_err());
        assert!(port(&IntOrString::Int(0), &ports).is_err());
    }

    #[test]
    fn failures_are_worded_as_kubelets_hook_runner_words_them() {
        let exec: CrrProbeHandler = serde_json::from_value(serde_json::json!(
            {"exec": {"command": ["sh", "-c", "echo bye; exit 3"]}}
        ))
        .unwrap();
        let failed = Failure::Failed(HookError::Exit {
            command: "sh -c echo bye; exit 3".into(),
            code: 3,
            stderr: String::new(),
            output: "bye\n".into(),
        });
        assert_eq!(
            failed.message(&exec, "app", "web_default(u-1)"),
            "Exec lifecycle hook ([sh -c echo bye; exit 3]) for Container \"app\" in Pod \"web_default(u-1)\" \
             failed - error: command 'sh -c echo bye; exit 3' exited with 3: , message: \"bye\\n\""
        );
        let get: CrrProbeHandler = serde_json::from_value(serde_json::json!(
            {"httpGet": {"path": "/quit", "port": 1}}
        ))
        .unwrap();
        let refused = Failure::Failed(HookError::Network(
            "httpGet http://10.0.0.1:1/quit: refused".into(),
        ));
        assert_eq!(
            refused.message(&get, "app", "web_default(u-1)"),
            "HTTP lifecycle hook (/quit) for Container \"app\" in Pod \"web_default(u-1)\" failed - error: \
             httpGet http://10.0.0.1:1/quit: refused"
        );
        assert_eq!(
            Failure::TimedOut(Duration::from_secs(5)).message(&get, "app", "p_ns(u)"),
            "HTTP lifecycle hook (/quit) for Container \"app\" in Pod \"p_ns(u)\" did not complete within \
             the grace period of 5s"
        );
    }

    #[tokio::test]
    async fn an_http_hook_reaches_the_server_and_reads_its_status() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let mut seen = Vec::new();
            for answer in ["HTTP/1.1 200 OK\r\n\r\n", "HTTP/1.1 500 Oops\r\n\r\n"] {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 512];
                let n = s.read(&mut buf).await.unwrap();
                seen.push(
                    String::from_utf8_lossy(&buf[..n])
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                );
                s.write_all(answer.as_bytes()).await.unwrap();
            }
            seen
        });
        http_get("127.0.0.1", port, "/quit").await.unwrap();
        let e = http_get("127.0.0.1", port, "/quit").await.unwrap_err();
        assert!(e.to_string().ends_with("HTTP 500"), "{e}");
        assert_eq!(
            server.await.unwrap(),
            ["GET /quit HTTP/1.1", "GET /quit HTTP/1.1"]
        );
    }
}
