//! Call timeouts without a timer per call.
//!
//! When a tokio timer is armed while the runtime's timer has nothing earlier to wake
//! for, tokio wakes a parked worker thread at once so it can sleep again with the new
//! deadline: with one 60 s timer per call, that is a thread wake-up (and a context
//! switch) on every call. Here the calls of a pool share one watcher task. It sleeps
//! until the earliest deadline it was told of and is woken early only by a call whose
//! deadline comes before that — not by calls with the same timeout one after another.
//! It cancels a call's [`Watch::expired`] token when the call's deadline passes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// The deadlines of one pool's calls in flight, and the task that enforces them.
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    shared: Arc<Shared>,
    /// The watcher task; started by the first call (it needs a runtime).
    watcher: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the watcher for a deadline earlier than the one it sleeps for.
    earlier: Notify,
}

#[derive(Debug, Default)]
struct State {
    calls: BTreeMap<(Instant, u64), CancellationToken>,
    next_key: u64,
    /// What the watcher sleeps until (`None`: it waits for a call).
    armed: Option<Instant>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One call's deadline; dropping it forgets the call.
#[derive(Debug)]
pub(crate) struct Watch {
    shared: Arc<Shared>,
    key: (Instant, u64),
    expired: CancellationToken,
}

impl Watch {
    /// Completes when the deadline has passed.
    pub fn expired(&self) -> WaitForCancellationFuture<'_> {
        self.expired.cancelled()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.shared.state().calls.remove(&self.key);
    }
}

impl Deadlines {
    /// Watches a call that must end by `deadline`. Must run inside a tokio runtime.
    pub fn watch(&self, deadline: Instant) -> Watch {
        self.ensure_watcher();
        let expired = CancellationToken::new();
        let (key, wake) = {
            let mut state = self.shared.state();
            let key = (deadline, state.next_key);
            state.next_key += 1;
            state.calls.insert(key, expired.clone());
            let wake = state.armed.is_none_or(|armed| deadline < armed);
            if wake {
                // Until the watcher re-arms: later calls with later deadlines need not wake it.
                state.armed = Some(deadline);
            }
            (key, wake)
        };
        if wake {
            self.shared.earlier.notify_one();
        }
        Watch { shared: self.shared.clone(), key, expired }
    }

    fn ensure_watcher(&self) {
        let mut watcher = self.watcher.lock().unwrap_or_else(PoisonError::into_inner);
        // A watcher whose runtime has shut down (a pool used from a later runtime) is replaced.
        if watcher.as_ref().is_none_or(JoinHandle::is_finished) {
            // What the finished watcher was armed for no longer holds.
            self.shared.state().armed = None;
            *watcher = Some(tokio::spawn(watch_deadlines(self.shared.clone())));
        }
    }
}

impl Drop for Deadlines {
    fn drop(&mut self) {
        if let Some(watcher) = self.watcher.get_mut().unwrap_or_else(PoisonError::into_inner).take() {
            watcher.abort();
        }
    }
}

async fn watch_deadlines(shared: Arc<Shared>) {
    loop {
        let earlier = shared.earlier.notified();
        tokio::pin!(earlier);
        // Registered before the state is read, so a call arriving meanwhile is not missed.
        earlier.as_mut().enable();
        let next = {
            let mut state = shared.state();
            let now = Instant::now();
            while let Some(entry) = state.calls.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                entry.remove().cancel();
            }
            let next = state.calls.keys().next().map(|(deadline, _)| *deadline);
            state.armed = next;
            next
        };
        match next {
            Some(next) => {
                tokio::select! {
                    () = tokio::time::sleep_until(next) => {}
                    () = &mut earlier => {}
                }
            }
            None => earlier.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn each_call_expires_at_its_own_deadline_and_a_finished_one_is_forgotten() {
        let deadlines = Deadlines::default();
        let start = Instant::now();
        let late = deadlines.watch(start + Duration::from_secs(60));
        let early = deadlines.watch(start + Duration::from_millis(200));
        let finished = deadlines.watch(start + Duration::from_millis(100));
        drop(finished);
        assert_eq!(deadlines.shared.state().calls.len(), 2);
        early.expired().await;
        assert_eq!(start.elapsed(), Duration::from_millis(200));
        assert!(!late.expired.is_cancelled());
        let later = deadlines.watch(Instant::now() + Duration::from_secs(1));
        later.expired().await;
        assert_eq!(start.elapsed(), Duration::from_millis(1200));
        late.expired().await;
        assert_eq!(start.elapsed(), Duration::from_secs(60));
        // Expired calls are forgotten by the watcher.
        assert!(deadlines.shared.state().calls.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_later_deadline_does_not_wake_the_watcher() {
        let deadlines = Deadlines::default();
        let first = deadlines.watch(Instant::now() + Duration::from_secs(60));
        tokio::task::yield_now().await;
        let armed = deadlines.shared.state().armed;
        let second = deadlines.watch(Instant::now() + Duration::from_secs(61));
        assert_eq!(deadlines.shared.state().armed, armed);
        drop((first, second));
    }
}
