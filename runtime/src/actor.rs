//! Who a request acts for, carried with the request's task rather than through every controller
//! call: events published while it runs carry it, events an agent produces later do not.

use std::future::Future;
use std::sync::Arc;

pub use ensemble_core::event::Actor;

tokio::task_local! {
    static ACTOR: Option<Arc<Actor>>;
}

/// Runs `f` acting for `actor`.
pub async fn acting<F: Future>(actor: Option<Arc<Actor>>, f: F) -> F::Output {
    ACTOR.scope(actor, f).await
}

/// The actor of the request this task runs, if any.
pub fn current() -> Option<Arc<Actor>> {
    ACTOR.try_with(Clone::clone).ok().flatten()
}
