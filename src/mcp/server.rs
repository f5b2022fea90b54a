//! The MCP server itself: what it says of itself at `initialize`, its
//! tools, and serving them on stdin and stdout until the client closes
//! stdin (or Ctrl-C).
//!
//! Only the `tools` capability is offered. An unknown tool name is the one
//! protocol error of a call (`-32602`, as the specification's own example
//! has it); everything else a call can get wrong is its tool's failure.
//! Lines that are no request rmcp can read are answered by the wire
//! (`wire.rs`).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};

use super::tools::{self, Call, McpTool};
use super::wire::{Wire, wire};
use crate::config::Env;

/// What the server tells a client's model about using it.
const INSTRUCTIONS: &str = "luminos investigates a directory (a code base, a data set, any \
tree) and keeps what it learned in a cache. Call `overview` first: it is free and instant when \
the directory was investigated, and says so when it was not. `directory` and `flags` go into \
detail the same way. `investigate` runs the AI investigation (it costs money and can take \
minutes; a directory investigated before is resumed, only what changed is read again). `ask` \
answers one question about a directory from its investigation and its files (it costs a little \
money). Paths are on the machine luminos runs on.";

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    #[error("starting the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The client never completed the MCP handshake.
    #[error("the MCP session did not start: {0}")]
    Start(String),
    #[error("the MCP session ended abnormally: {0}")]
    Ended(String),
}

/// The server's state: the environment each call's target is resolved in.
#[derive(Clone)]
struct LuminosServer {
    env: Arc<Env>,
}

impl ServerHandler for LuminosServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("luminos", env!("CARGO_PKG_VERSION"))
                    .with_title("luminos")
                    .with_description(env!("CARGO_PKG_DESCRIPTION")),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::definitions()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = McpTool::named(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool '{}'", crate::text::escape_line(&request.name)),
                None,
            ));
        };
        let call = Call {
            env: self.env.clone(),
            request: context,
        };
        let arguments = request.arguments.unwrap_or_default();
        Ok(tools::call(tool, arguments, &call).await.into())
    }
}

/// Serve MCP on stdio with the process environment `env` until the client
/// closes the session.
pub(crate) fn serve(env: Env) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = runtime.block_on(async move {
        let server = LuminosServer { env: Arc::new(env) };
        // Every line is screened before rmcp reads it, so every request
        // gets a response (see `wire.rs`).
        let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
        let Wire { rmcp, written } = wire(stdin, stdout);
        let running = server
            .serve(rmcp)
            .await
            .map_err(|err| ServeError::Start(err.to_string()))?;
        let ended = tokio::select! {
            ended = running.waiting() => ended.map(|_| ()).map_err(|err| ServeError::Ended(err.to_string())),
            // Ctrl-C ends the server; a call in flight stops as a run does.
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        // What rmcp and the screen wrote reaches stdout before the end.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), written).await;
        ended
    });
    // A read of stdin still pending must not keep the process alive.
    runtime.shutdown_background();
    served
}
