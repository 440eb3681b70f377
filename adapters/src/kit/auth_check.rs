//! An agent's answer to "can you call your model?", asked without a session (a process started
//! only to be asked) so `GET /v1/providers` can say a login is needed before anyone starts a
//! session. The answer is kept for a while; callers at the same moment share one question, and a
//! caller that cannot wait for it gets the previous answer (or none) while the question goes on.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ensemble_core::adapter::AuthCheck;
use tokio::sync::watch;
use tokio::time::Instant;

/// Where asking stands.
enum Asked {
    Never,
    /// A question is out; its answer comes on the channel (`Some` once answered).
    Asking(watch::Receiver<Option<Option<AuthCheck>>>),
    Answered {
        answer: Option<AuthCheck>,
        at: Instant,
    },
}

/// One provider's auth checks.
#[derive(Clone)]
pub struct AuthChecks {
    ttl: Duration,
    asked: Arc<Mutex<Asked>>,
    /// The last answer, for callers that cannot wait for the next one.
    last: Arc<Mutex<Option<AuthCheck>>>,
}

impl AuthChecks {
    /// Answers are kept `ttl`; a zero `ttl` never asks.
    pub fn new(ttl: Duration) -> Self {
        Self { ttl, asked: Arc::new(Mutex::new(Asked::Never)), last: Arc::new(Mutex::new(None)) }
    }

    /// The answer kept, if still fresh; else asks with `ask` (in the background) and waits for the
    /// answer at most `wait`, giving the previous answer meanwhile.
    pub async fn get<F, Fut>(&self, wait: Duration, ask: F) -> Option<AuthCheck>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Option<AuthCheck>> + Send + 'static,
    {
        if self.ttl.is_zero() {
            return None;
        }
        let mut rx = {
            let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
            match &*asked {
                Asked::Answered { answer, at } if at.elapsed() < self.ttl => return answer.clone(),
                Asked::Asking(rx) => rx.clone(),
                Asked::Never | Asked::Answered { .. } => {
                    let (tx, rx) = watch::channel(None);
                    let question = ask();
                    let (asked_cell, last) = (self.asked.clone(), self.last.clone());
                    tokio::spawn(async move {
                        let answer = question.await;
                        if answer.is_some() {
                            *last.lock().unwrap_or_else(|e| e.into_inner()) = answer.clone();
                        }
                        *asked_cell.lock().unwrap_or_else(|e| e.into_inner()) =
                            Asked::Answered { answer: answer.clone(), at: Instant::now() };
                        let _ = tx.send(Some(answer));
                    });
                    *asked = Asked::Asking(rx.clone());
                    rx
                }
            }
        };
        match tokio::time::timeout(wait, rx.wait_for(Option::is_some)).await {
            Ok(Ok(answer)) => answer.clone().flatten(),
            _ => self.last.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use ensemble_core::model::AuthState;

    use super::*;

    fn check(state: AuthState) -> Option<AuthCheck> {
        Some(AuthCheck { state, message: None, at_ms: 1 })
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_is_kept_for_its_ttl_and_callers_share_one_question() {
        let checks = AuthChecks::new(Duration::from_secs(60));
        let asked = Arc::new(AtomicUsize::new(0));
        let ask = || {
            let asked = asked.clone();
            move || async move {
                asked.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(100)).await;
                check(AuthState::AuthRequired)
            }
        };
        let wait = Duration::from_secs(5);
        let (a, b) = tokio::join!(checks.get(wait, ask()), checks.get(wait, ask()));
        assert_eq!(a, check(AuthState::AuthRequired));
        assert_eq!(b, a);
        assert_eq!(asked.load(Ordering::SeqCst), 1, "one question for both");
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(checks.get(wait, ask()).await, a);
        assert_eq!(asked.load(Ordering::SeqCst), 1, "kept within the ttl");
        tokio::time::advance(Duration::from_secs(31)).await;
        assert_eq!(checks.get(wait, ask()).await, a);
        assert_eq!(asked.load(Ordering::SeqCst), 2, "asked again after it");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_answer_is_not_waited_for_beyond_the_wait_and_serves_the_next_caller() {
        let checks = AuthChecks::new(Duration::from_secs(60));
        let slow = || async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            check(AuthState::Authenticated)
        };
        assert_eq!(checks.get(Duration::from_secs(1), slow).await, None, "nothing known yet");
        tokio::time::advance(Duration::from_secs(10)).await;
        let never = || async { panic!("not asked again within the ttl") };
        assert_eq!(checks.get(Duration::from_secs(1), never).await, check(AuthState::Authenticated));
    }

    #[tokio::test]
    async fn a_zero_ttl_never_asks() {
        let checks = AuthChecks::new(Duration::ZERO);
        let never = || async { panic!("asked") };
        assert_eq!(checks.get(Duration::from_secs(1), never).await, None);
    }
}
