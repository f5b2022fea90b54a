//! The work a run decided, kept in the cache (`work_plan.json`), so that a
//! run resuming it (after Ctrl-C, a crash or `--max-cost`) carries on with
//! the same loops, units and mechanical entries instead of deciding afresh
//! with a fresh budget: the resumed tree ends as an uninterrupted run's,
//! and money already spent is not spent again.
//!
//! It is reused as `plan.json` is: by a run that is not `--fresh`, under the
//! same `--budget` and the same prices (with or without `--batch`), when it
//! covers every directory left to do. Anything else (a new directory,
//! another budget) is decided anew, and what that decides is merged into
//! the saved work.
//!
//! Every replanning round saves it again with what the round bought (the
//! candidates it gave loops to are loops now), so a resumed run carries on
//! with those purchases instead of deciding them again.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::super::discover::relative;
use super::super::units::Unit;

/// One saved loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SavedLoop {
    pub unit: Unit,
    pub turns: u32,
}

/// The work of a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SavedWork {
    /// The `--budget` it was decided under.
    pub budget: Option<f64>,
    /// Whether it was priced for `--batch` (the same budget buys twice
    /// the work there).
    pub batch: bool,
    pub loops: Vec<SavedLoop>,
    pub mechanical: Vec<PathBuf>,
    /// The units no loop was bought for yet, in the order of interest.
    pub candidates: Vec<SavedLoop>,
}

/// The saved work of what is left to do (see [`SavedWork::resume`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resumed {
    pub loops: Vec<SavedLoop>,
    pub mechanical: Vec<PathBuf>,
    pub candidates: Vec<SavedLoop>,
}

/// What is left to do, as [`SavedWork::resume`] measures the saved work
/// against it.
struct Remaining<'a> {
    /// Each directory's place: those of `order`, then those of `deepen`.
    position: HashMap<&'a Path, usize>,
    /// The directories of `order`.
    to_do: HashSet<&'a Path>,
}

impl<'a> Remaining<'a> {
    fn new(order: &'a [PathBuf], deepen: &'a [PathBuf]) -> Self {
        let position: HashMap<&Path, usize> = order
            .iter()
            .chain(deepen)
            .enumerate()
            .map(|(i, d)| (d.as_path(), i))
            .collect();
        let to_do: HashSet<&Path> = order.iter().map(PathBuf::as_path).collect();
        Remaining { position, to_do }
    }

    /// The saved unit with its directories still to do and its place,
    /// counting those of `order` it covers into `covered`; `Some(None)`
    /// when nothing of it is left; `None` when the unit no longer fits (a
    /// folded directory to do whose unit's top is done).
    fn keep(&self, saved: &SavedLoop, covered: &mut usize) -> Option<Option<(usize, SavedLoop)>> {
        let members: Vec<PathBuf> = saved
            .unit
            .members
            .iter()
            .filter(|m| self.position.contains_key(m.as_path()))
            .cloned()
            .collect();
        match self.position.get(saved.unit.root.as_path()) {
            Some(&at) => {
                *covered += std::iter::once(&saved.unit.root)
                    .chain(&members)
                    .filter(|d| self.to_do.contains(d.as_path()))
                    .count();
                Some(Some((
                    at,
                    SavedLoop {
                        unit: Unit {
                            root: saved.unit.root.clone(),
                            members,
                        },
                        turns: saved.turns,
                    },
                )))
            }
            None if members.iter().any(|m| self.to_do.contains(m.as_path())) => None,
            None => Some(None),
        }
    }

    /// The saved mechanical directories still to do, each with its place.
    fn mechanical(&self, saved: &[PathBuf]) -> Vec<(usize, PathBuf)> {
        saved
            .iter()
            .filter(|d| self.to_do.contains(d.as_path()))
            .filter_map(|d| Some((*self.position.get(d.as_path())?, d.clone())))
            .collect()
    }
}

