//! `mcpflow run FILE --db URL` (without `--store`): the run is queued in the store's
//! database for a `mcpflow worker`. `--detach` prints its id and returns; otherwise this
//! waits for its end — following the runs that resume it when its worker died — and
//! prints the result as a run here would (`--json`, the errors, the exit code).

use crate::run::Watch;
use crate::stdout::outln;
use anyhow::Context as _;
use mcpflow_app::headless::{self, Checked, HeadlessRun};
use mcpflow_app::runs::Trigger;
use mcpflow_app::{App, AppOptions};
use mcpflow_store::{RecordStatus, Store};
use std::process::ExitCode;
use std::time::Duration;

/// How often the waiting command reads the run's record.
const WAIT_POLL: Duration = Duration::from_millis(100);

/// Queues the run of `bytes` (checked) with `spec`'s inputs in the database at `url`.
#[allow(clippy::print_stderr)]
pub(crate) async fn run(
    url: &str,
    out: &Watch,
    detach: bool,
    bytes: &[u8],
    checked: &Checked,
    spec: &HeadlessRun,
) -> anyhow::Result<ExitCode> {
    let store = Store::connect_shared(url)
        .context("queueing the run in the store in the database of --db (or MCPFLOW_DB)")?
        .store;
    let inputs = match headless::assemble_inputs(&checked.blueprint, spec) {
        Ok(inputs) => inputs,
        Err(e) => {
            eprintln!("error[{}]: {e}", e.code());
            return Ok(ExitCode::from(crate::run::EXIT_USAGE));
        }
    };
    // The strict reader again (these bytes passed it in `check`), never serde's last-key-wins.
    let doc = mcpflow_blueprint::source::parse(bytes).map(|p| p.value).map_err(|d| anyhow::anyhow!("{d}"))?;
    let app = App::with_store(store.clone(), Vec::new(), AppOptions::default()).context("opening the store")?;
    let id = match app.enqueue(doc, inputs, Trigger::Cli) {
        Ok(id) => id,
        Err(e) => {
            eprintln!("error[{}]: {e}", e.code());
            return Ok(ExitCode::from(crate::run::EXIT_USAGE));
        }
    };
    if detach {
        crate::stdout::unless_closed(outln!("{id}"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if !out.is_quiet() {
        eprintln!("queued run {id}; waiting for a worker (`mcpflow worker --db URL`) to run it");
    }
    let envelope = wait(&store, id).await?;
    out.finish(&envelope, None, None)
}

/// Waits for queued run `id` to end, following the runs that resume it; its envelope.
async fn wait(store: &Store, mut id: String) -> anyhow::Result<mcpflow_engine::Envelope> {
    loop {
        let record = store.run(&id)?.with_context(|| format!("queued run `{id}` is gone from the store"))?;
        match record.status {
            RecordStatus::Queued | RecordStatus::Running | RecordStatus::Waiting => {}
            RecordStatus::Interrupted => {
                if let Some(next) = store.resumed_by(&id)? {
                    id = next;
                    continue;
                }
                if let Some(envelope) = record.envelope {
                    return Ok(envelope);
                }
                // The reaper interrupted it and queues no more: it ends so.
                if record.finished_at.is_some() {
                    return Ok(mcpflow_engine::Envelope::lost(record.id, record.blueprint));
                }
            }
            RecordStatus::Succeeded | RecordStatus::Partial | RecordStatus::Failed | RecordStatus::Cancelled => {
                if let Some(envelope) = record.envelope {
                    return Ok(envelope);
                }
            }
        }
        tokio::time::sleep(WAIT_POLL).await;
    }
}
