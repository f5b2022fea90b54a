//! What `replans.json` keeps of each replanning round: the handoffs it
//! weighed, the money it saw and what it bought. Written by the ledger
//! (`ledger.rs`) and kept by [`super::Replanning`], under the keys and in
//! the order the file has always had; a resumed run keeps the rounds
//! earlier runs wrote as they were.

use serde::Serialize;

/// A loop's end, as the next round reads it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Handoff {
    /// The directory, as the run shows it.
    pub dir: String,
    /// Its end in words (`complete`, `out of turns`, ...).
    pub status: &'static str,
    /// The start of its summary.
    pub summary: String,
    pub completeness: Option<f64>,
    /// Model calls it made.
    pub turns: u32,
    pub cost_usd: f64,
    pub expected_usd: f64,
    /// The first paths it pointed to outside its assignment.
    pub leads: Vec<String>,
    /// The roots of the open candidates those leads fell in.
    pub led_to: Vec<String>,
}

/// A loop a round bought.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BoughtLoop {
    /// Its unit's top directory and the directories folded into it,
    /// relative to the target.
    pub root: String,
    pub members: Vec<String>,
    pub turns: u32,
    pub expected_usd: f64,
    /// Bought for a lead a handoff named.
    pub lead: bool,
}

/// One round, as the ledger decided it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RoundRecord {
    /// Its number in the run, from 1.
    pub round: usize,
    /// What held it (`3 handoffs`, `nothing left to run`, ...).
    pub trigger: String,
    pub handoffs: Vec<Handoff>,
    pub spent_usd: f64,
    pub committed_usd: f64,
    pub synthesis_reserve_usd: f64,
    pub money_for_new_loops_usd: f64,
    pub calibration: f64,
    pub open_candidates: usize,
    pub bought: Vec<BoughtLoop>,
}

/// A round as `replans.json` keeps it: with the run it belongs to and the
/// budget that run had.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct KeptRound {
    #[serde(flatten)]
    pub round: RoundRecord,
    pub run_started_at: String,
    pub budget_usd: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys, in the order the file has always had them.
    #[test]
    fn a_kept_round_writes_the_keys_in_their_order() {
        let kept = KeptRound {
            round: RoundRecord {
                round: 2,
                trigger: "3 handoffs".into(),
                handoffs: vec![Handoff {
                    dir: "src".into(),
                    status: "complete",
                    summary: "s".into(),
                    completeness: None,
                    turns: 3,
                    cost_usd: 0.5,
                    expected_usd: 0.25,
                    leads: vec!["lib".into()],
                    led_to: Vec::new(),
                }],
                spent_usd: 1.0,
                committed_usd: 0.5,
                synthesis_reserve_usd: 0.2,
                money_for_new_loops_usd: 3.0,
                calibration: 1.5,
                open_candidates: 4,
                bought: vec![BoughtLoop {
                    root: "lib".into(),
                    members: vec!["lib/a".into()],
                    turns: 10,
                    expected_usd: 0.3,
                    lead: true,
                }],
            },
            run_started_at: "2026-11-29T00:00:00Z".into(),
            budget_usd: None,
        };
        assert_eq!(
            serde_json::to_string(&kept).unwrap(),
            r#"{"round":2,"trigger":"3 handoffs","handoffs":[{"dir":"src","status":"complete","summary":"s","completeness":null,"turns":3,"cost_usd":0.5,"expected_usd":0.25,"leads":["lib"],"led_to":[]}],"spent_usd":1.0,"committed_usd":0.5,"synthesis_reserve_usd":0.2,"money_for_new_loops_usd":3.0,"calibration":1.5,"open_candidates":4,"bought":[{"root":"lib","members":["lib/a"],"turns":10,"expected_usd":0.3,"lead":true}],"run_started_at":"2026-11-29T00:00:00Z","budget_usd":null}"#
        );
    }
}
