//! Side conversations: an ephemeral `thread/fork` of the source's thread, in the source's own
//! process, with a boundary message that tells the model where the inherited context ends.

use std::sync::Arc;

use ensemble_core::adapter::{AdapterError, SideOpen};
use ensemble_core::model::Session;

use super::config::CodexConfig;
use super::live::Live;
use super::wire::{
    ContentItem, ResponseItem, ThreadFork, ThreadForkParams, ThreadIdParams, ThreadInjectItems,
    ThreadInjectItemsParams, ThreadUnsubscribe,
};
use crate::kit::goals::GoalEngine;
use crate::kit::typed;

/// What a side conversation's model sees where the inherited context ends.
const SIDE_BOUNDARY: &str = "<side_conversation_boundary>\nEverything above is the main conversation, \
    kept as context only. From here on this is a side conversation: answer the user's side questions \
    here. Do not continue, change or act on the main conversation's task unless asked to in this side \
    conversation.\n</side_conversation_boundary>";
/// The side conversation's standing instructions (given at the fork).
const SIDE_INSTRUCTIONS: &str = "You are in a side conversation forked from a running session. The \
    turns you inherited are context, not tasks to resume.";

/// Forks `source`'s thread for the side `open.side`; returns the side's live session and its
/// identity as codex sees it. The fork is checked to be a child of the source's thread.
pub(super) async fn open(
    config: &CodexConfig,
    source: &Live,
    open: SideOpen<'_>,
) -> Result<(Arc<Live>, Session), AdapterError> {
    if source.side {
        return Err(AdapterError::Unsupported("a side conversation cannot be forked".into()));
    }
    let parent = source.thread().ok_or(AdapterError::NotLive)?;
    let conn = source.conn.clone();
    let t = config.call_timeout;
    // Notifications of the new thread that race the fork's answer are parked until it is known.
    conn.begin_fork();
    let params = ThreadForkParams {
        thread_id: parent.clone(),
        ephemeral: true,
        exclude_turns: true,
        developer_instructions: Some(SIDE_INSTRUCTIONS.into()),
        ..Default::default()
    };
    let response = match conn.call::<ThreadFork>(&params, t).await {
        Ok(response) => response,
        Err(e) => {
            conn.end_fork(None);
            return Err(e);
        }
    };
    let (child, from) = match &response.thread {
        Some(thread) => (thread.id.clone(), thread.forked_from_id.as_deref()),
        None => (String::new(), None),
    };
    if child.is_empty() || child == parent || from != Some(parent.as_str()) {
        conn.end_fork(None);
        if !child.is_empty() && child != parent {
            let params = ThreadIdParams { thread_id: child.clone() };
            let _ = typed::call_discarding::<ThreadUnsubscribe>(&conn.rpc, &params, t).await;
        }
        return Err(AdapterError::failed(
            "side_fork_invalid",
            format!("thread/fork returned thread `{child}` forked from {from:?}, not from `{parent}`"),
        ));
    }
    let handle = &open.handle;
    let goals = GoalEngine::new(handle.goals.clone(), handle.sink.clone(), Default::default());
    let live = Live::new(
        open.side.key(),
        handle.sink.clone(),
        handle.state.clone(),
        goals,
        conn.clone(),
        Some(&child),
        config.goal_grace,
    );
    live.remember_model(&response);
    live.goals.set_thread(&child);
    conn.end_fork(Some((&child, &live)));
    let boundary = ResponseItem::Message {
        role: "user".into(),
        content: vec![ContentItem::InputText { text: SIDE_BOUNDARY.into() }],
    };
    let params = ThreadInjectItemsParams { thread_id: child.clone(), items: vec![boundary] };
    if let Err(err) = conn.call_discarding::<ThreadInjectItems>(&params, t).await {
        live.stop(config).await;
        return Err(err);
    }
    let mut session = open.side.clone();
    session.provider_session_id = Some(child);
    Ok((live, session))
}
