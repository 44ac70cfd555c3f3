//! WorkloadSpread status (placeholder).

use super::Context;

/// Runs the WorkloadSpread controller until aborted.
pub async fn run(_context: Context) {
    std::future::pending::<()>().await;
}
