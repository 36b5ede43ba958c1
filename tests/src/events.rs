//! One check of "one start, then one result" for every call in a stream of events, the
//! runner's or the agent's, so every suite that claims it checks the same thing: in order (a
//! call's start comes before its result, nothing of the call follows its result), one of each,
//! under the same call id.

use std::collections::HashMap;

use tool_runtime::agent::AgentEvent;
use tool_runtime::runtime::ToolEvent;

/// Where an event stands in its call's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// The call started.
    Start,
    /// Something between the start and the result (progress, waiting).
    During,
    /// The call's result.
    Result,
}

/// The runner's events as `(call id, mark)`, in order; events of no call are left out.
pub fn runner_marks(events: &[ToolEvent]) -> Vec<(String, Mark)> {
    events
        .iter()
        .filter_map(|event| {
            let mark = match event {
                ToolEvent::ToolCallStart { .. } => Mark::Start,
                ToolEvent::ToolCallProgress { .. } | ToolEvent::ToolCallWaiting { .. } => {
                    Mark::During
                }
                ToolEvent::ToolCallResult { .. } => Mark::Result,
                _ => return None,
            };
            Some((event.tool_call_id().to_owned(), mark))
        })
        .collect()
}

/// The agent's events as `(call id, mark)`, in order; events of no call are left out.
pub fn agent_marks(events: &[AgentEvent]) -> Vec<(String, Mark)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCallStarted { id, .. } => Some((id.clone(), Mark::Start)),
            AgentEvent::ToolCallWaiting { id, .. } => Some((id.clone(), Mark::During)),
            AgentEvent::ToolCallResult { id, .. } => Some((id.clone(), Mark::Result)),
            _ => None,
        })
        .collect()
}

/// Checks that every call in `marks` started once and then ended with one result, nothing
/// of it after the result; returns the call ids in the order they started. Panics naming the
/// call and what was wrong.
pub fn assert_paired(marks: impl IntoIterator<Item = (String, Mark)>) -> Vec<String> {
    check(marks, true)
}

/// Checks that every call in `marks` was refused before its start: one result, nothing else;
/// returns the call ids in order.
pub fn assert_refused_before_start(marks: impl IntoIterator<Item = (String, Mark)>) -> Vec<String> {
    check(marks, false)
}

fn check(marks: impl IntoIterator<Item = (String, Mark)>, starts: bool) -> Vec<String> {
    let mut order = Vec::new();
    // Per id: (started, ended).
    let mut seen: HashMap<String, (bool, bool)> = HashMap::new();
    for (id, mark) in marks {
        let (started, ended) = seen.entry(id.clone()).or_insert_with(|| {
            order.push(id.clone());
            (false, false)
        });
        assert!(!*ended, "{id}: {mark:?} after its result");
        match mark {
            Mark::Start => {
                assert!(starts, "{id}: started, but should have been refused before its start");
                assert!(!*started, "{id}: a second start");
                *started = true;
            }
            Mark::During => assert!(*started, "{id}: an event before its start"),
            Mark::Result => {
                assert!(*started == starts, "{id}: a result without a start");
                *ended = true;
            }
        }
    }
    for id in &order {
        assert!(seen[id].1, "{id}: no result");
    }
    order
}
