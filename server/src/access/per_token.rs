//! Limits per token on what a request holds open for long: `?wait=` long polls
//! (`--max-long-polls-per-token`) and room WebSockets (`--max-ws-per-token`). The global caps
//! (`--max-connections`, `--max-ws-per-room`, …) bound the server; these keep one token from
//! taking all of it, so the others still get in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How many of one kind of thing each token holds, at most `max`.
#[derive(Debug)]
pub struct PerToken {
    max: usize,
    /// The gauge of how many are held in all (None: another gauge counts them).
    gauge: Option<&'static str>,
    held: Mutex<HashMap<String, usize>>,
}

/// One thing a token holds; given back when dropped.
#[derive(Debug)]
pub struct Held {
    owner: Arc<PerToken>,
    token: String,
}

impl PerToken {
    pub fn new(max: usize, gauge: Option<&'static str>) -> Arc<Self> {
        Arc::new(Self { max, gauge, held: Mutex::new(HashMap::new()) })
    }

    /// The limit.
    pub fn max(&self) -> usize {
        self.max
    }

    /// One more for `token`, unless it holds the limit already.
    pub fn take(self: &Arc<Self>, token: &str) -> Option<Held> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let n = held.entry(token.to_owned()).or_default();
        if *n >= self.max {
            return None;
        }
        *n += 1;
        if let Some(g) = self.gauge {
            metrics::gauge!(g).increment(1.0);
        }
        Some(Held { owner: self.clone(), token: token.to_owned() })
    }

    /// How many `token` holds now.
    pub fn held(&self, token: &str) -> usize {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).get(token).copied().unwrap_or(0)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(g) = self.owner.gauge {
            metrics::gauge!(g).decrement(1.0);
        }
        let mut held = self.owner.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = held.get_mut(&self.token) {
            *n = n.saturating_sub(1);
            // Entries go at zero: the map holds only the tokens holding something.
            if *n == 0 {
                held.remove(&self.token);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_holds_at_most_the_limit_and_gets_them_back_when_dropped() {
        let limit = PerToken::new(2, None);
        let a1 = limit.take("a");
        let a2 = limit.take("a");
        assert!(a1.is_some() && a2.is_some());
        assert!(limit.take("a").is_none(), "at the limit");
        let b = limit.take("b");
        assert!(b.is_some(), "another token has its own");
        drop(a1);
        assert_eq!(limit.held("a"), 1);
        let again = limit.take("a");
        assert!(again.is_some());
        drop((a2, again, b));
        assert_eq!((limit.held("a"), limit.held("b")), (0, 0));
        assert!(limit.held.lock().unwrap().is_empty(), "nothing kept for tokens holding nothing");
    }
}
