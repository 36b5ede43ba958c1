//! Call ids: the provider's ids (unique within a response, perhaps minted as `call_1` every
//! turn) mapped to ids unique within the run, and back to the provider's for the results.

use std::collections::{HashMap, HashSet};

use crate::adapters::{ToolCall, ToolResult};

/// The call ids handed out so far in a run.
#[derive(Debug, Default)]
pub(super) struct RunIds {
    pub(super) used: HashSet<String>,
    /// The next suffix to try per id that repeated, so many repeats cost linear time.
    suffixes: HashMap<String, usize>,
}

/// The ids of one turn: each of the provider's ids (unique within a response) maps to one id
/// unique within the run, the same for its start event, its run and its result event.
#[derive(Debug)]
pub(super) struct TurnIds {
    run: RunIds,
    turn: HashMap<String, String>,
}

impl TurnIds {
    pub(super) fn new(run: RunIds) -> Self {
        Self { run, turn: HashMap::new() }
    }

    /// The run's ids, with this turn's added.
    pub(super) fn into_run(self) -> RunIds {
        self.run
    }

    /// The run's id for the provider's `id`: the same id when the run has not used it yet,
    /// else `<id>~2`, `<id>~3`, ... (the first that is free).
    pub(super) fn assign(&mut self, id: &str) -> String {
        if let Some(assigned) = self.turn.get(id) {
            return assigned.clone();
        }
        let assigned = if self.run.used.contains(id) {
            let next = self.run.suffixes.entry(id.to_owned()).or_insert(2);
            loop {
                let candidate = format!("{id}~{next}");
                *next += 1;
                if !self.run.used.contains(&candidate) {
                    break candidate;
                }
            }
        } else {
            id.to_owned()
        };
        self.run.used.insert(assigned.clone());
        self.turn.insert(id.to_owned(), assigned.clone());
        assigned
    }

    /// Gives the turn's `calls` their ids within the run, and returns the provider's ids, in
    /// order: the ids their results go back to the model under.
    pub(super) fn assign_calls(&mut self, calls: &mut [ToolCall]) -> Vec<String> {
        let wire = calls.iter().map(|call| call.id.clone()).collect();
        for call in calls {
            call.id = self.assign(&call.id);
        }
        wire
    }
}

/// Puts `results` (in the turn's order) back under the provider's ids, `wire`.
pub(super) fn to_wire(results: &mut [ToolResult], wire: &[String]) {
    for (result, id) in results.iter_mut().zip(wire) {
        id.clone_into(&mut result.call_id);
    }
}