impl SavedWork {
    /// This work with `older`'s for the directories this one does not
    /// cover.
    pub(crate) fn merged_over(mut self, older: Option<&SavedWork>) -> SavedWork {
        let Some(older) = older else {
            return self;
        };
        let covered: HashSet<PathBuf> = self.covered().into_iter().collect();
        for saved in &older.loops {
            if covered.contains(&saved.unit.root) {
                continue;
            }
            let mut saved = saved.clone();
            saved.unit.members.retain(|m| !covered.contains(m));
            self.loops.push(saved);
        }
        self.mechanical.extend(
            older
                .mechanical
                .iter()
                .filter(|d| !covered.contains(*d))
                .cloned(),
        );
        self.candidates.extend(
            older
                .candidates
                .iter()
                .filter(|c| c.unit.dirs().all(|d| !covered.contains(d)))
                .cloned(),
        );
        self
    }

    /// Every directory it covers.
    fn covered(&self) -> Vec<PathBuf> {
        self.loops
            .iter()
            .chain(&self.candidates)
            .flat_map(|l| l.unit.dirs().cloned())
            .chain(self.mechanical.iter().cloned())
            .collect()
    }

    /// The saved loops, mechanical directories and candidates among
    /// `order` (the directories left to do, children first) and `deepen`
    /// (directories left to the scan that the saved work may have bought a
    /// loop for), in `order`'s order; `None` unless it covers every
    /// directory of `order`.
    pub(crate) fn resume(&self, order: &[PathBuf], deepen: &[PathBuf]) -> Option<Resumed> {
        let remaining = Remaining::new(order, deepen);
        let mut covered = 0;
        let mut loops: Vec<(usize, SavedLoop)> = Vec::new();
        for saved in &self.loops {
            loops.extend(remaining.keep(saved, &mut covered)?);
        }
        // Candidates hold no directory of their own to do: theirs are in
        // `mechanical`, or left to the scan already.
        let mut candidates: Vec<SavedLoop> = Vec::new();
        for saved in &self.candidates {
            let mut ignored = 0;
            if let Some((_, kept)) = remaining.keep(saved, &mut ignored)? {
                candidates.push(kept);
            }
        }
        let mut mechanical = remaining.mechanical(&self.mechanical);
        covered += mechanical.len();
        if covered != order.len() {
            return None;
        }
        loops.sort_by_key(|(at, _)| *at);
        mechanical.sort_by_key(|(at, _)| *at);
        Some(Resumed {
            loops: loops.into_iter().map(|(_, l)| l).collect(),
            mechanical: mechanical.into_iter().map(|(_, d)| d).collect(),
            candidates,
        })
    }

    /// The `work_plan.json` document, paths relative to `target`.
    pub(crate) fn document(&self, target: &Path) -> WorkPlan {
        let rel = |d: &PathBuf| relative(target, d);
        let unit = |l: &SavedLoop| PlannedUnit {
            root: rel(&l.unit.root),
            members: l.unit.members.iter().map(rel).collect(),
            turns: l.turns,
        };
        WorkPlan {
            budget_usd: self.budget,
            batch: self.batch,
            loops: self.loops.iter().map(unit).collect(),
            mechanical: self.mechanical.iter().map(rel).collect(),
            candidates: self.candidates.iter().map(unit).collect(),
        }
    }

    /// The work a `work_plan.json` document saved, paths resolved against
    /// `target`.
    pub(crate) fn of(document: WorkPlan, target: &Path) -> SavedWork {
        let abs = |rel: &String| match rel.as_str() {
            "." => target.to_path_buf(),
            rel => target.join(rel),
        };
        let unit = |l: &PlannedUnit| SavedLoop {
            unit: Unit {
                root: abs(&l.root),
                members: l.members.iter().map(abs).collect(),
            },
            turns: l.turns,
        };
        SavedWork {
            budget: document.budget_usd,
            batch: document.batch,
            loops: document.loops.iter().map(unit).collect(),
            mechanical: document.mechanical.iter().map(abs).collect(),
            candidates: document.candidates.iter().map(unit).collect(),
        }
    }
}

/// `work_plan.json`: the loops a run bought (each a unit and its turns),
/// the directories left to the scan and the units still open, paths
/// relative to the target. A document of any other shape is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WorkPlan {
    /// The `--budget` the work was decided under (`null`: none); the key
    /// must be there.
    #[serde(deserialize_with = "Option::deserialize")]
    pub budget_usd: Option<f64>,
    /// Written before `--batch` existed: an interactive run's.
    #[serde(default)]
    pub batch: bool,
    pub loops: Vec<PlannedUnit>,
    pub mechanical: Vec<String>,
    /// Written before replanning: no candidates were kept.
    #[serde(default)]
    pub candidates: Vec<PlannedUnit>,
}

