//! A run in flight, as the [`crate::App`] holds it: what controls it, where its events
//! go, and what is open in them. Below the runs' use cases ([`crate::runs`]), so the
//! `App` can hold it without importing them.

use mcpflow_engine::{Control, RunEvent};
use mcpflow_store::OpenQuestions;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

pub(crate) struct Active {
    pub(crate) blueprint: String,
    /// Left waiting ([`App::park`]): its events from now on are not recorded, nor its end.
    pub(crate) parked: Arc<AtomicBool>,
    /// The questions open in its recorded events.
    pub(crate) asking: Arc<std::sync::Mutex<OpenQuestions>>,
    pub(crate) control: mpsc::UnboundedSender<Control>,
    pub(crate) cancel: CancellationToken,
    pub(crate) events: broadcast::Sender<Arc<RunEvent>>,
    /// Its record is on disk: from then on it is listed as in flight (before, a crash
    /// would leave nothing to mark `interrupted`, so no one is told of it).
    pub(crate) recorded: Arc<AtomicBool>,
}
