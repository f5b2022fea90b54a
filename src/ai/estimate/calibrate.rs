//! Calibrating `--estimate`'s token counts with the API's own count, where
//! a key is set: the first loop's prompt (its system prompt, tools and
//! assignment, the largest part of a run's input) is counted by the free
//! token-counting endpoint ([`crate::ai::api::Client::count_tokens`]), and
//! every token figure of the projection is scaled by how far the API's
//! count is from the one the estimate made of the same prompt from its
//! bytes. The decision is not (the run decides from bytes, and the
//! estimate says what the run does); only the figures are. A count that
//! does not come (no endpoint, a refusal, a slow answer) leaves the
//! estimate as it was, and says why.

use serde::Serialize;

use super::Estimate;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::types::{Message, MessagesRequest, SystemBlock};
use crate::ai::api::{Client, ClientConfig};
use crate::ai::rules::projection::reference_tokens;
use crate::ai::situation::tools_tokens;
use crate::ai::tools::{self, Toolbox};

/// A prompt the estimate measured, to be counted by the API.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Probe {
    pub request: MessagesRequest,
    /// Its tokens as the estimate counts them, in the model's tokens.
    pub estimated: u64,
}

impl Probe {
    /// The first loop's prompt on `model` (whose catalog facts are
    /// `facts`): the directory system prompt,
    /// the directory tools and the assignment `task`.
    pub(crate) fn of_loop(model: &str, facts: ModelFacts, system: &str, task: &str) -> Probe {
        let reference =
            reference_tokens((system.len() + task.len()) as u64) + tools_tokens(Toolbox::Dir);
        let scale = crate::ai::api::tokens::TokenEstimate::of(facts.model).per_reference_token();
        Probe {
            request: MessagesRequest {
                model: model.to_string(),
                max_tokens: 1,
                system: vec![SystemBlock::text(system)],
                messages: vec![Message::user_text(task)],
                tools: tools::definitions(Toolbox::Dir),
                thinking: None,
                output_config: None,
                stream: false,
            },
            estimated: (reference as f64 * scale).ceil() as u64,
        }
    }
}

/// What the calibration found, as the JSON's `token_calibration`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct TokenCalibration {
    /// The API's count of the probe.
    pub counted: u64,
    /// The estimate's count of the same prompt.
    pub estimated: u64,
    /// `counted / estimated`: what every token figure was scaled by.
    pub factor: f64,
}

/// `estimate` with its token figures calibrated by the API's count of its
/// probe, or as it was with the reason it could not be (in
/// `token_calibration_error`). Makes at most one request, a free one.
pub(crate) async fn calibrate(mut estimate: Estimate, client: ClientConfig) -> Estimate {
    let Some(probe) = estimate.probe.take() else {
        return estimate;
    };
    let counted = match Client::new(client) {
        Ok(client) => client.count_tokens(&probe.request).await,
        Err(err) => Err(err),
    };
    match counted {
        Ok(counted) if counted > 0 && probe.estimated > 0 => {
            estimate.calibrated(TokenCalibration {
                counted,
                estimated: probe.estimated,
                factor: counted as f64 / probe.estimated as f64,
            })
        }
        Ok(_) => {
            estimate.counts.token_calibration_error =
                Some("the token count came back empty".to_string());
            estimate
        }
        Err(err) => {
            estimate.counts.token_calibration_error = Some(
                crate::ai::api::error::one_line_excerpt(&err.to_string(), 300),
            );
            estimate
        }
    }
}
