//! The [`App`]'s use cases over the data folder's `settings.json` and what it
//! configures: the sampling provider (who answers servers' sampling requests) and
//! telemetry (the exporter runs trace to, started again when its section changes). The
//! file's sections are read and written below, in [`crate::sampling`] and
//! [`crate::telemetry`], which know nothing of the [`App`].

use crate::app::App;
use crate::error::{AppError, Result};
use crate::sampling::{Model, ProviderConfig, ProviderSettings, provider_settings, write_provider};
use crate::telemetry::{Live, Settings, TelemetryView, start_state, view, write_settings};
use mcpflow_engine::telemetry::Telemetry;
use std::sync::Arc;

impl App {
    /// The sampling provider of the data folder's `settings.json`, for the studio's form.
    pub fn sampling_settings(&self) -> ProviderSettings {
        provider_settings(&self.inner.home)
    }

    /// Writes the sampling provider to the data folder's `settings.json` (`None` removes
    /// it: in the studio a person answers then), keeping the rest of the file; refused
    /// with the field named when it does not pass the checks. Runs read it when they
    /// start, so the next one uses it. Returns what is now configured.
    pub fn set_sampling_provider(&self, provider: Option<&ProviderConfig>) -> Result<ProviderSettings> {
        write_provider(&self.inner.home, provider).map_err(AppError::BadRequest)?;
        Ok(self.sampling_settings())
    }

    /// Who answers servers' sampling requests in runs that bring no sampler of their own:
    /// the provider of the data folder's `settings.json`, read now; else, in the studio, a
    /// person (the run's questions); else nobody (`SAMPLING_UNAVAILABLE`).
    pub fn sampling_model(&self) -> Model {
        let person = self.inner.options.front == crate::advice::Front::Studio;
        Model::configured(&self.inner.home, person)
    }
}

impl App {
    /// The exporter for a run starting now (read once per run: a settings change applies
    /// from the next run); `None`: telemetry is off.
    pub fn telemetry(&self) -> Option<Arc<dyn Telemetry>> {
        self.telemetry_state().map(|live| live as Arc<dyn Telemetry>)
    }

    fn telemetry_state(&self) -> Option<Arc<Live>> {
        let state = self.inner.telemetry.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.live.clone()
    }

    /// The data folder's `telemetry` settings for the studio's form, with what is in effect.
    pub fn telemetry_settings(&self) -> TelemetryView {
        let mut out = view(&self.inner.home);
        let state = self.inner.telemetry.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        out.sending_to = state.live.as_ref().and_then(|l| l.traces.clone());
        out.start_problem = state.problem.clone();
        out.flag_endpoint = self.inner.options.telemetry.flags.otlp.clone();
        out
    }

    /// Writes the `telemetry` section of the data folder's `settings.json` (`None`
    /// removes it), then starts the exporter it configures for the runs that start from
    /// now on; the one it replaces is shut down once its last run lets go of it. Refused
    /// with the field named when the section does not pass the checks.
    pub fn set_telemetry_settings(&self, settings: Option<&Settings>) -> Result<TelemetryView> {
        write_settings(&self.inner.home, settings).map_err(AppError::BadRequest)?;
        self.restart_telemetry();
        Ok(self.telemetry_settings())
    }

    /// Starts the exporter again from the flags, the settings and the environment.
    pub(crate) fn restart_telemetry(&self) {
        let fresh = start_state(&self.inner.options.telemetry, &self.inner.home);
        let old = {
            let mut state = self.inner.telemetry.write().unwrap_or_else(std::sync::PoisonError::into_inner);
            std::mem::replace(&mut *state, fresh)
        };
        // Dropped here, or by the last run using it: `Live::drop` shuts it down off
        // this thread.
        drop(old);
    }

    /// Shuts the exporter down once, sending what is queued (up to 2 s, off the async
    /// runtime); runs started later are not traced.
    pub(crate) async fn shutdown_telemetry(&self) {
        let live = {
            let mut state = self.inner.telemetry.write().unwrap_or_else(std::sync::PoisonError::into_inner);
            state.live.take()
        };
        let Some(live) = live else { return };
        match Arc::try_unwrap(live) {
            Ok(live) => {
                let _ = tokio::task::spawn_blocking(move || live.close()).await;
            }
            // A run still holds it: the last to let go shuts it down.
            Err(shared) => drop(shared),
        }
    }
}