/// A unit of `work_plan.json` and its turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PlannedUnit {
    pub root: String,
    pub members: Vec<String>,
    pub turns: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(rel: &str) -> PathBuf {
        if rel == "." {
            PathBuf::from("/t")
        } else {
            Path::new("/t").join(rel)
        }
    }

    fn work() -> SavedWork {
        SavedWork {
            budget: Some(0.5),
            batch: false,
            loops: vec![
                SavedLoop {
                    unit: Unit {
                        root: p("a"),
                        members: vec![p("a/x"), p("a/y")],
                    },
                    turns: 14,
                },
                SavedLoop {
                    unit: Unit::single(p(".")),
                    turns: 10,
                },
            ],
            mechanical: vec![p("b/c"), p("b")],
            candidates: vec![SavedLoop {
                unit: Unit::single(p("b")),
                turns: 10,
            }],
        }
    }

    #[test]
    fn it_reads_back_what_it_wrote() {
        let from_value = |value: &serde_json::Value| {
            let document = serde_json::from_value::<WorkPlan>(value.clone()).ok()?;
            Some(SavedWork::of(document, Path::new("/t")))
        };
        let value = serde_json::to_value(work().document(Path::new("/t"))).unwrap();
        assert_eq!(value["loops"][0]["members"], json!(["a/x", "a/y"]));
        assert_eq!(from_value(&value), Some(work()));
        assert_eq!(from_value(&json!({"loops": 1})), None);
        let unbounded = SavedWork {
            budget: None,
            ..work()
        };
        let value = serde_json::to_value(unbounded.document(Path::new("/t"))).unwrap();
        assert_eq!(from_value(&value).unwrap().budget, None);
        assert_eq!(
            from_value(&json!({"loops": [], "mechanical": []})),
            None,
            "budget_usd must be there"
        );
    }

    #[test]
    fn a_resume_keeps_the_saved_assignment_of_what_is_left() {
        // a/y and everything above it is left.
        let order = vec![p("a/y"), p("b/c"), p("a"), p("b"), p(".")];
        let Resumed {
            loops,
            mechanical,
            candidates,
        } = work().resume(&order, &[]).unwrap();
        assert_eq!(loops[0].unit.root, p("a"));
        assert_eq!(loops[0].unit.members, [p("a/y")]);
        assert_eq!(loops[0].turns, 14);
        assert_eq!(loops[1].unit.root, p("."));
        assert_eq!(mechanical, [p("b/c"), p("b")]);
        assert_eq!(candidates[0].unit.root, p("b"));
        // A directory it does not know: decide again.
        let mut more = order.clone();
        more.insert(0, p("new"));
        assert_eq!(work().resume(&more, &[]), None);
        // A folded directory left whose unit's top is done: decide again.
        assert_eq!(work().resume(&[p("a/x")], &[]), None);
        // A loop bought to deepen a directory left to the scan is carried on.
        let deepening = SavedWork {
            loops: vec![SavedLoop {
                unit: Unit::single(p("d")),
                turns: 10,
            }],
            mechanical: vec![],
            candidates: vec![],
            ..work()
        };
        let resumed = deepening.resume(&[], &[p("d")]).unwrap();
        assert_eq!(resumed.loops[0].unit.root, p("d"));
    }

    #[test]
    fn newer_work_replaces_what_it_covers() {
        let newer = SavedWork {
            budget: Some(0.5),
            batch: false,
            loops: vec![SavedLoop {
                unit: Unit::single(p("a/x")),
                turns: 10,
            }],
            mechanical: vec![p("b")],
            candidates: vec![],
        };
        let merged = newer.merged_over(Some(&work()));
        let roots: Vec<&PathBuf> = merged.loops.iter().map(|l| &l.unit.root).collect();
        assert_eq!(roots, [&p("a/x"), &p("a"), &p(".")]);
        assert_eq!(merged.loops[1].unit.members, [p("a/y")]);
        assert_eq!(merged.mechanical, [p("b"), p("b/c")]);
    }
}
