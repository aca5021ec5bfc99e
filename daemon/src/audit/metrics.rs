//! `/metrics` (and `/metrics/audit`) in Prometheus text format.

use super::Hub;
use std::sync::Arc;

pub fn render(hub: &Hub) -> String {
    format!(
        "# HELP spur_audit_rows_written_total Audit rows persisted.\n\
         # TYPE spur_audit_rows_written_total counter\n\
         spur_audit_rows_written_total {}\n\
         # HELP spur_audit_rows_dropped_total Audit rows abandoned after retries.\n\
         # TYPE spur_audit_rows_dropped_total counter\n\
         spur_audit_rows_dropped_total {}\n",
        hub.written(),
        hub.dropped()
    )
}

/// More figures for `/metrics`, from services the audit hub does not know.
pub type Extra = Arc<dyn Fn() -> String + Send + Sync>;

/// Serves the metrics on `listener` until the task is aborted.
pub fn spawn(listener: tokio::net::TcpListener, hub: Arc<Hub>, extra: Extra) -> tokio::task::JoinHandle<()> {
    use axum::routing::get;
    let text = move || {
        let (hub, extra) = (hub.clone(), extra.clone());
        async move {
            let body = render(&hub) + &extra();
            ([(http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
        }
    };
    let app = axum::Router::new().route("/metrics", get(text.clone())).route("/metrics/audit", get(text));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "metrics endpoint stopped");
        }
    })
}
