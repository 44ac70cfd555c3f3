//! Runs a playground until Ctrl-C and writes its kubeconfig:
//! `cargo run -p kruise-playground --example serve -- /tmp/playground.kubeconfig`,
//! then `KUBECONFIG=/tmp/playground.kubeconfig kubectl get ns`.

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "playground.kubeconfig".into());
    let pg = kruise_playground::Playground::start(Default::default()).await?;
    pg.write_kubeconfig(std::path::Path::new(&path))?;
    println!(
        "playground listening on {}; kubeconfig written to {path}",
        pg.url()
    );
    tokio::signal::ctrl_c().await?;
    pg.shutdown().await;
    Ok(())
}
